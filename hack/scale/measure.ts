/**
 * The scale run's benchmark: issue requests with a fixed number of workers, time each one, and
 * sum them up as nearest-rank p50/p99, max and throughput over the wall-clock time of the batch.
 */

export interface Measurement {
  /** Requests issued (successful or not). */
  n: number;
  errors: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** `n` divided by the batch's wall-clock seconds (not 1/p50). */
  throughputPerSecond: number;
  elapsedMs: number;
}

/** The nearest-rank percentile `p` (0 < p ≤ 100) of ascending `sorted`; 0 when empty. */
export function nearestRank(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}

/** Up to `limit` distinct error messages, in the order first seen. */
export class ErrorSamples {
  readonly #seen = new Set<string>();
  constructor(readonly limit = 5) {}
  add(message: string): void {
    if (this.#seen.size < this.limit) this.#seen.add(message);
  }
  get samples(): string[] {
    return [...this.#seen];
  }
}

/** Durations in ms (every request, failed ones too) and the batch's wall-clock time. */
export function summarize(
  durationsMs: readonly number[],
  errors: number,
  elapsedMs: number,
): Measurement {
  const sorted = [...durationsMs].sort((a, b) => a - b);
  const n = sorted.length;
  return {
    n,
    errors,
    p50Ms: nearestRank(sorted, 50),
    p99Ms: nearestRank(sorted, 99),
    maxMs: n === 0 ? 0 : sorted[n - 1],
    throughputPerSecond: elapsedMs > 0 ? n / (elapsedMs / 1000) : 0,
    elapsedMs,
  };
}

/**
 * Runs `request` once per item with `parallel` workers; a thrown error counts as an error and
 * its message goes to `samples`. A request's duration runs from its call — or, when it calls
 * `sent()`, from then (after a client-side rate limiter let it go, so the limiter's wait is not
 * taken for the server's latency) — to its end. `now` is the clock in ms (performance.now by
 * default).
 */
export async function measure<T>(
  items: readonly T[],
  parallel: number,
  request: (item: T, sent: () => void) => Promise<unknown>,
  samples: ErrorSamples,
  now: () => number = () => performance.now(),
): Promise<Measurement> {
  const durations: number[] = [];
  let errors = 0;
  let next = 0;
  const start = now();
  const worker = async () => {
    while (next < items.length) {
      const item = items[next++];
      let t0 = now();
      try {
        await request(item, () => t0 = now());
      } catch (e) {
        errors++;
        samples.add(e instanceof Error ? e.message : String(e));
      }
      durations.push(now() - t0);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(parallel, items.length)) }, worker));
  return summarize(durations, errors, now() - start);
}
