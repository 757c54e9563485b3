/**
 * Suggestion outcomes per suggesting coder (usually an agent) and code, for the coder comparison report
 * (issue 16 item 7, the data side): of the coding suggestions each coder made, how many the researcher
 * accepted unchanged, accepted and then edited, rejected, or has not decided, per code, by month and by week
 * (the week of the suggestion's creation, in UTC).
 * Reads the stored suggestions and approval decisions (src/domain/suggestions.ts, suggestionDecisions.ts).
 */
import type { ProjectRepository, SuggestionRecord } from './ports';

/** Counts of one suggesting coder's coding suggestions (of one code, or of one month). Rates are shares of the decided (accepted + edited + rejected); null when none was decided. */
export interface SuggestionOutcomes {
  suggested: number;
  /** applied, and the segment still has the suggested code and range */
  accepted: number;
  /** applied, then the segment's range or code changed, or the segment was removed */
  edited: number;
  rejected: number;
  /** not decided yet (pending), or approved in a batch but could not be applied (failed) */
  pending: number;
  acceptance_rate: number | null;
  edit_rate: number | null;
  rejection_rate: number | null;
}

/**
 * The outcomes per suggesting coder and code (by coder, then code name), per coder and month (`YYYY-MM` of the
 * suggestion's `created_at`), and per coder and week (`week`: the Monday, `YYYY-MM-DD`, of the ISO 8601 week of
 * `created_at` in UTC); periods without suggestions are absent; by coder, then period.
 */
export interface SuggestionRates {
  by_code: ({ coder: string; code_id: number; code: string } & SuggestionOutcomes)[];
  by_month: ({ coder: string; month: string } & SuggestionOutcomes)[];
  by_week: ({ coder: string; week: string } & SuggestionOutcomes)[];
}

const DAY_MS = 86_400_000;

/** The Monday (`YYYY-MM-DD`, UTC) of the ISO 8601 week holding the instant `iso` (an ISO 8601 timestamp); `iso`'s first 10 characters when it does not parse. */
export function weekOf(iso: string): string {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return iso.slice(0, 10);
  const day = Math.floor(t / DAY_MS);
  // 1970-01-01 (day 0) was a Thursday: day + 3 counts from a Monday
  const monday = day - ((((day + 3) % 7) + 7) % 7);
  return new Date(monday * DAY_MS).toISOString().slice(0, 10);
}

/** Adds one outcome to the bucket `key` of `into`, creating it with `fields`. */
function tally<T extends object>(into: Map<string, T & SuggestionOutcomes>, key: string, fields: T, o: Outcome): void {
  let b = into.get(key);
  if (!b) into.set(key, (b = { ...fields, ...empty() }));
  b.suggested++;
  b[o]++;
}

type Outcome = 'accepted' | 'edited' | 'rejected' | 'pending';

/** What became of a coding suggestion: rejected, pending/failed, or applied and since kept or changed. */
function outcome(repo: ProjectRepository, s: SuggestionRecord): Outcome {
  if (s.status === 'rejected') return 'rejected';
  if (s.status !== 'applied') return 'pending';
  let segmentId: number | undefined;
  try {
    segmentId = (JSON.parse(s.result ?? '{}') as { segment_id?: number }).segment_id;
  } catch {
    segmentId = undefined;
  }
  const seg = segmentId === undefined ? undefined : repo.getSegment(segmentId);
  if (!seg) return 'edited';
  return seg.code_id === s.code_id && seg.start_pos === s.start_pos && seg.end_pos === s.end_pos ? 'accepted' : 'edited';
}

function empty(): SuggestionOutcomes {
  return { suggested: 0, accepted: 0, edited: 0, rejected: 0, pending: 0, acceptance_rate: null, edit_rate: null, rejection_rate: null };
}

function withRates(o: SuggestionOutcomes): SuggestionOutcomes {
  const decided = o.accepted + o.edited + o.rejected;
  return decided === 0 ? o : { ...o, acceptance_rate: o.accepted / decided, edit_rate: o.edited / decided, rejection_rate: o.rejected / decided };
}

/** The coding suggestions' outcomes per suggesting coder and code (only `codeIds` when given), and per coder and month and week. */
export function suggestionRates(repo: ProjectRepository, codeIds?: readonly number[]): SuggestionRates {
  const wanted = codeIds ? new Set(codeIds) : undefined;
  const names = new Map(repo.listCodeLabels().map((c) => [c.code_id, c.name]));
  const byCode = new Map<string, { coder: string; code_id: number } & SuggestionOutcomes>();
  const byMonth = new Map<string, { coder: string; month: string } & SuggestionOutcomes>();
  const byWeek = new Map<string, { coder: string; week: string } & SuggestionOutcomes>();
  for (const s of repo.listSuggestions({ kind: 'coding' })) {
    const code = s.code_id ?? 0;
    if (wanted && !wanted.has(code)) continue;
    const o = outcome(repo, s);
    const coder = s.suggested_by;
    const month = s.created_at.slice(0, 7);
    const week = weekOf(s.created_at);
    tally(byCode, `${coder}\u0000${code}`, { coder, code_id: code }, o);
    tally(byMonth, `${coder}\u0000${month}`, { coder, month }, o);
    tally(byWeek, `${coder}\u0000${week}`, { coder, week }, o);
  }
  const order = (x: string, y: string) => (x < y ? -1 : x > y ? 1 : 0);
  return {
    by_code: [...byCode.values()]
      .map((x) => ({ ...x, code: names.get(x.code_id) ?? `#${x.code_id}`, ...withRates(x) }))
      .sort((x, y) => order(x.coder, y.coder) || order(x.code.toLowerCase(), y.code.toLowerCase()) || x.code_id - y.code_id),
    by_month: [...byMonth.values()].map((x) => ({ ...x, ...withRates(x) })).sort((x, y) => order(x.coder, y.coder) || order(x.month, y.month)),
    by_week: [...byWeek.values()].map((x) => ({ ...x, ...withRates(x) })).sort((x, y) => order(x.coder, y.coder) || order(x.week, y.week)),
  };
}
