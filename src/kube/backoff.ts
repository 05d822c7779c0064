/** The informer's reconnect backoff and an abortable sleep. */

/** Reconnect backoff: `initialMs · 2^(n−1)` capped at `maxMs`, ± `jitter`. */
export interface BackoffOptions {
  initialMs?: number;
  maxMs?: number;
  /** Relative random spread, 0..1; default 0.1. */
  jitter?: number;
}

/** Reconnect delay for the n-th consecutive failure (n ≥ 1): 800 ms doubling to 30 s, ±10 %. */
export function computeBackoff(
  n: number,
  opts: BackoffOptions = {},
  random: () => number = Math.random,
): number {
  const initial = opts.initialMs ?? 800;
  const max = opts.maxMs ?? 30_000;
  const jitter = opts.jitter ?? 0.1;
  const base = Math.min(max, initial * 2 ** Math.min(Math.max(0, n - 1), 52));
  return Math.round(Math.min(max, base * (1 + jitter * (2 * random() - 1))));
}

/** Resolves after `ms`, or at once when `signal` aborts (never rejects). */
export function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(t);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const t = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}
