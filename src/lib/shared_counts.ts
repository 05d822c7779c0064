/**
 * Counts that several threads move together in a `SharedArrayBuffer` (requests, bytes and
 * connections in flight on the conversion port), each thread also keeping its own share of them,
 * so that what a thread that was stopped still held can be taken out of the totals.
 */

/**
 * Subtracts every count of `own` from the same index of `total` and zeroes `own` (never below
 * zero). Call it only once the thread that moved `own` runs no more. A thread stopped between
 * moving a total and its own share leaves that count off by one step, which nothing can see.
 */
export function giveBack(total: Int32Array, own: Int32Array): void {
  for (let i = 0; i < own.length; i++) {
    const mine = Atomics.exchange(own, i, 0);
    if (mine === 0) continue;
    if (Atomics.sub(total, i, mine) - mine < 0) Atomics.store(total, i, 0);
  }
}
