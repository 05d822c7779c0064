/**
 * Schema builders for the engine tests: the test kind's names and versions, schema fragments
 * (`str()`, `obj({...})`, `map()`, …) and `root()`, a version's `openAPIV3Schema`.
 */
import type { SchemaNode } from "../../src/engine/mod.ts";

export const GROUP = "demo.example.com";
export const KIND = "Gadget";
export const PLURAL = "gadgets";
export const HUB = "v2";
export const SPOKE = "v1";

export const apiVersion = (version: string): string => `${GROUP}/${version}`;

// --- schema fragments ---------------------------------------------------------------------------

export const str = (extra: SchemaNode = {}): SchemaNode => ({ type: "string", ...extra });
export const int = (extra: SchemaNode = {}): SchemaNode => ({ type: "integer", ...extra });
export const num = (extra: SchemaNode = {}): SchemaNode => ({ type: "number", ...extra });
export const bool = (extra: SchemaNode = {}): SchemaNode => ({ type: "boolean", ...extra });
export const obj = (
  properties: Record<string, SchemaNode>,
  extra: SchemaNode = {},
): SchemaNode => ({
  type: "object",
  properties,
  ...extra,
});
export const arr = (items: SchemaNode, extra: SchemaNode = {}): SchemaNode => ({
  type: "array",
  items,
  ...extra,
});
/** A free-form map (`additionalProperties` schema). */
export const map = (values: SchemaNode = str()): SchemaNode => ({
  type: "object",
  additionalProperties: values,
});
/** `x-kubernetes-preserve-unknown-fields`, optionally with declared properties. */
export const free = (properties?: Record<string, SchemaNode>): SchemaNode => ({
  type: "object",
  "x-kubernetes-preserve-unknown-fields": true,
  ...(properties === undefined ? {} : { properties }),
});

export interface RootOptions {
  /** `status` properties (undefined = no status declared). */
  status?: Record<string, SchemaNode>;
  /** `required` of the spec object. */
  specRequired?: string[];
  /** List `spec` in the root's `required`. */
  requireSpec?: boolean;
  /** More root-level properties. */
  extra?: Record<string, SchemaNode>;
}

/** An `openAPIV3Schema` root: `metadata` (type object only), `spec`, optionally `status`. */
export function root(spec: Record<string, SchemaNode>, o: RootOptions = {}): SchemaNode {
  const properties: Record<string, SchemaNode> = {
    metadata: { type: "object" },
    spec: obj(spec, o.specRequired === undefined ? {} : { required: o.specRequired }),
  };
  if (o.status !== undefined) properties.status = obj(o.status);
  Object.assign(properties, o.extra ?? {});
  return { type: "object", properties, ...(o.requireSpec ? { required: ["spec"] } : {}) };
}
