/**
 * The last steps, once every gate passed: apply the conversion to the target, record `Applied`,
 * and (XRD only) verify that it reached the CRDs Crossplane generates.
 */
import { textToBase64 } from "../../../lib/base64.ts";
import {
  buildConversionPatch,
  webhookPath,
  webhookServiceName,
  webhookURL,
} from "../../conversion_patch.ts";
import type { Gate } from "../gate.ts";
import { sha256Hex } from "../hashes.ts";
import { reviewVersionsOf, verifyPropagation } from "../xrd_propagation.ts";
import { REQUEUE_APPLIED_MS, REQUEUE_WAITING_MS } from "../types.ts";

/** Server-side apply of the conversion stanza, timed into the apply-duration metric. */
export const applyGate: Gate = {
  name: "apply",
  async pass(run) {
    const { deps } = run;
    run.port = run.server.spec.service?.port ?? 443;
    const patch = buildConversionPatch({
      targetKind: run.targetKind,
      targetName: run.target,
      liveTarget: run.targetObject,
      configName: run.name,
      planHash: run.schemaHash,
      serverName: run.serverName,
      serverNamespace: run.serverNamespace,
      servicePort: run.port,
      caBundle: textToBase64(run.caBundlePEM),
      conversionReviewVersions: run.config.spec.conversionReviewVersions,
    });
    const started = deps.now();
    try {
      await deps.applyTarget(patch);
    } catch (e) {
      deps.metrics?.applyDuration?.("error", (deps.now() - started) / 1000);
      throw e;
    }
    deps.metrics?.applyDuration?.("success", (deps.now() - started) / 1000);
    return undefined;
  },
};

/** `Applied`: phase, condition, and where the conversion is served. */
export const appliedGate: Gate = {
  name: "applied",
  pass(run) {
    const { status } = run;
    run.phase("Applied", "Applied");
    status.webhookPath = webhookPath(run.target);
    status.webhookURL = webhookURL(run.serverName, run.serverNamespace, run.target);
    if (run.targetKind === "XRD") status.webhookPort = run.port;
    status.lastAppliedPlanHash = run.schemaHash;
    const message = `conversion of ${run.targetLabel} served by ${status.webhookURL}`;
    run.cond({ type: "Applied", status: "True", reason: "Applied", message });
    run.dropCond("Stale");
    status.message = message;
    return Promise.resolve(undefined);
  },
};

/**
 * XRD only: re-reads the XRD (the copy in hand on error) and verifies propagation into its
 * generated CRDs; until it is verified the config is re-checked at the waiting interval.
 */
export const propagationGate: Gate = {
  name: "propagation",
  async pass(run) {
    if (run.targetKind !== "XRD") return undefined;
    let xrd = run.targetObject;
    try {
      xrd = await run.deps.getTarget("XRD", run.target) ?? run.targetObject;
    } catch {
      // fall back to the copy in hand
    }
    const propagated = await verifyPropagation(run, xrd, {
      serviceName: webhookServiceName(run.serverName),
      serviceNamespace: run.serverNamespace,
      path: webhookPath(run.target),
      port: run.port,
      conversionReviewVersions: reviewVersionsOf(run.config.spec.conversionReviewVersions),
      caBundleHash: await sha256Hex(new TextEncoder().encode(run.caBundlePEM)),
    });
    run.requeueAfter = propagated ? REQUEUE_APPLIED_MS : REQUEUE_WAITING_MS;
    return undefined;
  },
};
