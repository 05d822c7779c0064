/**
 * XRD only: who else writes the XRD (docs/design/config-reconcile.md#packagemanaged-and-out-of-band-reverts).
 * A Crossplane package revision that owns the XRD may drop `spec.conversion` on its syncs; such an
 * out-of-band revert of a conversion this config applied is counted and logged, and the ordinary
 * gates then re-apply it. The operator reports; it never fights the owner.
 */
import { isJsonObject, type JsonObject } from "../../lib/json.ts";
import { MANAGED_BY_ANNOTATION } from "../conversion_patch.ts";
import type { StatusEditor } from "./status_editor.ts";
import { conversionOf } from "./target.ts";

/**
 * The owner reference of a Crossplane package revision (API group `pkg.crossplane.io`, kind
 * ending in `Revision`) if the XRD has one.
 */
export function packageRevisionOwner(
  xrd: JsonObject,
): { kind: string; name: string } | undefined {
  const refs = isJsonObject(xrd.metadata) ? xrd.metadata.ownerReferences : undefined;
  if (!Array.isArray(refs)) return undefined;
  for (const r of refs) {
    if (!isJsonObject(r)) continue;
    const apiVersion = typeof r.apiVersion === "string" ? r.apiVersion : "";
    const group = apiVersion.includes("/") ? apiVersion.slice(0, apiVersion.indexOf("/")) : "";
    const kind = typeof r.kind === "string" ? r.kind : "";
    if (group === "pkg.crossplane.io" && kind.endsWith("Revision")) {
      return { kind, name: typeof r.name === "string" ? r.name : "" };
    }
  }
  return undefined;
}

/**
 * The live XRD's conversion is *ours* iff `spec.conversion.strategy` is `Webhook` **and** the
 * `managed-by` annotation names this config (both halves: a foreign webhook, or an annotation
 * that outlived a replaced block, are not ours).
 */
export function isOurConversion(target: JsonObject, configName: string): boolean {
  const annotations = isJsonObject(target.metadata) && isJsonObject(target.metadata.annotations)
    ? target.metadata.annotations
    : {};
  return conversionOf(target).strategy === "Webhook" &&
    annotations[MANAGED_BY_ANNOTATION] === configName;
}

/**
 * `PackageManaged` from the XRD in hand, then the out-of-band revert check. Returns the target to
 * continue with: the live copy when the revert was confirmed against the apiserver, else the one
 * given.
 */
export async function checkXrdOwnership(
  run: StatusEditor,
  target: JsonObject,
): Promise<JsonObject> {
  const label = run.targetLabel;
  const owner = packageRevisionOwner(target);
  if (owner !== undefined) {
    run.cond({
      type: "PackageManaged",
      status: "True",
      reason: "OwnedByPackageRevision",
      message: `${label} is owned by the Crossplane package revision ${owner.kind} ${
        JSON.stringify(owner.name)
      }; its revision syncs may drop spec.conversion (dco re-applies it)`,
    });
  } else {
    run.cond({
      type: "PackageManaged",
      status: "False",
      reason: "NotPackageManaged",
      message: `${label} has no Crossplane package revision owner`,
    });
  }
  const orig = run.config.status;
  const applied = orig?.conditions?.find((c) => c.type === "Applied");
  if ((orig?.lastAppliedPlanHash ?? "") === "" || applied?.status !== "True") return target;
  if (isOurConversion(target, run.name)) return target;
  // The cache may not have seen this controller's own last apply yet: confirm against the
  // apiserver before counting (a read error keeps the cached verdict).
  let live = target;
  if (run.deps.getTargetLive !== undefined) {
    try {
      const got = await run.deps.getTargetLive("XRD", run.target);
      if (got === undefined) return target; // gone: the next reconcile's target gate reports it
      live = got;
    } catch {
      // keep the cached verdict
    }
    if (isOurConversion(live, run.name)) return live;
  }
  run.deps.metrics?.conversionRevert?.({ configKind: run.kindLabel, target: run.target });
  const conversion = conversionOf(live);
  run.deps.log?.(
    "the conversion stanza this config applied is gone from the XRD (out-of-band revert); " +
      "it will be re-applied",
    {
      config: run.name,
      xrd: run.target,
      strategy: typeof conversion.strategy === "string" ? conversion.strategy : "",
      packageManaged: owner !== undefined,
    },
  );
  return live;
}
