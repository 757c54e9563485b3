/**
 * Passages like a given text across the text sources (find_similar_content, suggest_batch_coding): meaning
 * units ranked by BM25 over Porter-stemmed terms (src/domain/ranking). Positions count Unicode code points.
 */
import { ToolError } from '../core/errors';
import { sliceCp } from '../core/text';
import { requireCode } from './codebook';
import type { DomainContext } from './events';
import type { Segment } from './model';
import type { ProjectRepository, SourceWithCounts, SuggestionBatchRecord, SuggestionRecord } from './ports';
import { Bm25Index } from './ranking/bm25';
import { tokenize } from './ranking/stemmer';
import { requireSource } from './sources';
import { createBatch, requireTextRange, type CodingInput, type TextRange } from './suggestions';
import { splitUnits, type TextUnit } from './textUnits';

type Ctx = DomainContext<ProjectRepository>;

/** find_similar_content: matches returned by default. */
export const DEFAULT_SIMILAR_LIMIT = 10;

/** A passage found by {@link findSimilarContent} (positions in code points). */
export interface SimilarPassage {
  source_id: number;
  source_name: string;
  start_pos: number;
  end_pos: number;
  text: string;
  unit: TextUnit['kind'];
  speaker: string | null;
  score: number;
  matched_terms: string[];
  /** codes with a segment overlapping the passage */
  coded_with: { code_id: number; name: string }[];
}

/**
 * Passages (meaning units of every text source, or of one) ranked by BM25 (Robertson & Zaragoza 2009)
 * against `searchText`, best first, at most `limit`. With `codeId`, passages already overlapping a segment
 * of that code are left out (candidates to code with it). `terms` is the query as stemmed terms; an empty
 * query finds nothing. Errors: SOURCE_NOT_FOUND, CODE_NOT_FOUND.
 */
export function findSimilarContent(
  ctx: Ctx,
  input: { search_text: string; source_id?: number; code_id?: number; limit?: number },
): { matches: SimilarPassage[]; units_searched: number; terms: string[] } {
  const sources = input.source_id !== undefined ? [requireSource(ctx, input.source_id)] : ctx.repo.listSources('text');
  const excludeCode = input.code_id !== undefined ? requireCode(ctx, input.code_id) : undefined;
  const codeNames = new Map(ctx.repo.listCodes().map((c) => [c.code_id, c.name]));
  const query = tokenize(input.search_text);
  const words = new Map<string, string>();
  for (const t of query) if (!words.has(t.term)) words.set(t.term, t.word);
  const units: { source: SourceWithCounts; text: string; unit: TextUnit; segments: Segment[] }[] = [];
  const docs: string[][] = [];
  for (const source of sources) {
    const text = ctx.repo.getSourceText(source.source_id);
    if (text === null) continue;
    const segments = ctx.repo.listSegmentsForSource(source.source_id);
    for (const unit of splitUnits(text)) {
      const unitText = sliceCp(text, unit.start, unit.end);
      const overlapping = segments.filter((s) => s.start_pos < unit.end && s.end_pos > unit.start);
      if (excludeCode && overlapping.some((s) => s.code_id === excludeCode.code_id)) continue;
      units.push({ source, text: unitText, unit, segments: overlapping });
      docs.push(tokenize(unitText).map((t) => t.term));
    }
  }
  const index = new Bm25Index(docs);
  const hits = index.search(
    query.map((t) => t.term),
    input.limit ?? DEFAULT_SIMILAR_LIMIT,
  );
  return {
    units_searched: units.length,
    terms: [...words.keys()],
    matches: hits.map((h) => {
      const u = units[h.doc]!;
      return {
        source_id: u.source.source_id,
        source_name: u.source.name,
        start_pos: u.unit.start,
        end_pos: u.unit.end,
        text: u.text,
        unit: u.unit.kind,
        speaker: u.unit.speaker,
        score: round(h.score),
        matched_terms: h.matched.map((t) => words.get(t) ?? t),
        coded_with: [...new Set(u.segments.map((s) => s.code_id))].map((id) => ({ code_id: id, name: codeNames.get(id) ?? '' })),
      };
    }),
  };
}

/**
 * Records one code for several ranges as a batch (suggest_batch_coding): one pending coding suggestion per
 * distinct range, all with `rationale`. Every range is checked first, so a bad one writes nothing.
 * Emits suggestion.batch_created. Errors (details.index names the range): CODE_NOT_FOUND,
 * SOURCE_NOT_FOUND, INVALID_POSITION, INVALID_ARGUMENTS (confidence).
 */
export function suggestBatchCoding(
  ctx: Ctx,
  input: { code_id: number; segments: { source_id: number; start_pos: number; end_pos: number }[]; rationale: string; confidence?: number },
): { batch: SuggestionBatchRecord; items: SuggestionRecord[]; duplicates_dropped: number } {
  requireCode(ctx, input.code_id);
  const seen = new Set<string>();
  const items: (CodingInput & { range: TextRange })[] = [];
  input.segments.forEach((seg, index) => {
    const key = `${seg.source_id}:${seg.start_pos}:${seg.end_pos}`;
    if (seen.has(key)) return;
    seen.add(key);
    let range: TextRange;
    try {
      range = requireTextRange(ctx, seg.source_id, seg.start_pos, seg.end_pos);
    } catch (e) {
      if (e instanceof ToolError)
        throw new ToolError(e.code, `segments[${index}]: ${e.message}. Nothing was recorded.`, { index, ...(e.details as object | undefined) });
      throw e;
    }
    items.push({
      source_id: seg.source_id,
      code_id: input.code_id,
      start_pos: seg.start_pos,
      end_pos: seg.end_pos,
      rationale: input.rationale,
      confidence: input.confidence ?? 80,
      range,
    });
  });
  const made = createBatch(ctx, { kind: 'batch_coding', code_id: input.code_id, rationale: input.rationale }, items);
  return { batch: made.batch, items: made.items, duplicates_dropped: input.segments.length - items.length };
}

function round(x: number): number {
  return Math.round(x * 1000) / 1000;
}
