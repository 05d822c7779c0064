/**
 * Workqueue semantics with an injectable clock: a key is never processed by two workers at
 * once, adds during processing re-run it once, backoff grows and caps, forget resets it, a newer
 * addAfter replaces a pending one, shutdown releases everyone — and the workqueue_* families.
 */
import assert from "node:assert/strict";
import { Registry } from "prom-client";
import { FakeClock } from "../../src/kube/clock.ts";
import {
  BucketRateLimiter,
  defaultControllerRateLimiter,
  ItemExponentialRateLimiter,
  WorkQueue,
  WORKQUEUE_BUCKETS,
} from "../../src/kube/workqueue.ts";
import { sample, scrape, settle } from "./_helpers.ts";

function newQueue(opts: { registry?: Registry; clock?: FakeClock } = {}) {
  const clock = opts.clock ?? new FakeClock();
  const q = new WorkQueue({ name: "test", clock, registry: opts.registry });
  return { q, clock };
}

/** Resolves to the key, or "pending" when get() has not answered after the microtasks ran. */
async function peekGet(p: Promise<string | undefined>): Promise<string | undefined | "pending"> {
  return await Promise.race([p, settle(2).then(() => "pending" as const)]);
}

Deno.test("a queued key is queued once", () => {
  const { q } = newQueue();
  q.add("a");
  q.add("a");
  q.add("b");
  assert.equal(q.len(), 2);
  q.shutDown();
});

Deno.test("a key being processed is not handed to a second worker; it re-runs once after done", async () => {
  const { q } = newQueue();
  q.add("a");
  assert.equal(await q.get(), "a");
  // A second worker waits while "a" is processing, however often "a" is added meanwhile.
  const second = q.get();
  q.add("a");
  q.add("a");
  q.add("a");
  assert.equal(await peekGet(second), "pending");
  assert.equal(q.len(), 0, "a dirty key under processing is not in the queue");
  assert.ok(q.isDirty("a") && q.isProcessing("a"));
  q.done("a");
  assert.equal(await second, "a", "handed out again after done");
  assert.equal(q.len(), 0, "exactly one re-run, not one per add");
  q.done("a");
  assert.equal(q.len(), 0);
  assert.equal(await peekGet(q.get()), "pending", "nothing left after the re-run");
  q.shutDown();
});

Deno.test("a key not added during processing does not re-run", async () => {
  const { q } = newQueue();
  q.add("a");
  assert.equal(await q.get(), "a");
  q.done("a");
  assert.equal(q.len(), 0);
  q.shutDown();
});

Deno.test("keys are handed out in FIFO order to concurrent workers", async () => {
  const { q } = newQueue();
  const w1 = q.get();
  const w2 = q.get();
  q.add("a");
  q.add("b");
  q.add("c");
  assert.deepEqual([await w1, await w2], ["a", "b"]);
  assert.equal(await q.get(), "c");
  q.shutDown();
});

Deno.test("per-key backoff: 5 ms doubling, capped at 1000 s; forget resets", () => {
  const rl = new ItemExponentialRateLimiter();
  const seq = Array.from({ length: 8 }, () => rl.when("k"));
  assert.deepEqual(seq, [5, 10, 20, 40, 80, 160, 320, 640]);
  assert.equal(rl.numRequeues("k"), 8);
  assert.equal(rl.when("other"), 5, "per key");
  for (let i = 0; i < 40; i++) rl.when("k");
  assert.equal(rl.when("k"), 1_000_000, "capped at 1000 s");
  rl.forget("k");
  assert.equal(rl.numRequeues("k"), 0);
  assert.equal(rl.when("k"), 5, "forget resets the backoff");
});

Deno.test("the overall token bucket allows a burst of 100, then 10 per second", () => {
  const clock = new FakeClock();
  const b = new BucketRateLimiter(10, 100, clock);
  for (let i = 0; i < 100; i++) assert.equal(b.when(), 0);
  assert.equal(b.when(), 100);
  assert.equal(b.when(), 200);
  clock.advance(1000);
  // 10 tokens refilled; 2 were already borrowed.
  const delays = Array.from({ length: 9 }, () => b.when());
  assert.ok(delays.slice(0, 8).every((d) => d === 0), `${delays}`);
  assert.equal(delays[8], 100);
});

Deno.test("the default controller limiter is the max of both", () => {
  const clock = new FakeClock();
  const rl = defaultControllerRateLimiter(clock);
  assert.equal(rl.when("a"), 5);
  assert.equal(rl.when("a"), 10);
  rl.forget("a");
  assert.equal(rl.when("a"), 5);
});

Deno.test("addRateLimited queues the key after the backoff delay", async () => {
  const { q, clock } = newQueue();
  assert.equal(q.addRateLimited("k"), 5);
  clock.advance(4);
  assert.equal(q.len(), 0);
  clock.advance(1);
  assert.equal(q.len(), 1);
  assert.equal(await q.get(), "k");
  q.done("k");
  assert.equal(q.addRateLimited("k"), 10, "grows while not forgotten");
  q.forget("k");
  assert.equal(q.addRateLimited("k"), 5, "replaces the pending 10 ms retry after forget");
  clock.advance(5);
  assert.equal(q.len(), 1);
  clock.advance(100);
  assert.equal(q.len(), 1, "the replaced retry does not fire as well");
  q.shutDown();
});

Deno.test("a newer addAfter replaces a pending one, later or earlier", () => {
  const { q, clock } = newQueue();
  // Later replaces earlier (client-go would keep the earlier one).
  q.addAfter("k", 10_000);
  q.addAfter("k", 60_000);
  assert.equal(q.pendingAfter("k"), clock.now() + 60_000);
  clock.advance(10_000);
  assert.equal(q.len(), 0, "the replaced 10 s timer must not fire");
  clock.advance(50_000);
  assert.equal(q.len(), 1, "the last armed timer fires");
  assert.equal(q.delayedCount, 0);
  q.shutDown();

  const b = newQueue();
  b.q.addAfter("k", 60_000);
  b.q.addAfter("k", 5_000);
  b.clock.advance(5_000);
  assert.equal(b.q.len(), 1);
  assert.equal(b.q.delayedCount, 0, "the replaced 60 s timer is gone");
  b.q.shutDown();
});

Deno.test("cancelAfter removes a pending delayed add only when the due time matches", () => {
  const { q, clock } = newQueue();
  const due = q.addAfter("k", 1000)!;
  assert.equal(q.cancelAfter("k", due + 1), false);
  assert.equal(q.cancelAfter("k", due), true);
  clock.advance(2000);
  assert.equal(q.len(), 0);
  assert.equal(clock.pendingTimers, 0);
  q.shutDown();
});

Deno.test("addAfter with a non-positive delay adds at once", () => {
  const { q } = newQueue();
  assert.equal(q.addAfter("k", 0), undefined);
  assert.equal(q.len(), 1);
  q.shutDown();
});

Deno.test("a delayed add of a key being processed marks it dirty", async () => {
  const { q, clock } = newQueue();
  q.add("k");
  assert.equal(await q.get(), "k");
  q.addAfter("k", 100);
  clock.advance(100);
  assert.equal(q.len(), 0);
  assert.ok(q.isDirty("k"));
  q.done("k");
  assert.equal(q.len(), 1);
  q.shutDown();
});

Deno.test("shutDown releases waiting workers, drops delayed adds and ignores adds", async () => {
  const { q, clock } = newQueue();
  const waiting = q.get();
  q.addAfter("later", 1000);
  q.shutDown();
  assert.equal(await waiting, undefined);
  assert.equal(await q.get(), undefined);
  assert.equal(clock.pendingTimers, 0, "delayed timers cleared");
  q.add("x");
  assert.equal(q.len(), 0);
  assert.ok(q.shuttingDown);
});

Deno.test("drain waits for keys in flight", async () => {
  const { q } = newQueue();
  q.add("a");
  await q.get();
  q.shutDown();
  let drained = false;
  const d = q.drain().then(() => (drained = true));
  await settle();
  assert.equal(drained, false);
  q.done("a");
  await d;
  assert.equal(drained, true);
});

Deno.test("workqueue_* families: names, labels, values", async () => {
  const registry = new Registry();
  const clock = new FakeClock();
  const q = new WorkQueue({ name: "crdconversionconfig", clock, registry });
  const l = { name: "crdconversionconfig", controller: "crdconversionconfig" };

  let text = await scrape(registry);
  assert.equal(sample(text, "workqueue_adds_total", l), 0, "pre-created at 0");
  assert.equal(sample(text, "workqueue_retries_total", l), 0);
  assert.equal(sample(text, "workqueue_depth", { ...l, priority: "" }), 0);

  q.add("a");
  q.add("b");
  q.add("a");
  clock.advance(2000);
  text = await scrape(registry);
  assert.equal(sample(text, "workqueue_adds_total", l), 2, "a duplicate add is not an add");
  assert.equal(sample(text, "workqueue_depth", { ...l, priority: "" }), 2);

  assert.equal(await q.get(), "a");
  clock.advance(3000);
  text = await scrape(registry);
  assert.equal(sample(text, "workqueue_depth", { ...l, priority: "" }), 1);
  assert.equal(sample(text, "workqueue_queue_duration_seconds_count", l), 1);
  assert.equal(sample(text, "workqueue_queue_duration_seconds_sum", l), 2);
  assert.equal(sample(text, "workqueue_unfinished_work_seconds", l), 3);
  assert.equal(sample(text, "workqueue_longest_running_processor_seconds", l), 3);

  q.done("a");
  q.addRateLimited("a");
  text = await scrape(registry);
  assert.equal(sample(text, "workqueue_work_duration_seconds_count", l), 1);
  assert.equal(sample(text, "workqueue_work_duration_seconds_sum", l), 3);
  assert.equal(sample(text, "workqueue_unfinished_work_seconds", l), 0);
  assert.equal(sample(text, "workqueue_retries_total", l), 1);

  // Buckets 1e-8 … 1e3 (12), as client-go.
  assert.equal(WORKQUEUE_BUCKETS.length, 12);
  assert.equal(WORKQUEUE_BUCKETS[0], 1e-8);
  assert.equal(WORKQUEUE_BUCKETS[11], 1e3);
  assert.equal(
    sample(text, "workqueue_queue_duration_seconds_bucket", { ...l, le: "1e-8" }),
    0,
  );

  // A second queue in the same registry shares the families (no duplicate registration).
  const q2 = new WorkQueue({ name: "other", clock, registry });
  q2.add("x");
  text = await scrape(registry);
  assert.equal(sample(text, "workqueue_adds_total", { name: "other", controller: "other" }), 1);
  assert.equal(text.match(/^# TYPE workqueue_adds_total /gm)?.length, 1);
  q.shutDown();
  q2.shutDown();
});
