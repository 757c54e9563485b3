/**
 * The query language of search_text (src/domain/search.ts): words, "quoted phrases", word* prefixes,
 * AND / OR / NOT / NEAR[/n] and parentheses, parsed here rather than handed to SQLite verbatim. The parser
 * knows which query terms form one phrase (so a phrase match is reported as one range), tokenizes words with
 * the index's own tokenizer, and re-serializes a fully parenthesized FTS4 expression, so SQLite's operator
 * precedence can never differ from what the caller was told. Syntax errors are INVALID_ARGUMENTS with a
 * message saying what is wrong.
 */
import { ToolError } from '../core/errors';

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
  const describe = (l: Lexeme | undefined) =>
    l === undefined
      ? 'the end of the query'
      : l.k === 'word' || l.k === 'phrase'
        ? JSON.stringify(l.raw)
        : l.k === 'lparen'
          ? '"("'
          : l.k === 'rparen'
            ? '")"'
            : l.k.toUpperCase();

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
    if (kids.some((k) => k === null || k.t !== 'phrase'))
      throw syntaxError(query, 'NEAR joins words or quoted phrases only (no groups in parentheses, no words without letters or digits)');
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
  return serializeQuery(query, root);
}

/**
 * The FTS4 expression of a parsed query, fully parenthesized, with its matchable phrases numbered as FTS4
 * numbers them. Errors: INVALID_ARGUMENTS (more than {@link MAX_QUERY_PHRASES} phrases).
 */
function serializeQuery(query: string, root: Node): ParsedQuery {
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
