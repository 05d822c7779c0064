/**
 * Retrying a create during the scale run: a CRD that is not served yet (NoMatch / 404), throttling
 * (429) and timeouts are retried up to 30 times with a backoff doubling from 200 ms to 5 s; any
 * other failure is final.
 */

export const MAX_ATTEMPTS = 30;
const FIRST_DELAY_MS = 200;
const MAX_DELAY_MS = 5000;

/** The wait before retry number `retry` (0-based). */
export function backoffMs(retry: number): number {
  return Math.min(MAX_DELAY_MS, FIRST_DELAY_MS * 2 ** Math.min(retry, 16));
}

/** A failure of a request, with the HTTP status when there was an answer. */
export interface RequestFailure {
  status?: number;
  /** True when the request timed out (no answer, or a server-side timeout). */
  timeout?: boolean;
}

export function isRetryable(f: RequestFailure): boolean {
  return f.timeout === true || f.status === 404 || f.status === 429 || f.status === 504;
}

/**
 * Calls `attempt` until it succeeds, fails for good, or `MAX_ATTEMPTS` are used; `classify` reads
 * a thrown error, `sleep` waits (injected so tests need no timers). Returns the attempts used.
 */
export async function withRetry(
  attempt: () => Promise<unknown>,
  classify: (e: unknown) => RequestFailure,
  sleep: (ms: number) => Promise<void>,
): Promise<number> {
  for (let i = 1;; i++) {
    try {
      await attempt();
      return i;
    } catch (e) {
      if (i >= MAX_ATTEMPTS || !isRetryable(classify(e))) throw e;
      await sleep(backoffMs(i - 1));
    }
  }
}
