/**
 * `withReadiness`: the kstatus summary conditions — exactly one abnormal condition while Ready is
 * False, none once it is True, every one stamped with the generation, transition times kept
 * while a status holds.
 */
import assert from "node:assert/strict";
import { withReadiness } from "../../src/kube/kstatus.ts";
import type { StatusCondition } from "../../src/kube/status.ts";

const T0 = Date.parse("2026-01-01T00:00:00Z");
const T1 = T0 + 60_000;

const summary = (list: StatusCondition[]) =>
  list.map((c) => `${c.type}=${c.status}/${c.reason}@${c.observedGeneration}`);

Deno.test("Reconciling → Stalled → Ready: one abnormal condition at a time, others kept", () => {
  const other: StatusCondition = {
    type: "Validated",
    status: "True",
    reason: "Validated",
    message: "",
    lastTransitionTime: "2025-01-01T00:00:00Z",
  };
  const waiting = withReadiness(
    [other],
    { state: "Reconciling", reason: "ServerNotReady", message: "waiting" },
    1,
    T0,
  );
  assert.deepEqual(summary(waiting), [
    "Validated=True/Validated@undefined",
    "Ready=False/ServerNotReady@1",
    "Reconciling=True/ServerNotReady@1",
  ]);
  assert.equal(waiting[1].message, "waiting");

  const stalled = withReadiness(
    waiting,
    { state: "Stalled", reason: "ValidationFailed", message: "bad" },
    2,
    T1,
  );
  assert.deepEqual(summary(stalled), [
    "Validated=True/Validated@undefined",
    "Ready=False/ValidationFailed@2",
    "Stalled=True/ValidationFailed@2",
  ]);
  // Ready stayed False: its transition time is kept; Stalled is new.
  assert.equal(stalled[1].lastTransitionTime, "2026-01-01T00:00:00Z");
  assert.equal(stalled[2].lastTransitionTime, "2026-01-01T00:01:00Z");

  const ready = withReadiness(stalled, { state: "Ready", reason: "Applied", message: "ok" }, 3, T1);
  assert.deepEqual(summary(ready), ["Validated=True/Validated@undefined", "Ready=True/Applied@3"]);
  assert.equal(ready[1].lastTransitionTime, "2026-01-01T00:01:00Z");
  assert.deepEqual(stalled.map((c) => c.type), ["Validated", "Ready", "Stalled"], "input kept");
});
