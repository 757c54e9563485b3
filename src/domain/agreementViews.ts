/**
 * The data of the Reports panel's agreement views (issue 16 items 6 and 7), built on the coder comparison
 * (src/domain/coderComparison.ts, statistics in src/domain/agreement):
 *
 * - {@link disagreementPassages}: each disagreement as a passage of its source with every compared coder's
 *   codings on it, for showing the coders side by side on the text;
 * - {@link humanAiAgreement}: each agent (a coder whose segments an agent made) against each human coder,
 *   per code, with Cohen's kappa, Krippendorff's alpha and percent agreement and their bootstrap 95%
 *   intervals, and the agents' suggestion outcomes (src/domain/suggestionRates.ts).
 *
 * Positions count code points; ranges are half-open `[start, end)`.
 */
import type { Measure } from './agreement/comparison';
import { coderComparisonReport, type ComparisonUnit, type DisagreementView } from './coderComparison';
import type { ProjectRepository } from './ports';
import { suggestionRates, type SuggestionRates } from './suggestionRates';

/** One coding of a coder within a passage: offsets from the passage's start (code points), its code, and whether it is the disputed code. */
export interface PassageSpan {
  start: number;
  end: number;
  code_id: number;
  code: string;
  disputed: boolean;
}

/** A disagreement (or several close ones of the same code and source, merged) on its passage of text, with each coder's codings there. */
export interface DisagreementPassage {
  code_id: number;
  code: string;
  source_id: number;
  source: string;
  /** the passage shown: `[start_pos, end_pos)` of the source, and its text */
  start_pos: number;
  end_pos: number;
  text: string;
  /** the stretches (or units) the coders disagree on, as offsets from `start_pos` */
  disputed: { start: number; end: number }[];
  /** every compared coder in the comparison's order: whether they applied the disputed code on a disputed stretch, and all their codings in the passage (by start) */
  coders: { coder: string; coded: boolean; spans: PassageSpan[] }[];
}

/** Code points of context shown before and after a disagreement (within its line), by default. */
export const PASSAGE_CONTEXT = 80;

/** A source's text as code points (an array only when it has characters outside the BMP) with its line and word boundaries. */
class SourceText {
  private readonly chars: string[] | null;
  readonly length: number;
  constructor(private readonly text: string) {
    this.chars = /[\uD800-\uDBFF]/.test(text) ? Array.from(text) : null;
    this.length = this.chars ? this.chars.length : text.length;
  }
  at(i: number): string {
    return (this.chars ? this.chars[i] : this.text[i]) ?? '';
  }
  slice(start: number, end: number): string {
    return this.chars ? this.chars.slice(start, end).join('') : this.text.slice(start, end);
  }
  /** `[start, end)` widened by up to `context` on both sides, within the lines of `start` and `end`, cut at a space when the widening stopped inside a word. */
  window(start: number, end: number, context: number): [number, number] {
    let s = start;
    const sMin = Math.max(0, start - context);
    while (s > sMin && this.at(s - 1) !== '\n') s--;
    if (s > 0 && s === sMin && this.at(s - 1) !== '\n') {
      // stopped by the context, maybe inside a word: start after the next space
      let k = s;
      while (k < start && !/\s/.test(this.at(k))) k++;
      if (k < start) s = k + 1;
    }
    let e = end;
    const eMax = Math.min(this.length, end + context);
    while (e < eMax && this.at(e) !== '\n') e++;
    if (e < this.length && e === eMax && this.at(e) !== '\n') {
      let k = e;
      while (k > end && !/\s/.test(this.at(k - 1))) k--;
      if (k > end) e = k - 1;
    }
    return [s, e];
  }
}

/**
 * The disagreements (as generate_coder_comparison lists them) as passages: each widened by `context` code
 * points (default {@link PASSAGE_CONTEXT}) within its line and cut at spaces; a disagreement of the same code and
 * source starting at most `context` code points after the previous passage's end joins that passage. For each of `coders` their segments (any code)
 * overlapping the passage, clipped to it. At most `max` passages (default 100), in the disagreements' order.
 */
export function disagreementPassages(
  repo: ProjectRepository,
  coders: readonly string[],
  disagreements: readonly DisagreementView[],
  opts: { context?: number; max?: number } = {},
): DisagreementPassage[] {
  const context = opts.context ?? PASSAGE_CONTEXT;
  const max = opts.max ?? 100;
  const texts = new Map<number, SourceText>();
  const textOf = (id: number): SourceText => {
    let t = texts.get(id);
    if (!t) texts.set(id, (t = new SourceText(repo.getSourceText(id) ?? '')));
    return t;
  };
  // 1. windows, merged per code and source
  const groups: { d: DisagreementView; start: number; end: number; disputed: [number, number][] }[] = [];
  for (const d of disagreements) {
    const [s, e] = textOf(d.source_id).window(d.start_pos, d.end_pos, context);
    const last = groups[groups.length - 1];
    if (last && last.d.code_id === d.code_id && last.d.source_id === d.source_id && d.start_pos - last.end <= context) {
      last.end = Math.max(last.end, e);
      last.disputed.push([d.start_pos, d.end_pos]);
      continue;
    }
    if (groups.length === max) break;
    groups.push({ d, start: s, end: e, disputed: [[d.start_pos, d.end_pos]] });
  }
  // 2. each coder's codings in each passage
  const segments = new Map<number, ReturnType<ProjectRepository['listSegmentsForSource']>>();
  const names = new Map(repo.listCodeLabels().map((c) => [c.code_id, c.name]));
  return groups.map((g) => {
    let segs = segments.get(g.d.source_id);
    if (!segs) segments.set(g.d.source_id, (segs = repo.listSegmentsForSource(g.d.source_id)));
    const disputed = g.disputed.map(([s, e]) => ({ start: s - g.start, end: e - g.start }));
    return {
      code_id: g.d.code_id,
      code: g.d.code,
      source_id: g.d.source_id,
      source: g.d.source,
      start_pos: g.start,
      end_pos: g.end,
      text: textOf(g.d.source_id).slice(g.start, g.end),
      disputed,
      coders: coders.map((coder) => {
        const spans: PassageSpan[] = (segs ?? [])
          .filter((x) => x.owner === coder && x.start_pos < g.end && g.start < x.end_pos)
          .map((x) => ({
            start: Math.max(x.start_pos, g.start) - g.start,
            end: Math.min(x.end_pos, g.end) - g.start,
            code_id: x.code_id,
            code: names.get(x.code_id) ?? `#${x.code_id}`,
            disputed: x.code_id === g.d.code_id,
          }))
          .sort((a, b) => a.start - b.start || a.end - b.end || a.code_id - b.code_id);
        const coded = spans.some((x) => x.disputed && disputed.some((r) => x.start < r.end && r.start < x.end));
        return { coder, coded, spans };
      }),
    };
  });
}

/** The coders of a project by role: `agents` made at least one segment as an agent (coder_role agent) or suggested a coding; `humans` are the other segment owners. By name. */
export function codersByRole(repo: ProjectRepository): { agents: string[]; humans: string[] } {
  const agents = new Set<string>();
  for (const c of repo.listCodeLabels()) for (const x of repo.codingCodersOfCode(c.code_id)) if (x.coder_role === 'agent') agents.add(x.owner);
  for (const s of repo.listSuggestions({ kind: 'coding' })) agents.add(s.suggested_by);
  const humans = repo
    .listCoders()
    .map((c) => c.coder)
    .filter((c) => !agents.has(c));
  return { agents: [...agents].sort(byName), humans: humans.sort(byName) };
}

/** One code's (or all codes') agreement of an agent with one human: units compared, and each measure with its 95% interval (percent agreement 0-100). */
export interface AgentCodeAgreement {
  code_id: number;
  code: string;
  units: number;
  percent_agreement: Measure;
  cohen_kappa: Measure;
  krippendorff_alpha: Measure;
}

/** An agent against one human coder: per code (by name) and over all codes; `note` says why there is nothing to compare. */
export interface AgentHumanAgreement {
  agent: string;
  human: string;
  codes: AgentCodeAgreement[];
  overall: AgentCodeAgreement | null;
  /** sources both coded */
  sources: number;
  note: string | null;
}

/** The human-vs-AI view: the agents and humans, each pair's agreement, and the agents' suggestion outcomes. */
export interface HumanAiResult {
  unit: ComparisonUnit;
  agents: string[];
  humans: string[];
  /** per agent with segments, per human: agent-major, by name */
  pairs: AgentHumanAgreement[];
  suggestions: SuggestionRates;
}

/**
 * Each agent against each human coder, separately (not pooled): for every pair the coder comparison of
 * the two (`coderComparisonReport` with `[human, agent]`, over the sources both coded, on `unit`, with
 * `draws` bootstrap resamples seeded by `seed`), keeping per code and overall percent agreement, Cohen's
 * kappa and Krippendorff's alpha with their intervals; and every suggesting coder's suggestion outcomes
 * per code, month and week. Roles from {@link codersByRole}.
 */
export function humanAiAgreement(repo: ProjectRepository, options: { unit?: ComparisonUnit; draws?: number; seed?: number } = {}): HumanAiResult {
  const unit = options.unit ?? 'character';
  const { agents, humans } = codersByRole(repo);
  const coding = new Set(repo.listCoders().map((c) => c.coder));
  const pairs: AgentHumanAgreement[] = [];
  for (const agent of agents) {
    if (!coding.has(agent)) continue;
    for (const human of humans) {
      const base = { agent, human, codes: [], overall: null, sources: 0 };
      let r: ReturnType<typeof coderComparisonReport>;
      try {
        r = coderComparisonReport(repo, [human, agent], {}, { unit, draws: options.draws ?? 1000, seed: options.seed ?? 1 });
      } catch (e) {
        pairs.push({ ...base, note: (e as Error).message });
        continue;
      }
      const pick = (code_id: number, code: string, m: (typeof r.codes)[number]['measures']): AgentCodeAgreement => ({
        code_id,
        code,
        units: m.units,
        percent_agreement: m.percent_agreement,
        cohen_kappa: strip(m.cohen_kappa[0]),
        krippendorff_alpha: m.krippendorff_alpha,
      });
      pairs.push({
        agent,
        human,
        codes: r.codes.map((c) => pick(c.code_id, c.name, c.measures)),
        overall: r.overall ? pick(0, 'All codes', r.overall.measures) : null,
        sources: r.sources.length,
        note: r.sources.length === 0 ? `${agent} and ${human} have not coded any source in common.` : null,
      });
    }
  }
  return { unit, agents, humans, pairs, suggestions: suggestionRates(repo) };
}

function strip(m: Measure | undefined): Measure {
  return m ? { value: m.value, ci_low: m.ci_low, ci_high: m.ci_high } : { value: null, ci_low: null, ci_high: null };
}

function byName(a: string, b: string): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  return x < y ? -1 : x > y ? 1 : a < b ? -1 : a > b ? 1 : 0;
}
