/**
 * A config that no longer validates against its live target, under its drift policy
 * (docs/design/config-reconcile.md#drift-policy-and-revert): `FailClosed` reverts the target's
 * conversion to `None` once it had been applied; otherwise an applied config goes `Stale` and the
 * previously applied conversion keeps serving, and a never-applied one is `Invalid`.
 */
import type { JsonObject } from "../../lib/json.ts";
import { buildRevertPatch } from "../conversion_patch.ts";
import type { StatusEditor } from "./status_editor.ts";
import type { ReconcileResult } from "./types.ts";

/** Writes the outcome of a validation failure (`message`) and ends the reconcile. */
export async function applyDriftPolicy(
  run: StatusEditor,
  target: JsonObject,
  message: string,
): Promise<ReconcileResult> {
  const { config, status } = run;
  const applied = status.conditions?.find((c) => c.type === "Applied");
  const revertNeeded = config.spec.driftPolicy === "FailClosed" &&
    (run.origPhase === "Applied" ||
      (run.origPhase === "Failed" && applied?.status === "False" &&
        applied.reason === "RevertFailed"));
  if (revertNeeded) {
    try {
      await run.deps.applyTarget(buildRevertPatch(run.targetKind, run.target, target));
    } catch (e) {
      const why = e instanceof Error ? e.message : String(e);
      const failed =
        `${message}; FailClosed revert of ${run.targetLabel} failed (will retry): ${why}`;
      run.phase("Failed", "RevertFailed");
      run.cond({ type: "Applied", status: "False", reason: "RevertFailed", message: failed });
      status.message = failed;
      await run.patch();
      throw e;
    }
    const reverted =
      `${message}; FailClosed: conversion of ${run.targetLabel} reverted to strategy None`;
    run.phase("Failed", "Reverted");
    run.dropCond("Stale");
    run.cond({ type: "Applied", status: "False", reason: "Reverted", message: reverted });
    status.message = reverted;
  } else if (run.wasApplied) {
    run.phase("Stale", "SchemaDrift");
    run.cond({ type: "Stale", status: "True", reason: "SchemaDrift", message });
    status.message = `${message}; the previously applied conversion keeps serving`;
  } else {
    run.phase("Invalid", "ValidationFailed");
    run.dropCond("Stale");
    status.message = message;
  }
  await run.patch();
  return {};
}
