/**
 * Reconciles one `XRDConversionConfig` or `CRDConversionConfig`: validate it against the live
 * target, and only then point the target's `spec.conversion` at the assigned
 * ConversionWebhookServer. A driver over {@link CONFIG_GATES}; the rules are in
 * docs/design/config-reconcile.md.
 */
import type { ConfigKind } from "../../api/mod.ts";
import { ensureFinalizer, reconcileDelete } from "./delete.ts";
import { GateRun } from "./gate.ts";
import { CONFIG_GATES } from "./gates.ts";
import type { ConfigReconcileDeps, ReconcileResult } from "./types.ts";

/**
 * Reconciles config `name` of `kind`. Returns the timed requeue, if any; throws for transient
 * failures (the caller retries with backoff).
 */
export async function reconcileConfig(
  kind: ConfigKind,
  name: string,
  deps: ConfigReconcileDeps,
): Promise<ReconcileResult> {
  const read = await deps.getConfig(kind, name);
  if (read === undefined) return {};
  if (read.metadata?.deletionTimestamp) return await reconcileDelete(kind, read, deps);
  const run = new GateRun(kind, await ensureFinalizer(kind, read, deps), deps);
  for (const gate of CONFIG_GATES) {
    const stopped = await gate.pass(run);
    if (stopped !== undefined) return stopped;
  }
  await run.patch();
  return { requeueAfter: run.requeueAfter };
}
