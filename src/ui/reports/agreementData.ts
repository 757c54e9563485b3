/**
 * The data of the Reports panel's agreement views (issue 16 items 6 and 7), as the messages the webview
 * draws: coder agreement of two or more coders with every measure's interval, the disagreements side by side
 * on their passages, and each agent against the humans with its suggestion outcomes. Free of `vscode`:
 * reportsPanel.ts sends these, tests call them on a real project. Everything from the webview (coders, unit)
 * is checked here.
 */
import { disagreementPassages, humanAiAgreement, type AgentCodeAgreement } from '../../domain/agreementViews';
import type { ProjectRepository } from '../../domain/ports';
import { coderComparisonReport, type AgreementMeasures, type CodeAgreement, type CoderComparisonResult } from '../../domain/reports';
import type { SuggestionOutcomes } from '../../domain/suggestionRates';
import type { AgentCodeRow, AgreementMeasureTable, AgreementRow, AgreementUnit, SuggestionOutcomeRow, ToReportsWebview } from '../../protocol/reports';

const UNITS = ['character', 'segment', 'sentence', 'paragraph'] as const;

/** The unit the webview asked for when it is one (default character). */
export function unitOf(asked: unknown): AgreementUnit {
  return UNITS.find((u) => u === asked) ?? 'character';
}

/**
 * The coders of the project (segment owners) and the ones to compare: those asked for when they are two or
 * more distinct known coders, else the two with the most segments; `selected` null (with `note`) when the
 * project has fewer than two coders.
 */
export function pickCoders(
  repo: ProjectRepository,
  askedCoders: unknown,
  askedUnit: unknown,
): { coders: string[]; selected: string[] | null; unit: AgreementUnit; note?: string } {
  // both come from the webview: untrusted shapes
  const asked = Array.isArray(askedCoders) && askedCoders.every((c) => typeof c === 'string') ? (askedCoders as string[]) : undefined;
  const unit = unitOf(askedUnit);
  const known = repo.listCoders();
  const coders = known.map((c) => c.coder);
  if (coders.length < 2) {
    return {
      coders,
      selected: null,
      unit,
      note: `Coder agreement compares coders' segments; this project has ${coders.length === 0 ? 'no coded segments' : `one coder (${coders[0] ?? ''})`}. Set marginalia.coder.name, or import another coder's work.`,
    };
  }
  if (asked && asked.length >= 2 && new Set(asked).size === asked.length && asked.every((c) => coders.includes(c)))
    return { coders, selected: [...asked], unit };
  const top = [...known].sort((a, b) => b.segments - a.segments || (a.coder < b.coder ? -1 : 1));
  return { coders, selected: [(top[0] as (typeof top)[number]).coder, (top[1] as (typeof top)[number]).coder], unit };
}

/**
 * The agreement view: the coders asked for (two or more, each with segments), else the two coders with the
 * most segments; the unit asked for (default character). Every measure per code with its seeded bootstrap
 * interval (`draws` resamples; 1000 as generate_coder_comparison's default) and the disagreements.
 */
export function agreementView(repo: ProjectRepository, project: string, askedCoders: unknown, askedUnit: unknown, draws = 1000): ToReportsWebview {
  const { coders, selected, unit, note } = pickCoders(repo, askedCoders, askedUnit);
  const base = { type: 'agreement' as const, project, coders, unit, rows: [], overall: null, total_characters: 0, source_count: 0, method: '' };
  if (!selected) return { ...base, pair: null, note };
  const pair: [string, string] = [selected[0] as string, selected[1] as string];
  try {
    const r = coderComparisonReport(repo, selected, {}, { unit, draws, seed: 1 });
    const two = selected.length === 2;
    const row = (name: string, code_id: number, t: CodeAgreement | NonNullable<CoderComparisonResult['overall']>): AgreementRow => ({
      code_id,
      name,
      percent_agreement: t.measures.percent_agreement.value,
      kappa: two ? (t.kappa ?? null) : t.measures.fleiss_kappa.value,
      both: t.both ?? 0,
      only_a: t.only_a ?? 0,
      only_b: t.only_b ?? 0,
      kappa_low: (two ? t.measures.cohen_kappa[0] : t.measures.fleiss_kappa)?.ci_low ?? null,
      kappa_high: (two ? t.measures.cohen_kappa[0] : t.measures.fleiss_kappa)?.ci_high ?? null,
    });
    const table = (name: string, code_id: number, m: AgreementMeasures): AgreementMeasureTable => ({
      code_id,
      name,
      units: m.units,
      measures: [
        { measure: 'Percent agreement', coders: 'all', ...m.percent_agreement },
        ...m.cohen_kappa.map((k) => ({ measure: "Cohen's κ", coders: k.coders.join(' & '), value: k.value, ci_low: k.ci_low, ci_high: k.ci_high })),
        { measure: "Fleiss' κ", coders: 'all', ...m.fleiss_kappa },
        { measure: 'Brennan-Prediger κ', coders: 'all', ...m.brennan_prediger },
        { measure: "Gwet's AC1", coders: 'all', ...m.gwet_ac1 },
        { measure: "Krippendorff's α", coders: 'all', ...m.krippendorff_alpha },
        { measure: 'Unitizing α', coders: 'all', ...m.unitizing_alpha },
      ],
    });
    return {
      ...base,
      pair,
      selected,
      rows: r.codes.map((c) => row(c.name, c.code_id, c)),
      overall: r.overall ? row('All codes', 0, r.overall) : null,
      tables: [...r.codes.map((c) => table(c.name, c.code_id, c.measures)), ...(r.overall ? [table('All codes', 0, r.overall.measures)] : [])],
      disagreements: r.disagreements.slice(0, 200).map((d) => ({
        code: d.code,
        source: d.source,
        start_pos: d.start_pos,
        end_pos: d.end_pos,
        text: d.text,
        coded_by: d.coded_by,
        not_coded_by: d.not_coded_by,
      })),
      total_characters: r.total_characters,
      source_count: r.sources.length,
      method: r.method,
      ...(r.sources.length === 0 ? { note: `${selected.join(', ')} have not coded any source in common.` } : {}),
    };
  } catch (e) {
    return { ...base, pair, selected, note: (e as Error).message };
  }
}

/**
 * The disagreements view: the coders compared (as {@link pickCoders}) and each disagreement of the
 * comparison (at most 25 per code) on its passage, every coder's codings there, one column per coder
 * (agreementViews.disagreementPassages; at most 100 passages). No bootstrap: only the disagreements are used.
 */
export function disagreementsView(repo: ProjectRepository, project: string, askedCoders: unknown, askedUnit: unknown): ToReportsWebview {
  const { coders, selected, unit, note } = pickCoders(repo, askedCoders, askedUnit);
  const base = { type: 'disagreements' as const, project, coders, selected, unit, passages: [], total: 0 };
  if (!selected) return { ...base, note };
  try {
    const r = coderComparisonReport(repo, selected, {}, { unit, draws: 0 });
    const colors = new Map(repo.listCodeLabels().map((c) => [c.code_id, c.color]));
    const passages = disagreementPassages(repo, selected, r.disagreements).map((p) => ({
      code: p.code,
      color: colors.get(p.code_id) ?? '#888888',
      source_id: p.source_id,
      source: p.source,
      start_pos: p.start_pos,
      end_pos: p.end_pos,
      text: p.text,
      disputed: p.disputed,
      coders: p.coders.map((c) => ({
        coder: c.coder,
        coded: c.coded,
        spans: c.spans.map((x) => ({ start: x.start, end: x.end, code: x.code, color: colors.get(x.code_id) ?? '#888888', disputed: x.disputed })),
      })),
    }));
    return {
      ...base,
      passages,
      total: r.disagreements.length,
      ...(r.sources.length === 0 ? { note: `${selected.join(', ')} have not coded any source in common.` } : {}),
    };
  } catch (e) {
    return { ...base, note: (e as Error).message };
  }
}

/**
 * The human-vs-AI view: each agent (agreementViews.codersByRole) against each human coder separately, per
 * code and over all codes, on `unit`, with seeded bootstrap intervals (`draws` resamples), and each
 * suggesting coder's suggestion outcomes per code and per week.
 */
export function humanAiView(repo: ProjectRepository, project: string, askedUnit: unknown, draws = 1000): ToReportsWebview {
  const unit = unitOf(askedUnit);
  const r = humanAiAgreement(repo, { unit, draws, seed: 1 });
  const row = (c: AgentCodeAgreement): AgentCodeRow => ({
    code: c.code,
    units: c.units,
    percent_agreement: c.percent_agreement,
    cohen_kappa: c.cohen_kappa,
    krippendorff_alpha: c.krippendorff_alpha,
  });
  const outcomes = (coder: string, label: string, o: SuggestionOutcomes): SuggestionOutcomeRow => ({
    coder,
    label,
    suggested: o.suggested,
    accepted: o.accepted,
    edited: o.edited,
    rejected: o.rejected,
    pending: o.pending,
    acceptance_rate: o.acceptance_rate,
    edit_rate: o.edit_rate,
    rejection_rate: o.rejection_rate,
  });
  const note =
    r.agents.length === 0
      ? 'No agent has coded or suggested a coding in this project yet. Agents connected to Marginalia are coders too: their codings and suggestions show here.'
      : r.humans.length === 0
        ? 'No human coder has coded yet: agreement needs a human coder beside the agents.'
        : undefined;
  return {
    type: 'human_ai',
    project,
    unit,
    agents: r.agents,
    humans: r.humans,
    pairs: r.pairs.map((p) => ({
      agent: p.agent,
      human: p.human,
      sources: p.sources,
      codes: p.codes.map(row),
      overall: p.overall ? row(p.overall) : null,
      note: p.note,
    })),
    by_code: r.suggestions.by_code.map((c) => outcomes(c.coder, c.code, c)),
    by_week: r.suggestions.by_week.map((w) => outcomes(w.coder, w.week, w)),
    ...(note ? { note } : {}),
  };
}
