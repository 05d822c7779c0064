/**
 * The conversion Worker pool: answers identical to the main thread's, bodies moved (not copied)
 * both ways, metrics replayed into the main set, plan-set swaps that no request sees half of, and
 * Workers that die or hang answered and replaced.
 */
import assert from "node:assert/strict";
import { Registry } from "prom-client";
import type { JsonObject } from "../../../src/engine/mod.ts";
import type { CompiledTarget } from "../../../src/webhook/compiled.ts";
import {
  SYNTHETIC_TARGET,
  syntheticCompiled,
  syntheticReview,
} from "../../../src/webhook/convert/_synthetic.ts";
import {
  answerOffloaded,
  autoInlineMaxBytes,
  ConversionPool,
  type ConvertContext,
  convertContext,
  convertReviewBytes,
  DEFAULT_INLINE_MAX_BYTES,
  InlinePolicy,
  type OffloadOptions,
  PlanSets,
} from "../../../src/webhook/convert/mod.ts";
import type { WorkerLoss } from "../../../src/webhook/convert/pool.ts";
import { WebhookMetrics } from "../../../src/webhook/metrics.ts";
import { PlanRegistry } from "../../../src/webhook/registry.ts";
import { PlanReplica } from "../../../src/webhook/convert/plan_replica.ts";
import { sampleValue } from "../_helpers.ts";
import { HEAD_ROOM } from "../../../src/net/http1.ts";
import { SLOW_TARGET, slowCompiled, slowReview } from "./_slow_target.ts";
import { assertSwapsAtomic, type SwapObservation } from "./_swaps.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const now = () => performance.timeOrigin + performance.now();
const encode = (v: unknown) => encoder.encode(JSON.stringify(v));

interface Fixture extends Disposable {
  registry: PlanRegistry;
  sets: PlanSets;
  ctx: ConvertContext;
  pool: ConversionPool;
  lost: WorkerLoss[];
}

function fixture(
  size: number,
  opts: { url?: URL; metrics?: WebhookMetrics; requestTimeoutMs?: number; grace?: number } = {},
): Fixture {
  const registry = new PlanRegistry();
  const sets = new PlanSets();
  sets.follow(registry);
  registry.install(syntheticCompiled());
  const ctx = convertContext({
    registry: sets,
    metrics: opts.metrics,
    requestTimeoutMs: opts.requestTimeoutMs,
  });
  const lost: WorkerLoss[] = [];
  const pool = new ConversionPool({
    size,
    planSets: sets,
    context: ctx,
    metrics: opts.metrics,
    url: opts.url,
    onWorkerLost: (r) => lost.push(r),
    watchdogGraceMs: opts.grace,
  });
  return { registry, sets, ctx, pool, lost, [Symbol.dispose]: () => pool.close() };
}

const T = { name: "", sanitizeResources: false, sanitizeOps: false };

Deno.test({
  ...T,
  name: "a review converted in a Worker is byte for byte the main thread's answer",
  fn: async () => {
    const metrics = new WebhookMetrics(new Registry());
    using f = fixture(2, { metrics });
    await f.pool.settled();
    for (const n of [1, 10]) {
      const bytes = encode(syntheticReview(n, { from: ["v1", "v1alpha1"] }));
      const inline = convertReviewBytes(f.ctx, SYNTHETIC_TARGET, bytes.slice());
      const pooled = await f.pool.convert(SYNTHETIC_TARGET, bytes, now());
      assert.equal(pooled.status, 200);
      assert.equal(decoder.decode(pooled.body), decoder.decode(inline.body));
      assert.equal(bytes.byteLength, 0, "the request body was transferred, not copied");
      assert.equal(pooled.headRoom, true, "the answer kept its head room across the transfer");
      assert.equal(pooled.body.byteOffset, HEAD_ROOM);
      assert.equal(
        pooled.body.byteOffset + pooled.body.byteLength,
        pooled.body.buffer.byteLength,
        "an owned answer buffer: the room, then the body",
      );
    }
    // Inline and Worker conversions count into the one metric set (inline: 2, Worker: 2).
    const text = await metrics.reviewRequests.get();
    const ok = text.values.find((v) => v.labels.result === "success")?.value;
    assert.equal(ok, 4);
    const objects = (await metrics.objects.get()).values
      .filter((v) => v.labels.result === "success")
      .reduce((a, v) => a + v.value, 0);
    assert.equal(objects, 2 * (1 + 10));
    const lossy = (await metrics.lossy.get()).values.reduce((a, v) => a + v.value, 0);
    assert.equal(lossy, 2 * 5, "the v1alpha1 objects of both 10-object reviews");
  },
});

Deno.test({
  ...T,
  name: "a registry write is served only after every Worker acknowledged its plan set",
  fn: async () => {
    using f = fixture(2);
    await f.pool.settled();
    const v = f.sets.version;
    f.registry.install({ ...syntheticCompiled(), target: "late" });
    assert.equal(f.sets.get("late"), undefined, "not committed at once");
    assert.ok(f.sets.pending);
    await f.pool.settled();
    assert.equal(f.sets.version, v + 1);
    assert.ok(f.sets.get("late")?.router);
    const answer = await f.pool.convert("late", encode(syntheticReview(1)), now());
    assert.match(decoder.decode(answer.body), /"status":"Success"/);
    // A removal is a version too.
    f.registry.remove("late");
    await f.pool.settled();
    const gone = await f.pool.convert("late", encode(syntheticReview(1)), now());
    assert.match(decoder.decode(gone.body), /no conversion plan registered/);
  },
});

Deno.test({
  ...T,
  name: "a failed compile keeps the Workers' plan and shows its error",
  fn: async () => {
    using f = fixture(1);
    await f.pool.settled();
    f.registry.install({
      ok: false,
      target: SYNTHETIC_TARGET,
      kind: "crd",
      config: "widgets-conversion",
      reason: "InvalidRules",
      message: "broken on purpose",
    });
    await f.pool.settled();
    assert.equal(f.sets.get(SYNTHETIC_TARGET)?.lastError, "broken on purpose");
    const kept = await f.pool.convert(SYNTHETIC_TARGET, encode(syntheticReview(1)), now());
    assert.match(decoder.decode(kept.body), /"status":"Success"/, "the old plan still serves");
    // A Worker started now gets the same state from the ledger (no "keep" in a full set).
    const { committed } = f.sets.startingState();
    const w = committed.entries.find((e) => e.target === SYNTHETIC_TARGET)!;
    assert.ok(w.plans instanceof Uint8Array, 'the encoded plans, not "keep"');
    assert.equal(w.lastError, "broken on purpose");
  },
});

/** The synthetic plan under another target name (the path segment). */
function renamed(target: string): CompiledTarget {
  return { ...syntheticCompiled(), target };
}

interface Observation extends SwapObservation {
  inline: boolean;
}

Deno.test({
  ...T,
  name: "swaps are atomic: once any request saw plan set N, no later request sees an older one",
  fn: async () => {
    using f = fixture(2);
    f.registry.install(slowCompiled());
    const policy = new InlinePolicy(4096);
    await f.pool.settled();
    const offload: OffloadOptions = {
      pool: f.pool,
      inline: (t, n) => policy.inline(f.sets.get(t), n),
    };
    const small = encode(syntheticReview(1));
    const large = encode(syntheticReview(1, { annotationBytes: 8192 }));
    assert.ok(small.byteLength <= 4096 && large.byteLength > 4096);

    const ask = async (target: string, bytes: Uint8Array) => {
      const body = (async function* () {
        yield bytes.slice();
      })();
      const a = await answerOffloaded(
        f.ctx,
        target,
        {
          method: "POST",
          declaredLength: bytes.byteLength,
          body,
        },
        f.ctx.clock(),
        offload,
      );
      return /"status":"Success"/.test(decoder.decode(a.body));
    };

    // One Worker is kept busy by slow conversions, so acknowledgements (and commits) lag.
    let running = true;
    const busy = (async () => {
      while (running) await ask(SLOW_TARGET, encode(slowReview("busy", 1)));
    })();

    const seen: Observation[] = [];
    const K = 4;
    let k = 0;
    const clients = Array.from({ length: 3 }, (_, c) =>
      (async () => {
        let i = c;
        while (running) {
          const kk = k;
          if (kk === 0) {
            await new Promise((r) => setTimeout(r, 1));
            continue;
          }
          const inline = i++ % 2 === 0;
          const target = `${i % 2 === 0 ? "a" : "b"}-${kk}`;
          const sentAt = performance.now();
          const ok = await ask(target, inline ? small : large);
          seen.push({ k: kk, inline, sentAt, doneAt: performance.now(), ok });
        }
      })());

    for (k = 1; k <= K;) {
      // Both targets of step k land in the same tick: one plan-set version.
      f.registry.install(renamed(`a-${k}`));
      f.registry.install(renamed(`b-${k}`));
      // Let requests for step k run before, during and after its commit.
      await f.pool.settled();
      await new Promise((r) => setTimeout(r, 50));
      if (k === K) break;
      k++;
    }
    running = false;
    await Promise.all([busy, ...clients]);

    assertSwapsAtomic(seen, K);
    assert.ok(seen.some((o) => o.ok && o.inline) && seen.some((o) => o.ok && !o.inline));
  },
});

Deno.test({
  ...T,
  name: "a Worker that dies answers its request 500 with the cause and is replaced",
  fn: async () => {
    const metrics = new WebhookMetrics(new Registry());
    using f = fixture(1, { url: new URL("./_crashing_worker.ts", import.meta.url), metrics });
    await f.pool.settled();
    const crash = f.pool.convert("crash", encode(syntheticReview(1)), now());
    // Queued behind the crashing request: served by the replacement.
    const next = f.pool.convert(SYNTHETIC_TARGET, encode(syntheticReview(1)), now());
    const dead = await crash;
    assert.equal(dead.status, 500);
    assert.match(decoder.decode(dead.body), /conversion worker failed: .*deliberate crash/);
    assert.match(decoder.decode(dead.body), /the worker was replaced, retry the request/);
    const after = await next;
    assert.equal(after.status, 200);
    assert.match(decoder.decode(after.body), /"status":"Success"/);
    assert.deepEqual(f.lost, ["error"]);
    assert.equal(f.pool.stats().workers, 1);
    const lost = (await metrics.reviewRequests.get()).values.find((v) =>
      v.labels.result === "worker_lost"
    );
    assert.deepEqual([lost?.labels.target, lost?.value], ["(unregistered)", 1]);
    // A swap after the replacement reaches the new Worker.
    f.registry.install(renamed("after-crash"));
    await f.pool.settled();
    const swapped = await f.pool.convert("after-crash", encode(syntheticReview(1)), now());
    assert.match(decoder.decode(swapped.body), /"status":"Success"/);
  },
});

Deno.test({
  ...T,
  name: "a Worker holding a request past the budget and its grace is replaced (watchdog)",
  fn: async () => {
    using f = fixture(1, {
      url: new URL("./_crashing_worker.ts", import.meta.url),
      requestTimeoutMs: 100,
      // Generous, so that a loaded machine's late budget check is not taken for a hang.
      grace: 1_500,
    });
    f.registry.install(slowCompiled());
    await f.pool.settled();
    // A real slow conversion stops at its request budget inside the Worker: a Failure, no restart.
    const slow = await f.pool.convert(SLOW_TARGET, encode(slowReview("slow", 20)), now());
    assert.equal(slow.status, 200);
    assert.match(decoder.decode(slow.body), /request time budget of 0\.1s exceeded/);
    assert.deepEqual(f.lost, []);
    // A Worker stuck outside every budget check is what the watchdog is for.
    const stuck = await f.pool.convert("hang", encode(syntheticReview(1)), now());
    assert.equal(stuck.status, 500);
    assert.match(decoder.decode(stuck.body), /held the request for more than 1.6s/);
    assert.deepEqual(f.lost, ["watchdog"]);
    const ok = await f.pool.convert(SYNTHETIC_TARGET, encode(syntheticReview(1)), now());
    assert.match(decoder.decode(ok.body), /"status":"Success"/);
  },
});

Deno.test({
  ...T,
  name: "the pool families are exposed with the dco_webhook_ prefix",
  fn: async () => {
    const prom = new Registry();
    const metrics = new WebhookMetrics(prom);
    using f = fixture(2, { metrics });
    metrics.observePool(() => f.pool.stats());
    await f.pool.settled();
    assert.equal(
      sampleValue(await prom.metrics(), "dco_webhook_conversion_workers"),
      0,
      "the Workers start with the first review",
    );
    await f.pool.convert(SYNTHETIC_TARGET, encode(syntheticReview(1)), now());
    metrics.countWorkerLost("error");
    const text = await prom.metrics();
    assert.equal(sampleValue(text, "dco_webhook_conversion_workers"), 2);
    assert.equal(sampleValue(text, "dco_webhook_conversion_workers_busy"), 0);
    assert.equal(sampleValue(text, "dco_webhook_conversion_queue_length"), 0);
    assert.equal(sampleValue(text, "dco_webhook_conversion_plan_set_version"), 1);
    assert.equal(
      sampleValue(text, "dco_webhook_conversion_worker_restarts_total", { reason: "error" }),
      1,
    );
    assert.equal(
      sampleValue(text, "dco_webhook_conversion_worker_restarts_total", { reason: "watchdog" }),
      0,
    );
  },
});

Deno.test("the inline policy keeps small reviews of bounded-cost targets on the thread that read them", () => {
  const registry = new PlanRegistry();
  const sets = new PlanSets();
  sets.follow(registry);
  const policy = new InlinePolicy(1000);
  const synthetic = registry.install(syntheticCompiled()).entry;
  const slow = registry.install(slowCompiled()).entry;
  assert.equal(policy.inline(synthetic, 1000), true);
  assert.equal(policy.inline(synthetic, 1001), false, "over the size");
  assert.equal(policy.inline(slow, 10), false, "a CEL op is never inline");
  assert.equal(policy.inline(undefined, 10), true, "no entry: answered without converting");
  assert.equal(new InlinePolicy(0).inline(synthetic, 1), false, "0 = every review in the pool");
  // A failed compile keeps the plan and its verdict.
  const failed = registry.install({
    ok: false,
    target: SLOW_TARGET,
    kind: "crd",
    config: "gadgets-conversion",
    reason: "InvalidRules",
    message: "x",
  }).entry;
  assert.equal(policy.inline(failed, 10), false);
  // The verdict crosses to a Worker's replica with the plan data, a kept plan's with it.
  sets.commit(sets.takeDelta()!.version);
  const replica = new PlanReplica();
  replica.reset([sets.startingState().committed]);
  const held = replica.lookup(replica.latest)!;
  assert.equal(policy.inline(held.get(SYNTHETIC_TARGET), 10), true);
  assert.equal(policy.inline(held.get(SLOW_TARGET), 10), false);
});

Deno.test("auto inline bound: 256 KiB whatever the CPUs, so 10 × 10 KB and 100 × 2 KB stay inline", () => {
  for (const cpus of [1, 2, 8]) assert.equal(autoInlineMaxBytes(cpus), DEFAULT_INLINE_MAX_BYTES);
  assert.equal(DEFAULT_INLINE_MAX_BYTES, 256 * 1024);
  const policy = new InlinePolicy(autoInlineMaxBytes(2));
  const registry = new PlanRegistry();
  const synthetic = registry.install(syntheticCompiled()).entry;
  const slow = registry.install(slowCompiled()).entry;
  const tenOfTen = encode(syntheticReview(10, { annotationBytes: 8000 })).byteLength;
  const hundredOfTwo = encode(syntheticReview(100)).byteLength;
  assert.equal(policy.inline(synthetic, tenOfTen), true, `10 × 10 KB (${tenOfTen} bytes)`);
  assert.equal(policy.inline(synthetic, hundredOfTwo), true, `100 × 2 KB (${hundredOfTwo} bytes)`);
  assert.equal(policy.inline(synthetic, DEFAULT_INLINE_MAX_BYTES + 1), false, "larger: the pool");
  assert.equal(policy.inline(slow, 10), false, "a CEL op goes to the pool");
});

Deno.test("plan sets: the committed version moves only on commit; the head collects changes", () => {
  const registry = new PlanRegistry();
  const sets = new PlanSets();
  sets.follow(registry);
  registry.install(renamed("one"));
  assert.equal(sets.version, 0);
  const d1 = sets.takeDelta()!;
  assert.equal(d1.version, 1);
  assert.deepEqual(d1.changes.map((c) => c.target), ["one"]);
  registry.install(renamed("two"));
  assert.equal(sets.takeDelta(), undefined, "one version at a time");
  assert.equal(sets.get("one"), undefined);
  const start = sets.startingState();
  assert.equal(start.committed.version, 0);
  assert.deepEqual(start.installing?.entries.map((e) => e.target), ["one"]);
  sets.commit(1);
  assert.ok(sets.get("one"));
  assert.equal(sets.get("two"), undefined, "the head is not committed");
  const d2 = sets.takeDelta()!;
  assert.deepEqual([d2.version, d2.changes.map((c) => c.target)], [2, ["two"]]);
  assert.throws(() => sets.commit(3), /not being installed/);
  sets.commit(2);
  assert.deepEqual(sets.snapshot().map((e) => e.target), ["one", "two"]);
  assert.equal(sets.pending, false);
});

Deno.test("the plan data that crosses to a Worker is structured-cloneable plain data", () => {
  // The plan data that crosses to a Worker is structured-cloneable (no functions, no classes):
  // the encoded plans are bytes, everything else is JSON.
  const registry = new PlanRegistry();
  const sets = new PlanSets();
  sets.follow(registry);
  registry.install(syntheticCompiled());
  registry.install(slowCompiled());
  const d = sets.takeDelta()!;
  const cloned = structuredClone(d);
  assert.deepEqual(cloned, d);
  for (const c of cloned.changes) {
    assert.ok(c.entry !== null && c.entry.plans instanceof Uint8Array);
    const { plans: _, ...meta } = c.entry;
    assert.deepEqual(JSON.parse(JSON.stringify(meta)) as JsonObject, meta);
  }
});
