/**
 * Counts several threads move together (src/lib/shared_counts.ts): what a stopped thread held is
 * taken out of the totals, never below zero.
 */
import assert from "node:assert/strict";
import { giveBack } from "../../src/lib/shared_counts.ts";

Deno.test("giveBack subtracts a thread's own shares from the totals and zeroes them", () => {
  const cells = new Int32Array(new SharedArrayBuffer(6 * 4));
  const total = cells.subarray(0, 2);
  const a = cells.subarray(2, 4);
  const b = cells.subarray(4, 6);
  total.set([5, 500]);
  a.set([3, 300]);
  b.set([2, 200]);
  giveBack(total, a);
  assert.deepEqual([...total], [2, 200]);
  assert.deepEqual([...a], [0, 0]);
  assert.deepEqual([...b], [2, 200], "the other thread's share is untouched");
  giveBack(total, a);
  assert.deepEqual([...total], [2, 200], "a second call gives nothing back");
  // A total already lower than a share (a thread stopped between its two updates) stays >= 0.
  total.set([1, 100]);
  giveBack(total, b);
  assert.deepEqual([...total], [0, 0]);
});
