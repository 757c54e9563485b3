/**
 * The one stemmer and tokenizer of Marginalia's ranking (src/domain/ranking): every ranked tool
 * (find_similar_content, find_similar_segments, search_semantic's lexical side, suggest_codes_for_range,
 * auto_suggest_codes, detect_duplicate_codes) turns text into terms here.
 *
 * Stemming: the Porter stemmer (M. F. Porter, "An algorithm for suffix stripping", Program 14(3), 130-137,
 * 1980) as implemented by the npm package `stemmer` (Titus Wormer; MIT, no dependencies, no native code).
 * It stems lower-case ASCII words; words with other letters are kept as they are.
 */
import { stemmer } from 'stemmer';

/**
 * English function words dropped before ranking (they say nothing about what a passage is about).
 * A compact list in the spirit of the SMART and Snowball stop lists, contractions included.
 */
export const STOP_WORDS: ReadonlySet<string> = new Set(
  (
    "a about above after again against all also am an and any are aren't as at be because been before being below between both but by " +
    "can can't cannot could couldn't did didn't do does doesn't doing don't down during each else ever every few for from further get " +
    "gets got had hadn't has hasn't have haven't having he he'd he'll he's her here here's hers herself him himself his how how's i i'd " +
    "i'll i'm i've if in into is isn't it it's its itself just let's like me more most much mustn't my myself no nor not now of off on " +
    "once only or other ought our ours ourselves out over own really same shan't she she'd she'll she's should shouldn't so some such " +
    "than that that's the their theirs them themselves then there there's these they they'd they'll they're they've this those through " +
    "to too under until up upon us very was wasn't we we'd we'll we're we've well were weren't what what's when when's where " +
    "where's which while who who's whom why why's will with won't would wouldn't yeah yes yet you you'd you'll you're you've your yours " +
    'yourself yourselves um uh oh okay ok'
  ).split(/\s+/),
);

/** A word token: its normalised, stemmed term and the word as written (lower-cased). */
export interface Token {
  term: string;
  word: string;
}

const WORD = /[\p{L}\p{N}]+(?:['’][\p{L}\p{N}]+)*/gu;
const ASCII_WORD = /^[a-z]+$/;
const stemCache = new Map<string, string>();
const STEM_CACHE_MAX = 200_000;

/** The Porter stem of a lower-case ASCII word (other words are returned unchanged). Memoised. */
export function stem(word: string): string {
  let s = stemCache.get(word);
  if (s !== undefined) return s;
  s = ASCII_WORD.test(word) ? stemmer(word) : word;
  if (stemCache.size >= STEM_CACHE_MAX) stemCache.clear();
  stemCache.set(word, s);
  return s;
}

/**
 * The word tokens of `text`, in order: NFC-normalised and lower-cased; runs of letters and digits with
 * inner apostrophes ("don't"); a possessive "'s" dropped; stop words, one-letter words and pure numbers
 * (timestamps) dropped unless `keepStopWords`; each word stemmed with the Porter stemmer.
 */
export function tokenize(text: string, opts: { keepStopWords?: boolean } = {}): Token[] {
  const out: Token[] = [];
  for (const m of text.normalize('NFC').toLowerCase().matchAll(WORD)) {
    let w = m[0].replace(/’/g, "'");
    if (w.endsWith("'s")) w = w.slice(0, -2);
    if (!opts.keepStopWords && (w.length < 2 || STOP_WORDS.has(w) || /^[0-9]+$/.test(w))) continue;
    if (w.length === 0) continue;
    out.push({ term: stem(w.replace(/'/g, '')), word: w });
  }
  return out;
}

/**
 * The forms of one index token a lexical search looks for: the token and, when they differ, its Porter
 * {@link stem} ("rotas" -> rota, "sharing" -> share, "gardening" -> garden). For indexes that store words
 * unstemmed (the FTS4 segment index): a plural finds its singular, an inflected verb its base form when
 * the stem is itself a word.
 */
export function stemForms(token: string): string[] {
  const s = stem(token);
  return s === token ? [token] : [token, s];
}
