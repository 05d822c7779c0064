/**
 * Waiting in tests: {@link waitFor} until something holds, {@link assertStays} that it keeps
 * holding. Both poll; neither is a bare sleep followed by one look.
 */
import { setTimeout as delay } from "node:timers/promises";

/** Thrown from a {@link waitFor} check to stop waiting at once (the condition can never hold). */
export class WaitAbort extends Error {
  override name = "WaitAbort";
}

/**
 * Polls `check` until it returns a value other than undefined/false, or throws after timeoutMs.
 * Errors thrown by `check` count as "not yet", except {@link WaitAbort}, which ends the wait.
 */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined | false> | T | undefined | false,
  { timeoutMs = 60_000, intervalMs = 100 }: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v !== undefined && v !== false) return v;
    } catch (e) {
      if (e instanceof WaitAbort) throw e;
      last = e;
    }
    if (Date.now() > deadline) {
      const why = last instanceof Error ? `: last error: ${last.message}` : "";
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${why}`);
    }
    await delay(intervalMs);
  }
}

/** Options of {@link assertStays}. */
export interface StaysOptions {
  /** How long the condition must keep holding. */
  forMs: number;
  /** How often it is looked at (default 200 ms); it is looked at once more at the end. */
  everyMs?: number;
  /** What holds, for the failure message. */
  what?: string;
}

/**
 * Asserts that `check` keeps holding for `forMs`: it is called every `everyMs` and the first time
 * it throws (an assertion) or returns false, this rejects with that failure — at once, not at the
 * end of the period. For "it stays so" checks, instead of a sleep and one assertion after it.
 */
export async function assertStays(
  check: () => Promise<void | boolean> | void | boolean,
  { forMs, everyMs = 200, what = "the condition" }: StaysOptions,
): Promise<void> {
  const deadline = Date.now() + forMs;
  for (let looks = 1;; looks++) {
    const started = Date.now();
    let ok: void | boolean;
    try {
      ok = await check();
    } catch (e) {
      const msg = e instanceof Error ? e.message : String(e);
      throw new Error(`${what} stopped holding (look ${looks}): ${msg}`, { cause: e });
    }
    if (ok === false) throw new Error(`${what} stopped holding (look ${looks})`);
    if (started >= deadline) return;
    await delay(Math.max(0, Math.min(everyMs, deadline - Date.now())));
  }
}
