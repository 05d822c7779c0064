/**
 * Edit distance, and the "did you mean" pick built on it: the closest of a few known words to one
 * a user mistyped (a flag, a version, a config field).
 */

/** Levenshtein distance: insertions, deletions and substitutions, each costing 1. */
export function levenshtein<T>(a: ArrayLike<T>, b: ArrayLike<T>): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = cur;
  }
  return prev[b.length];
}

/**
 * The candidate closest to `word` (case-insensitively), if it is close enough to be a likely typo:
 * at most a third of the word's length away (but always allowing 2 edits), or `word` is a prefix of
 * it. Two candidates equally close give no pick: a guess between them would mislead.
 */
export function closest(word: string, candidates: Iterable<string>): string | undefined {
  const w = word.toLowerCase();
  const limit = Math.max(2, Math.floor(w.length / 3));
  let best: string | undefined;
  let bestDistance = Infinity;
  let tied = false;
  for (const candidate of candidates) {
    const c = candidate.toLowerCase();
    if (c === w) return candidate;
    const d = w.length > 0 && c.startsWith(w) ? 0.5 : levenshtein(w, c);
    if (d > limit || d > bestDistance) continue;
    tied = d === bestDistance && c !== best?.toLowerCase();
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return tied ? undefined : best;
}

/** ` (did you mean "x"?)`, or "" when nothing is close. */
export function didYouMean(word: string, candidates: Iterable<string>, quote = true): string {
  const pick = closest(word, candidates);
  if (pick === undefined) return "";
  return ` (did you mean ${quote ? JSON.stringify(pick) : pick}?)`;
}
