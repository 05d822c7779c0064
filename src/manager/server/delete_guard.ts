/**
 * The delete guard of a ConversionWebhookServer: its finalizer stays while any config is served by
 * it — the same rule as the admission delete guard ({@link servedBy}), so the two cannot disagree —
 * unless the live force annotation is set
 * (docs/design/server-children.md#the-cws-reconcile-and-delete-guard).
 */
import { type KubeObject, setCondition, type StatusCondition } from "../../kube/mod.ts";
import {
  FORCE_DELETE_ANNOTATION,
  isDefaultInstance,
  serverDependents,
} from "../admission/server.ts";
import type { ServerReconcileDeps, ServerReconcileResult } from "./reconcile.ts";
import { statusOf } from "./status.ts";

/** The CWS finalizer: held while configs depend on the server. */
export const SERVER_FINALIZER = "conversion.terasky.com/protect-in-use";
/** Requeue of a blocked delete, milliseconds. */
export const REQUEUE_SERVER_DELETE_BLOCKED_MS = 30_000;
/** Most dependents named in the DeletionBlocked message. */
const MAX_LISTED = 20;

/**
 * The DeletionBlocked message: the count, the default-instance suffix, the
 * sorted names, the annotation hint.
 */
export function deletionBlockedMessage(
  dependents: readonly string[],
  isDefault: boolean,
): string {
  const sorted = [...dependents].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const shown = sorted.slice(0, MAX_LISTED).join(", ") +
    (sorted.length > MAX_LISTED ? `, … and ${sorted.length - MAX_LISTED} more` : "");
  return `deletion blocked: ${sorted.length} config(s) still depend on this server${
    isDefault
      ? " (it is the default instance, so unpinned configs without webhookServerRef depend on it too)"
      : ""
  }: ${shown}; move or delete them, or set the annotation ${FORCE_DELETE_ANNOTATION}: "true" to force the deletion`;
}

/** The reconcile of a server being deleted: release the finalizer, or report DeletionBlocked. */
export async function reconcileDelete(
  raw: KubeObject,
  deps: ServerReconcileDeps,
): Promise<ServerReconcileResult> {
  const finalizers = raw.metadata.finalizers ?? [];
  if (!finalizers.includes(SERVER_FINALIZER)) return {};
  const without = finalizers.filter((f) => f !== SERVER_FINALIZER);
  if (raw.metadata.annotations?.[FORCE_DELETE_ANNOTATION] === "true") {
    await deps.updateFinalizers(raw, without);
    return {};
  }
  const name = raw.metadata.name ?? "";
  const [configs, servers] = await Promise.all([deps.listConfigs(), deps.listServers()]);
  const dependents = serverDependents(configs, servers, name);
  if (dependents.length === 0) {
    await deps.updateFinalizers(raw, without); // children go through their owner references
    return {};
  }
  const isDefault = isDefaultInstance(raw, servers, name);
  const before = statusOf(raw);
  const conditions = setCondition(
    (before?.conditions ?? []) as StatusCondition[],
    {
      type: "DeletionBlocked",
      status: "True",
      reason: "ConfigsStillAssigned",
      message: deletionBlockedMessage(dependents, isDefault),
      observedGeneration: raw.metadata.generation ?? 0,
    },
    deps.now(),
  );
  await deps.patchStatus(name, before, { ...before, conditions });
  const was = (before?.conditions as StatusCondition[] | undefined)?.find((c) =>
    c.type === "DeletionBlocked"
  );
  if (was?.status !== "True" || was.reason !== "ConfigsStillAssigned") {
    deps.event?.(raw, {
      type: "Warning",
      reason: "ConfigsStillAssigned",
      action: "Delete",
      note: deletionBlockedMessage(dependents, isDefault),
    });
  }
  return { requeueAfter: REQUEUE_SERVER_DELETE_BLOCKED_MS };
}
