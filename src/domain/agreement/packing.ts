/**
 * The coder comparison's input packed once into typed arrays (./comparison.ts): per code the sources where it
 * occurs, in source order, with each coder's coded stretches, and the unitizing alpha's continua. Every
 * per-code pass then reads compact arrays instead of the sources' maps and nested lists.
 *
 * Positions count code points (integers); ranges are half-open `[start, end)`.
 */
import type { PackedContinua } from './unitizing';

/** One compared source: its compared extent, its units (null: every character is a unit) and per code each coder's coded stretches (disjoint, sorted, within the extent). */
export interface ComparisonSource {
  source_id: number;
  extent: readonly number[];
  units: readonly number[] | null;
  codes: ReadonlyMap<number, readonly (readonly number[])[]>;
}

/**
 * One code's entries (the code on one source each), in source order. Entry e's source is `sources[e]` (an index
 * into the compared sources); coder c's stretches (in source positions) are
 * `continua.pos[bounds[e·(m+1) + c] .. bounds[e·(m+1) + c + 1])`. `continua` holds the code's unitizing continua:
 * per entry one per extent range of its source, the stretches shifted into it.
 */
export interface CodePack {
  continua: PackedContinua;
  sources: Int32Array;
  bounds: Int32Array;
}

/** The packed comparison: per source its units (characters of its extent, or its units), per code its {@link CodePack}. */
export interface PackedComparison {
  m: number;
  units: Float64Array;
  codes: Map<number, CodePack>;
  /** the length of every extent range of every source, in source order */
  extentLengths: number[];
  /** coded stretches of all coders over all codes of the sources (the unitizing bootstrap's work estimate) */
  stretches: number;
}

/** A growable Int32Array (`capacity`: the expected size, so that it need not grow). */
class Ints {
  a: Int32Array;
  n = 0;
  constructor(capacity = 64) {
    this.a = new Int32Array(Math.max(capacity, 8));
  }
  push(x: number): void {
    if (this.n === this.a.length) {
      const b = new Int32Array(this.a.length * 2);
      b.set(this.a);
      this.a = b;
    }
    this.a[this.n++] = x;
  }
  /** The values pushed (a view: no copy). */
  done(): Int32Array {
    return this.a.subarray(0, this.n);
  }
}

/** An {@link Ints} holding the first `n` values of `x`. */
function copyOf(x: Ints, n: number): Ints {
  const y = new Ints(x.a.length);
  for (let i = 0; i < n; i++) y.push(x.a[i] as number);
  return y;
}

/** A code's pack while it is built: first sized (entries and positions counted), then filled. */
class CodeBuilder {
  entries = 0;
  positions = 0;
  pos = new Ints(0);
  readonly lengths: number[] = [];
  /** the continua's bounds; undefined while they are the entries' bounds (every source so far one extent from 0) */
  continuumBounds: Ints | undefined;
  sources = new Ints(0);
  bounds = new Ints(0);

  /** Allocates for the entries and positions counted (twice the positions when an entry may need shifted copies). */
  size(m: number, shifted: boolean): void {
    this.pos = new Ints(shifted ? 2 * this.positions : this.positions);
    this.sources = new Ints(this.entries);
    this.bounds = new Ints(this.entries * (m + 1));
  }

  /** Adds the code on source s (extent `ext`) with its coders' stretches. */
  add(s: number, ext: readonly number[], coders: readonly (readonly number[])[], m: number): void {
    const { pos, bounds } = this;
    this.sources.push(s);
    for (let c = 0; c < m; c++) {
      bounds.push(pos.n);
      for (const x of coders[c] ?? []) pos.push(x);
    }
    bounds.push(pos.n);
    if (ext.length === 2 && ext[0] === 0) {
      // one extent from 0: the stretches are already within it
      this.lengths.push(ext[1] as number);
      for (let c = 0; c <= m; c++) this.continuumBounds?.push(bounds.a[bounds.n - 1 - m + c] as number);
      return;
    }
    // the first source with other extents: the continua's bounds part from the entries' from here on
    const continuumBounds = (this.continuumBounds ??= copyOf(bounds, bounds.n - m - 1));
    for (let k = 0; k < ext.length; k += 2) {
      const a = ext[k] as number;
      const b = ext[k + 1] as number;
      this.lengths.push(b - a);
      for (let c = 0; c < m; c++) {
        continuumBounds.push(pos.n);
        const r = coders[c] ?? [];
        for (let i = 0; i < r.length; i += 2) {
          const x = Math.max(a, r[i] as number);
          const y = Math.min(b, r[i + 1] as number);
          if (x < y) {
            pos.push(x - a);
            pos.push(y - a);
          }
        }
      }
      continuumBounds.push(pos.n);
    }
  }

  done(m: number): CodePack {
    return {
      continua: { m, length: Float64Array.from(this.lengths), bounds: (this.continuumBounds ?? this.bounds).done(), pos: this.pos.done() },
      sources: this.sources.done(),
      bounds: this.bounds.done(),
    };
  }
}

/** Packs `sources` for the codes `codeIds` (other codes of the sources are left out but counted in `stretches`). */
export function packComparison(sources: readonly ComparisonSource[], codeIds: readonly number[], m: number): PackedComparison {
  const builders = new Map<number, CodeBuilder>(codeIds.map((c) => [c, new CodeBuilder()]));
  // sized first, so the arrays are allocated once
  let shifted = false;
  for (const src of sources) {
    if (src.extent.length !== 2 || src.extent[0] !== 0) shifted = true;
    for (const [code, coders] of src.codes) {
      const b = builders.get(code);
      if (!b) continue;
      b.entries++;
      for (const r of coders) b.positions += r.length;
    }
  }
  for (const b of builders.values()) b.size(m, shifted);
  const units = new Float64Array(sources.length);
  const extentLengths: number[] = [];
  let stretches = 0;
  sources.forEach((src, s) => {
    const ext = src.extent;
    let characters = 0;
    for (let k = 0; k < ext.length; k += 2) {
      const len = (ext[k + 1] as number) - (ext[k] as number);
      characters += len;
      extentLengths.push(len);
    }
    units[s] = src.units !== null ? src.units.length / 2 : characters;
    for (const [code, coders] of src.codes) {
      for (const r of coders) stretches += r.length / 2;
      builders.get(code)?.add(s, ext, coders, m);
    }
  });
  return { m, units, codes: new Map([...builders].map(([code, b]) => [code, b.done(m)])), extentLengths, stretches };
}
