/**
 * Search over a project: full-text search of source texts (search_text) and code search (search_codes).
 * The query language is in src/domain/searchQuery.ts; the similarity searches (search_semantic,
 * find_similar_segments) in src/domain/similarSegments.ts.
 *
 * The indexes are SQLite FTS4 tables (migration 5, kept in sync by triggers). FTS4 answers in UTF-8 byte
 * offsets (`offsets()`, https://sqlite.org/fts3.html#offsets); everything this module returns counts
 * Unicode code points of the stored text, half-open `[start_pos, end_pos)`, as every Marginalia position does.
 */
import { ToolError } from '../core/errors';
import { hasAstral } from '../core/text';
import type { DomainContext } from './events';
import type { CodeWithCounts, ProjectRepository, SearchFilter } from './ports';
import { parseSearchQuery, type QueryPhrase } from './searchQuery';

type Ctx = DomainContext<ProjectRepository>;

// ---------------------------------------------------------------------------------------------------------
// UTF-8 byte offsets -> code points

/**
 * Converts UTF-8 byte offsets into `text` (as SQLite reports them, e.g. FTS4 `offsets()`) to code point and
 * UTF-16 offsets, in one scan up to the largest offset. A character outside the Basic Multilingual Plane is
 * 4 bytes, 1 code point and 2 UTF-16 units; an unpaired surrogate counts as U+FFFD (3 bytes), as SQLite
 * stores it. An offset inside a character maps to the end of that character.
 *
 * Returns arrays parallel to `byteOffsets` (which need not be sorted).
 */
export function utf8OffsetsToPositions(text: string, byteOffsets: readonly number[]): { cp: number[]; u16: number[] } {
  const order = byteOffsets.map((_, i) => i).sort((a, b) => (byteOffsets[a] as number) - (byteOffsets[b] as number));
  const cp = new Array<number>(byteOffsets.length);
  const u16 = new Array<number>(byteOffsets.length);
  let u = 0;
  let points = 0;
  let bytes = 0;
  for (const idx of order) {
    const target = byteOffsets[idx] as number;
    while (bytes < target && u < text.length) {
      const c = text.charCodeAt(u);
      if (c < 0x80) {
        bytes += 1;
        u += 1;
      } else if (c < 0x800) {
        bytes += 2;
        u += 1;
      } else if (c >= 0xd800 && c <= 0xdbff && u + 1 < text.length && (text.charCodeAt(u + 1) & 0xfc00) === 0xdc00) {
        bytes += 4;
        u += 2;
      } else {
        bytes += 3;
        u += 1;
      }
      points++;
    }
    cp[idx] = points;
    u16[idx] = u;
  }
  return { cp, u16 };
}

/**
 * Groups FTS4 `offsets()` entries into matches: a phrase of n tokens occurs as n entries with consecutive
 * term numbers in text order and becomes one byte range from its first token's start to its last token's
 * end; a single-token phrase is one range per entry. Ranges come sorted by start.
 *
 * `offsets` is FTS4's string of "column term byte_offset byte_size" quadruples; `phrases` the parsed query's.
 */
export function groupOffsets(offsets: string, phrases: readonly QueryPhrase[]): { start: number; end: number }[] {
  const nums = offsets.trim() === '' ? [] : offsets.trim().split(/\s+/).map(Number);
  const entries: { term: number; start: number; size: number }[] = [];
  for (let i = 0; i + 3 < nums.length; i += 4) entries.push({ term: nums[i + 1] as number, start: nums[i + 2] as number, size: nums[i + 3] as number });
  entries.sort((a, b) => a.start - b.start || a.term - b.term);
  const phraseOfTerm = new Map<number, QueryPhrase>();
  for (const p of phrases) for (let t = 0; t < p.tokens; t++) phraseOfTerm.set(p.firstTerm + t, p);
  const used = new Uint8Array(entries.length);
  const out: { start: number; end: number }[] = [];
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i] as (typeof entries)[number];
    const p = phraseOfTerm.get(e.term);
    if (used[i] || !p || e.term !== p.firstTerm) continue;
    used[i] = 1;
    let last = e;
    let want = e.term + 1;
    for (let j = i + 1; j < entries.length && want < p.firstTerm + p.tokens; j++) {
      const f = entries[j] as (typeof entries)[number];
      if (f.start > last.start + last.size + 4096) break;
      if (!used[j] && f.term === want && f.start >= last.start + last.size) {
        used[j] = 1;
        last = f;
        want++;
      }
    }
    out.push({ start: e.start, end: last.start + last.size });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------
// Positions without re-tokenizing in SQLite

/** Characters of a token for the fast path: letters, digits and combining marks (unicode61's token characters, closely). */
const TOKEN_CHAR = '[\\p{L}\\p{N}\\p{M}]';

function escapeRegExp(c: string): string {
  return /[\\^$.*+?()[\]{}|/]/.test(c) ? `\\${c}` : c;
}

/**
 * A regular expression finding one phrase of a parsed query in original text, fast: each token's characters
 * literally but in any case, tokens separated by non-token characters, the phrase not inside a longer word (a
 * prefix token may continue). It places matches without FTS4's `offsets()`, which re-tokenizes the whole
 * document in WebAssembly (about 0.1-0.3 ms per KB).
 *
 * It finds a subset of what FTS4 matches (an accented spelling such as "Café" for the token "cafe" is left to
 * FTS4), so {@link searchText} uses it for a source only when it finds exactly FTS4's count there.
 */
export function phraseRegExp(words: readonly { text: string; prefix: boolean }[]): RegExp {
  const token = (w: { text: string; prefix: boolean }) => [...w.text].map(escapeRegExp).join('') + (w.prefix ? `${TOKEN_CHAR}*` : '');
  const last = words[words.length - 1];
  return new RegExp(`(?<!${TOKEN_CHAR})${words.map(token).join('[^\\p{L}\\p{N}\\p{M}]+')}${last?.prefix ? '' : `(?!${TOKEN_CHAR})`}`, 'giu');
}

/** Every match of `regexes` in `text` as UTF-16 ranges, sorted by start (then end). */
function regexRanges(text: string, regexes: readonly RegExp[]): { start: number; end: number }[] {
  const out: { start: number; end: number }[] = [];
  for (const re of regexes) {
    re.lastIndex = 0;
    for (let m = re.exec(text); m !== null; m = re.exec(text)) {
      out.push({ start: m.index, end: m.index + m[0].length });
      if (m[0].length === 0) re.lastIndex++;
    }
  }
  return out.sort((a, b) => a.start - b.start || a.end - b.end);
}

/** Code point offsets of UTF-16 offsets `u16s` into `text` (any order), in one scan up to the largest. */
function utf16ToCodePoints(text: string, u16s: readonly number[]): number[] {
  if (!hasAstral(text)) return [...u16s];
  const order = u16s.map((_, i) => i).sort((a, b) => (u16s[a] as number) - (u16s[b] as number));
  const out = new Array<number>(u16s.length);
  let u = 0;
  let cp = 0;
  for (const idx of order) {
    const target = u16s[idx] as number;
    while (u < target && u < text.length) {
      const c = text.charCodeAt(u);
      u += c >= 0xd800 && c <= 0xdbff && u + 1 < text.length && (text.charCodeAt(u + 1) & 0xfc00) === 0xdc00 ? 2 : 1;
      cp++;
    }
    out[idx] = cp;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------
// Snippets

/** Code points of context on each side of a match in a snippet. */
export const SNIPPET_CONTEXT = 60;
/** The marks around the match in a snippet. */
export const SNIPPET_OPEN = '«';
export const SNIPPET_CLOSE = '»';

/**
 * The text around `[u16Start, u16End)` of `text` (UTF-16 offsets) with the match marked «like this»: about
 * `context` code points on each side, cut at a word boundary where one is near, runs of white space shown as
 * one space, and "…" where the text goes on.
 */
export function snippetAround(text: string, u16Start: number, u16End: number, context = SNIPPET_CONTEXT): string {
  let from = u16Start;
  for (let n = 0; n < context && from > 0; n++) from -= isLowSurrogate(text.charCodeAt(from - 1)) && from > 1 ? 2 : 1;
  let to = u16End;
  for (let n = 0; n < context && to < text.length; n++) to += isHighSurrogate(text.charCodeAt(to)) && to + 1 < text.length ? 2 : 1;
  if (from > 0) {
    const ws = text.slice(from, u16Start).search(/\s/);
    if (ws >= 0 && ws < 20) from += ws + 1;
  }
  if (to < text.length) {
    const tail = text.slice(u16End, to);
    const ws = tail.search(/\s\S*$/);
    if (ws >= 0 && tail.length - ws < 20) to = u16End + ws;
  }
  const squash = (s: string) => s.replace(/\s+/g, ' ');
  const before = squash(text.slice(from, u16Start)).trimStart();
  const after = squash(text.slice(u16End, to)).trimEnd();
  return `${from > 0 ? '…' : ''}${before}${SNIPPET_OPEN}${squash(text.slice(u16Start, u16End))}${SNIPPET_CLOSE}${after}${to < text.length ? '…' : ''}`;
}

function isLowSurrogate(c: number): boolean {
  return c >= 0xdc00 && c <= 0xdfff;
}
function isHighSurrogate(c: number): boolean {
  return c >= 0xd800 && c <= 0xdbff;
}

// ---------------------------------------------------------------------------------------------------------
// search_text

/** Input of {@link searchText}. */
export interface SearchTextInput {
  query: string;
  filter: SearchFilter;
  /** largest number of matches returned */
  limit: number;
  /** matches to skip (paging) */
  offset: number;
}

/** One occurrence of the query in a source. Positions in code points; `text` is exactly `[start_pos, end_pos)`. */
export interface TextMatch {
  source_id: number;
  source_name: string;
  start_pos: number;
  end_pos: number;
  text: string;
  /** the text around the match with the match marked «like this» */
  snippet: string;
}

/** Result of {@link searchText}. */
export interface SearchTextResult {
  /** the FTS4 expression that ran (shows how the query was read) */
  fts_query: string;
  /** matches in this page */
  count: number;
  /** matches in all sources (a phrase occurrence counts once) */
  total: number;
  /** sources with at least one match */
  sources_matched: number;
  offset: number;
  has_more: boolean;
  /** the offset of the next page, or null */
  next_offset: number | null;
  /** by source_id, then position */
  matches: TextMatch[];
}

/**
 * Full-text search of source texts through the FTS4 index `source_fts`: every occurrence of the query, in
 * source order (source_id) and text order, paged by `offset` and `limit`. `total` comes from FTS4
 * `matchinfo(..., 'y')` (phrase hits per source, https://sqlite.org/fts3.html#matchinfo) so it costs no
 * document scan. Positions, for the sources on the page only, come from {@link phraseRegExp} when it finds
 * exactly FTS4's count in a source, and otherwise (and for NEAR queries) from FTS4 `offsets()`, converted
 * from UTF-8 bytes to code points.
 *
 * Errors: INVALID_ARGUMENTS (query syntax, see {@link parseSearchQuery}), SOURCE_NOT_FOUND, FOLDER_NOT_FOUND
 * (filters naming what does not exist).
 */
export function searchText(ctx: Ctx, input: SearchTextInput): SearchTextResult {
  const parsed = parseSearchQuery(input.query, (t) => ctx.repo.searchTokenize(t));
  checkFilter(ctx, input.filter);
  const hits = ctx.repo.searchSourceHits(parsed.match, input.filter);
  let total = 0;
  for (const h of hits) total += h.hits;
  const matches: TextMatch[] = [];
  const hitsOf = new Map(hits.map((h) => [h.source_id, h.hits]));
  // Matches are placed with JavaScript regular expressions when they find exactly as many occurrences in a
  // source as FTS4 counted there (matchinfo); otherwise (and for NEAR) with FTS4 offsets(), which is exact
  // but re-tokenizes the document.
  const regexes = parsed.near ? null : parsed.phrases.map((p) => phraseRegExp(p.words));
  // skip whole sources before the page by their hit counts, then place matches a few sources at a time
  let skip = input.offset;
  let i = 0;
  while (i < hits.length && skip >= (hits[i] as (typeof hits)[number]).hits) skip -= (hits[i++] as (typeof hits)[number]).hits;
  while (i < hits.length && matches.length < input.limit) {
    const batch: number[] = [];
    let expected = -skip;
    while (i < hits.length && (batch.length === 0 || expected < input.limit - matches.length) && batch.length < 64) {
      const h = hits[i++] as (typeof hits)[number];
      batch.push(h.source_id);
      expected += h.hits;
    }
    // bmp: the text has no character outside the Basic Multilingual Plane (as many UTF-16 units as code
    // points, which content_length counts), so UTF-16 offsets are code points without scanning it again
    const placed = new Map<number, { name: string; content: string; bmp: boolean; ranges: { start: number; end: number }[] }>();
    const exact: number[] = [];
    for (const row of ctx.repo.getSourceTextsForSearch(batch)) {
      const ranges = regexes ? regexRanges(row.content, regexes) : null;
      if (ranges && ranges.length === hitsOf.get(row.source_id))
        placed.set(row.source_id, { name: row.name, content: row.content, bmp: row.content.length === row.length, ranges });
      else exact.push(row.source_id);
    }
    for (const row of ctx.repo.searchSourceOffsets(parsed.match, exact)) {
      const bytes = groupOffsets(row.offsets, parsed.phrases);
      const u16 = utf8OffsetsToPositions(
        row.content,
        bytes.flatMap((r) => [r.start, r.end]),
      ).u16;
      placed.set(row.source_id, {
        name: row.name,
        content: row.content,
        bmp: row.content.length === row.length,
        ranges: bytes.map((_, r) => ({ start: u16[2 * r] as number, end: u16[2 * r + 1] as number })),
      });
    }
    for (const id of batch) {
      const doc = placed.get(id);
      if (!doc) continue;
      const u16 = doc.ranges.flatMap((r) => [r.start, r.end]);
      const cps = doc.bmp ? u16 : utf16ToCodePoints(doc.content, u16);
      for (let r = 0; r < doc.ranges.length && matches.length < input.limit; r++) {
        if (skip > 0) {
          skip--;
          continue;
        }
        const { start, end } = doc.ranges[r] as { start: number; end: number };
        matches.push({
          source_id: id,
          source_name: doc.name,
          start_pos: cps[2 * r] as number,
          end_pos: cps[2 * r + 1] as number,
          text: doc.content.slice(start, end),
          snippet: snippetAround(doc.content, start, end),
        });
      }
      if (matches.length >= input.limit) break;
    }
  }
  const end = input.offset + matches.length;
  const hasMore = end < total && matches.length > 0;
  return {
    fts_query: parsed.match,
    count: matches.length,
    total,
    sources_matched: hits.length,
    offset: input.offset,
    has_more: hasMore,
    next_offset: hasMore ? end : null,
    matches,
  };
}

/**
 * Checks that a filter names existing sources, folder and codes. Errors: SOURCE_NOT_FOUND, FOLDER_NOT_FOUND,
 * CODE_NOT_FOUND (the first unknown id).
 */
export function checkFilter(ctx: Ctx, filter: SearchFilter): void {
  for (const id of filter.source_ids ?? [])
    if (!ctx.repo.getSource(id)) throw new ToolError('SOURCE_NOT_FOUND', `No source with source_id ${id} (filters.source_ids)`);
  if (filter.folder_id !== undefined && !ctx.repo.getFolder(filter.folder_id))
    throw new ToolError('FOLDER_NOT_FOUND', `No folder with folder_id ${filter.folder_id} (filters.folder_id)`);
  for (const id of filter.code_ids ?? []) if (!ctx.repo.getCode(id)) throw new ToolError('CODE_NOT_FOUND', `No code with code_id ${id} (filters.code_ids)`);
}

// ---------------------------------------------------------------------------------------------------------
// search_codes

/** A code found by {@link searchCodes}, with its score and where the query matched. */
export interface CodeHit {
  code: CodeWithCounts;
  score: number;
  matched_in: ('name' | 'memo')[];
}

/** Words of a search_codes query that count (more are ignored). */
export const MAX_CODE_QUERY_WORDS = 16;

/**
 * Codes whose name or memo contains a word starting with one of the query's words (case- and
 * accent-insensitive, FTS4 index `code_fts`), best first. Score per query word w found in a code:
 * idf(w) x (2 if in the name + 1 if in the memo), idf(w) = ln(1 + N / df(w)) over the N codes; plus 10 when
 * the name is exactly the query (same tokens) and 1 when the name starts with the query's tokens. Ties go
 * by name. Returns every hit (the caller pages).
 *
 * Errors: INVALID_ARGUMENTS (no word with letters or digits).
 */
export function searchCodes(ctx: Ctx, query: string): CodeHit[] {
  const words = [...new Set(ctx.repo.searchTokenize(query))];
  if (words.length === 0) throw new ToolError('INVALID_ARGUMENTS', `The query ${JSON.stringify(query)} has no searchable word (letters or digits)`);
  const used = words.slice(0, MAX_CODE_QUERY_WORDS);
  const rows = ctx.repo.searchCodeRows(used.map((w) => `"${w}*"`).join(' OR '));
  const queryTokens = ctx.repo.searchTokenize(query).join(' ');
  const hits: CodeHit[] = [];
  for (const row of rows) {
    const mi = row.matchinfo; // pcnx: p, c (2: name, memo), n, then 3 integers per phrase and column
    const p = mi[0] as number;
    const c = mi[1] as number;
    const n = mi[2] as number;
    let score = 0;
    let inName = false;
    let inMemo = false;
    for (let ph = 0; ph < p; ph++) {
      const at = (col: number, k: number) => mi[3 + 3 * (ph * c + col) + k] as number;
      const df = Math.max(at(0, 2), at(1, 2), 1);
      const idf = Math.log(1 + n / df);
      if (at(0, 0) > 0) {
        score += 2 * idf;
        inName = true;
      }
      if (at(1, 0) > 0) {
        score += idf;
        inMemo = true;
      }
    }
    const code = ctx.repo.getCode(row.code_id);
    if (!code) continue;
    const nameTokens = ctx.repo.searchTokenize(code.name).join(' ');
    if (nameTokens === queryTokens) score += 10;
    else if (nameTokens.startsWith(`${queryTokens} `)) score += 1;
    hits.push({ code, score: round(score), matched_in: [...(inName ? ['name' as const] : []), ...(inMemo ? ['memo' as const] : [])] });
  }
  return hits.sort((a, b) => b.score - a.score || a.code.name.localeCompare(b.code.name) || a.code.code_id - b.code.code_id);
}

function round(x: number): number {
  return Math.round(x * 10_000) / 10_000;
}
