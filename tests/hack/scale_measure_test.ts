/** The scale run's statistics (nearest rank, throughput over wall clock, error samples) and retries. */
import assert from "node:assert/strict";
import { ErrorSamples, measure, nearestRank, summarize } from "../../hack/scale/measure.ts";
import { backoffMs, MAX_ATTEMPTS, withRetry } from "../../hack/scale/retry.ts";

Deno.test("nearest rank picks the ceil(p·n)-th smallest sample", () => {
  const xs = Array.from({ length: 100 }, (_, i) => i + 1);
  assert.equal(nearestRank(xs, 50), 50);
  assert.equal(nearestRank(xs, 99), 99);
  assert.equal(nearestRank([3, 7, 9], 50), 7);
  assert.equal(nearestRank([3, 7, 9], 99), 9);
  assert.equal(nearestRank([5], 50), 5);
  assert.equal(nearestRank([], 50), 0);
});

Deno.test("summarize sorts, and throughput is n over the wall-clock time", () => {
  const m = summarize([30, 10, 20, 40], 1, 2000);
  assert.deepEqual(m, {
    n: 4,
    errors: 1,
    p50Ms: 20,
    p99Ms: 40,
    maxMs: 40,
    throughputPerSecond: 2,
    elapsedMs: 2000,
  });
});

Deno.test("error samples keep up to five distinct messages in first-seen order", () => {
  const s = new ErrorSamples();
  for (const m of ["a", "b", "a", "c", "d", "e", "f", "b"]) s.add(m);
  assert.deepEqual(s.samples, ["a", "b", "c", "d", "e"]);
});

Deno.test("measure runs every item with at most `parallel` in flight and counts failures", async () => {
  let t = 0;
  let inFlight = 0;
  let peak = 0;
  const samples = new ErrorSamples();
  const m = await measure(
    [1, 2, 3, 4, 5, 6, 7],
    3,
    async (i) => {
      inFlight++;
      peak = Math.max(peak, inFlight);
      t += 10;
      await Promise.resolve();
      inFlight--;
      if (i % 3 === 0) throw new Error(`boom ${i % 2}`);
    },
    samples,
    () => t,
  );
  assert.equal(m.n, 7);
  assert.equal(m.errors, 2);
  assert.equal(peak, 3);
  assert.deepEqual(samples.samples, ["boom 1", "boom 0"]);
  assert.equal(m.elapsedMs, 70);
});

Deno.test("retries back off from 200 ms to 5 s and stop on a final failure or after 30 attempts", async () => {
  assert.deepEqual([0, 1, 2, 3, 4, 5, 6].map(backoffMs), [200, 400, 800, 1600, 3200, 5000, 5000]);
  const waits: number[] = [];
  const sleep = (ms: number) => {
    waits.push(ms);
    return Promise.resolve();
  };
  let calls = 0;
  const used = await withRetry(
    () => {
      calls++;
      return calls < 3 ? Promise.reject({ status: 429 }) : Promise.resolve();
    },
    (e) => e as { status: number },
    sleep,
  );
  assert.equal(used, 3);
  assert.deepEqual(waits, [200, 400]);

  await assert.rejects(
    withRetry(() => Promise.reject({ status: 422 }), (e) => e as { status: number }, sleep),
  );
  assert.equal(waits.length, 2);

  calls = 0;
  await assert.rejects(withRetry(
    () => {
      calls++;
      return Promise.reject({ timeout: true });
    },
    (e) => e as { timeout: boolean },
    sleep,
  ));
  assert.equal(calls, MAX_ATTEMPTS);
});

Deno.test("a request's wait before `sent()` (a client-side rate limiter) is not its latency", async () => {
  let t = 0;
  const m = await measure(
    [1, 2],
    1,
    async (_, sent) => {
      t += 80; // waiting for a token
      sent();
      t += 3; // the request itself
      await Promise.resolve();
    },
    new ErrorSamples(),
    () => t,
  );
  assert.deepEqual([m.p50Ms, m.p99Ms, m.elapsedMs], [3, 3, 166]);
});
