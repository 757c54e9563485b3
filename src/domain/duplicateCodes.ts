/**
 * Near-duplicate codes (detect_duplicate_codes): the Dice similarity of codes' stemmed names and memos
 * (src/domain/ranking/tokenSets.ts).
 */
import type { CodeWithCounts } from './ports';
import { tokenize } from './ranking/stemmer';
import { similarPairs, tokenSet, Vocabulary } from './ranking/tokenSets';

/** detect_duplicate_codes threshold default (QualCoder-v2's). */
export const DEFAULT_DUPLICATE_THRESHOLD = 0.8;

/** A pair of near-duplicate codes (similarities 0..1). */
export interface DuplicateCandidate {
  code_a: CodeWithCounts;
  code_b: CodeWithCounts;
  similarity: number;
  name_similarity: number;
  memo_similarity: number | null;
  shared_terms: string[];
  rationale: string;
}

/**
 * Pairs of codes whose names (and memos, when both have one) share most of their stemmed tokens:
 * similarity = Dice coefficient of the name token sets, or 0.6 x name + 0.4 x memo Dice when both codes
 * have a memo (QualCoder-v2's weighting), or the memo Dice alone when higher and both memos have at least
 * MEMO_ALONE_MIN_TERMS (6) distinct terms (near-identical memos under different names; ranking/tokenSets.ts
 * similarPairs), at least `threshold` (0 < threshold <= 1, default 0.8); best
 * first (ties in codebook order), at most `limit`; in each pair `code_a` is the older code (smaller code_id). Stop words are left out of names unless a name has nothing else. Uses the
 * prefix-filtered similarity join of ranking/tokenSets.ts: thousands of codes take milliseconds.
 */
export function detectDuplicateCodes(
  codes: readonly CodeWithCounts[],
  threshold = DEFAULT_DUPLICATE_THRESHOLD,
  limit = Number.POSITIVE_INFINITY,
): DuplicateCandidate[] {
  const vocab = new Vocabulary();
  const items = codes.map((c) => {
    let nameTokens = tokenize(c.name);
    if (nameTokens.length === 0) nameTokens = tokenize(c.name, { keepStopWords: true });
    const memoTokens = c.memo ? tokenize(c.memo) : [];
    return {
      name: tokenSet(
        nameTokens.map((t) => t.term),
        vocab,
      ),
      memo:
        memoTokens.length > 0
          ? tokenSet(
              memoTokens.map((t) => t.term),
              vocab,
            )
          : null,
      /** stemmed term -> the word as the name writes it */
      nameWords: new Map(nameTokens.map((t) => [t.term, t.word])),
    };
  });
  const pairs = similarPairs(items, threshold);
  return pairs.slice(0, limit).map((p) => {
    // code_a is the older code (smaller code_id)
    const [ia, ib] = codes[p.a]!.code_id < codes[p.b]!.code_id ? [p.a, p.b] : [p.b, p.a];
    const a = codes[ia]!;
    const b = codes[ib]!;
    const shared = [...items[ia]!.nameWords].filter(([t]) => items[ib]!.nameWords.has(t)).map(([, w]) => w);
    const pct = (x: number) => `${Math.round(100 * x)}%`;
    const names = `The names share ${shared.map((w) => `"${w}"`).join(', ') || 'no words'} (name similarity ${pct(p.name)}`;
    const rationale =
      p.basis === 'memo'
        ? `The memos are ${pct(p.memo ?? 0)} alike, which counts on its own for memos this long. ${names}).`
        : `${names}${p.memo === null ? ')' : `; memo similarity ${pct(p.memo)}, weighted 60/40 to ${pct(p.similarity)})`}.`;
    return {
      code_a: a,
      code_b: b,
      similarity: round(p.similarity),
      name_similarity: round(p.name),
      memo_similarity: p.memo === null ? null : round(p.memo),
      shared_terms: shared,
      rationale,
    };
  });
}

function round(x: number): number {
  return Math.round(x * 1000) / 1000;
}
