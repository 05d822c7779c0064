/** What the reconcile reads off a target CRD or XRD object. */
import { isJsonObject, type JsonObject } from "../../lib/json.ts";

/** `metadata.generation` (0 when absent). */
export function targetGeneration(target: JsonObject): number {
  const g = isJsonObject(target.metadata) ? target.metadata.generation : undefined;
  return typeof g === "number" ? g : 0;
}

/** The `Established` condition is True. */
export function isEstablished(target: JsonObject): boolean {
  const conds = isJsonObject(target.status) ? target.status.conditions : undefined;
  return Array.isArray(conds) &&
    conds.some((c) => isJsonObject(c) && c.type === "Established" && c.status === "True");
}

export { conversionOf } from "../../api/propagation.ts";
