/**
 * A seedable, schema-driven generator of valid JSON values (pure: no runtime APIs).
 *
 *   const rng = createRng(42);
 *   const spec = generateValue(schema.properties.spec, { rng });
 *   const obj = generateResource(versionSchema, { apiVersion: "demo.example.com/v2",
 *     kind: "Gadget", seed: 7 });
 *
 * The law suite feeds every strategy with generated objects and `convctl fuzz` reuses it. What is
 * honoured: `type` (with `nullable`), `enum`, `format` (date-time, date, uuid, byte, ipv4,
 * hostname, email, int32/int64, float/double), `minimum`/`maximum` (with the boolean
 * `exclusiveMinimum`/`exclusiveMaximum` of OpenAPI v3.0), `multipleOf`, `minLength`/`maxLength`,
 * `pattern` (best effort: a few candidate alphabets are tried, the pattern is checked with a JS
 * RegExp), `required` vs optional properties (optional ones are sometimes absent),
 * `minProperties`/`maxProperties` on maps, `additionalProperties` (schema, `true`, `false`),
 * `x-kubernetes-preserve-unknown-fields` (a few undeclared keys with arbitrary values),
 * `x-kubernetes-int-or-string`, `items` with `minItems`/`maxItems`, `uniqueItems` and the
 * `x-kubernetes-list-type` set/map uniqueness, and the constructs: `allOf` is merged into the node,
 * `oneOf`/`anyOf` pick one branch (merged into the node; for `oneOf` the properties only other
 * branches require are left out, which covers the usual "exactly one of these fields" idiom).
 * `$ref` and nodes without a type yield arbitrary JSON. Anything a schema cannot say (CEL
 * `x-kubernetes-validations`, patterns the JS engine rejects) is not guaranteed: use `custom`.
 *
 * Same seed and options ⇒ same value, on every platform (the PRNG is mulberry32, 32-bit integer
 * arithmetic only).
 */
import { isJsonObject } from "../lib/json.ts";
import { stringifyJson } from "../lib/json_exact.ts";
import type { JsonObject, JsonValue, SchemaNode } from "./types.ts";
import { setKey } from "./value.ts";
import { createRng, type Rng } from "./generate_rng.ts";
import {
  chars,
  dnsLabel,
  integer,
  intOrStringString,
  number,
  PLAIN,
  string,
} from "./generate_scalars.ts";

export { createRng, type Rng };

export interface GenerateOptions {
  /** Seed used when no `rng` is given (default 1). */
  seed?: number | string;
  /** The PRNG to draw from (shared across calls to continue one stream). */
  rng?: Rng;
  /** Probability that an optional property is present (default 0.6). */
  optionalProbability?: number;
  /** Probability that a `nullable: true` node is null (default 0.1). */
  nullProbability?: number;
  /** Cap on array lengths when the schema allows more (default 4; `minItems` wins). */
  maxItems?: number;
  /** Cap on entries of free-form maps (default 3; `minProperties` wins). */
  maxEntries?: number;
  /** Nesting depth of arbitrary (schema-less) values (default 3). */
  maxDepth?: number;
  /**
   * Sometimes use boundary values — 0, -1, bounds, 2^53-1, 1e21, 1e-7, strings with `<>&`,
   * quotes, U+2028, emoji, keys like `a.b`, `x/y`, `__proto__` (default true).
   */
  edgeCases?: boolean;
  /**
   * Called for every schema node before the built-in rules; a non-undefined result is used as
   * the node's value. `path` is the property path from the generation root (array elements and
   * map entries appear as `[]` and `{}`).
   */
  custom?: (node: SchemaNode, path: readonly string[], rng: Rng) => JsonValue | undefined;
}

interface Ctx {
  rng: Rng;
  optional: number;
  nullable: number;
  maxItems: number;
  maxEntries: number;
  maxDepth: number;
  edge: boolean;
  custom: GenerateOptions["custom"];
  patterns: Map<string, RegExp | null>;
}

function context(options: GenerateOptions): Ctx {
  return {
    rng: options.rng ?? createRng(options.seed ?? 1),
    optional: options.optionalProbability ?? 0.6,
    nullable: options.nullProbability ?? 0.1,
    maxItems: options.maxItems ?? 4,
    maxEntries: options.maxEntries ?? 3,
    maxDepth: options.maxDepth ?? 3,
    edge: options.edgeCases ?? true,
    custom: options.custom,
    patterns: new Map(),
  };
}

/** A value valid against `schema` (undefined schema = anything). */
export function generateValue(
  schema: SchemaNode | undefined,
  options: GenerateOptions = {},
): JsonValue {
  const ctx = context(options);
  return schema === undefined ? arbitrary(ctx, 0) : gen(schema, ctx, []);
}

/** Like `generateValue`, for schemas of objects; a non-map result is replaced by `{}`. */
export function generateObject(
  schema: SchemaNode | undefined,
  options: GenerateOptions = {},
): JsonObject {
  const v = generateValue(schema, options);
  return isJsonObject(v) ? v : {};
}

export interface ResourceOptions extends GenerateOptions {
  apiVersion: string;
  kind: string;
  /** `metadata.name` (default: a generated DNS label). */
  name?: string;
  namespace?: string;
}

/**
 * A whole Kubernetes object of one version: the version's `openAPIV3Schema` generates the body;
 * `apiVersion`, `kind` and `metadata` are then set by the generator, not from the schema
 * (metadata gets a name and sometimes valid labels and annotations).
 */
export function generateResource(
  schema: SchemaNode | undefined,
  options: ResourceOptions,
): JsonObject {
  const ctx = context(options);
  const body = schema === undefined ? {} : gen(schema, ctx, []);
  const out: JsonObject = { apiVersion: options.apiVersion, kind: options.kind };
  const metadata: JsonObject = { name: options.name ?? dnsLabel(ctx.rng) };
  if (options.namespace !== undefined) metadata.namespace = options.namespace;
  if (ctx.rng.chance(0.5)) metadata.labels = labels(ctx);
  if (ctx.rng.chance(0.5)) metadata.annotations = annotations(ctx);
  out.metadata = metadata;
  if (isJsonObject(body)) {
    for (const key of Object.keys(body)) {
      if (key !== "apiVersion" && key !== "kind" && key !== "metadata") {
        setKey(out, key, body[key]);
      }
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Schema nodes

function gen(node: SchemaNode, ctx: Ctx, path: string[]): JsonValue {
  if (ctx.custom !== undefined) {
    const v = ctx.custom(node, path, ctx.rng);
    if (v !== undefined) return v;
  }
  if (node.nullable === true && ctx.rng.chance(ctx.nullable)) return null;
  const { node: eff, forbidden } = effective(node, ctx.rng);
  if (Array.isArray(eff.enum) && eff.enum.length > 0) return structuredCopy(ctx.rng.pick(eff.enum));
  if (eff["x-kubernetes-int-or-string"] === true) {
    return ctx.rng.chance(0.5) ? integer(eff, ctx) : intOrStringString(eff, ctx);
  }
  if (eff["x-kubernetes-preserve-unknown-fields"] === true && eff.type !== "array") {
    return object(eff, ctx, path, forbidden, true);
  }
  switch (eff.type) {
    case "object":
      return object(eff, ctx, path, forbidden, false);
    case "array":
      return array(eff, ctx, path);
    case "string":
      return string(eff, ctx);
    case "integer":
      return integer(eff, ctx);
    case "number":
      return number(eff, ctx);
    case "boolean":
      return ctx.rng.chance(0.5);
  }
  if (eff.properties !== undefined) return object(eff, ctx, path, forbidden, false);
  return arbitrary(ctx, 0);
}

/** JSON values from schemas (enum entries, defaults) are copied so outputs never share them. */
function structuredCopy(v: JsonValue): JsonValue {
  if (typeof v !== "object" || v === null) return v;
  if (Array.isArray(v)) return v.map(structuredCopy);
  const out: JsonObject = {};
  for (const key of Object.keys(v)) setKey(out, key, structuredCopy(v[key]));
  return out;
}

/**
 * Folds the constructs into one concrete node: `allOf` branches are merged in; `oneOf`/`anyOf`
 * pick a branch. `forbidden` lists properties a `oneOf` choice must leave out.
 */
function effective(node: SchemaNode, rng: Rng): { node: SchemaNode; forbidden: Set<string> } {
  const forbidden = new Set<string>();
  if (typeof node.$ref === "string" && node.$ref !== "") return { node: {}, forbidden };
  let out: SchemaNode = node;
  const strip = (n: SchemaNode, key: "oneOf" | "anyOf" | "allOf"): SchemaNode => {
    const { [key]: _, ...rest } = n;
    return rest;
  };
  if (Array.isArray(out.allOf) && out.allOf.length > 0) {
    let merged = strip(out, "allOf");
    for (const branch of out.allOf) merged = mergeNodes(merged, effective(branch, rng).node);
    out = merged;
  }
  for (const key of ["oneOf", "anyOf"] as const) {
    const branches = out[key];
    if (!Array.isArray(branches) || branches.length === 0) continue;
    const chosen = rng.int(0, branches.length - 1);
    out = mergeNodes(strip(out, key), effective(branches[chosen], rng).node);
    if (key === "oneOf") {
      const mine = new Set(branches[chosen].required ?? []);
      branches.forEach((b, i) => {
        if (i === chosen) return;
        for (const r of b.required ?? []) if (!mine.has(r)) forbidden.add(r);
      });
    }
  }
  return { node: out, forbidden };
}

/** Shallow merge of two nodes: properties and required are unioned, bounds tightened. */
function mergeNodes(a: SchemaNode, b: SchemaNode): SchemaNode {
  const out: SchemaNode = { ...a };
  for (const [key, value] of Object.entries(b)) {
    if (value === undefined) continue;
    switch (key) {
      case "properties":
        out.properties = { ...(a.properties ?? {}), ...(value as Record<string, SchemaNode>) };
        break;
      case "required":
        out.required = [...new Set([...(a.required ?? []), ...(value as string[])])];
        break;
      // Bounds of both nodes hold: the larger minimum, the smaller maximum.
      case "minimum":
      case "minLength":
      case "minItems":
      case "minProperties":
      case "maximum":
      case "maxLength":
      case "maxItems":
      case "maxProperties": {
        const tighter = key.startsWith("min") ? Math.max : Math.min;
        out[key] = typeof a[key] === "number"
          ? tighter(a[key] as number, value as number)
          : value as number;
        break;
      }
      default:
        if (out[key] === undefined) out[key] = value;
        else if (key === "enum") out.enum = value as JsonValue[];
    }
  }
  return out;
}

function object(
  node: SchemaNode,
  ctx: Ctx,
  path: string[],
  forbidden: ReadonlySet<string>,
  preserveUnknown: boolean,
): JsonObject {
  const out: JsonObject = {};
  const props = node.properties ?? {};
  const required = new Set(node.required ?? []);
  for (const name of Object.keys(props)) {
    if (forbidden.has(name)) continue;
    if (!required.has(name) && !ctx.rng.chance(ctx.optional)) continue;
    path.push(name);
    setKey(out, name, gen(props[name], ctx, path));
    path.pop();
  }
  const additional = node.additionalProperties;
  const isJsonObject = additional !== undefined && additional !== false;
  if (isJsonObject || preserveUnknown) {
    const declared = Object.keys(out).length;
    const min = Math.max(
      0,
      (typeof node.minProperties === "number" ? node.minProperties : 0) -
        declared,
    );
    let max = preserveUnknown && !isJsonObject ? Math.min(2, ctx.maxEntries) : ctx.maxEntries;
    if (typeof node.maxProperties === "number") max = Math.min(max, node.maxProperties - declared);
    const n = ctx.rng.int(min, Math.max(min, max));
    path.push("{}");
    for (let i = 0, tries = 0; i < n && tries < n * 8; tries++) {
      const key = mapKey(ctx);
      if (Object.hasOwn(out, key) || Object.hasOwn(props, key) || forbidden.has(key)) continue;
      const value = typeof additional === "object" && additional !== null
        ? gen(additional, ctx, path)
        : arbitrary(ctx, 1);
      setKey(out, key, value);
      i++;
    }
    path.pop();
  }
  return out;
}

function array(node: SchemaNode, ctx: Ctx, path: string[]): JsonValue[] {
  const min = typeof node.minItems === "number" ? node.minItems : 0;
  const cap = Math.max(min, ctx.maxItems);
  const max = typeof node.maxItems === "number" ? Math.min(node.maxItems, cap) : cap;
  const n = ctx.rng.int(min, Math.max(min, max));
  const items = Array.isArray(node.items) ? undefined : node.items;
  const identity = uniquenessKey(node);
  const seen = new Set<string>();
  const out: JsonValue[] = [];
  path.push("[]");
  for (let tries = 0; out.length < n && tries < n * 8 + 8; tries++) {
    const v = items === undefined || items === null ? arbitrary(ctx, 1) : gen(items, ctx, path);
    if (identity !== undefined) {
      const key = identity(v);
      if (seen.has(key)) continue;
      seen.add(key);
    }
    out.push(v);
  }
  path.pop();
  return out;
}

/** How two elements collide under `uniqueItems` or `x-kubernetes-list-type: set|map`. */
function uniquenessKey(node: SchemaNode): ((v: JsonValue) => string) | undefined {
  const listType = node["x-kubernetes-list-type"];
  const mapKeys = node["x-kubernetes-list-map-keys"];
  if (listType === "map" && Array.isArray(mapKeys)) {
    return (v) =>
      stringifyJson(mapKeys.map((k) => (isJsonObject(v) ? v[String(k)] ?? null : null)));
  }
  if (node.uniqueItems === true || listType === "set") return canonicalJSON;
  return undefined;
}

function canonicalJSON(v: JsonValue): string {
  if (typeof v !== "object" || v === null) return stringifyJson(v);
  if (Array.isArray(v)) return "[" + v.map(canonicalJSON).join(",") + "]";
  return "{" + Object.keys(v).sort().map((k) => JSON.stringify(k) + ":" + canonicalJSON(v[k]))
    .join(",") +
    "}";
}

// ---------------------------------------------------------------------------------------------
// Schema-less values, keys, metadata

const EXOTIC_KEYS = ["a.b", "x/y", "__proto__", "constructor", "with space", "ü", "-"];

function mapKey(ctx: Ctx): string {
  if (ctx.edge && ctx.rng.chance(0.1)) return ctx.rng.pick(EXOTIC_KEYS);
  return ctx.rng.pick(["k", "x", "key", "env", "team"]) + chars(ctx, PLAIN, ctx.rng.int(0, 3));
}

/** Any JSON value, nesting at most `maxDepth` containers. */
function arbitrary(ctx: Ctx, depth: number): JsonValue {
  const rng = ctx.rng;
  const container = depth < ctx.maxDepth ? rng.int(0, 5) : 9;
  if (container === 0) {
    const out: JsonObject = {};
    const n = rng.int(0, ctx.maxEntries);
    for (let i = 0; i < n; i++) setKey(out, mapKey(ctx), arbitrary(ctx, depth + 1));
    return out;
  }
  if (container === 1) {
    const n = rng.int(0, ctx.maxItems);
    const out: JsonValue[] = [];
    for (let i = 0; i < n; i++) out.push(arbitrary(ctx, depth + 1));
    return out;
  }
  switch (rng.int(0, 4)) {
    case 0:
      return null;
    case 1:
      return rng.chance(0.5);
    case 2:
      return integer({}, ctx);
    case 3:
      return number({}, ctx);
    default:
      return string({}, ctx);
  }
}

/** Valid label keys (optionally prefixed) and values. */
function labels(ctx: Ctx): JsonObject {
  const out: JsonObject = {};
  const n = ctx.rng.int(1, 3);
  for (let i = 0; i < n; i++) {
    const name = dnsLabel(ctx.rng);
    const key = ctx.rng.chance(0.3) ? `${dnsLabel(ctx.rng)}.example.com/${name}` : name;
    out[key] = ctx.rng.chance(0.2) ? "" : dnsLabel(ctx.rng);
  }
  return out;
}

function annotations(ctx: Ctx): JsonObject {
  const out: JsonObject = {};
  const n = ctx.rng.int(1, 3);
  for (let i = 0; i < n; i++) {
    out[`${dnsLabel(ctx.rng)}.example.com/${dnsLabel(ctx.rng)}`] = string({}, ctx);
  }
  return out;
}
