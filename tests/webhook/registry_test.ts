/**
 * The plan registry (docs/design/webhook.md#the-plan-registry-and-swaps): success replaces and clears errors, failure keeps the
 * plan (or leaves a placeholder), remove, snapshot, listeners, and the `/debug/registry` rows.
 */
import assert from "node:assert/strict";
import { setLogSink } from "../../src/obs/log.ts";
import { compiledResult } from "../../src/webhook/compile.ts";
import type { CompileFailure } from "../../src/webhook/compiled.ts";
import { syntheticCompiled } from "../../src/webhook/convert/_synthetic.ts";
import type { RegistryWriter } from "../../src/webhook/registry_controller.ts";
import {
  debugRows,
  isServable,
  PlanRegistry,
  type RegistryChange,
} from "../../src/webhook/registry.ts";

const T = "widgets.bench.example.com";
const t0 = new Date("2026-03-01T10:00:00.123Z");
const t1 = new Date("2026-03-01T10:05:00Z");

function failure(target = T, reason: CompileFailure["reason"] = "InvalidRules"): CompileFailure {
  return { ok: false, target, kind: "crd", config: "widgets", reason, message: `bad ${reason}` };
}

Deno.test("a success links the plans into a servable entry", () => {
  const r = new PlanRegistry();
  const outcome = r.install(syntheticCompiled(), t0);
  assert.equal(outcome.ok, true);
  const e = r.get(T);
  assert.ok(isServable(e));
  assert.equal(e.hubVersion, "v2");
  assert.deepEqual(e.router.versions().sort(), ["v1", "v1alpha1", "v2"]);
  assert.equal(e.planHash, "gen=1/1");
  assert.equal(e.compiledAt, t0);
  assert.equal(e.lastError, "");
  assert.deepEqual(e.reviewVersions, ["v1"]);
  assert.equal(e.lossless.v1alpha1.spokeToHub, false);
  assert.equal(r.size, 1);
  assert.ok(Object.isFrozen(e), "entries are immutable; writers replace them");
});

Deno.test("a failure keeps the working plan and records the error", () => {
  const r = new PlanRegistry();
  r.install(syntheticCompiled(), t0);
  const before = r.get(T);
  const outcome = r.install(failure(), t1);
  assert.equal(outcome.ok, false);
  assert.ok(!outcome.ok && outcome.stale, "the old plan is still served");
  const e = r.get(T);
  assert.ok(e !== undefined);
  assert.equal(e.router, before?.router, "same linked plan");
  assert.equal(e.compiledAt, t0);
  assert.equal(e.lastError, "bad InvalidRules");
  assert.equal(e.lastErrorReason, "InvalidRules");
  assert.equal(e.lastErrorAt, t1);
  assert.equal(before?.lastError, "", "the previous entry object is untouched");
});

Deno.test("a failure without a plan leaves an error-only placeholder", () => {
  const r = new PlanRegistry();
  const outcome = r.install(failure(T, "CRDNotFound"), t1);
  assert.ok(!outcome.ok && !outcome.stale);
  const e = r.get(T);
  assert.ok(e !== undefined && !isServable(e));
  assert.equal(e.router, null);
  assert.equal(e.lastErrorReason, "CRDNotFound");
  assert.equal(r.size, 1, "placeholders count in the size");
});

Deno.test("a later success clears the error", () => {
  const r = new PlanRegistry();
  r.install(failure(), t0);
  r.install(syntheticCompiled(), t1);
  const e = r.get(T);
  assert.ok(isServable(e));
  assert.equal(e.lastError, "");
  assert.equal(e.lastErrorAt, null);
  assert.equal(e.compiledAt, t1);
});

Deno.test("plans that fail to link are a failure that keeps the old plan", () => {
  const r = new PlanRegistry();
  r.install(syntheticCompiled(), t0);
  const good = r.get(T)?.router;
  // Compiling checks that the plans link (src/webhook/compile.ts): the result is a failure.
  const broken = compiledResult({
    target: T,
    kind: "crd",
    config: "widgets",
    hubVersion: "v2",
    plans: [{ hubVersion: "v2", spokeVersion: "v1", hubToSpoke: [{ op: "nope" }], spokeToHub: [] }],
    reviewVersions: ["v1"],
    lossless: {},
    planHash: "gen=2/2",
  });
  const outcome = r.install(broken, t1);
  assert.ok(!outcome.ok);
  assert.equal(outcome.reason, "AnalyzeFailed");
  assert.match(r.get(T)?.lastError ?? "", /^linking compiled plans: unknown op code "nope"/);
  assert.equal(r.get(T)?.router, good);
});

Deno.test("an installed entry links its plans on its first conversion", () => {
  const r = new PlanRegistry();
  r.install(syntheticCompiled(), t0);
  const e = r.get(T);
  assert.ok(isServable(e));
  assert.equal(e.router.linked, false, "installing links nothing");
  assert.equal(debugRows(r.snapshot())[0].spokeCount, 2, "debug rows do not link either");
  assert.equal(e.router.linked, false);
  assert.equal(e.router.plans.size, 2);
  assert.equal(e.router.linked, true);
});

Deno.test("remove, has, snapshot order and copy semantics", () => {
  const r = new PlanRegistry();
  r.install(failure("b.example.com"), t0);
  r.install(syntheticCompiled(), t0);
  r.install(failure("a.example.com"), t0);
  const snap = r.snapshot();
  assert.deepEqual(snap.map((e) => e.target), ["a.example.com", "b.example.com", T]);
  assert.equal(r.remove("b.example.com"), true);
  assert.equal(r.remove("b.example.com"), false);
  assert.equal(r.has("b.example.com"), false);
  assert.equal(snap.length, 3, "a snapshot does not change with later writes");
  assert.equal(r.size, 2);
});

Deno.test("listeners see every install and removal; a throwing listener does not block writes", () => {
  const logged: string[] = [];
  setLogSink((line) => logged.push(line));
  const r = new PlanRegistry();
  const seen: RegistryChange[] = [];
  r.onChange(() => {
    throw new Error("broken observer");
  });
  const off = r.onChange((c) => seen.push(c));
  r.install(syntheticCompiled(), t0);
  r.install(failure(), t1);
  r.remove(T);
  r.remove(T); // absent: no event
  off();
  r.install(syntheticCompiled(), t1);
  assert.deepEqual(seen.map((c) => c.type), ["install", "install", "remove"]);
  const [first, second] = seen;
  assert.ok(first.type === "install" && first.outcome.ok);
  assert.ok(
    second.type === "install" && !second.outcome.ok && second.outcome.reason === "InvalidRules",
  );
  assert.ok(r.has(T), "the write after the unsubscribe still happened");
  setLogSink(undefined);
  assert.equal(logged.length, 4);
  const line = JSON.parse(logged[0]);
  assert.equal(line.msg, "registry change listener failed");
  assert.equal(line.target, T);
  assert.equal(line.error.message, "broken observer");
});

Deno.test("debug rows carry the reference's fields", () => {
  const r = new PlanRegistry();
  r.install(syntheticCompiled(), t0);
  r.install(failure(), t1);
  r.install(failure("a.example.com", "XRDNotFound"), t1);
  const rows = debugRows(r.snapshot());
  assert.deepEqual(rows[1], {
    xrd: T,
    kind: "crd",
    config: "widgets-conversion",
    ready: true,
    spokeCount: 2,
    planHash: "gen=1/1",
    compiledAt: "2026-03-01T10:00:00Z",
    lastError: "bad InvalidRules",
    lastErrorAt: "2026-03-01T10:05:00Z",
    versions: ["v2", "v1", "v1alpha1"],
  });
  assert.equal(rows[0].ready, false);
  assert.equal(rows[0].compiledAt, null);
  assert.deepEqual(rows[0].versions, []);
});

Deno.test("the registry is what the registry controller writes to", () => {
  const writer: RegistryWriter = new PlanRegistry();
  writer.install(syntheticCompiled(), t0);
  assert.equal(writer.has(T), true);
  writer.remove(T);
  assert.equal(writer.has(T), false);
});
