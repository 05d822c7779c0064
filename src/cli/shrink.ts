/**
 * Schema-aware helpers for `convctl fuzz`: a validator for the keywords the generator honours (so
 * a shrunk object stays valid), the normalisation that drops empty declared objects before a
 * round trip is compared, and the greedy shrinker.
 *
 * Shrinking is greedy and bounded: candidates are listed breadth-first from the root (delete an
 * optional field, a map entry or an array element; replace a container with an empty one; replace
 * a scalar with a simpler value such as "", 0, false or a shorter enum member). The first
 * candidate that keeps the object valid, makes it strictly smaller (size, then canonical JSON as a
 * tie-break) and still fails the same way is taken, and the listing starts over; the loop ends
 * when no candidate helps or the budget of predicate calls is spent. Nodes built from
 * `oneOf`/`anyOf`/`allOf`/`$ref` are atomic: they can be deleted when optional but are never
 * edited inside.
 */
import {
  classify,
  deepCopy,
  jsonEqual,
  type JsonObject,
  type JsonValue,
  type SchemaNode,
} from "../engine/mod.ts";
import { isJsonObject } from "../lib/json.ts";
import { stringifyJson } from "../lib/json_exact.ts";

function setOwn(obj: JsonObject, key: string, value: JsonValue): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}

/** A path step: a map key or an array index. */
type Segment = string | number;

/** Root keys the engine and the caller own: never validated against the body schema. */
const ROOT_RESERVED: ReadonlySet<string> = new Set(["apiVersion", "kind", "metadata"]);

// ---------------------------------------------------------------------------------------------
// Schema walking

/** The schema of `key` inside an object node (undefined = anything goes). */
function childOfObject(node: SchemaNode | undefined, key: string): SchemaNode | undefined {
  if (node === undefined) return undefined;
  const props = node.properties;
  if (props !== undefined && props !== null && Object.hasOwn(props, key)) return props[key];
  const additional = node.additionalProperties;
  return typeof additional === "object" && additional !== null ? additional : undefined;
}

/** The schema of an element of an array node. */
function childOfArray(node: SchemaNode | undefined): SchemaNode | undefined {
  const items = node?.items;
  return items === undefined || items === null || Array.isArray(items) ? undefined : items;
}

/** Nodes the shrinker treats as one unit (constructs). */
function isAtomic(node: SchemaNode | undefined): boolean {
  return node !== undefined && classify(node).construct !== "";
}

// ---------------------------------------------------------------------------------------------
// Validation (the keywords generate.ts honours; constructs are accepted as they are)

const FORMATS: Record<string, RegExp> = {
  "date-time": /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/,
  date: /^\d{4}-\d\d-\d\d$/,
  uuid: /^[0-9a-fA-F]{8}(-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}$/,
  ipv4: /^(\d{1,3}\.){3}\d{1,3}$/,
  hostname: /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/,
  email: /^[^@\s]+@[^@\s]+$/,
};

const patternCache = new Map<string, RegExp | null>();

function patternOf(source: string): RegExp | null {
  let re = patternCache.get(source);
  if (re === undefined) {
    try {
      re = new RegExp(source, "u");
    } catch {
      re = null;
    }
    patternCache.set(source, re);
  }
  return re;
}

/** The numeric keywords for an int64 beyond 2^53 (mixed bigint/number comparisons are exact). */
function bigintViolations(s: SchemaNode, v: bigint, bad: (keyword: string) => void): void {
  const { minimum, maximum, multipleOf } = s;
  if (typeof minimum === "number") {
    if (s.exclusiveMinimum === true ? v <= minimum : v < minimum) bad("minimum");
  }
  if (typeof maximum === "number") {
    if (s.exclusiveMaximum === true ? v >= maximum : v > maximum) bad("maximum");
  }
  if (typeof multipleOf === "number" && multipleOf > 0) {
    if (!Number.isInteger(multipleOf) || v % BigInt(multipleOf) !== 0n) bad("multipleOf");
  }
  if (s.format === "int32") bad("format");
}

function canonical(v: JsonValue): string {
  if (typeof v !== "object" || v === null) return stringifyJson(v);
  if (Array.isArray(v)) return `[${v.map(canonical).join(",")}]`;
  return `{${
    Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`).join(",")
  }}`;
}

/** One broken constraint: where (array indices as numbers) and which keyword. */
interface Violation {
  path: Segment[];
  keyword: string;
}

/** Every violation of an object against its version schema (root keys apiVersion/kind/metadata aside). */
function violationsOf(value: JsonValue, node: SchemaNode | undefined): Violation[] {
  const out: Violation[] = [];
  check(value, node, [], out);
  return out;
}

/**
 * The violations as `<path>: <keyword>` strings with array indices removed, so two objects'
 * violations can be compared as sets.
 */
function violations(value: JsonValue, node: SchemaNode | undefined): string[] {
  return violationsOf(value, node).map((v) => `${fieldOf(v.path)}: ${v.keyword}`);
}

/** `spec.items[].name` (indices removed), `(root)` for the empty path. */
function fieldOf(path: readonly Segment[]): string {
  const text = path.map((s, i) => typeof s === "number" ? "[]" : i === 0 ? s : `.${s}`).join("");
  return text === "" ? "(root)" : text;
}

function check(
  v: JsonValue,
  s: SchemaNode | undefined,
  at: Segment[],
  out: Violation[],
): void {
  if (s === undefined || isAtomic(s)) return;
  const bad = (keyword: string): void => {
    out.push({ path: at, keyword });
  };
  if (v === null) {
    if (s.nullable !== true) bad("null");
    return;
  }
  if (Array.isArray(s.enum) && s.enum.length > 0) {
    if (!s.enum.some((e) => jsonEqual(e, v))) bad("enum");
    return;
  }
  if (s["x-kubernetes-int-or-string"] === true) {
    if (!Number.isSafeInteger(v) && typeof v !== "bigint" && typeof v !== "string") {
      bad("int-or-string");
    }
    return;
  }
  const preserve = s["x-kubernetes-preserve-unknown-fields"] === true;
  const type = s.type ?? (s.properties !== undefined ? "object" : undefined);
  switch (type) {
    case "string": {
      if (typeof v !== "string") return bad("type");
      const n = [...v].length;
      if (typeof s.minLength === "number" && n < s.minLength) bad("minLength");
      if (typeof s.maxLength === "number" && n > s.maxLength) bad("maxLength");
      if (typeof s.pattern === "string" && patternOf(s.pattern)?.test(v) === false) bad("pattern");
      const format = typeof s.format === "string" ? FORMATS[s.format] : undefined;
      if (format !== undefined && !format.test(v)) bad("format");
      return;
    }
    case "integer":
    case "number": {
      if (typeof v === "bigint") return bigintViolations(s, v, bad); // an int64 beyond 2^53
      if (typeof v !== "number" || !Number.isFinite(v)) return bad("type");
      if (type === "integer" && !Number.isInteger(v)) bad("type");
      const { minimum, maximum, multipleOf } = s;
      if (typeof minimum === "number") {
        if (s.exclusiveMinimum === true ? v <= minimum : v < minimum) bad("minimum");
      }
      if (typeof maximum === "number") {
        if (s.exclusiveMaximum === true ? v >= maximum : v > maximum) bad("maximum");
      }
      if (typeof multipleOf === "number" && multipleOf > 0 && v % multipleOf !== 0) {
        bad("multipleOf");
      }
      if (s.format === "int32" && (v < -2147483648 || v > 2147483647)) bad("format");
      return;
    }
    case "boolean":
      if (typeof v !== "boolean") bad("type");
      return;
    case "array": {
      if (!Array.isArray(v)) return bad("type");
      if (typeof s.minItems === "number" && v.length < s.minItems) bad("minItems");
      if (typeof s.maxItems === "number" && v.length > s.maxItems) bad("maxItems");
      const identity = uniquenessKey(s);
      if (identity !== undefined && new Set(v.map(identity)).size !== v.length) bad("unique");
      const items = childOfArray(s);
      v.forEach((x, i) => check(x, items, [...at, i], out));
      return;
    }
    case "object": {
      if (!isJsonObject(v)) {
        if (!preserve) bad("type");
        return;
      }
      for (const r of s.required ?? []) if (!Object.hasOwn(v, r)) bad(`required ${r}`);
      const n = Object.keys(v).length;
      if (typeof s.minProperties === "number" && n < s.minProperties) bad("minProperties");
      if (typeof s.maxProperties === "number" && n > s.maxProperties) bad("maxProperties");
      for (const key of Object.keys(v)) {
        if (at.length === 0 && ROOT_RESERVED.has(key)) continue;
        const declared = s.properties !== undefined && Object.hasOwn(s.properties, key);
        if (!declared && s.additionalProperties === false && !preserve) bad(`unknown ${key}`);
        check(v[key], childOfObject(s, key), [...at, key], out);
      }
      return;
    }
  }
}

function uniquenessKey(s: SchemaNode): ((v: JsonValue) => string) | undefined {
  const listType = s["x-kubernetes-list-type"];
  const mapKeys = s["x-kubernetes-list-map-keys"];
  if (listType === "map" && Array.isArray(mapKeys)) {
    return (v) => canonical(mapKeys.map((k) => (isJsonObject(v) ? v[String(k)] ?? null : null)));
  }
  if (s.uniqueItems === true || listType === "set") return canonical;
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Normalisation before comparing a round trip

/** An object node the engine flattens through (not opaque, not a construct). */
function isPlainObjectNode(node: SchemaNode | undefined): node is SchemaNode {
  if (node === undefined) return false;
  const info = classify(node);
  return info.kind === "object" && !info.opaque && info.construct === "";
}

/**
 * A copy of an object without the empty maps that sit at declared, non-opaque object nodes
 * (recursively, so `spec: {tls: {}}` loses `spec` too; inside the elements of structured arrays as
 * well, elements themselves are kept). Such maps hold no leaf and the engine never writes an empty
 * parent (an output map exists only when something was written under it), so their disappearance is no data loss. Opaque nodes (free-form maps,
 * preserve-unknown-fields, constructs) travel as one value and are left exactly as they are, so an
 * empty free-form map that comes back absent is still a difference.
 */
export function withoutEmptyObjects(obj: JsonObject, root: SchemaNode | undefined): JsonObject {
  const out: JsonObject = {};
  for (const key of Object.keys(obj)) {
    if (ROOT_RESERVED.has(key)) {
      setOwn(out, key, obj[key]);
      continue;
    }
    const child = childOfObject(root, key);
    const value = normalise(obj[key], child);
    if (!isEmptyPlainObject(value, child)) setOwn(out, key, value);
  }
  return out;
}

function isEmptyPlainObject(v: JsonValue, node: SchemaNode | undefined): boolean {
  return isPlainObjectNode(node) && isJsonObject(v) && Object.keys(v).length === 0;
}

function normalise(v: JsonValue, node: SchemaNode | undefined): JsonValue {
  if (Array.isArray(v)) {
    if (node === undefined || classify(node).opaque || node.type !== "array") return v;
    const items = childOfArray(node);
    return v.map((x) => normalise(x, items));
  }
  if (!isJsonObject(v) || !isPlainObjectNode(node)) return v;
  const out: JsonObject = {};
  for (const key of Object.keys(v)) {
    const child = childOfObject(node, key);
    const value = normalise(v[key], child);
    if (!isEmptyPlainObject(value, child)) setOwn(out, key, value);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Shrinking

/** A rough size: every value counts 1, plus string length, digits of numbers, keys' lengths. */
function sizeOf(v: JsonValue): number {
  if (v === null) return 1;
  if (typeof v === "boolean") return v ? 2 : 1;
  if (typeof v === "number" || typeof v === "bigint") return v == 0 ? 1 : 1 + String(v).length;
  if (typeof v === "string") return 1 + v.length;
  if (Array.isArray(v)) return v.reduce<number>((n, x) => n + sizeOf(x), 1);
  return Object.keys(v).reduce((n, k) => n + 1 + k.length + sizeOf(v[k]), 1);
}

const DELETE = Symbol("delete");

interface Candidate {
  path: Segment[];
  value: JsonValue | typeof DELETE;
}

export interface ShrinkOptions {
  /** The version's `openAPIV3Schema` (the body schema; metadata is free-form). */
  schema: SchemaNode | undefined;
  /** True when the candidate still fails the same way. */
  fails: (candidate: JsonObject) => boolean;
  /** Dotted paths never edited (and never deleted). */
  keep?: readonly string[];
  /** Most predicate calls (default 2000). */
  budget?: number;
}

export interface ShrinkResult {
  object: JsonObject;
  /** Candidates taken. */
  steps: number;
  /** Predicate calls made. */
  attempts: number;
}

function pathText(path: readonly Segment[]): string {
  return path.map((s, i) => typeof s === "number" ? `[${s}]` : i === 0 ? s : `.${s}`).join("");
}

/** Simpler scalars to try for `v`, smallest first (the validator drops those the node forbids). */
function simpler(v: JsonValue, node: SchemaNode | undefined): JsonValue[] {
  const out: JsonValue[] = [];
  if (Array.isArray(node?.enum)) out.push(...node.enum);
  if (typeof v === "string") {
    out.push("");
    const min = typeof node?.minLength === "number" ? node.minLength : 0;
    if (min > 0) out.push("a".repeat(min), [...v].slice(0, min).join(""));
  } else if (typeof v === "number") {
    out.push(0, 1);
    if (typeof node?.minimum === "number") out.push(node.minimum);
    if (!Number.isInteger(v)) out.push(Math.trunc(v));
  } else if (typeof v === "boolean") {
    out.push(false);
  }
  if (node?.["x-kubernetes-int-or-string"] === true) out.push(0, "");
  return out.filter((c) => !jsonEqual(c, v)).sort((a, b) => sizeOf(a) - sizeOf(b));
}

/** Breadth-first list of edits to try on `root`. */
function candidates(root: JsonObject, schema: SchemaNode | undefined, keep: ReadonlySet<string>) {
  const out: Candidate[] = [];
  const metadataSchema: SchemaNode = {
    type: "object",
    "x-kubernetes-preserve-unknown-fields": true,
  };
  const queue: { value: JsonValue; node: SchemaNode | undefined; path: Segment[] }[] = [];
  for (const key of Object.keys(root)) {
    const node = key === "metadata" ? metadataSchema : childOfObject(schema, key);
    queue.push({ value: root[key], node, path: [key] });
  }
  for (let q = 0; q < queue.length; q++) {
    const { value, node, path } = queue[q];
    const text = pathText(path);
    if (keep.has(text)) {
      if (isJsonObject(value)) {
        for (const key of Object.keys(value)) {
          queue.push({ value: value[key], node: childOfObject(node, key), path: [...path, key] });
        }
      }
      continue;
    }
    // Whether a deletion is allowed (required keys, minItems, minProperties) is the validator's call.
    out.push({ path, value: DELETE });
    if (isAtomic(node)) continue;
    if (Array.isArray(value)) {
      if (value.length > 0) out.push({ path, value: [] });
      value.forEach((x, i) =>
        queue.push({ value: x, node: childOfArray(node), path: [...path, i] })
      );
    } else if (isJsonObject(value)) {
      if (Object.keys(value).length > 0) out.push({ path, value: {} });
      for (const key of Object.keys(value)) {
        queue.push({ value: value[key], node: childOfObject(node, key), path: [...path, key] });
      }
    } else if (value !== null) {
      for (const c of simpler(value, node)) out.push({ path, value: c });
    }
  }
  return out;
}

/** A copy of `root` with one edit applied. */
function apply(root: JsonObject, c: Candidate): JsonObject {
  const copy = deepCopy(root) as JsonObject;
  let parent: JsonValue = copy;
  for (const seg of c.path.slice(0, -1)) {
    parent = Array.isArray(parent) ? parent[seg as number] : (parent as JsonObject)[seg as string];
  }
  const last = c.path[c.path.length - 1];
  if (Array.isArray(parent)) {
    if (c.value === DELETE) parent.splice(last as number, 1);
    else parent[last as number] = c.value;
  } else if (isJsonObject(parent)) {
    if (c.value === DELETE) delete parent[last as string];
    else setOwn(parent, last as string, c.value);
  }
  return copy;
}

/** Size first; equal sizes are ordered by canonical JSON, so `"xy"` still shrinks to `"aa"`. */
function measureOf(v: JsonObject): [number, string] {
  return [sizeOf(v), canonical(v)];
}

function smaller(a: [number, string], b: [number, string]): boolean {
  return a[0] < b[0] || (a[0] === b[0] && a[1] < b[1]);
}

/**
 * Greedily shrinks `start` (which must fail) to a smaller object that still fails. An edit is kept
 * only if it adds no schema violation the start object did not already have.
 */
export function shrink(start: JsonObject, options: ShrinkOptions): ShrinkResult {
  const keep = new Set([
    "apiVersion",
    "kind",
    "metadata",
    "metadata.name",
    ...(options.keep ?? []),
  ]);
  const budget = options.budget ?? 2000;
  const allowed = new Set(violations(start, options.schema));
  const valid = (o: JsonObject) => violations(o, options.schema).every((v) => allowed.has(v));
  let current = start;
  let measure = measureOf(current);
  let steps = 0;
  let attempts = 0;
  let progress = true;
  while (progress && attempts < budget) {
    progress = false;
    for (const c of candidates(current, options.schema, keep)) {
      const next = apply(current, c);
      const nextMeasure = measureOf(next);
      if (!smaller(nextMeasure, measure) || !valid(next)) continue;
      if (attempts >= budget) break;
      attempts++;
      if (options.fails(next)) {
        current = next;
        measure = nextMeasure;
        steps++;
        progress = true;
        break;
      }
    }
  }
  return { object: current, steps, attempts };
}

// ---------------------------------------------------------------------------------------------
// Repair of generated objects

/** A constraint a generated object broke, fixed by leaving the value out (or not at all). */
export interface Gap {
  /** Field path, indices removed. */
  field: string;
  keyword: string;
}

export interface Repair {
  object: JsonObject;
  /** Constraints broken, in the order they were fixed; the last one is unfixed when !valid. */
  gaps: Gap[];
  /** True when the object now has no violation. */
  valid: boolean;
}

/** The schema node at the end of `path` (undefined when the schema says nothing there). */
function nodeAt(schema: SchemaNode | undefined, path: readonly Segment[]): SchemaNode | undefined {
  let node = schema;
  for (const seg of path) {
    if (node === undefined || isAtomic(node)) return undefined;
    node = typeof seg === "number" ? childOfArray(node) : childOfObject(node, seg);
  }
  return node;
}

/** The longest prefix of `path` whose value may be deleted (optional key or array element). */
function deletablePrefix(schema: SchemaNode | undefined, path: readonly Segment[]) {
  for (let n = path.length; n >= 1; n--) {
    const last = path[n - 1];
    if (typeof last === "number") return path.slice(0, n);
    if (n === 1 && ROOT_RESERVED.has(last)) return undefined;
    const parent = nodeAt(schema, path.slice(0, n - 1));
    if (!(parent?.required ?? []).includes(last)) return path.slice(0, n);
  }
  return undefined;
}

/**
 * Makes a generated object valid by deleting the optional values the generator could not get
 * right (a `pattern` it cannot satisfy, say), nearest the violation first. Objects whose
 * violations sit in required values stay invalid (`valid: false`).
 */
export function repairByDeletion(start: JsonObject, schema: SchemaNode | undefined): Repair {
  let current = start;
  const gaps: Gap[] = [];
  for (let round = 0; round < 64; round++) {
    const found = violationsOf(current, schema);
    if (found.length === 0) return { object: current, gaps, valid: true };
    const first = found[0];
    gaps.push({ field: fieldOf(first.path), keyword: first.keyword });
    const at = deletablePrefix(schema, first.path);
    if (at === undefined) return { object: current, gaps, valid: false };
    current = apply(current, { path: [...at], value: DELETE });
  }
  return { object: current, gaps, valid: false };
}
