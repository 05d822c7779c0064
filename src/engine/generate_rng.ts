/**
 * The generator's PRNG: mulberry32 on 32-bit integer arithmetic only, so the same seed gives the
 * same values on every platform; string seeds are hashed first.
 */

/** A small deterministic PRNG. */
export interface Rng {
  /** Uniform in [0, 1). */
  next(): number;
  /** Uniform integer in [min, max] (both inclusive; min ≤ max, both safe integers). */
  int(min: number, max: number): number;
  /** True with probability `p`. */
  chance(p: number): boolean;
  /** One element of a non-empty list. */
  pick<T>(items: readonly T[]): T;
}

/** FNV-1a of a string, for string seeds. */
function hashSeed(seed: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < seed.length; i++) {
    h ^= seed.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** mulberry32 seeded with `seed` (a number is taken modulo 2^32; a string is hashed). */
export function createRng(seed: number | string): Rng {
  let state = typeof seed === "string" ? hashSeed(seed) : (Math.trunc(seed) >>> 0);
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int(min, max) {
      if (max <= min) return min;
      const span = max - min + 1;
      // Two draws give 53 random bits, enough for any safe-integer span.
      const r = span <= 0x100000000 ? next() : (Math.floor(next() * 0x200000) + next()) / 0x200000;
      return Math.min(max, min + Math.floor(r * span));
    },
    chance: (p) => next() < p,
    pick<T>(items: readonly T[]): T {
      return items[Math.floor(next() * items.length)];
    },
  };
}
