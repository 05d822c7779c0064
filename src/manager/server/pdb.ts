/** The PodDisruptionBudget of a server with `spec.podDisruptionBudget`. */
import type { ConversionWebhookServer } from "../../api/mod.ts";
import { childName, podLabels } from "./names.ts";
import { childObject, identityOf, type ServerChildSettings } from "./settings.ts";
import type { PodDisruptionBudget } from "./types.ts";

/**
 * The PDB when `spec.podDisruptionBudget` is set; undefined ⇒ none is applied (one applied before
 * stays until the server is deleted).
 */
export function buildPDB(
  cws: ConversionWebhookServer,
  settings: ServerChildSettings,
): PodDisruptionBudget | undefined {
  const b = cws.spec.podDisruptionBudget;
  if (!b) return undefined;
  const { name } = identityOf(cws);
  const spec: PodDisruptionBudget["spec"] = { selector: { matchLabels: podLabels(name) } };
  if (b.minAvailable !== undefined) spec.minAvailable = b.minAvailable;
  if (b.maxUnavailable !== undefined) spec.maxUnavailable = b.maxUnavailable;
  const type = { apiVersion: "policy/v1", kind: "PodDisruptionBudget" } as const;
  return childObject(type, cws, settings, childName(name), spec);
}
