/**
 * A config's finalizer and its delete (docs/design/config-reconcile.md#delete-and-finalizers): the
 * finalizer is added on the first reconcile; on delete the target's conversion is reverted to
 * `None` before the finalizer goes, and the delete is held while the storage guard says the revert
 * is unsafe (more than one version served, or objects possibly stored at another version) unless
 * the config carries the break-glass annotation — which is then logged as a warning naming what
 * it risks. An XRD's config also waits (boundedly) until the CRDs Crossplane generates from the
 * XRD no longer convert through the webhook.
 */
import { type ConfigKind, type ConversionConfig, XRD_CONFIG_KIND } from "../../api/mod.ts";
import { buildRevertPatch } from "../conversion_patch.ts";
import { StatusEditor } from "./status_editor.ts";
import { readStorageGuard } from "./storage_guard.ts";
import {
  ALLOW_UNSAFE_DELETE_ANNOTATION,
  type ConfigReconcileDeps,
  CRD_CONFIG_FINALIZER,
  type ReconcileResult,
  REQUEUE_DELETE_BLOCKED_MS,
  REQUEUE_REVERT_PROPAGATION_MS,
  REVERT_PROPAGATION_WAIT_MS,
  XRD_CONFIG_FINALIZER,
} from "./types.ts";
import { generatedCRDsOnWebhook } from "./xrd_propagation.ts";

/** The finalizer of a config kind. */
export function finalizerOf(kind: ConfigKind): string {
  return kind === XRD_CONFIG_KIND ? XRD_CONFIG_FINALIZER : CRD_CONFIG_FINALIZER;
}

/** The config with its kind's finalizer (added when missing); returns the config to go on with. */
export async function ensureFinalizer(
  kind: ConfigKind,
  config: ConversionConfig,
  deps: ConfigReconcileDeps,
): Promise<ConversionConfig> {
  const finalizers = config.metadata?.finalizers ?? [];
  if (finalizers.includes(finalizerOf(kind))) return config;
  return await deps.updateFinalizers(config, [...finalizers, finalizerOf(kind)]);
}

/** Revert the target before the finalizer goes; held while the storage guard says unsafe. */
export async function reconcileDelete(
  kind: ConfigKind,
  config: ConversionConfig,
  deps: ConfigReconcileDeps,
): Promise<ReconcileResult> {
  const finalizers = config.metadata?.finalizers ?? [];
  const remaining = finalizers.filter((f) => f !== finalizerOf(kind));
  if (remaining.length === finalizers.length) return {}; // not ours to release
  const release = async () => {
    await deps.updateFinalizers(config, remaining);
    return {};
  };
  const run = new StatusEditor(kind, config, deps);
  if (!run.wasApplied) return await release();
  const target = await deps.getTarget(run.targetKind, run.target);
  if (target === undefined) return await release();
  const verdict = await readStorageGuard(deps, run.targetKind, target);
  const breakGlass = config.metadata?.annotations?.[ALLOW_UNSAFE_DELETE_ANNOTATION] === "true";
  if (!verdict.safe && !breakGlass) {
    const message = `delete held: ${verdict.problem}; reverting the conversion of ` +
      `${run.targetLabel} to None now would break reads of objects stored at another version ` +
      `and prune them on their next write. To let the delete proceed: ${verdict.remedy}. Or set the ` +
      `annotation ${ALLOW_UNSAFE_DELETE_ANNOTATION}: "true" on this config to revert anyway`;
    run.cond({
      type: "DeletionBlocked",
      status: "True",
      reason: verdict.reason ?? "StoredVersionsPending",
      message,
    });
    run.status.message = message;
    await run.patch();
    return { requeueAfter: REQUEUE_DELETE_BLOCKED_MS };
  }
  if (!verdict.safe) {
    deps.log?.(
      `storage guard overridden by ${ALLOW_UNSAFE_DELETE_ANNOTATION}: reverting the conversion ` +
        `of ${run.targetLabel} to None although ${verdict.problem}; objects stored at another ` +
        `version will read wrong and lose the fields the storage version lacks on their next write`,
      {
        config: run.name,
        kind,
        target: run.target,
        reason: verdict.reason,
      },
    );
  }
  await deps.applyTarget(buildRevertPatch(run.targetKind, run.target, target));
  if (run.targetKind === "XRD") {
    // The config (and with it the plan its webhook serves) stays until Crossplane has taken the
    // webhook out of the CRDs it generates too: reads through them would fail in between.
    const waiting = await generatedCRDsOnWebhook(deps, target);
    const deletedAt = Date.parse(config.metadata?.deletionTimestamp ?? "");
    const waited = Number.isNaN(deletedAt) ? 0 : deps.now() - deletedAt;
    if (waiting.length > 0 && waited < REVERT_PROPAGATION_WAIT_MS) {
      const message = `delete waits for Crossplane to take the conversion webhook out of ` +
        `${waiting.join(", ")} (generated from ${run.targetLabel}, whose stanza is reverted); ` +
        `the webhook serves them until then, at most ${REVERT_PROPAGATION_WAIT_MS / 1000}s`;
      run.cond({ type: "DeletionBlocked", status: "True", reason: "RevertPropagating", message });
      run.status.message = message;
      await run.patch();
      return { requeueAfter: REQUEUE_REVERT_PROPAGATION_MS };
    }
    if (waiting.length > 0) {
      deps.log?.(
        `releasing the config although ${waiting.join(", ")} still convert through a webhook ` +
          `${REVERT_PROPAGATION_WAIT_MS / 1000}s after the delete (is Crossplane running?)`,
        { config: run.name, kind, target: run.target },
      );
    }
  }
  return await release();
}
