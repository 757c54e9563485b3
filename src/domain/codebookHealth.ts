/**
 * Codebook health: the problems a researcher tidies before reporting (the Problems panel lists them in VS
 * Code). Four kinds:
 *
 * - `code_without_memo`: a code whose memo is empty or blank: nobody wrote down what it means.
 * - `near_duplicate_names`: two codes whose names (and memos) say nearly the same thing, as
 *   detect_duplicate_codes finds them ({@link detectDuplicateCodes}: token-level Dice similarity, memo-aware).
 * - `code_used_once`: a code applied exactly once (text and AV segments together): a candidate for merging.
 *   Only once the project holds `usedOnceAfter` coded passages (default {@link DEFAULT_USED_ONCE_AFTER}): during
 *   open coding most codes are new and used once, and saying so is noise (issue 13, item 11).
 * - `same_code_overlap`: two text segments of the same code by the same coder that overlap on one source,
 *   counted twice by the frequency report. Overlaps of one code by two different coders are what the coder
 *   comparison measures and are not problems.
 *
 * A pure function of the codes and the coded ranges; positions are code points, ranges half-open.
 */
import { countOf } from '../core/plural';
import type { CodeWithCounts, CodedRanges, ProjectRepository } from './ports';
import { DEFAULT_DUPLICATE_THRESHOLD, detectDuplicateCodes } from './duplicateCodes';

/** The kinds of codebook problems. */
export type CodebookProblemKind = 'code_without_memo' | 'near_duplicate_names' | 'code_used_once' | 'same_code_overlap';

/** One problem. `same_code_overlap` problems carry where the overlap is; the others concern the codebook. */
export interface CodebookProblem {
  kind: CodebookProblemKind;
  severity: 'warning' | 'information';
  /** one sentence for the researcher (names quoted as they are; a UI escapes them as its medium needs) */
  message: string;
  /** the codes concerned: one, or the two near-duplicates (older first) */
  code_ids: number[];
  /** same_code_overlap: the source and the overlapping range `[start_pos, end_pos)` in code points */
  source_id?: number;
  start_pos?: number;
  end_pos?: number;
  /** same_code_overlap: the two segments' ranges, earlier first, and their coder */
  ranges?: [[number, number], [number, number]];
  coder?: string;
}

/** What {@link codebookHealth} returns. */
export interface CodebookHealth {
  problems: CodebookProblem[];
  /** per kind, how many problems there are (also those past `maxOverlaps`) */
  counts: Record<CodebookProblemKind, number>;
  /** true when more same-code overlaps exist than `maxOverlaps` allowed to list */
  overlaps_truncated: boolean;
}

/** Options of {@link codebookHealth}. */
export interface CodebookHealthOptions {
  /** near-duplicate similarity threshold (0..1], default detect_duplicate_codes' 0.8 */
  duplicateThreshold?: number;
  /** most same-code overlaps listed (default 1000); the rest are counted only */
  maxOverlaps?: number;
  /**
   * `code_used_once` problems only when the project holds at least this many coded passages (text and AV
   * segments of all codes, each counted once); default {@link DEFAULT_USED_ONCE_AFTER}, 0 always. The VS Code
   * setting `marginalia.codebookHealth.usedOnceAfter`.
   */
  usedOnceAfter?: number;
}

/** Coded passages a project holds before codebook health names codes used only once (issue 13, item 11). */
export const DEFAULT_USED_ONCE_AFTER = 50;

/**
 * The summary line of a truncated overlap list: "1001 same-code overlaps in all; the first 1000 are listed."
 * (counts with their plurals: "1 same-code overlap", "the first 1 is listed").
 */
export function overlapsTruncatedMessage(total: number, listed: number): string {
  return `${countOf(total, 'same-code overlap')} in all; the first ${listed} ${listed === 1 ? 'is' : 'are'} listed.`;
}

/**
 * The codebook's problems: for each code in `codes` (in their order) no memo, then used once (when the
 * codes hold at least `usedOnceAfter` coded passages in all); then the
 * near-duplicate pairs (best first); then the same-code overlaps in `ranges` (which must be ordered by
 * source_id, then start_pos, as `reportCodedRanges` returns them, and name their owners: without owners
 * (owner -1) every segment counts as one unknown coder's), by source and position. An overlap is
 * reported once per segment that starts inside an earlier segment of the same code and coder (against the
 * one of those reaching furthest), so a chain of three overlapping segments gives two problems.
 */
export function codebookHealth(codes: readonly CodeWithCounts[], ranges: CodedRanges, options: CodebookHealthOptions = {}): CodebookHealth {
  const maxOverlaps = options.maxOverlaps ?? 1000;
  const problems: CodebookProblem[] = [];
  const counts: Record<CodebookProblemKind, number> = { code_without_memo: 0, near_duplicate_names: 0, code_used_once: 0, same_code_overlap: 0 };
  const add = (p: CodebookProblem) => {
    counts[p.kind]++;
    problems.push(p);
  };
  const names = new Map<number, string>();
  let passages = 0;
  for (const c of codes) passages += c.segment_count + c.av_segment_count;
  const usedOnce = passages >= (options.usedOnceAfter ?? DEFAULT_USED_ONCE_AFTER);
  for (const c of codes) {
    names.set(c.code_id, c.name);
    if (!c.memo || c.memo.trim() === '') {
      add({
        kind: 'code_without_memo',
        severity: 'information',
        message: `Code "${c.name}" has no memo: describe what it means and when to apply it.`,
        code_ids: [c.code_id],
      });
    }
    if (usedOnce && c.segment_count + c.av_segment_count === 1) {
      add({
        kind: 'code_used_once',
        severity: 'information',
        message: `Code "${c.name}" is used only once: merge it into a broader code, or code more passages with it.`,
        code_ids: [c.code_id],
      });
    }
  }
  for (const d of detectDuplicateCodes(codes, options.duplicateThreshold ?? DEFAULT_DUPLICATE_THRESHOLD)) {
    add({
      kind: 'near_duplicate_names',
      severity: 'warning',
      message: `Codes "${d.code_a.name}" and "${d.code_b.name}" look like near-duplicates (similarity ${Math.round(100 * d.similarity)}%): ${d.rationale} Consider merging them.`,
      code_ids: [d.code_a.code_id, d.code_b.code_id],
    });
  }
  let truncated = false;
  sameCodeOverlaps(ranges, (source, code, coder, earlier, later) => {
    counts.same_code_overlap++;
    if (counts.same_code_overlap > maxOverlaps) {
      truncated = true;
      return;
    }
    const name = names.get(code) ?? `#${code}`;
    problems.push({
      kind: 'same_code_overlap',
      severity: 'warning',
      message: `Two segments of "${name}" by ${coder} overlap here ([${earlier[0]}, ${earlier[1]}) and [${later[0]}, ${later[1]})): the passage is counted twice; merge or trim them.`,
      code_ids: [code],
      source_id: source,
      start_pos: later[0],
      end_pos: Math.min(earlier[1], later[1]),
      ranges: [earlier, later],
      coder,
    });
  });
  return { problems, counts, overlaps_truncated: truncated };
}

/** {@link codebookHealth} of a project: every code, and every text segment with its coder. */
export function projectCodebookHealth(
  repo: Pick<ProjectRepository, 'listCodes' | 'listCoders' | 'reportCodedRanges'>,
  options: CodebookHealthOptions = {},
): CodebookHealth {
  const coders = repo.listCoders().map((c) => c.coder);
  return codebookHealth(repo.listCodes(), repo.reportCodedRanges({}, coders), options);
}

/**
 * Calls `found` for each segment of `ranges` (ordered by source, then start) that starts before the end of
 * an earlier segment of the same code and owner on the same source, with that earlier segment (the one
 * reaching furthest so far). One pass, a Map per source.
 */
function sameCodeOverlaps(
  ranges: CodedRanges,
  found: (source: number, code: number, coder: string, earlier: [number, number], later: [number, number]) => void,
): void {
  const n = ranges.source_id.length;
  let source = -1;
  let open = new Map<string, [number, number]>();
  for (let k = 0; k < n; k++) {
    const s = ranges.source_id[k] as number;
    if (s !== source) {
      source = s;
      open = new Map();
    }
    const code = ranges.code_id[k] as number;
    const owner = ranges.owner[k] as number;
    const start = ranges.start_pos[k] as number;
    const end = ranges.end_pos[k] as number;
    const key = `${code}:${owner}`;
    const prev = open.get(key);
    if (prev && start < prev[1]) found(s, code, ranges.owners[owner] ?? 'an unknown coder', prev, [start, end]);
    if (!prev || end > prev[1]) open.set(key, [start, end]);
  }
}
