/** How many Workers of a kind a webhook server runs by default (src/lib/worker_budget.ts). */
import assert from "node:assert/strict";
import { defaultWorkers, HEAP_MIB_PER_WORKER } from "../../src/lib/worker_budget.ts";

Deno.test("workers: one per CPU, at most one per 96 MiB of heap ceiling, at least one", () => {
  assert.equal(HEAP_MIB_PER_WORKER, 96);
  assert.equal(defaultWorkers(2, 192), 2, "a 256 Mi pod on two CPUs");
  assert.equal(defaultWorkers(32, 192), 2, "a 256 Mi pod on a large node without a CPU limit");
  assert.equal(defaultWorkers(1, 768), 1, "one CPU");
  assert.equal(defaultWorkers(1.5, 768), 2, "a fractional CPU count rounds up");
  assert.equal(defaultWorkers(8, 50), 1, "a heap under 96 MiB still gets one");
  assert.equal(defaultWorkers(undefined, 384), 4, "CPUs unknown: the heap decides");
  assert.equal(defaultWorkers(6, undefined), 6, "no heap ceiling: the CPUs decide");
  assert.equal(defaultWorkers(undefined, undefined), 1, "nothing known: one");
});
