/** The helpers every admission rule shares: reading metadata, answering, capping lists. */
import { isRecord } from "../../lib/json.ts";
import type { AdmissionDecision } from "./context.ts";

/** Most diagnostics named in one denial / most warnings returned (the apiserver caps them too). */
export const MAX_LISTED = 20;

export function metadataOf(obj: unknown): Record<string, unknown> {
  return isRecord(obj) && isRecord(obj.metadata) ? obj.metadata : {};
}

export function nameOf(obj: unknown): string {
  const name = metadataOf(obj).name;
  return typeof name === "string" ? name : "";
}

/**
 * Whether the stored copy is being deleted. An UPDATE of such an object is allowed unchecked, so
 * that removing a finalizer can never be wedged by a rule the object no longer satisfies (e.g. a
 * target whose schema has since moved on).
 */
export function beingDeleted(obj: unknown): boolean {
  const ts = metadataOf(obj).deletionTimestamp;
  return typeof ts === "string" && ts !== "";
}

export function deny(message: string): AdmissionDecision {
  return { allowed: false, message };
}

export function allow(warnings: string[]): AdmissionDecision {
  return warnings.length === 0 ? { allowed: true } : { allowed: true, warnings };
}

export function joinCapped(items: readonly string[], sep: string): string {
  const shown = items.slice(0, MAX_LISTED).join(sep);
  return items.length > MAX_LISTED
    ? `${shown}${sep}… and ${items.length - MAX_LISTED} more`
    : shown;
}

/** Code-unit order of strings, for sorted lists in messages. */
export const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
