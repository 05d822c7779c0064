/** The PodDisruptionBudget of a server with `spec.podDisruptionBudget`. */
import type { ConversionWebhookServer } from "../../api/mod.ts";
import { childName, podLabels } from "./names.ts";
import { type ChildBuilder, childObject, optionalChild } from "./settings.ts";
import type { PodDisruptionBudget } from "./types.ts";

type Budget = NonNullable<ConversionWebhookServer["spec"]["podDisruptionBudget"]>;

/** The PDB's spec: the selector labels and whichever of the two bounds the budget sets. */
function pdbSpec(b: Budget, server: string): PodDisruptionBudget["spec"] {
  const spec: PodDisruptionBudget["spec"] = { selector: { matchLabels: podLabels(server) } };
  if (b.minAvailable !== undefined) spec.minAvailable = b.minAvailable;
  if (b.maxUnavailable !== undefined) spec.maxUnavailable = b.maxUnavailable;
  return spec;
}

/** The PDB when `spec.podDisruptionBudget` is set. */
export const buildPDB: ChildBuilder<PodDisruptionBudget> = optionalChild(
  (spec) => spec.podDisruptionBudget,
  (cws, settings, b, server) => {
    const type = { apiVersion: "policy/v1", kind: "PodDisruptionBudget" } as const;
    return childObject(type, cws, settings, childName(server), pdbSpec(b, server));
  },
);
