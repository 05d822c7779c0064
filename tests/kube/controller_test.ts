/**
 * The reconciler runner with an injectable clock: result handling and its metrics, panics,
 * per-key exclusivity with several workers, requeueAfter replacement, wake classification of
 * timers and error retries end to end, stop, and the paced enqueue helper.
 */
import assert from "node:assert/strict";
import { Registry } from "prom-client";
import { FakeClock } from "../../src/kube/clock.ts";
import {
  Controller,
  isPanic,
  objectRefOfKey,
  pacedEnqueue,
  Pacer,
  reconcileLogFields,
  type ReconcileResult,
  TerminalError,
} from "../../src/kube/mod.ts";
import { setLogSink } from "../../src/obs/log.ts";
import { deferred, sample, scrape, settle } from "./_helpers.ts";

type Step = (key: string, signal: AbortSignal) => Promise<ReconcileResult | void>;

/** A controller whose reconcile runs the next scripted step (or succeeds) and records calls. */
function harness(opts: { workers?: number; steps?: Step[] } = {}) {
  const registry = new Registry();
  const clock = new FakeClock();
  const calls: Array<{ key: string; at: number }> = [];
  const steps = [...(opts.steps ?? [])];
  const ctrl = new Controller({
    name: "demo",
    registry,
    clock,
    workers: opts.workers,
    reconcile: async (key, signal) => {
      calls.push({ key, at: clock.now() });
      const step = steps.shift();
      return step ? await step(key, signal) : undefined;
    },
  });
  const metric = async (name: string, labels: Record<string, string> = {}) =>
    sample(await scrape(registry), name, { controller: "demo", ...labels });
  const wakes = async () => ({
    watch: await metric("dco_operator_wake_total", { cause: "watch" }),
    backstop: await metric("dco_operator_wake_total", { cause: "backstop" }),
  });
  return { registry, clock, calls, ctrl, metric, wakes, steps };
}

/** Silences the controller's error logs for a test body. */
async function quietly(fn: () => Promise<void>): Promise<string[]> {
  const lines: string[] = [];
  setLogSink((l) => lines.push(l));
  try {
    await fn();
  } finally {
    setLogSink(undefined);
  }
  return lines;
}

/** Moves fake time by `ms`, lets the workers run, and checks how many reconciles ran so far. */
async function advanceAndCount(
  clock: FakeClock,
  calls: readonly unknown[],
  ms: number,
  runs: number,
  message = `${runs} reconcile(s) after ${ms} ms more`,
): Promise<void> {
  clock.advance(ms);
  await settle();
  assert.equal(calls.length, runs, message);
}

Deno.test("families exist at 0 after construction, with the worker count", async () => {
  const { metric, ctrl } = harness({ workers: 3 });
  for (const result of ["success", "error", "requeue", "requeue_after"]) {
    assert.equal(await metric("controller_runtime_reconcile_total", { result }), 0, result);
  }
  assert.equal(await metric("controller_runtime_reconcile_errors_total"), 0);
  assert.equal(await metric("controller_runtime_terminal_reconcile_errors_total"), 0);
  assert.equal(await metric("controller_runtime_reconcile_panics_total"), 0);
  assert.equal(await metric("controller_runtime_max_concurrent_reconciles"), 3);
  assert.equal(await metric("controller_runtime_active_workers"), 0);
  assert.equal(
    await metric("workqueue_adds_total", { name: "demo" }),
    0,
    "queue families use name = controller",
  );
  await ctrl.stop();
});

Deno.test("success: counted, forgotten, no requeue", async () => {
  const { ctrl, calls, metric, clock } = harness();
  ctrl.start();
  ctrl.enqueue("ns/a");
  await settle();
  assert.deepEqual(calls.map((c) => c.key), ["ns/a"]);
  assert.equal(await metric("controller_runtime_reconcile_total", { result: "success" }), 1);
  assert.equal(await metric("controller_runtime_reconcile_time_seconds_count"), 1);
  await advanceAndCount(clock, calls, 3_600_000, 1);
  await ctrl.stop();
});

Deno.test("an error is logged and retried with growing backoff; success forgets it", async () => {
  const fail: Step = () => Promise.reject(new Error("boom"));
  const { ctrl, calls, metric, clock } = harness({ steps: [fail, fail] });
  const lines = await quietly(async () => {
    ctrl.start();
    ctrl.enqueue("a");
    await settle();
    assert.equal(calls.length, 1);
    await advanceAndCount(clock, calls, 4, 1, "not before the 5 ms backoff");
    await advanceAndCount(clock, calls, 1, 2, "retried after 5 ms");
    await advanceAndCount(clock, calls, 9, 2, "second backoff is 10 ms");
    await advanceAndCount(clock, calls, 1, 3, "third run succeeds");
    assert.equal(ctrl.queue.numRequeues("a"), 0, "forgotten after success");
  });
  assert.equal(await metric("controller_runtime_reconcile_total", { result: "error" }), 2);
  assert.equal(await metric("controller_runtime_reconcile_errors_total"), 2);
  assert.equal(await metric("controller_runtime_reconcile_total", { result: "success" }), 1);
  assert.equal(await metric("controller_runtime_reconcile_panics_total"), 0);
  assert.equal(await metric("workqueue_retries_total", { name: "demo" }), 2);
  const errors = lines.map((l) => JSON.parse(l)).filter((r) => r.msg === "Reconciler error");
  assert.equal(errors.length, 2);
  assert.equal(errors[0].key, "a");
  assert.equal(errors[0].controller, "demo");
  assert.equal(errors[0].error.message, "boom");
  assert.equal(errors[0].level, "error");
  await ctrl.stop();
});

Deno.test("a terminal error is counted and not retried", async () => {
  const { ctrl, calls, metric, clock } = harness({
    steps: [() => Promise.reject(new TerminalError("bad spec"))],
  });
  await quietly(async () => {
    ctrl.start();
    ctrl.enqueue("a");
    await settle();
    clock.advance(3_600_000);
    await settle();
  });
  assert.equal(calls.length, 1);
  assert.equal(await metric("controller_runtime_terminal_reconcile_errors_total"), 1);
  assert.equal(await metric("controller_runtime_reconcile_errors_total"), 1);
  assert.equal(await metric("controller_runtime_reconcile_total", { result: "error" }), 1);
  await ctrl.stop();
});

Deno.test("panics (non-Error throws, JS bug errors) are counted and retried; workers survive", async () => {
  const { ctrl, calls, metric, clock } = harness({
    steps: [
      () => Promise.reject("a string"),
      (k) => {
        const broken = undefined as unknown as { x: string[] };
        return Promise.resolve(broken.x[k.length] ? undefined : undefined); // TypeError: a panic
      },
    ],
  });
  const lines = await quietly(async () => {
    ctrl.start();
    ctrl.enqueue("a");
    await settle();
    clock.advance(5);
    await settle();
    clock.advance(10);
    await settle();
  });
  assert.equal(calls.length, 3, "retried after each panic, then succeeded");
  assert.equal(await metric("controller_runtime_reconcile_panics_total"), 2);
  assert.equal(await metric("controller_runtime_reconcile_errors_total"), 2);
  assert.ok(lines.some((l) => l.includes("Observed a panic")));
  assert.equal(isPanic(new Error("x")), false);
  assert.equal(isPanic(new TerminalError("x")), false);
  assert.equal(isPanic(new TypeError("x")), true);
  assert.equal(isPanic(42), true);
  await ctrl.stop();
});

Deno.test("requeue: true is a rate-limited requeue", async () => {
  const { ctrl, calls, metric, clock } = harness({
    steps: [() => Promise.resolve({ requeue: true })],
  });
  ctrl.start();
  ctrl.enqueue("a");
  await settle();
  await advanceAndCount(clock, calls, 5, 2);
  assert.equal(await metric("controller_runtime_reconcile_total", { result: "requeue" }), 1);
  await ctrl.stop();
});

Deno.test("a key is never reconciled by two workers at once; adds meanwhile re-run it once", async () => {
  const gate = deferred();
  let active = 0;
  let maxActive = 0;
  const block: Step = async () => {
    active++;
    maxActive = Math.max(maxActive, active);
    await gate.promise;
    active--;
  };
  const { ctrl, calls } = harness({ workers: 4, steps: [block] });
  ctrl.start();
  ctrl.enqueue("a");
  await settle();
  for (let i = 0; i < 5; i++) ctrl.enqueue("a");
  ctrl.enqueue("b");
  await settle();
  assert.deepEqual(calls.map((c) => c.key), ["a", "b"], "b runs on another worker; a waits");
  gate.resolve();
  await settle();
  assert.deepEqual(calls.map((c) => c.key), ["a", "b", "a"], "a re-ran exactly once");
  assert.equal(maxActive, 1);
  await ctrl.stop();
});

Deno.test("requeueAfter schedules the next run; a newer requeueAfter replaces the pending one", async () => {
  const { ctrl, calls, metric, clock, wakes } = harness({
    steps: [
      () => Promise.resolve({ requeueAfter: 60_000 }),
      () => Promise.resolve({ requeueAfter: 10_000 }),
    ],
  });
  ctrl.start();
  ctrl.enqueue("a");
  await settle();
  clock.advance(1_000);
  ctrl.enqueue("a"); // a watch event before the 60 s timer
  await settle();
  assert.equal(calls.length, 2);
  await advanceAndCount(clock, calls, 10_000, 3, "the newer 10 s timer fired");
  await advanceAndCount(clock, calls, 60_000, 3, "the replaced 60 s timer did not fire");
  assert.equal(await metric("controller_runtime_reconcile_total", { result: "requeue_after" }), 2);
  assert.deepEqual(await wakes(), { watch: 2, backstop: 1 });
  await ctrl.stop();
});

Deno.test("wake causes end to end: event = watch, timer = backstop, error retry = backstop", async () => {
  const { ctrl, clock, wakes } = harness({
    steps: [
      () => Promise.resolve({ requeueAfter: 300_000 }), // 1: first event
      () => Promise.resolve({ requeueAfter: 300_000 }), // 2: the 5 min timer
      () => Promise.reject(new Error("transient")), //      3: an early event, fails
      () => Promise.resolve(), //                           4: the 5 ms retry
    ],
  });
  await quietly(async () => {
    ctrl.start();
    ctrl.enqueue("a");
    await settle();
    assert.deepEqual(await wakes(), { watch: 1, backstop: 0 });
    clock.advance(300_000);
    await settle();
    assert.deepEqual(await wakes(), { watch: 1, backstop: 1 });
    clock.advance(60_000);
    ctrl.enqueue("a"); // 4 minutes early: a watch wake
    await settle();
    assert.deepEqual(await wakes(), { watch: 2, backstop: 1 });
    clock.advance(5);
    await settle();
    assert.deepEqual(await wakes(), { watch: 2, backstop: 2 }, "the error retry is a backstop");
  });
  assert.equal(ctrl.wake.size, 0, "every record consumed");
  await ctrl.stop();
});

Deno.test("a run without a timer cancels the timer its previous run armed", async () => {
  const { ctrl, calls, clock, wakes } = harness({
    steps: [() => Promise.resolve({ requeueAfter: 60_000 }), () => Promise.resolve()],
  });
  ctrl.start();
  ctrl.enqueue("a");
  await settle();
  clock.advance(1_000);
  ctrl.enqueue("a"); // the event's run returns no requeue: the 60 s timer is superseded
  await settle();
  assert.equal(ctrl.queue.delayedCount, 0);
  await advanceAndCount(clock, calls, 120_000, 2);
  assert.deepEqual(await wakes(), { watch: 2, backstop: 0 });
  await ctrl.stop();
});

Deno.test("a delayed add scheduled by someone else is not cancelled by a run", async () => {
  const { ctrl, calls, clock } = harness();
  ctrl.start();
  ctrl.enqueueAfter("a", 30_000);
  ctrl.enqueue("a");
  await settle();
  assert.equal(calls.length, 1);
  await advanceAndCount(clock, calls, 30_000, 2);
  await ctrl.stop();
});

Deno.test("stop aborts in-flight reconciles, waits for them and hands out nothing more", async () => {
  let sawAbort = false;
  const { ctrl, calls, metric } = harness({
    steps: [
      (_k, signal) =>
        new Promise((resolve) =>
          signal.addEventListener("abort", () => {
            sawAbort = true;
            resolve();
          })
        ),
    ],
  });
  ctrl.start();
  ctrl.enqueue("a");
  await settle();
  ctrl.enqueue("b");
  await ctrl.stop();
  assert.equal(sawAbort, true);
  assert.deepEqual(calls.map((c) => c.key), ["a"]);
  assert.equal(ctrl.running, false);
  assert.equal(await metric("controller_runtime_active_workers"), 0);
});

Deno.test("run(signal) starts and stops with the signal", async () => {
  const { ctrl, calls } = harness();
  const ac = new AbortController();
  const done = ctrl.run(ac.signal);
  ctrl.enqueue("a");
  await settle();
  assert.equal(ctrl.running, true);
  ac.abort();
  await done;
  assert.equal(ctrl.running, false);
  assert.equal(calls.length, 1);
});

Deno.test("Pacer passes keys at the given rate, in order, each pending key once", () => {
  const clock = new FakeClock();
  const got: Array<[string, number]> = [];
  const t0 = clock.now();
  const p = new Pacer({ add: (k) => got.push([k, clock.now() - t0]) }, { qps: 50, clock });
  p.addAll(["a", "b", "c", "b", "d"]);
  assert.deepEqual(got, [["a", 0]], "the first key goes at once");
  assert.equal(p.pending, 3, "the duplicate b is pending once");
  clock.advance(100);
  assert.deepEqual(got, [["a", 0], ["b", 20], ["c", 40], ["d", 60]]);
  p.add("e"); // 100 ms since d: due already
  assert.deepEqual(got.at(-1), ["e", 100]);
  p.add("f");
  assert.equal(p.pending, 1, "f waits for its 20 ms slot");
  p.stop();
  assert.equal(clock.pendingTimers, 0);
});

Deno.test("pacedEnqueue resolves once every key has been passed on", async () => {
  const clock = new FakeClock();
  const got: string[] = [];
  const done = pacedEnqueue({ add: (k) => got.push(k) }, ["a", "b", "c"], { qps: 10, clock });
  clock.advance(200);
  await done;
  assert.deepEqual(got, ["a", "b", "c"]);
});

Deno.test("each reconcile logs with controller-runtime's fields: a fresh reconcileID and the object reference", async () => {
  const registry = new Registry();
  const clock = new FakeClock();
  let fail = true;
  const ctrl = new Controller({
    name: "crdconversionconfig",
    registry,
    clock,
    kind: { group: "terasky.com", kind: "CRDConversionConfig" },
    reconcile: (_key, _signal, log) => {
      log.info("reconciling");
      if (fail) {
        fail = false;
        return Promise.reject(new Error("boom"));
      }
      return Promise.resolve();
    },
  });
  const lines = await quietly(async () => {
    ctrl.start();
    ctrl.enqueue("widgets");
    await settle();
    clock.advance(1000); // past the rate-limited retry's backoff
    await settle();
    await ctrl.stop();
  });
  const recs = lines.map((l) => JSON.parse(l)).filter((r) => r.name === "widgets");
  const reconciling = recs.filter((r) => r.msg === "reconciling");
  assert.equal(reconciling.length, 2, lines.join("\n"));
  const failure = recs.find((r) => r.msg === "Reconciler error")!;
  for (const r of [...reconciling, failure]) {
    assert.equal(r.controller, "crdconversionconfig");
    assert.equal(r.controllerGroup, "terasky.com");
    assert.equal(r.controllerKind, "CRDConversionConfig");
    assert.deepEqual(r.CRDConversionConfig, { name: "widgets" });
    assert.equal(r.namespace, "");
    assert.match(
      r.reconcileID,
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
  }
  assert.equal(failure.reconcileID, reconciling[0].reconcileID, "one ID for one reconcile");
  assert.notEqual(reconciling[0].reconcileID, reconciling[1].reconcileID, "a new one per run");
});

Deno.test("a namespaced key is logged as namespace and name", () => {
  assert.deepEqual(objectRefOfKey("team-a/dco"), { namespace: "team-a", name: "dco" });
  assert.deepEqual(
    reconcileLogFields({ namespace: "team-a", name: "dco" }, "id-1", {
      group: "terasky.com",
      kind: "ConversionWebhookServer",
    }),
    {
      controllerGroup: "terasky.com",
      controllerKind: "ConversionWebhookServer",
      ConversionWebhookServer: { name: "dco", namespace: "team-a" },
      namespace: "team-a",
      name: "dco",
      reconcileID: "id-1",
    },
  );
  assert.deepEqual(reconcileLogFields({ name: "x" }, "id-2"), {
    namespace: "",
    name: "x",
    reconcileID: "id-2",
  });
});
