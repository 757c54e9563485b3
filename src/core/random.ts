/**
 * mulberry32: a small seeded generator of uniform numbers on [0, 1) with a 32-bit state (T. Ettinger, public
 * domain, 2017). The same seed gives the same sequence on every machine, so bootstrap intervals, generated test
 * data and bench projects can be reproduced from their seed. Not for secrets (use node:crypto).
 */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
