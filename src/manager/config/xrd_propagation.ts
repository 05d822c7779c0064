/**
 * XRD only: propagation verification (docs/design/config-reconcile.md#xrd-propagation). Crossplane
 * copies an XRD's `spec.conversion` into the CRDs it generates from it; after every apply each of
 * them is read and compared with what was applied, and `ConversionPropagated` and
 * `status.generatedCRDs` say what was seen. The operator reports; it never repairs.
 */
import { generatedCRDNames } from "../../engine/mod.ts";
import {
  type AppliedConversion,
  type GeneratedCRDVerdict,
  type NamedVerdict,
  propagationOutcome,
  type PropagationReason,
  verifyGeneratedCRD,
} from "../../api/propagation.ts";
import type { JsonObject } from "../../lib/json.ts";
import { rfc3339 } from "../../lib/time.ts";
import type { GateRun } from "./gate.ts";
import type { ConfigReconcileDeps, GeneratedCRDStatus } from "./types.ts";

export {
  type AppliedConversion,
  type GeneratedCRDVerdict,
  type PropagationReason,
  reviewVersionsOf,
  verifyGeneratedCRD,
} from "../../api/propagation.ts";

/**
 * Reads every CRD Crossplane generates from the XRD, compares it with what was applied, rewrites
 * `status.generatedCRDs` and `ConversionPropagated`, and records the metrics. Returns whether the
 * condition is True. Never gates the phase.
 */
export async function verifyPropagation(
  run: GateRun,
  xrd: JsonObject,
  expected: AppliedConversion,
): Promise<boolean> {
  const { deps, status } = run;
  const label = run.targetLabel;
  const wasPropagated =
    run.config.status?.conditions?.some((c) =>
      c.type === "ConversionPropagated" && c.status === "True"
    ) ?? false;
  const finish = (reason: PropagationReason, message: string): boolean => {
    const ok = reason === "Propagated";
    run.cond({ type: "ConversionPropagated", status: ok ? "True" : "False", reason, message });
    if (ok && !wasPropagated) {
      const appliedCond = status.conditions?.find((c) => c.type === "Applied");
      const since = Date.parse(appliedCond?.lastTransitionTime ?? "");
      const lag = (deps.now() - since) / 1000;
      if (appliedCond?.status === "True" && Number.isFinite(lag) && lag >= 0) {
        deps.metrics?.propagationLag?.(run.target, lag);
      }
    }
    deps.metrics?.conversionPropagated?.(run.target, ok);
    return ok;
  };
  let generated;
  try {
    generated = generatedCRDNames(xrd);
  } catch (e) {
    status.generatedCRDs = [];
    return finish(
      "NotPropagated",
      `cannot determine the CRDs generated from ${label}: ${
        e instanceof Error ? e.message : String(e)
      }`,
    );
  }
  const observedAt = rfc3339(deps.now());
  const entries: GeneratedCRDStatus[] = [];
  const verdicts: NamedVerdict[] = [];
  for (const g of generated) {
    let crd: JsonObject | Error | undefined;
    try {
      if (deps.getGeneratedCRD === undefined) throw new Error("no generated-CRD reader");
      crd = await deps.getGeneratedCRD(g.name);
    } catch (e) {
      crd = e instanceof Error ? e : new Error(String(e));
    }
    const v: GeneratedCRDVerdict = await verifyGeneratedCRD(crd, expected);
    verdicts.push({ name: g.name, verdict: v });
    entries.push({
      name: g.name,
      role: g.role,
      propagated: v.state === "propagated",
      observedCABundleHash: v.observedCABundleHash,
      observedAt,
      message: v.message,
    });
  }
  status.generatedCRDs = entries;
  const outcome = propagationOutcome(label, verdicts);
  return finish(outcome.reason, outcome.message);
}

/**
 * After a revert of the XRD: the CRDs generated from it that still convert through a webhook
 * (Crossplane has not re-rendered them yet). A CRD that cannot be read counts as still on it.
 */
export async function generatedCRDsOnWebhook(
  deps: Pick<ConfigReconcileDeps, "getGeneratedCRD">,
  xrd: JsonObject,
): Promise<string[]> {
  let generated;
  try {
    generated = generatedCRDNames(xrd);
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const g of generated) {
    try {
      const crd = await deps.getGeneratedCRD?.(g.name);
      const conversion = (crd?.spec as { conversion?: { strategy?: string } } | undefined)
        ?.conversion;
      if (conversion?.strategy === "Webhook") out.push(g.name);
    } catch {
      out.push(g.name);
    }
  }
  return out;
}
