/**
 * Search over a project: full-text search of source texts (search_text), code search (search_codes), and
 * the lexical side of the similarity searches (search_semantic and find_similar_segments when no embedding
 * model is configured), plus the vector arithmetic of the embedding side.
 *
 * The indexes are SQLite FTS4 tables (migration 5, kept in sync by triggers). FTS4 answers in UTF-8 byte
 * offsets (`offsets()`, https://sqlite.org/fts3.html#offsets); everything this module returns counts
 * Unicode code points of the stored text, half-open `[start_pos, end_pos)`, as every Marginalia position does.
 *
 * Queries are parsed here, not handed to SQLite verbatim: the parser knows which query terms form one
 * phrase (so a phrase match is reported as one range), tokenizes words with the index's own tokenizer, and
 * re-serializes a fully parenthesized FTS4 expression, so SQLite's operator precedence can never differ from
 * what the caller was told. Syntax errors are INVALID_ARGUMENTS with a message saying what is wrong.
 */
import { ToolError } from '../core/errors';
import { hasAstral } from '../core/text';
import type { DomainContext } from './events';
import type { CodeWithCounts, ProjectRepository, SearchFilter, SearchSegment } from './ports';
import { textSegmentNotFound } from './segmentKinds';

type Ctx = DomainContext<ProjectRepository>;

// ---------------------------------------------------------------------------------------------------------
// Query syntax

/** Largest number of phrases (words or quoted phrases) in one query. */
export const MAX_QUERY_PHRASES = 64;

/** One matchable phrase of a parsed query: the FTS4 terms `[firstTerm, firstTerm + tokens)`. */
export interface QueryPhrase {
  /** number of the phrase's first term in FTS4's numbering (offsets() column 2) */
  firstTerm: number;
  /** how many tokens (terms) the phrase has */
  tokens: number;
  /** the phrase as serialized, e.g. `"water rota"` or `"garden*"` */
  text: string;
  /** its tokens as the index's tokenizer made them (lower case, no diacritics); `prefix`: matches as a prefix */
  words: { text: string; prefix: boolean }[];
}

/** A query ready for FTS4. */
export interface ParsedQuery {
  /** the FTS4 MATCH expression (enhanced query syntax, fully parenthesized) */
  match: string;
  /** the matchable phrases in FTS4's order (phrases on the right of NOT are not matchable and not listed) */
  phrases: QueryPhrase[];
  /** true when the query uses NEAR (its matches depend on distances, so positions must come from FTS4) */
  near: boolean;
}

type Lexeme =
  | { k: 'word'; text: string; prefix: boolean; raw: string }
  | { k: 'phrase'; words: { text: string; prefix: boolean }[]; raw: string }
  | { k: 'and' | 'or' | 'not' | 'lparen' | 'rparen' }
  | { k: 'near'; distance: number | null };

type Node =
  | { t: 'phrase'; tokens: { text: string; prefix: boolean }[] }
  | { t: 'and' | 'or'; kids: Node[] }
  | { t: 'not'; left: Node; right: Node }
  | { t: 'near'; kids: PhraseNode[]; distances: (number | null)[] };
type PhraseNode = Extract<Node, { t: 'phrase' }>;

/** The syntax help every INVALID_ARGUMENTS message of a query ends with. */
export const QUERY_SYNTAX_HELP =
  'Syntax: words (all must occur), "a quoted phrase", prefix* (garden* finds garden, gardens, gardening), ' +
  'OR, AND, NOT (binary: a NOT b), NEAR or NEAR/n between words or phrases, and parentheses. Operators are upper case; ' +
  'matching ignores case and accents; punctuation and emoji are not indexed.';

function syntaxError(query: string, what: string): ToolError {
  return new ToolError('INVALID_ARGUMENTS', `Invalid search query ${JSON.stringify(query)}: ${what}. ${QUERY_SYNTAX_HELP}`);
}

function lex(query: string): Lexeme[] {
  const out: Lexeme[] = [];
  let i = 0;
  while (i < query.length) {
    const c = query[i] as string;
    if (/\s/.test(c)) {
      i++;
    } else if (c === '"') {
      const start = i;
      const close = query.indexOf('"', i + 1);
      if (close < 0) throw syntaxError(query, 'a quotation mark is not closed');
      const inner = query.slice(i + 1, close);
      i = close + 1;
      let trailingStar = false;
      while (query[i] === '*') {
        trailingStar = true;
        i++;
      }
      const words = inner
        .split(/\s+/)
        .filter((w) => w.length > 0)
        .map((w) => ({ text: w.replace(/\*+$/, ''), prefix: /\*$/.test(w) }));
      const last = words[words.length - 1];
      if (trailingStar && last) last.prefix = true;
      out.push({ k: 'phrase', words, raw: query.slice(start, i) });
    } else if (c === '(') {
      out.push({ k: 'lparen' });
      i++;
    } else if (c === ')') {
      out.push({ k: 'rparen' });
      i++;
    } else {
      let j = i;
      while (j < query.length && !/[\s"()]/.test(query[j] as string)) j++;
      const raw = query.slice(i, j);
      i = j;
      const near = /^NEAR(?:\/(\d+))?$/.exec(raw);
      if (raw === 'AND') out.push({ k: 'and' });
      else if (raw === 'OR') out.push({ k: 'or' });
      else if (raw === 'NOT') out.push({ k: 'not' });
      else if (near) out.push({ k: 'near', distance: near[1] === undefined ? null : Number(near[1]) });
      else out.push({ k: 'word', text: raw.replace(/\*+$/, ''), prefix: /\*$/.test(raw), raw });
    }
  }
  return out;
}

/**
 * Parses a search_text query (syntax in {@link QUERY_SYNTAX_HELP}) into an FTS4 MATCH expression and the
 * list of its matchable phrases. `tokenize` must be the index's tokenizer (`ProjectRepository.searchTokenize`):
 * a word it splits in several tokens (`e-mail`) becomes a phrase of them; a word with no tokens (emoji,
 * punctuation) is dropped. Precedence, loosest first: OR, AND (also implicit between neighbours), NOT, NEAR,
 * as in FTS4's enhanced query syntax (https://sqlite.org/fts3.html#_set_operations_using_the_enhanced_query_syntax).
 *
 * Errors: INVALID_ARGUMENTS (unclosed quote or parenthesis, an operator without an operand, NEAR between
 * groups, no searchable word, more than {@link MAX_QUERY_PHRASES} phrases).
 */
export function parseSearchQuery(query: string, tokenize: (text: string) => string[]): ParsedQuery {
  const lexemes = lex(query);
  let pos = 0;
  const peek = () => lexemes[pos];
  const tokensOf = (words: { text: string; prefix: boolean }[]): PhraseNode['tokens'] => {
    const tokens: PhraseNode['tokens'] = [];
    for (const w of words) {
      const ts = tokenize(w.text);
      ts.forEach((t, n) => tokens.push({ text: t, prefix: w.prefix && n === ts.length - 1 }));
    }
    return tokens;
  };
  const startsOperand = (l: Lexeme | undefined) => l !== undefined && (l.k === 'word' || l.k === 'phrase' || l.k === 'lparen');
  const describe = (l: Lexeme | undefined) => (l === undefined ? 'the end of the query' : l.k === 'word' || l.k === 'phrase' ? JSON.stringify(l.raw) : l.k === 'lparen' ? '"("' : l.k === 'rparen' ? '")"' : l.k.toUpperCase());

  // Each level returns null for an operand without searchable words (dropped where that keeps the meaning).
  const primary = (): Node | null => {
    const l = peek();
    if (!l) throw syntaxError(query, 'a word or phrase is missing at the end');
    if (l.k === 'lparen') {
      pos++;
      const inner = orExpr();
      if (peek()?.k !== 'rparen') throw syntaxError(query, `a parenthesis is not closed (found ${describe(peek())})`);
      pos++;
      return inner;
    }
    if (l.k === 'word' || l.k === 'phrase') {
      pos++;
      const tokens = tokensOf(l.k === 'word' ? [{ text: l.text, prefix: l.prefix }] : l.words);
      return tokens.length > 0 ? { t: 'phrase', tokens } : null;
    }
    throw syntaxError(query, `expected a word or phrase but found ${describe(l)}`);
  };
  const nearExpr = (): Node | null => {
    const first = primary();
    if (peek()?.k !== 'near') return first;
    const kids: (Node | null)[] = [first];
    const distances: (number | null)[] = [];
    while (peek()?.k === 'near') {
      const op = peek() as { k: 'near'; distance: number | null };
      pos++;
      if (!startsOperand(peek())) throw syntaxError(query, `NEAR needs a word or phrase after it (found ${describe(peek())})`);
      distances.push(op.distance);
      kids.push(primary());
    }
    if (kids.some((k) => k === null || k.t !== 'phrase')) throw syntaxError(query, 'NEAR joins words or quoted phrases only (no groups in parentheses, no words without letters or digits)');
    return { t: 'near', kids: kids as PhraseNode[], distances };
  };
  const notExpr = (): Node | null => {
    let left = nearExpr();
    while (peek()?.k === 'not') {
      pos++;
      if (!startsOperand(peek())) throw syntaxError(query, `NOT needs a word or phrase after it (found ${describe(peek())})`);
      const right = nearExpr();
      if (left === null) throw syntaxError(query, 'NOT needs searchable words before it (write: a NOT b)');
      if (right !== null) left = { t: 'not', left, right };
    }
    return left;
  };
  const andExpr = (): Node | null => {
    const kids: (Node | null)[] = [notExpr()];
    for (;;) {
      const l = peek();
      if (l?.k === 'and') {
        pos++;
        if (!startsOperand(peek())) throw syntaxError(query, `AND needs a word or phrase after it (found ${describe(peek())})`);
        kids.push(notExpr());
      } else if (startsOperand(l)) {
        kids.push(notExpr());
      } else break;
    }
    const kept = kids.filter((k): k is Node => k !== null);
    return kept.length === 0 ? null : kept.length === 1 ? (kept[0] as Node) : { t: 'and', kids: kept };
  };
  const orExpr = (): Node | null => {
    if (peek()?.k === 'not') throw syntaxError(query, 'NOT is binary: write a NOT b');
    const kids: (Node | null)[] = [andExpr()];
    while (peek()?.k === 'or') {
      pos++;
      if (!startsOperand(peek())) throw syntaxError(query, `OR needs a word or phrase after it (found ${describe(peek())})`);
      kids.push(andExpr());
    }
    const kept = kids.filter((k): k is Node => k !== null);
    return kept.length === 0 ? null : kept.length === 1 ? (kept[0] as Node) : { t: 'or', kids: kept };
  };

  if (lexemes.length === 0) throw syntaxError(query, 'it is empty');
  const root = orExpr();
  if (pos < lexemes.length) throw syntaxError(query, `unexpected ${describe(peek())}${peek()?.k === 'rparen' ? ' (no matching opening parenthesis)' : ''}`);
  if (root === null) throw syntaxError(query, 'it has no searchable word (letters or digits)');

  const phrases: QueryPhrase[] = [];
  let term = 0;
  let near = false;
  const phraseText = (p: PhraseNode) => `"${p.tokens.map((t) => `${t.text}${t.prefix ? '*' : ''}`).join(' ')}"`;
  // Serializes in FTS4's own iteration order (left to right, skipping the right side of NOT), which is how
  // offsets() numbers terms and matchinfo() orders phrases.
  const emit = (n: Node, matchable: boolean): string => {
    switch (n.t) {
      case 'phrase': {
        const text = phraseText(n);
        if (matchable) {
          phrases.push({ firstTerm: term, tokens: n.tokens.length, text, words: n.tokens });
          term += n.tokens.length;
        }
        return text;
      }
      case 'and':
      case 'or':
        return `(${n.kids.map((k) => emit(k, matchable)).join(n.t === 'and' ? ' AND ' : ' OR ')})`;
      case 'not':
        return `(${emit(n.left, matchable)} NOT ${emit(n.right, false)})`;
      case 'near':
        near = true;
        return `(${n.kids.map((k, i) => (i === 0 ? '' : `NEAR${n.distances[i - 1] === null ? '' : `/${n.distances[i - 1]}`} `) + emit(k, matchable)).join(' ')})`;
    }
  };
  const match = emit(root, true);
  if (phrases.length > MAX_QUERY_PHRASES) throw syntaxError(query, `it has ${phrases.length} phrases; at most ${MAX_QUERY_PHRASES} are allowed`);
  return { match, phrases, near };
}

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
      if (ranges && ranges.length === hitsOf.get(row.source_id)) placed.set(row.source_id, { name: row.name, content: row.content, bmp: row.content.length === row.length, ranges });
      else exact.push(row.source_id);
    }
    for (const row of ctx.repo.searchSourceOffsets(parsed.match, exact)) {
      const bytes = groupOffsets(row.offsets, parsed.phrases);
      const u16 = utf8OffsetsToPositions(row.content, bytes.flatMap((r) => [r.start, r.end])).u16;
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
  for (const id of filter.source_ids ?? []) if (!ctx.repo.getSource(id)) throw new ToolError('SOURCE_NOT_FOUND', `No source with source_id ${id} (filters.source_ids)`);
  if (filter.folder_id !== undefined && !ctx.repo.getFolder(filter.folder_id)) throw new ToolError('FOLDER_NOT_FOUND', `No folder with folder_id ${filter.folder_id} (filters.folder_id)`);
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

// ---------------------------------------------------------------------------------------------------------
// Similar segments: lexical (BM25) and vectors (cosine)

/** A segment with its similarity score. */
export interface ScoredSegment {
  segment: SearchSegment;
  score: number;
}

/** A passage (one range of one source) in a similarity result; `codes` lists each segment coding it. */
export interface SimilarPassage {
  segment_id: number;
  source_id: number;
  source_name: string;
  start_pos: number;
  end_pos: number;
  text: string;
  /** true when `text` was cut to {@link MAX_PASSAGE_TEXT} code points */
  text_truncated: boolean;
  score: number;
  codes: { code_id: number; code_name: string; segment_id: number }[];
}

/** Longest passage text in a similarity result, in code points (read_source_content gives the rest). */
export const MAX_PASSAGE_TEXT = 1000;

/** BM25 parameters (Robertson and Zaragoza, "The Probabilistic Relevance Framework: BM25 and Beyond", 2009). */
const BM25_K1 = 1.2;
const BM25_B = 0.75;
/** Query terms kept for a lexical similarity query (the most selective ones). */
const MAX_LEXICAL_TERMS = 24;
/**
 * Budget of segments the chosen terms may match (the sum of their document frequencies), so a query of common
 * words does not score most of the project (BM25 rows cost about 10 us each in sql.js).
 */
const MAX_LEXICAL_ROWS = 20_000;

/**
 * A light English suffix stripper: removes one inflectional ending (-ings, -ies, -ied, -ing, -es, -ed, -ly,
 * -s, -y, -e) when at least 4 letters remain ("gardens" -> garden, "sharing" -> shar, "communities" ->
 * communit). The lexical similarity search also looks for the stem of each inflected query word; words of
 * other languages mostly pass through unchanged.
 */
export function prefixStem(token: string): string {
  for (const suffix of ['ings', 'ies', 'ied', 'ing', 'es', 'ed', 'ly', 's', 'y', 'e']) {
    if (token.endsWith(suffix) && [...token].length - suffix.length >= 4) return token.slice(0, -suffix.length);
  }
  return token;
}

/**
 * Segments lexically similar to `text` by Okapi BM25 over the FTS4 segment index `segment_fts`. The query's
 * terms are its words and, for inflected words, their stems by {@link prefixStem} ("rotas" also looks for
 * "rota", "gardening" for "garden"), all matched exactly (prefix queries would expand to every indexed word
 * with that prefix, which is slow and unselective); each term is weighted by its frequency in `text`.
 * Terms found in more than half of all segments are dropped; then the most selective (highest idf x query
 * frequency) are used, at most {@link MAX_LEXICAL_TERMS} and only while their document frequencies add up to
 * at most {@link MAX_LEXICAL_ROWS} segments (at least the rarest term).
 * idf = ln(1 + (N - df + 0.5) / (df + 0.5)); statistics from FTS4 matchinfo 'pcnx' and 'pcnalx'
 * (https://sqlite.org/fts3.html#matchinfo).
 *
 * Returns the segments with a positive score that `keep` accepts, best first (ties by segment_id), enough of
 * them to form the best `k` passages (see {@link toPassages}).
 */
export function bm25Segments(ctx: Ctx, text: string, filter: SearchFilter, k: number, keep: (s: SearchSegment) => boolean = () => true): ScoredSegment[] {
  const freq = new Map<string, number>();
  for (const t of ctx.repo.searchTokenize(text)) {
    const forms = new Set([t, prefixStem(t)]);
    for (const f of forms) freq.set(f, (freq.get(f) ?? 0) + 1);
  }
  const forms = [...freq.keys()].slice(0, 256);
  if (forms.length === 0) return [];
  const stats = ctx.repo.searchSegmentStats(forms.map((f) => `"${f}"`).join(' OR '));
  if (!stats) return [];
  const n = stats[2] as number;
  const idf = (df: number) => Math.log(1 + (n - df + 0.5) / (df + 0.5));
  const ranked = forms
    .map((f, i) => ({ f, df: stats[3 + 3 * i + 2] as number, qf: freq.get(f) as number }))
    .filter((c) => c.df > 0)
    .map((c) => ({ ...c, w: idf(c.df) * c.qf }))
    .sort((a, b) => b.w - a.w || a.f.localeCompare(b.f));
  const terms: typeof ranked = [];
  let budget = 0;
  for (const c of ranked) {
    if (terms.length >= MAX_LEXICAL_TERMS) break;
    if (c.df > n / 2 || (terms.length > 0 && budget + c.df > MAX_LEXICAL_ROWS)) continue;
    terms.push(c);
    budget += c.df;
  }
  if (terms.length === 0) {
    const rarest = [...ranked].sort((a, b) => a.df - b.df || a.f.localeCompare(b.f))[0];
    if (rarest) terms.push(rarest);
  }
  if (terms.length === 0) return [];
  const scored: { id: number; score: number }[] = [];
  for (const row of ctx.repo.searchSegmentRows(terms.map((t) => `"${t.f}"`).join(' OR '), filter)) {
    const mi = row.matchinfo; // p, c (1), n, a (avg tokens), l (tokens of this row), then 3 integers per phrase
    const p = mi[0] as number;
    const avg = Math.max(mi[3] as number, 1);
    const len = mi[4] as number;
    let score = 0;
    for (let ph = 0; ph < p; ph++) {
      const tf = mi[5 + 3 * ph] as number;
      if (tf === 0) continue;
      const t = terms[ph] as (typeof terms)[number];
      score += idf(t.df) * t.qf * ((tf * (BM25_K1 + 1)) / (tf + BM25_K1 * (1 - BM25_B + (BM25_B * len) / avg)));
    }
    if (score > 0) scored.push({ id: row.segment_id, score });
  }
  scored.sort((a, b) => b.score - a.score || a.id - b.id);
  return takeSegments(ctx, scored, keep, k);
}

/**
 * Segments ranked by cosine similarity of their vectors to `query` (vectors by segment id; segments without
 * one are skipped). Returns those `keep` accepts, best first (ties by segment_id), enough of them to form the
 * best `k` passages.
 */
export function cosineSegments(
  ctx: Ctx,
  query: readonly number[] | Float32Array,
  vectors: ReadonlyMap<number, Float32Array>,
  k: number,
  keep: (s: SearchSegment) => boolean = () => true,
): ScoredSegment[] {
  const scored: { id: number; score: number }[] = [];
  for (const [id, v] of vectors) scored.push({ id, score: cosine(query, v) });
  scored.sort((a, b) => b.score - a.score || a.id - b.id);
  return takeSegments(ctx, scored, keep, k);
}

/**
 * Loads the scored ids (sorted best first) as segments, in chunks, keeping those `keep` accepts, until `k`
 * distinct passages (source and range) are certain: it stops after a chunk once k passages are in and the
 * chunk ended below the k-th passage's score, so segments tied with it (the same passage under other codes)
 * are all included.
 */
function takeSegments(ctx: Ctx, scored: { id: number; score: number }[], keep: (s: SearchSegment) => boolean, k: number): ScoredSegment[] {
  const out: ScoredSegment[] = [];
  const passages = new Map<string, number>();
  for (let i = 0; i < scored.length; i += 200) {
    const chunk = scored.slice(i, i + 200);
    const byId = new Map(ctx.repo.getSegmentsForSearch(chunk.map((c) => c.id)).map((s) => [s.segment_id, s]));
    for (const c of chunk) {
      const s = byId.get(c.id);
      if (!s || !keep(s)) continue;
      out.push({ segment: s, score: c.score });
      const key = `${s.source_id}:${s.start_pos}:${s.end_pos}`;
      if (!passages.has(key)) passages.set(key, c.score);
    }
    if (passages.size >= k) {
      const kth = [...passages.values()][k - 1] as number;
      if ((chunk[chunk.length - 1] as (typeof chunk)[number]).score < kth) break;
    }
  }
  return out;
}

/** Cosine similarity of two vectors of one dimension (0 when either is all zeros or the dimensions differ). */
export function cosine(a: readonly number[] | Float32Array, b: readonly number[] | Float32Array): number {
  if (a.length !== b.length) return 0;
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] as number;
    const y = b[i] as number;
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}

/**
 * Merges scored segments into passages: segments of the same source and range (one passage coded with
 * several codes) become one entry listing each coding, scored by its best segment. Returns the best `k`
 * passages, best first. Scores are rounded to 4 decimals.
 */
export function toPassages(scored: readonly ScoredSegment[], k: number): SimilarPassage[] {
  const byRange = new Map<string, SimilarPassage>();
  const order: SimilarPassage[] = [];
  for (const { segment: s, score } of scored) {
    const key = `${s.source_id}:${s.start_pos}:${s.end_pos}`;
    const seen = byRange.get(key);
    if (seen) {
      seen.codes.push({ code_id: s.code_id, code_name: s.code_name, segment_id: s.segment_id });
      continue;
    }
    if (order.length >= k) continue;
    const cps = [...s.text];
    const p: SimilarPassage = {
      segment_id: s.segment_id,
      source_id: s.source_id,
      source_name: s.source_name,
      start_pos: s.start_pos,
      end_pos: s.end_pos,
      text: cps.length > MAX_PASSAGE_TEXT ? cps.slice(0, MAX_PASSAGE_TEXT).join('') : s.text,
      text_truncated: cps.length > MAX_PASSAGE_TEXT,
      score: round(score),
      codes: [{ code_id: s.code_id, code_name: s.code_name, segment_id: s.segment_id }],
    };
    byRange.set(key, p);
    order.push(p);
  }
  return order;
}

/**
 * The segment with id `id` as the similarity searches see it, or SEGMENT_NOT_FOUND (for an AV segment's id,
 * saying that only text segments are compared).
 */
export function requireSearchSegment(ctx: Ctx, id: number): SearchSegment {
  const s = ctx.repo.getSegmentsForSearch([id])[0];
  if (!s) throw textSegmentNotFound(ctx.repo, id, 'similarity searches compare text segments only');
  return s;
}

/** True when `s` is `target` or overlaps it in the same source (excluded from "similar to target"). */
export function overlapsSegment(target: SearchSegment, s: SearchSegment): boolean {
  return s.source_id === target.source_id && s.start_pos < target.end_pos && s.end_pos > target.start_pos;
}

function round(x: number): number {
  return Math.round(x * 10_000) / 10_000;
}
