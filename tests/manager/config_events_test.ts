/**
 * The Events a config's reconcile records (docs/design/config-reconcile.md#events), through the
 * in-memory World: outcome changes with the condition reasons (Warning when Stalled), nothing more
 * while the outcome holds, again for a new generation that is still not Ready; a held revert, a
 * blocked delete and handover verdicts with their own reasons.
 */
import assert from "node:assert/strict";
import type { ConversionConfig } from "../../src/api/mod.ts";
import { reconcileConfig } from "../../src/manager/config/mod.ts";
import { type ConfigEvent, configEvents } from "../../src/manager/config/events.ts";
import type { StatusCondition } from "../../src/kube/status.ts";
import { widgetConfig as config, widgetCRD as crd, World } from "./_world.ts";

/** A World that keeps the Events, as `<type> <reason> (<action>)`. */
function world(cfg: ConversionConfig, target = crd()) {
  const events: string[] = [];
  const notes: string[] = [];
  const w = Object.assign(new World(cfg, target), {
    event: (c: ConversionConfig, e: ConfigEvent) => {
      assert.equal(c.metadata?.name, "widgets");
      events.push(`${e.type} ${e.reason} (${e.action})`);
      notes.push(e.note);
    },
  });
  const run = async () => {
    await reconcileConfig("CRDConversionConfig", "widgets", w).catch(() => undefined);
  };
  return { w, events, notes, run };
}

const badRule = {
  rules: [{ strategy: "FieldRename", fieldRename: { hubPath: "spec.nope", spokePath: "x" } }],
};

Deno.test("an invalid config: one Warning with the condition's reason, again per new generation", async () => {
  const { w, events, notes, run } = world(config(badRule));
  await run();
  assert.deepEqual(events, ["Warning ValidationFailed (Validate)"]);
  assert.match(notes[0], /\[path-not-found\]/);
  await run();
  assert.deepEqual(events.length, 1, "the same outcome again: no new Event");
  w.cfg!.metadata!.generation = 3;
  await run();
  assert.deepEqual(events, [
    "Warning ValidationFailed (Validate)",
    "Warning ValidationFailed (Validate)",
  ]);
});

Deno.test("a wait, then Applied: Normal Events with the gate's and the Applied reason", async () => {
  const { w, events, run } = world(config(), crd({ established: false }));
  await run();
  await run();
  w.target = crd();
  await run();
  await run();
  assert.deepEqual(events, ["Normal NotEstablished (Wait)", "Normal Applied (Apply)"]);
});

Deno.test("drift under FailClosed: a Warning as the revert starts, one when it is done", async () => {
  const { w, events, run } = world(config({ driftPolicy: "FailClosed" }));
  await run();
  w.target = crd({ generation: 4, servedV1: false, hubExtra: { color: { type: "string" } } });
  await run();
  assert.deepEqual(events, [
    "Normal Applied (Apply)",
    "Warning Reverting (Revert)",
    "Warning Reverted (Revert)",
  ]);
});

Deno.test("the storage guard: a held revert and a blocked delete, with the guard's reason", async () => {
  const held = world(config({ driftPolicy: "FailClosed" }));
  await held.run();
  held.w.target = crd({
    generation: 4,
    servedV1: false,
    storedVersions: ["v1", "v2"],
    hubExtra: { color: { type: "string" } },
  });
  await held.run();
  await held.run();
  assert.deepEqual(held.events, [
    "Normal Applied (Apply)",
    "Warning SchemaDrift (Validate)",
    "Warning StoredVersionsPending (Revert)",
  ]);

  const deleting = world(config());
  await deleting.run();
  deleting.w.target = crd({ servedV1: false, storedVersions: ["v1", "v2"] });
  deleting.w.markDeleted();
  await deleting.run();
  await deleting.run();
  assert.deepEqual(deleting.events, [
    "Normal Applied (Apply)",
    "Warning StoredVersionsPending (Delete)",
  ]);
});

Deno.test("handover verdicts: an Event per change, Warning when unverified or unknown", () => {
  const cond = (reason: string, status: "True" | "False"): StatusCondition => ({
    type: "HandoverReady",
    status,
    reason,
    message: reason,
    lastTransitionTime: "2026-01-01T00:00:00Z",
  });
  const ready = { state: "Ready" as const, reason: "Applied", message: "" };
  const readyCond: StatusCondition = { ...cond("Applied", "True"), type: "Ready" };
  const at = (...conditions: StatusCondition[]) => ({
    phase: "Applied" as const,
    observedGeneration: 1,
    conditions: [readyCond, ...conditions],
  });
  const verdicts = (from: StatusCondition[], to: StatusCondition[]) =>
    configEvents(at(...from), at(...to), 1, ready).map((e) => `${e.type} ${e.reason}`);
  const pending = cond("HandoverPending", "False");
  assert.deepEqual(verdicts([], [pending]), ["Normal HandoverPending"]);
  assert.deepEqual(verdicts([pending], [pending]), []);
  assert.deepEqual(verdicts([pending], [cond("HandoverUnverified", "True")]), [
    "Warning HandoverUnverified",
  ]);
  assert.deepEqual(verdicts([pending], [cond("HandoverUnknown", "False")]), [
    "Warning HandoverUnknown",
  ]);
  assert.deepEqual(verdicts([pending], [cond("HandoverReady", "True")]), ["Normal HandoverReady"]);
});
