/**
 * A config's Ready / Reconciling / Stalled through the reconcile (the in-memory World): the
 * mapping from phases and conditions documented in docs/design/config-reconcile.md, every
 * summary condition stamped with the config's generation.
 */
import assert from "node:assert/strict";
import type { ConversionConfig } from "../../src/api/mod.ts";
import { reconcileConfig } from "../../src/manager/config/mod.ts";
import { configReadiness } from "../../src/manager/config/readiness.ts";
import type { JsonObject } from "../../src/lib/json.ts";
import {
  webhookServer as server,
  widgetConfig as config,
  widgetCRD as crd,
  World,
} from "./_world.ts";

const world = (cfg: ConversionConfig, target: JsonObject = crd()) => new World(cfg, target);
const run = (w: World) => reconcileConfig("CRDConversionConfig", "widgets", w);

/** `Ready=<status>/<reason>` plus the abnormal condition present, if any. */
function readiness(w: World): string {
  const ready = w.cond("Ready");
  assert.ok(ready, "Ready is written on every status patch");
  assert.equal(ready.observedGeneration, w.status.observedGeneration);
  const abnormal = ["Reconciling", "Stalled"].filter((t) => w.cond(t) !== undefined);
  assert.ok(abnormal.length <= 1, `at most one of Reconciling/Stalled: ${abnormal}`);
  for (const t of abnormal) {
    assert.equal(w.cond(t)?.status, "True");
    assert.equal(w.cond(t)?.reason, ready.reason);
  }
  return [`Ready=${ready.status}/${ready.reason}`, ...abnormal].join(" ");
}

Deno.test("Applied → Ready=True, no abnormal condition", async () => {
  const w = world(config());
  await run(w);
  assert.equal(w.status.phase, "Applied");
  assert.equal(readiness(w), "Ready=True/Applied");
  assert.equal(w.cond("Ready")?.message, w.cond("Applied")?.message);
});

Deno.test("a gate wait → Reconciling with the gate's reason, Pending or Stale alike", async () => {
  const pending = world(config(), crd({ established: false }));
  await run(pending);
  assert.equal(pending.status.phase, "Pending");
  assert.equal(readiness(pending), "Ready=False/NotEstablished Reconciling");
  assert.equal(pending.cond("Ready")?.message, pending.status.message);

  const stale = world(config());
  await run(stale);
  stale.servers = [server("main", false)];
  await run(stale);
  assert.equal(stale.status.phase, "Stale");
  assert.equal(readiness(stale), "Ready=False/ServerNotReady Reconciling");
  stale.servers = [server()];
  await run(stale);
  assert.equal(readiness(stale), "Ready=True/Applied");
});

Deno.test("what needs a change → Stalled: Invalid, schema drift, a missing target, a revert", async () => {
  const invalid = world(config({
    rules: [{ strategy: "FieldRename", fieldRename: { hubPath: "spec.nope", spokePath: "x" } }],
  }));
  await run(invalid);
  assert.equal(invalid.status.phase, "Invalid");
  assert.equal(readiness(invalid), "Ready=False/ValidationFailed Stalled");

  const drift = world(config());
  await run(drift);
  drift.target = crd({ generation: 4, hubExtra: { color: { type: "string" } } });
  await run(drift);
  assert.equal(readiness(drift), "Ready=False/SchemaDrift Stalled");

  const gone = world(config());
  await run(gone);
  gone.target = undefined;
  await run(gone);
  assert.equal(readiness(gone), "Ready=False/PostApplyInvalid Stalled");

  const reverted = world(config({ driftPolicy: "FailClosed" }));
  await run(reverted);
  reverted.target = crd({
    generation: 4,
    servedV1: false,
    hubExtra: { color: { type: "string" } },
  });
  await run(reverted);
  assert.equal(reverted.status.phase, "Failed");
  assert.equal(readiness(reverted), "Ready=False/Reverted Stalled");
});

Deno.test("configReadiness: phases the reconcile does not write read as Reconciling", () => {
  assert.deepEqual(configReadiness({ phase: "Validating", message: "m" }), {
    state: "Reconciling",
    reason: "Validating",
    message: "m",
  });
  assert.deepEqual(configReadiness({}), {
    state: "Reconciling",
    reason: "Reconciling",
    message: "",
  });
  assert.equal(configReadiness({ phase: "Pending" }).reason, "Pending");
});
