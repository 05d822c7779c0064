/**
 * The property the plan-set swap tests check: for each step k (a new target installed), once any
 * request for it succeeded, no request sent later failed — and some request did fail before the
 * commit, so the test saw a swap window at all.
 */
import assert from "node:assert/strict";

/** One request of a swap test: its step, when it was sent and answered, and whether it converted. */
export interface SwapObservation {
  k: number;
  sentAt: number;
  doneAt: number;
  ok: boolean;
}

export function assertSwapsAtomic(seen: readonly SwapObservation[], steps: number): void {
  let windows = 0;
  for (let step = 1; step <= steps; step++) {
    const mine = seen.filter((o) => o.k === step);
    const firstOk = Math.min(...mine.filter((o) => o.ok).map((o) => o.doneAt));
    assert.ok(Number.isFinite(firstOk), `step ${step} was served at all`);
    const late = mine.filter((o) => o.sentAt > firstOk && !o.ok);
    assert.deepEqual(late, [], `step ${step}: a request sent after a success saw an older set`);
    if (mine.some((o) => !o.ok)) windows++;
  }
  assert.ok(windows > 0, "some requests ran before a commit (the test saw a swap window)");
}
