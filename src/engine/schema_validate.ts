/**
 * Checking an object against a version's structural schema (`openAPIV3Schema`), the way the
 * apiserver would refuse it before any conversion: value **types** (with `nullable`,
 * `x-kubernetes-int-or-string` and `x-kubernetes-preserve-unknown-fields`), **required** fields
 * and **enum** values, at every level reached through `properties`, `additionalProperties` and
 * `items`.
 *
 * Deliberately nothing more: no formats, bounds, patterns, list-type rules or CEL
 * (`x-kubernetes-validations`), and fields the schema does not declare are not errors (the
 * apiserver prunes them, and platforms such as Crossplane add their own). `allOf`/`anyOf`/`oneOf`
 * and `not` are value checks the apiserver layers on top of the structural part; they are not
 * evaluated. A richer validator should extend this one (same function, more keywords) rather than
 * sit beside it.
 *
 * Pure: no I/O, the object is only read.
 */
import type { JsonValue, SchemaNode } from "./types.ts";
import { jsonEqual } from "./value.ts";
import { isJsonObject } from "../lib/json.ts";
import { stringifyJson } from "../lib/json_exact.ts";

/** One step of a path into an object: a map key or an array index. */
export type PathSegment = string | number;

/** One way an object breaks its schema. */
export interface SchemaViolation {
  /** Where, in the config-path spelling: `spec.items[2].name` (`(root)` for the object itself). */
  path: string;
  /** The same place as segments, e.g. to find the value in the source text. */
  at: readonly PathSegment[];
  message: string;
}

/** `spec.items[2].name` from segments; keys that are not identifiers are quoted. */
export function formatSegments(at: readonly PathSegment[]): string {
  let out = "";
  for (const s of at) {
    if (typeof s === "number") out += `[${s}]`;
    else if (/^[A-Za-z_$][\w$-]*$/.test(s)) out += out === "" ? s : `.${s}`;
    else out += `[${JSON.stringify(s)}]`;
  }
  return out === "" ? "(root)" : out;
}

/** How a value is named in messages: its JSON type and, for scalars, the value. */
function describe(v: JsonValue): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  if (typeof v === "object") return "object";
  return `${typeof v === "bigint" ? "integer" : typeof v} ${stringifyJson(v)}`;
}

function isInteger(v: unknown): boolean {
  return typeof v === "bigint" || (typeof v === "number" && Number.isInteger(v));
}

/** Whether `v` has the `type` a schema node declares (an unknown type name accepts anything). */
function hasType(type: string, v: JsonValue): boolean {
  switch (type) {
    case "string":
      return typeof v === "string";
    case "integer":
      return isInteger(v);
    case "number":
      return typeof v === "number" || typeof v === "bigint";
    case "boolean":
      return typeof v === "boolean";
    case "array":
      return Array.isArray(v);
    case "object":
      return isJsonObject(v);
    default:
      return true;
  }
}

function childSchema(node: SchemaNode, key: string): SchemaNode | undefined {
  const props = node.properties;
  if (props !== undefined && props !== null && Object.hasOwn(props, key)) return props[key];
  const additional = node.additionalProperties;
  return typeof additional === "object" && additional !== null ? additional : undefined;
}

function check(v: JsonValue, node: SchemaNode, at: PathSegment[], out: SchemaViolation[]): void {
  const fail = (message: string, where: PathSegment[] = at): void => {
    out.push({ path: formatSegments(where), at: where, message });
  };
  const declared = typeof node.type === "string" && node.type !== "" ? node.type : undefined;
  if (v === null) {
    if (node.nullable !== true && declared !== undefined) fail(`expected ${declared}, got null`);
    return;
  }
  if (node["x-kubernetes-int-or-string"] === true) {
    if (!isInteger(v) && typeof v !== "string") {
      fail(`expected an integer or a string, got ${describe(v)}`);
    }
  } else if (declared !== undefined && !hasType(declared, v)) {
    fail(`expected ${declared}, got ${describe(v)}`);
    return;
  }
  if (Array.isArray(node.enum) && node.enum.length > 0 && !node.enum.some((e) => jsonEqual(e, v))) {
    const allowed = node.enum.map((e) => stringifyJson(e)).join(", ");
    fail(`must be one of ${allowed}, got ${stringifyJson(v)}`);
  }
  if (Array.isArray(v)) {
    const items = node.items;
    if (items !== undefined && items !== null && !Array.isArray(items)) {
      v.forEach((x, i) => check(x, items, [...at, i], out));
    }
    return;
  }
  if (!isJsonObject(v)) return;
  for (const r of Array.isArray(node.required) ? node.required : []) {
    if (!Object.hasOwn(v, r)) fail("required field is missing", [...at, r]);
  }
  for (const key of Object.keys(v)) {
    const child = childSchema(node, key);
    if (child !== undefined) check(v[key], child, [...at, key], out);
  }
}

/**
 * Every violation of `object` against `schema` (types, required, enum), in document order. An
 * absent schema accepts anything.
 */
export function validateAgainstSchema(
  schema: SchemaNode | undefined,
  object: JsonValue,
): SchemaViolation[] {
  const out: SchemaViolation[] = [];
  if (schema !== undefined) check(object, schema, [], out);
  return out;
}
