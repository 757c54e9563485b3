import type { ProjectRepository } from './ports';

/**
 * The palette new codes take their colours from: **Tableau 20** (Tableau Software's 20-colour qualitative
 * palette of Tableau 10.0, 2016, as published by Tableau and copied e.g. by R's ggthemes `tableau_color_pal
 * ("Tableau 20")` and Julia's ColorSchemes.jl `:tableau_20`; Vega's `tableau20` is a slightly different
 * variant, not this one). The ten saturated colours come first (the hue families of the Tableau 10 palette
 * Marginalia used before, in its order; its blue, orange, red, green and purple are the very same), then their ten light
 * partners, so that a small codebook gets the strongest colours.
 *
 * Why this palette: every pair differs by at least ΔE*ab 11.9 (CIE 1976 L*a*b*, sRGB D65), so two codes
 * side by side are told apart; every colour has a contrast ratio (WCAG 2.x relative luminance) of at least
 * 3.4:1 against a dark editor background (#1E1E1E) and at least 1.5:1 against a white one. The light ten are
 * the weaker ones as thin stripes on a light theme (1.5-2.1:1): they come last and editors should draw a
 * stripe with its own edge. All `#RRGGBB` in upper case. test/unit/domain/codeColours.test.ts checks both
 * figures.
 */
export const CODE_PALETTE: readonly string[] = [
  '#4E79A7', // blue
  '#F28E2B', // orange
  '#E15759', // red
  '#499894', // teal
  '#59A14F', // green
  '#B6992D', // olive yellow
  '#B07AA1', // purple
  '#D37295', // pink
  '#9D7660', // brown
  '#79706E', // grey
  '#A0CBE8', // light blue
  '#FFBE7D', // light orange
  '#FF9D9A', // light red
  '#86BCB6', // light teal
  '#8CD17D', // light green
  '#F1CE63', // light yellow
  '#D4A6C8', // light purple
  '#FABFD2', // light pink
  '#D7B5A6', // light brown
  '#BAB0AC', // light grey
];

/**
 * Two colours closer than this CIE 1976 colour difference (ΔE*ab) count as the same colour: side by side as
 * a stripe or a tint they cannot be told apart (a just-noticeable difference is about 2.3; 5 leaves room for
 * small screens and tints). So a code coloured #9C755F (Tableau 10's brown) occupies the palette's #9D7660.
 */
export const SAME_COLOUR_DELTA_E = 5;

/**
 * Colours met so far, by their `#RRGGBB` text: a codebook has few distinct colours and every create or recolour
 * compares the new one with all of them, so each is converted once. Bounded: cleared when it passes
 * {@link MEMO_LIMIT} entries.
 */
const labOf = new Map<string, readonly [number, number, number]>();
const paletteIndexMemo = new Map<string, number>();
const MEMO_LIMIT = 4096;

function remember<V>(memo: Map<string, V>, key: string, value: V): V {
  if (memo.size >= MEMO_LIMIT) memo.clear();
  memo.set(key, value);
  return value;
}

/** CIE 1976 L*a*b* of an `#RRGGBB` colour (sRGB per IEC 61966-2-1, D65 white point). */
export function hexToLab(hex: string): [number, number, number] {
  const lab = cachedLab(hex);
  return [lab[0], lab[1], lab[2]];
}

/** {@link hexToLab} from the memo (read-only: shared between callers). */
function cachedLab(hex: string): readonly [number, number, number] {
  return labOf.get(hex) ?? remember(labOf, hex, labFromHex(hex));
}

/** {@link hexToLab} computed. */
function labFromHex(hex: string): [number, number, number] {
  const [r, g, b] = [1, 3, 5].map((i) => {
    const c = parseInt(hex.slice(i, i + 2), 16) / 255;
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  }) as [number, number, number];
  const x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047;
  const y = 0.2126 * r + 0.7152 * g + 0.0722 * b;
  const z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883;
  const f = (t: number): number => (t > 216 / 24389 ? Math.cbrt(t) : ((24389 / 27) * t + 16) / 116);
  return [116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))];
}

/** The CIE 1976 colour difference ΔE*ab between two `#RRGGBB` colours (0 = identical; unitless). */
export function colourDifference(a: string, b: string): number {
  const p = cachedLab(a);
  const q = cachedLab(b);
  return Math.hypot(p[0] - q[0], p[1] - q[1], p[2] - q[2]);
}

/** true when two `#RRGGBB` colours are equal or closer than {@link SAME_COLOUR_DELTA_E} (case-insensitive). */
export function sameColour(a: string, b: string): boolean {
  return a.toUpperCase() === b.toUpperCase() || colourDifference(a, b) < SAME_COLOUR_DELTA_E;
}

/**
 * Hands out palette colours to new codes: a colour no code uses while one is free (palette order), then the
 * palette colour fewest codes use (earliest on a tie). Built once from the codebook (`codeColours`, every
 * code's `#RRGGBB`) and kept up to date by {@link take}, so an import of thousands of codes asks the store
 * once. A code's colour occupies the palette colour it is {@link sameColour} as; other colours occupy none.
 */
export class CodeColourPicker {
  private readonly uses: number[];

  constructor(codeColours: Iterable<string>) {
    this.uses = CODE_PALETTE.map(() => 0);
    for (const c of codeColours) this.take(c);
  }

  /** The picker for the codebook of `repo` as it is now (one query: {@link ProjectRepository.codeColourCounts}, a row per distinct colour). */
  static of(repo: ProjectRepository): CodeColourPicker {
    const picker = new CodeColourPicker([]);
    for (const c of repo.codeColourCounts()) picker.take(c.color, c.count);
    return picker;
  }

  /** Counts `colour` (`#RRGGBB`) as used by `codes` more codes (default one). */
  take(colour: string, codes = 1): void {
    const i = paletteIndexOf(colour);
    if (i >= 0) this.uses[i] = (this.uses[i] as number) + codes;
  }

  /** The colour the next new code gets (upper-case `#RRGGBB`), without taking it. */
  peek(): string {
    let best = 0;
    for (let i = 1; i < this.uses.length; i++) if ((this.uses[i] as number) < (this.uses[best] as number)) best = i;
    return CODE_PALETTE[best] as string;
  }

  /** The colour the next new code gets, taken: {@link peek} then {@link take}. */
  next(): string {
    const c = this.peek();
    this.take(c);
    return c;
  }

  /** The palette colours no code uses, in palette order. */
  free(): string[] {
    return CODE_PALETTE.filter((_, i) => this.uses[i] === 0);
  }
}

/** Index in {@link CODE_PALETTE} of the palette colour `colour` is {@link sameColour} as (the closest), or -1. */
export function paletteIndexOf(colour: string): number {
  const known = paletteIndexMemo.get(colour);
  if (known !== undefined) return known;
  return remember(paletteIndexMemo, colour, closestPaletteIndex(colour));
}

/** {@link paletteIndexOf} computed. */
function closestPaletteIndex(colour: string): number {
  const exact = CODE_PALETTE.indexOf(colour.toUpperCase());
  if (exact >= 0) return exact;
  let best = -1;
  let bestD = SAME_COLOUR_DELTA_E;
  CODE_PALETTE.forEach((p, i) => {
    const d = colourDifference(colour, p);
    if (d < bestD) {
      best = i;
      bestD = d;
    }
  });
  return best;
}

/** The colour the next code created without one gets in `repo`'s codebook (see {@link CodeColourPicker}). */
export function nextCodeColour(repo: ProjectRepository): string {
  return CodeColourPicker.of(repo).peek();
}

/**
 * What a create or recolour result adds when the chosen colour is already another code's: `colour_note`
 * names up to one other code and how many more ("#1F77B4 is also the colour of 'Food security' (and 2
 * more)"), `other_codes_with_colour` lists them ({code_id, name, color}, at most 10) and `free_colours` lists
 * the palette colours no code uses (possibly empty). Undefined when no other code has that colour or one
 * {@link sameColour} as it. `exceptCodeId` is the code itself (left out).
 */
export interface ColourNote {
  colour_note: string;
  other_codes_with_colour: { code_id: number; name: string; color: string }[];
  free_colours: string[];
}

/**
 * The {@link ColourNote} for `colour` (`#RRGGBB`) given to code `exceptCodeId` in `repo`, or undefined when no other
 * code shares it. Called after the code has been given `colour`. Reads the codebook's colour counts (one row per
 * distinct colour) and only the names of the codes it reports, so it stays cheap for thousands of codes.
 */
export function colourNoteFor(repo: ProjectRepository, colour: string, exceptCodeId: number): ColourNote | undefined {
  const counts = repo.codeColourCounts();
  const matching = counts.filter((c) => sameColour(c.color, colour));
  // the code itself has `colour` now: it is one of the codes counted under a matching colour
  const othersCount = matching.reduce((n, c) => n + c.count, 0) - 1;
  if (othersCount <= 0) return undefined;
  const others = repo.codesWithColours(
    matching.map((c) => c.color),
    exceptCodeId,
    10,
  );
  const first = others[0];
  if (!first) return undefined;
  const more = othersCount > 1 ? ` (and ${othersCount - 1} more)` : '';
  const exact = first.color.toUpperCase() === colour.toUpperCase() ? 'also the colour of' : `nearly the colour of`;
  const picker = new CodeColourPicker([]);
  for (const c of counts) picker.take(c.color, c.count);
  const free = picker.free(); // as CodeColourPicker.of, from the counts already read
  return {
    colour_note: `${colour.toUpperCase()} is ${exact} '${first.name}'${more}; ${free.length > 0 ? `free palette colours: ${free.join(', ')}` : 'every palette colour is in use'}`,
    other_codes_with_colour: others.map((c) => ({ code_id: c.code_id, name: c.name, color: c.color })),
    free_colours: free,
  };
}
