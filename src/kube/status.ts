/**
 * Status and apply helpers (docs/design/kube.md#status-conditions-and-server-side-apply): the
 * `metav1.Condition` list-map rules (a condition's `lastTransitionTime` moves only when its
 * `status` flips — the handover timer depends on it), an RFC 7386 JSON merge-patch diff, status
 * writes as a merge patch against the object read at reconcile start (so a reconcile never
 * overwrites fields it did not change), and server-side apply with dco's field manager.
 * Generic over kinds: no conversion knowledge lives here.
 */
import { isRecord, jsonEqual, type JsonValue } from "../lib/json.ts";
import { rfc3339 } from "../lib/time.ts";
import type { KubeClient, WriteOptions } from "./client.ts";
import type { KubeObject, ResourceRef } from "./objects.ts";

/** The field manager of every server-side apply the operator makes. */
export const FIELD_MANAGER = "declarative-conversion-operator";

/** A standard `metav1.Condition`; structurally the same as the API package's `Condition`. */
export interface StatusCondition {
  type: string;
  status: "True" | "False" | "Unknown";
  reason: string;
  message: string;
  /** RFC 3339, second precision (`metav1.Time`). */
  lastTransitionTime: string;
  observedGeneration?: number;
}

/** What a reconciler sets; the timestamp is the helper's business. */
export type ConditionInput = Omit<StatusCondition, "lastTransitionTime">;

/** The condition of `type`, if present. */
export function findCondition(
  conditions: readonly StatusCondition[] | undefined,
  type: string,
): StatusCondition | undefined {
  return conditions?.find((c) => c.type === type);
}

/**
 * A new list with condition `input.type` set (list-map keyed by `type`: replaced in place, or
 * appended). `lastTransitionTime` becomes `now` only when the condition is new or its `status`
 * changes; reason/message/observedGeneration changes keep the old timestamp. The input list is
 * not modified. `now` is epoch ms or a Date.
 */
export function setCondition(
  conditions: readonly StatusCondition[] | undefined,
  input: ConditionInput,
  now: number | Date,
): StatusCondition[] {
  const list = [...(conditions ?? [])];
  const i = list.findIndex((c) => c.type === input.type);
  const old = i >= 0 ? list[i] : undefined;
  const stamp = old && old.status === input.status && old.lastTransitionTime
    ? old.lastTransitionTime
    : rfc3339(now);
  const next: StatusCondition = {
    type: input.type,
    status: input.status,
    reason: input.reason,
    message: input.message,
    lastTransitionTime: stamp,
  };
  if (input.observedGeneration !== undefined) next.observedGeneration = input.observedGeneration;
  if (i >= 0) list[i] = next;
  else list.push(next);
  return list;
}

/** A new list without condition `type` (the input is not modified). */
export function removeCondition(
  conditions: readonly StatusCondition[] | undefined,
  type: string,
): StatusCondition[] {
  return (conditions ?? []).filter((c) => c.type !== type);
}

// ---------------------------------------------------------------------------------------------
// JSON merge patch (RFC 7386)

/** A deep copy as plain JSON (drops `undefined` members, as serialization would). */
function toJson(v: unknown): JsonValue {
  return v === undefined ? null : JSON.parse(JSON.stringify(v)) as JsonValue;
}

/** JSON equality of values as they would be sent: `undefined` members count as absent. */
function sameJson(a: unknown, b: unknown): boolean {
  return jsonEqual(toJson(a), toJson(b));
}

/**
 * The minimal RFC 7386 merge patch that turns `before` into `after`: changed members only,
 * `null` for removed members (or members whose new value is `null`, which a merge patch cannot
 * express otherwise), objects diffed recursively, arrays and scalars replaced whole. When either
 * side is not an object the patch is `after` itself. Equal inputs give `{}`.
 */
export function mergePatchFor(before: unknown, after: unknown): JsonValue {
  if (!isRecord(before) || !isRecord(after)) return toJson(after);
  const patch: { [k: string]: JsonValue } = {};
  for (const k of Object.keys(before)) {
    const had = before[k] !== undefined && before[k] !== null;
    if (had && (after[k] === undefined || after[k] === null)) patch[k] = null;
  }
  for (const [k, v] of Object.entries(after)) {
    if (v === undefined || v === null) continue;
    const old = before[k];
    if (sameJson(old, v)) continue;
    patch[k] = isRecord(old) && isRecord(v) ? mergePatchFor(old, v) : toJson(v);
  }
  return patch;
}

/** Whether a merge patch changes nothing. */
export function isEmptyPatch(patch: JsonValue): boolean {
  return isRecord(patch) && Object.keys(patch).length === 0;
}

/** Anything with a `status` (a whole object as read or as edited). */
export interface HasStatus {
  status?: unknown;
}

/**
 * Writes `after.status` as a JSON merge patch on the `/status` subresource, computed against
 * `before.status` (the object read at reconcile start): only what this reconcile
 * changed is sent, so concurrent writers of other fields are not overwritten. No optimistic lock
 * (as controller-runtime's `MergeFrom`). When nothing changed no request is made and `undefined`
 * is returned; otherwise the apiserver's answer.
 */
export async function patchStatus<T extends KubeObject = KubeObject>(
  client: KubeClient,
  ref: ResourceRef,
  name: string,
  before: HasStatus,
  after: HasStatus,
  opts: Omit<WriteOptions, "subresource"> = {},
): Promise<T | undefined> {
  const patch = mergePatchFor({ status: before.status }, { status: after.status });
  if (isEmptyPatch(patch)) return undefined;
  return await client.patch<T>(ref, name, patch, { ...opts, type: "merge", subresource: "status" });
}

/**
 * Server-side apply of `obj` with dco's field manager and `force=true` (dco owns what it applies): `PATCH`
 * `application/apply-patch+yaml`. A thin, defaulted {@link KubeClient.apply}.
 */
export function applyObject<T extends KubeObject = KubeObject>(
  client: KubeClient,
  ref: ResourceRef,
  obj: KubeObject,
  fieldManager: string = FIELD_MANAGER,
  opts: Omit<WriteOptions, "fieldManager"> = {},
): Promise<T> {
  return client.apply<T>(ref, obj, { ...opts, fieldManager, force: true });
}
