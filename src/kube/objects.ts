/**
 * The object model the framework reads: `metadata`, lists, the apiserver's `Status`, watch events,
 * and where a resource lives. Only what the framework itself reads is typed; everything else
 * passes through as `unknown`.
 */

/** `metadata` of any object. */
export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: Array<Record<string, unknown>>;
  managedFields?: unknown[];
  [key: string]: unknown;
}

/** Any Kubernetes object as JSON. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  [key: string]: unknown;
}

/** A list response. */
export interface ObjectList<T extends KubeObject = KubeObject> {
  apiVersion?: string;
  kind?: string;
  metadata: { resourceVersion?: string; continue?: string; remainingItemCount?: number };
  items: T[];
}

/** `details` of a Status. */
export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: Array<{ type?: string; message?: string; field?: string }>;
  retryAfterSeconds?: number;
}

/** The apiserver's `Status` object (errors, some deletes, watch ERROR events). */
export interface Status {
  apiVersion?: string;
  kind?: string;
  status?: string;
  message?: string;
  reason?: string;
  code?: number;
  details?: StatusDetails;
}

/** One watch event. */
export type WatchEvent<T extends KubeObject = KubeObject> =
  | { type: "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK"; object: T }
  | { type: "ERROR"; object: Status };

/**
 * Where a resource lives: `group` "" is the core group (`/api/v1`). `namespace` undefined means
 * cluster-scoped, or all namespaces for a namespaced resource's collection.
 */
export interface ResourceRef {
  readonly group: string;
  readonly version: string;
  readonly plural: string;
  readonly namespace?: string;
}

/** The URL path of a collection, an object, or an object's subresource. */
export function resourcePath(ref: ResourceRef, name?: string, subresource?: string): string {
  const seg = encodeURIComponent;
  let p = ref.group ? `/apis/${seg(ref.group)}/${seg(ref.version)}` : `/api/${seg(ref.version)}`;
  if (ref.namespace) p += `/namespaces/${seg(ref.namespace)}`;
  p += `/${seg(ref.plural)}`;
  if (name !== undefined) {
    if (!name) throw new Error(`resourcePath: empty name for ${ref.plural}`);
    p += `/${seg(name)}`;
    if (subresource) p += `/${seg(subresource)}`;
  }
  return p;
}
