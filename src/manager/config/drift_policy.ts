/**
 * A config that no longer validates against its live target, under its drift policy
 * (docs/design/config-reconcile.md#drift-policy-and-revert): `FailClosed` reverts the target's
 * conversion to `None` once it had been applied — the status saying so (`Applied=False/Reverting`)
 * written first, so the XRD guard does not put a reverted XRD's stanza back — unless the storage
 * guard holds the revert (`RevertBlocked`: the previously applied conversion keeps serving until
 * the stored objects are migrated); otherwise an applied config goes `Stale` and the previously applied conversion keeps
 * serving, and a never-applied one is `Invalid`.
 */
import type { JsonObject } from "../../lib/json.ts";
import { buildRevertPatch } from "../conversion_patch.ts";
import type { StatusEditor } from "./status_editor.ts";
import { readStorageGuard } from "./storage_guard.ts";
import { type ReconcileResult, REQUEUE_REVERT_BLOCKED_MS } from "./types.ts";

/** Writes the outcome of a validation failure (`message`) and ends the reconcile. */
export async function applyDriftPolicy(
  run: StatusEditor,
  target: JsonObject,
  message: string,
): Promise<ReconcileResult> {
  const { config, status } = run;
  const applied = status.conditions?.find((c) => c.type === "Applied");
  const blocked = status.conditions?.find((c) => c.type === "RevertBlocked");
  const revertNeeded = config.spec.driftPolicy === "FailClosed" &&
    (run.origPhase === "Applied" ||
      (run.origPhase === "Failed" && applied?.status === "False" &&
        (applied.reason === "RevertFailed" || applied.reason === "Reverting")) ||
      (run.origPhase === "Stale" && blocked?.status === "True"));
  if (revertNeeded) {
    const verdict = await readStorageGuard(run.deps, run.targetKind, target);
    if (!verdict.safe) {
      const held =
        `${message}; FailClosed revert of ${run.targetLabel} held: ${verdict.problem}; ` +
        `reverting to None now would break reads of objects stored at another version and ` +
        `prune them on their next write, so the previously applied conversion keeps serving. ` +
        `To let the revert proceed: ${verdict.remedy}`;
      run.phase("Stale", "RevertBlocked");
      if (applied?.status === "False") {
        // An earlier attempt marked the revert (and may have crashed or failed before it): the
        // stanza serves on, so the XRD guard must protect it again.
        run.cond({
          type: "Applied",
          status: "True",
          reason: "Applied",
          message: `the previously applied conversion of ${run.targetLabel} keeps serving`,
        });
      }
      run.cond({ type: "Stale", status: "True", reason: "SchemaDrift", message });
      run.cond({
        type: "RevertBlocked",
        status: "True",
        reason: verdict.reason ?? "StoredVersionsPending",
        message: held,
      });
      status.message = held;
      await run.patch();
      return { requeueAfter: REQUEUE_REVERT_BLOCKED_MS };
    }
    // The status says the revert is coming before the revert is written: the XRD guard restores
    // a stanza only for an `Applied=True` config, and the revert is an XRD write it sees. A crash
    // between the two writes leaves `Failed` + `Applied=False/Reverting`, which retries the revert
    // (the storage guard asked again) — docs/design/config-reconcile.md#drift-policy-and-revert.
    const reverting =
      `${message}; FailClosed: reverting the conversion of ${run.targetLabel} to strategy None`;
    run.phase("Failed");
    run.dropCond("RevertBlocked");
    run.cond({ type: "Applied", status: "False", reason: "Reverting", message: reverting });
    status.message = reverting;
    await run.patch();
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
    run.dropCond("RevertBlocked");
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
