/**
 * Validation of an object against a version's structural schema, with the verdicts the
 * kube-apiserver reaches for the keywords CRDs support (wording differs): `type` and `nullable`,
 * `enum`, `required`, the formats the apiserver checks, string/number/array/map bounds, `pattern`
 * (RE2), `allOf`/`anyOf`/`oneOf`/`not`, `x-kubernetes-int-or-string`,
 * `x-kubernetes-preserve-unknown-fields`, `x-kubernetes-embedded-resource` (apiVersion and kind
 * set), `x-kubernetes-list-type` set/map uniqueness with `x-kubernetes-list-map-keys`, and
 * `x-kubernetes-validations` CEL rules, evaluated with the CEL library of the engine.
 *
 * What the apiserver does not reject is not reported: unknown fields are pruned, not refused, and
 * unknown formats are ignored. Transition rules (those reading `oldSelf`) do not run on create, so
 * they are skipped; a rule that uses a Kubernetes CEL extension the standard library lacks (e.g.
 * `quantity()`, `url()`, string extensions) cannot be evaluated here and is listed in `unevaluated`
 * instead of guessed.
 *
 * The root's `apiVersion`, `kind` and `metadata` are the apiserver's own (ObjectMeta) and are not
 * validated against the body schema.
 */
import {
  celEnv,
  celList,
  celMap,
  CelScalar,
  type CelValue,
  isCelError,
  parse,
  plan,
} from "@bufbuild/cel";
import { isJsonObject } from "../lib/json.ts";
import { stringifyJson } from "../lib/json_exact.ts";
import { Re2Pattern } from "./re2.ts";
import type { JsonObject, JsonValue, SchemaNode } from "./types.ts";
import { jsonEqual } from "./value.ts";
import { parseGoDuration } from "./units.ts";

/** One broken constraint at one place of the object. */
export interface SchemaViolation {
  /** Field path in the apiserver's style: `spec.items[0].name`; "" for the root. */
  path: string;
  /** The keyword that failed: `required`, `enum`, `type`, `pattern`, `x-kubernetes-validations`, … */
  constraint: string;
  message: string;
}

/** A CEL rule that could not be evaluated (the verdict is unknown, not a pass). */
export interface UnevaluatedRule {
  path: string;
  rule: string;
  reason: string;
}

export interface StructuralValidation {
  violations: SchemaViolation[];
  unevaluated: UnevaluatedRule[];
}

/** Every violation of `object` (a whole Kubernetes object) against its version's schema. */
export function validateStructural(
  schema: SchemaNode | undefined,
  object: JsonValue,
): StructuralValidation {
  const out: StructuralValidation = { violations: [], unevaluated: [] };
  if (schema !== undefined) validateNode(object, schema, "", out, true);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Paths and messages

function childPath(path: string, key: string): string {
  const plain = /^[A-Za-z_$][\w$-]*$/.test(key);
  if (!plain) return `${path}[${JSON.stringify(key)}]`;
  return path === "" ? key : `${path}.${key}`;
}

function shown(v: JsonValue): string {
  const text = stringifyJson(v);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

function typeName(v: JsonValue): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  if (typeof v === "bigint") return "integer";
  if (typeof v === "number") return Number.isInteger(v) ? "integer" : "number";
  return typeof v === "object" ? "object" : typeof v;
}

// ---------------------------------------------------------------------------------------------
// Formats the apiserver validates (kube-openapi's format registry); unknown formats pass.

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

function isIpv6(s: string): boolean {
  if (!/^[0-9a-fA-F:.]+$/.test(s) || !s.includes(":")) return false;
  const parts = s.split("::");
  if (parts.length > 2) return false;
  const groups = (t: string) => (t === "" ? [] : t.split(":"));
  const all = [...groups(parts[0]), ...(parts.length === 2 ? groups(parts[1]) : [])];
  let count = 0;
  for (const [i, g] of all.entries()) {
    if (i === all.length - 1 && IPV4.test(g)) count += 2;
    else if (/^[0-9a-fA-F]{1,4}$/.test(g)) count += 1;
    else return false;
  }
  return parts.length === 2 ? count < 8 : count === 8;
}

const STRING_FORMATS: Readonly<Record<string, (s: string) => boolean>> = {
  "date-time": (s) =>
    /^\d{4}-\d\d-\d\d[Tt ]\d\d:\d\d:\d\d(\.\d+)?([Zz]|[+-]\d\d:\d\d)$/.test(s) &&
    !Number.isNaN(Date.parse(s.replace(" ", "T"))),
  datetime: (s) => STRING_FORMATS["date-time"](s),
  date: (s) => /^\d{4}-\d\d-\d\d$/.test(s) && !Number.isNaN(Date.parse(s)),
  duration: (s) => parseGoDuration(s) !== undefined || /^\d+(\.\d+)?\s*[dw]$/.test(s),
  byte: (s) => /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(s),
  uuid: (s) => UUID.test(s),
  uuid3: (s) => UUID.test(s) && s[14] === "3",
  uuid4: (s) => UUID.test(s) && s[14] === "4" && /[89ab]/i.test(s[19]),
  uuid5: (s) => UUID.test(s) && s[14] === "5" && /[89ab]/i.test(s[19]),
  ipv4: (s) => IPV4.test(s),
  ipv6: isIpv6,
  cidr: (s) => {
    const m = /^(.+)\/(\d{1,3})$/.exec(s);
    if (m === null) return false;
    const bits = Number(m[2]);
    return IPV4.test(m[1]) ? bits <= 32 : isIpv6(m[1]) && bits <= 128;
  },
  mac: (s) => /^([0-9a-fA-F]{2}[:-]){5}[0-9a-fA-F]{2}$/.test(s),
  hostname: (s) =>
    s.length <= 255 &&
    /^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?$/
      .test(s),
  email: (s) => /^[^@\s]+@[^@\s]+$/.test(s),
  uri: (s) => {
    try {
      new URL(s);
      return true;
    } catch {
      return false;
    }
  },
  hexcolor: (s) => /^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/.test(s),
  bsonobjectid: (s) => /^[0-9a-fA-F]{24}$/.test(s),
};

const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;

// ---------------------------------------------------------------------------------------------
// The walk

const ROOT_RESERVED: ReadonlySet<string> = new Set(["apiVersion", "kind", "metadata"]);
const patterns = new Map<string, Re2Pattern | null>();

function compiledPattern(source: string): Re2Pattern | null {
  let p = patterns.get(source);
  if (p === undefined) {
    try {
      p = Re2Pattern.compile(source);
    } catch {
      p = null;
    }
    patterns.set(source, p);
  }
  return p;
}

function canonical(v: JsonValue): string {
  if (typeof v !== "object" || v === null) return stringifyJson(v);
  if (Array.isArray(v)) return `[${v.map(canonical).join(",")}]`;
  return `{${
    Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`).join(",")
  }}`;
}

function num(v: unknown): number | undefined {
  return typeof v === "number" ? v : undefined;
}

function validateNode(
  v: JsonValue,
  s: SchemaNode,
  path: string,
  out: StructuralValidation,
  root = false,
): void {
  const bad = (constraint: string, message: string) => {
    out.violations.push({ path, constraint, message });
  };
  if (v === null) {
    if (s.nullable !== true) bad("type", "must not be null");
    return;
  }
  if (!checkType(v, s, bad)) return;
  if (Array.isArray(s.enum) && !s.enum.some((e) => jsonEqual(e, v))) {
    bad("enum", `${shown(v)} is not one of ${s.enum.map(shown).join(", ")}`);
  }
  if (typeof v === "string") checkString(v, s, bad);
  else if (typeof v === "number" || typeof v === "bigint") checkNumber(v, s, bad);
  else if (Array.isArray(v)) checkArray(v, s, path, out, bad);
  else if (isJsonObject(v)) checkObject(v, s, path, out, bad, root);
  checkComposition(v, s, path, out, bad);
  // The apiserver runs the CEL rules alongside the schema checks and reports both.
  checkRules(v, s, path, out);
}

/** The `type` keyword (with int-or-string); false when the node's other checks cannot apply. */
function checkType(
  v: JsonValue,
  s: SchemaNode,
  bad: (constraint: string, message: string) => void,
): boolean {
  const actual = typeName(v);
  if (s["x-kubernetes-int-or-string"] === true) {
    if (actual === "integer" || actual === "string") return true;
    bad("type", `must be an integer or a string, got ${actual}`);
    return false;
  }
  const type = s.type;
  if (type === undefined) return true;
  const ok = type === actual || (type === "number" && actual === "integer");
  if (!ok) bad("type", `must be of type ${type}, got ${actual}`);
  return ok;
}

function checkString(v: string, s: SchemaNode, bad: (c: string, m: string) => void): void {
  const length = [...v].length;
  const min = num(s.minLength);
  const max = num(s.maxLength);
  if (min !== undefined && length < min) bad("minLength", `must be at least ${min} characters`);
  if (max !== undefined && length > max) bad("maxLength", `must be at most ${max} characters`);
  if (typeof s.pattern === "string") {
    const p = compiledPattern(s.pattern);
    if (p !== null && p.search(v) === undefined) {
      bad("pattern", `${shown(v)} does not match ${JSON.stringify(s.pattern)}`);
    }
  }
  const format = typeof s.format === "string" ? STRING_FORMATS[s.format] : undefined;
  if (format !== undefined && !format(v)) bad("format", `${shown(v)} is not a valid ${s.format}`);
}

function checkNumber(
  v: number | bigint,
  s: SchemaNode,
  bad: (c: string, m: string) => void,
): void {
  const min = num(s.minimum);
  const max = num(s.maximum);
  if (min !== undefined && (s.exclusiveMinimum === true ? v <= min : v < min)) {
    bad("minimum", `must be ${s.exclusiveMinimum === true ? "greater than" : "at least"} ${min}`);
  }
  if (max !== undefined && (s.exclusiveMaximum === true ? v >= max : v > max)) {
    bad("maximum", `must be ${s.exclusiveMaximum === true ? "less than" : "at most"} ${max}`);
  }
  const multipleOf = num(s.multipleOf);
  if (multipleOf !== undefined && multipleOf > 0) {
    const ok = typeof v === "bigint"
      ? Number.isInteger(multipleOf) && v % BigInt(multipleOf) === 0n
      : Number.isInteger(v / multipleOf);
    if (!ok) bad("multipleOf", `must be a multiple of ${multipleOf}`);
  }
  if (s.format === "int32" && (v < INT32_MIN || v > INT32_MAX)) {
    bad("format", `${v} does not fit format int32`);
  }
  if (
    s.format === "int64" && typeof v === "number" && !Number.isSafeInteger(v) && s.type !== "number"
  ) {
    bad("format", `${v} does not fit format int64`);
  }
}

/** The identity of a list element under `x-kubernetes-list-type` set/map (or `uniqueItems`). */
function listIdentity(s: SchemaNode): ((v: JsonValue) => string) | undefined {
  const listType = s["x-kubernetes-list-type"];
  const mapKeys = s["x-kubernetes-list-map-keys"];
  if (listType === "map" && Array.isArray(mapKeys)) {
    return (v) =>
      canonical(mapKeys.map((k) => (isJsonObject(v) ? v[String(k)] ?? null : null)) as JsonValue);
  }
  if (listType === "set" || s.uniqueItems === true) return canonical;
  return undefined;
}

function checkArray(
  v: JsonValue[],
  s: SchemaNode,
  path: string,
  out: StructuralValidation,
  bad: (c: string, m: string) => void,
): void {
  const min = num(s.minItems);
  const max = num(s.maxItems);
  if (min !== undefined && v.length < min) bad("minItems", `must have at least ${min} items`);
  if (max !== undefined && v.length > max) bad("maxItems", `must have at most ${max} items`);
  const items = Array.isArray(s.items) ? undefined : s.items;
  v.forEach((x, i) => {
    if (items !== undefined) validateNode(x, items, `${path}[${i}]`, out);
  });
  const identity = listIdentity(s);
  if (identity !== undefined) {
    const seen = new Set<string>();
    v.forEach((x, i) => {
      const key = identity(x);
      if (seen.has(key)) {
        const kind = s["x-kubernetes-list-type"] === "map" ? "key" : "value";
        out.violations.push({
          path: `${path}[${i}]`,
          constraint: "x-kubernetes-list-type",
          message: `duplicate ${kind}: ${key}`,
        });
      }
      seen.add(key);
    });
  }
  const mapKeys = s["x-kubernetes-list-map-keys"];
  if (s["x-kubernetes-list-type"] === "map" && Array.isArray(mapKeys)) {
    v.forEach((x, i) => {
      if (!isJsonObject(x)) return;
      for (const k of mapKeys.map(String)) {
        const keySchema = items?.properties?.[k];
        const hasDefault = keySchema !== undefined && keySchema.default !== undefined;
        if (!Object.hasOwn(x, k) && !hasDefault) {
          out.violations.push({
            path: childPath(`${path}[${i}]`, k),
            constraint: "x-kubernetes-list-map-keys",
            message: `map key ${k} is required`,
          });
        }
      }
    });
  }
}

function checkObject(
  v: JsonObject,
  s: SchemaNode,
  path: string,
  out: StructuralValidation,
  bad: (c: string, m: string) => void,
  root: boolean,
): void {
  for (const r of s.required ?? []) {
    if (root && ROOT_RESERVED.has(r)) continue;
    if (!Object.hasOwn(v, r)) {
      out.violations.push({
        path: childPath(path, r),
        constraint: "required",
        message: "required field is missing",
      });
    }
  }
  const n = Object.keys(v).length;
  const minP = num(s.minProperties);
  const maxP = num(s.maxProperties);
  if (minP !== undefined && n < minP) bad("minProperties", `must have at least ${minP} fields`);
  if (maxP !== undefined && n > maxP) bad("maxProperties", `must have at most ${maxP} fields`);
  if (s["x-kubernetes-embedded-resource"] === true) {
    for (const k of ["apiVersion", "kind"]) {
      const value = v[k];
      if (typeof value !== "string" || value === "") {
        out.violations.push({
          path: childPath(path, k),
          constraint: "x-kubernetes-embedded-resource",
          message: "must be set in an embedded resource",
        });
      }
    }
  }
  const additional = s.additionalProperties;
  for (const key of Object.keys(v)) {
    if (root && ROOT_RESERVED.has(key)) continue;
    const declared = s.properties !== undefined && Object.hasOwn(s.properties, key);
    const child = declared
      ? s.properties![key]
      : typeof additional === "object" && additional !== null
      ? additional
      : undefined;
    // Undeclared fields are pruned by the apiserver (or kept under preserve-unknown-fields).
    if (child !== undefined) validateNode(v[key], child, childPath(path, key), out);
  }
}

/** allOf/anyOf/oneOf/not: value validations applied to the same value. */
function checkComposition(
  v: JsonValue,
  s: SchemaNode,
  path: string,
  out: StructuralValidation,
  bad: (c: string, m: string) => void,
): void {
  const passes = (sub: SchemaNode) => {
    const inner: StructuralValidation = { violations: [], unevaluated: [] };
    validateNode(v, sub, path, inner);
    return inner;
  };
  for (const sub of s.allOf ?? []) {
    const r = passes(sub);
    out.violations.push(...r.violations);
    out.unevaluated.push(...r.unevaluated);
  }
  if (Array.isArray(s.anyOf) && s.anyOf.length > 0) {
    if (!s.anyOf.some((sub) => passes(sub).violations.length === 0)) {
      bad("anyOf", "must match at least one schema in anyOf");
    }
  }
  if (Array.isArray(s.oneOf) && s.oneOf.length > 0) {
    const matching = s.oneOf.filter((sub) => passes(sub).violations.length === 0).length;
    if (matching !== 1) bad("oneOf", `must match exactly one schema in oneOf, matches ${matching}`);
  }
  const not = s.not;
  if (isJsonObject(not as JsonValue) && passes(not as SchemaNode).violations.length === 0) {
    bad("not", "must not match the schema in not");
  }
}

// ---------------------------------------------------------------------------------------------
// x-kubernetes-validations

interface ValidationRule {
  rule: string;
  message?: string;
  reason?: string;
  fieldPath?: string;
}

const RULE_ENV = celEnv({ variables: { self: CelScalar.DYN } });
type Compiled = ((ctx: { self: CelValue }) => CelValue) | { error: string };
const compiledRules = new Map<string, Compiled>();

function compileRule(rule: string): Compiled {
  let c = compiledRules.get(rule);
  if (c === undefined) {
    try {
      c = plan(RULE_ENV, parse(rule).expr) as (ctx: { self: CelValue }) => CelValue;
    } catch (e) {
      c = { error: e instanceof Error ? e.message : String(e) };
    }
    compiledRules.set(rule, c);
  }
  return c;
}

/**
 * The value as the apiserver binds it to `self`: integers of `type: integer` (and
 * int-or-string) are CEL ints, other numbers doubles, maps and lists by their schemas.
 */
function celValueOf(v: JsonValue, s: SchemaNode | undefined): CelValue {
  if (v === null || typeof v === "boolean" || typeof v === "string") return v;
  if (typeof v === "bigint") return v;
  if (typeof v === "number") {
    const intTyped = s?.type === "integer" || s?.["x-kubernetes-int-or-string"] === true;
    return intTyped && Number.isInteger(v) ? BigInt(v) : v;
  }
  const items = s !== undefined && !Array.isArray(s.items) ? s.items : undefined;
  if (Array.isArray(v)) return celList(v.map((x) => celValueOf(x, items)));
  const entries = new Map<string, CelValue>();
  const additional = s?.additionalProperties;
  for (const key of Object.keys(v)) {
    const child = s?.properties?.[key] ??
      (typeof additional === "object" && additional !== null ? additional : undefined);
    entries.set(key, celValueOf(v[key], child));
  }
  return celMap(entries);
}

/** Names the standard environment lacks (Kubernetes CEL libraries). */
function isMissingFunction(message: string): boolean {
  return /unbound function/i.test(message);
}

function checkRules(v: JsonValue, s: SchemaNode, path: string, out: StructuralValidation): void {
  const rules = s["x-kubernetes-validations"];
  if (!Array.isArray(rules)) return;
  let self: CelValue | undefined;
  for (const raw of rules as ValidationRule[]) {
    if (typeof raw?.rule !== "string") continue;
    const rule = raw.rule;
    // Transition rules compare with the stored object; there is none on create.
    if (/\boldSelf\b/.test(rule)) continue;
    const compiled = compileRule(rule);
    if ("error" in compiled) {
      out.unevaluated.push({ path, rule, reason: compiled.error });
      continue;
    }
    self ??= celValueOf(v, s);
    let result: CelValue;
    try {
      result = compiled({ self });
    } catch (e) {
      out.unevaluated.push({ path, rule, reason: e instanceof Error ? e.message : String(e) });
      continue;
    }
    if (isCelError(result)) {
      if (isMissingFunction(result.message)) {
        out.unevaluated.push({ path, rule, reason: result.message });
      } else {
        out.violations.push({
          path,
          constraint: "x-kubernetes-validations",
          message: `rule ${JSON.stringify(rule)} could not be evaluated: ${result.message}`,
        });
      }
      continue;
    }
    if (result === true) continue;
    const fieldPath = typeof raw.fieldPath === "string" ? raw.fieldPath : "";
    const where = fieldPath === ""
      ? path
      : path === ""
      ? fieldPath.replace(/^\./, "")
      : fieldPath.startsWith("[")
      ? path + fieldPath
      : `${path}.${fieldPath.replace(/^\./, "")}`;
    const message = typeof raw.message === "string" && raw.message !== ""
      ? raw.message
      : `failed rule: ${rule}`;
    out.violations.push({ path: where, constraint: "x-kubernetes-validations", message });
  }
}
