/** The gates on the target: it exists (read once per reconcile), and it is Established. */
import type { Gate } from "../gate.ts";
import { checkXrdOwnership } from "../xrd_ownership.ts";
import { isEstablished, targetGeneration } from "../target.ts";
import { REQUEUE_WAITING_MS } from "../types.ts";

/**
 * Reads the target; a missing one makes the config invalid. XRD only: `PackageManaged` and the
 * out-of-band revert check run here, before any other gate.
 */
export const targetGate: Gate = {
  name: "target",
  async pass(run) {
    let target = await run.deps.getTarget(run.targetKind, run.target);
    if (target === undefined) {
      run.setInvalid(`target ${run.targetLabel} not found`);
      await run.patch();
      return {};
    }
    if (run.targetKind === "XRD") target = await checkXrdOwnership(run, target);
    run.targetObject = target;
    const generation = targetGeneration(target);
    if (run.targetKind === "XRD") run.status.observedXRDGeneration = generation;
    else run.status.observedCRDGeneration = generation;
    return undefined;
  },
};

/** Waits until the target is Established (`CRDHealthy` / `XRDHealthy`). */
export const targetEstablishedGate: Gate = {
  name: "targetEstablished",
  async pass(run) {
    const healthType = run.targetKind === "XRD" ? "XRDHealthy" : "CRDHealthy";
    if (!isEstablished(run.targetObject)) {
      const message = `${run.targetLabel} is not Established`;
      run.cond({ type: healthType, status: "False", reason: "NotEstablished", message });
      run.waitOn("NotEstablished", message);
      await run.patch();
      return { requeueAfter: REQUEUE_WAITING_MS };
    }
    run.cond({
      type: healthType,
      status: "True",
      reason: "Established",
      message: `${run.targetLabel} is Established`,
    });
    return undefined;
  },
};
