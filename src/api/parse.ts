/**
 * Decoding a config object of either kind with messages that name the offending path in YAML
 * terms (`spec.spokes[0].rules[2].fieldRename: unrecognized key`), one line per problem.
 */
import { z } from "zod";
import { didYouMean } from "../lib/edit_distance.ts";
import { isRecord } from "../lib/json.ts";
import {
  CONFIG_KINDS,
  type ConversionConfig,
  CRD_CONFIG_KIND,
  CRDConversionConfigSchema,
  XRD_CONFIG_KIND,
  XRDConversionConfigSchema,
} from "./config.ts";

/** One decode problem: where (path segments; `key` when it is the key itself that is wrong). */
export interface ConfigIssue {
  at: (string | number)[];
  key: boolean;
  /** `<path>: <message>`, the line the problem is printed as. */
  text: string;
}

export type ParseResult =
  | { ok: true; config: ConversionConfig }
  | { ok: false; errors: string[]; issues: ConfigIssue[] };

/** `spec.spokes[0].rules[2].fieldRename` from zod's path segments. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const segment of path) {
    if (typeof segment === "number") out += `[${segment}]`;
    else out += out === "" ? String(segment) : `.${String(segment)}`;
  }
  return out;
}

function describeType(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "a list";
  if (typeof v === "object") return "a map";
  return `a ${typeof v}`;
}

/** Shorter, YAML-oriented wording for the common issues. */
const errorMap: z.core.$ZodErrorMap = (issue) => {
  if (issue.code === "invalid_type") {
    if (issue.input === undefined) return "required";
    const expected = issue.expected === "object"
      ? "a map"
      : issue.expected === "array"
      ? "a list"
      : `a ${issue.expected}`;
    return `expected ${expected}, got ${describeType(issue.input)}`;
  }
  if (issue.code === "invalid_value") {
    if (issue.input === undefined) return "required";
    const allowed = issue.values.map((v) => JSON.stringify(v)).join(", ");
    return issue.values.length === 1
      ? `must be ${allowed}, got ${JSON.stringify(issue.input)}`
      : `must be one of ${allowed}, got ${JSON.stringify(issue.input)}`;
  }
  return undefined;
};

/** The parts of a zod schema's definition the key lookup reads. */
interface SchemaDef {
  type: string;
  innerType?: z.ZodType;
  in?: z.ZodType;
  getter?: () => z.ZodType;
  shape?: Record<string, z.ZodType>;
  element?: z.ZodType;
  options?: z.ZodType[];
}

const defOf = (schema: z.ZodType) => (schema as unknown as { _zod: { def: SchemaDef } })._zod.def;

/** The schema under its wrappers (optional, nullable, default, pipe, lazy). */
function unwrap(schema: z.ZodType): z.ZodType {
  for (let i = 0; i < 20; i++) {
    const def = defOf(schema);
    const inner = def.innerType ?? def.in ?? def.getter?.();
    if (inner === undefined) return schema;
    schema = inner;
  }
  return schema;
}

/** The object keys a schema accepts at `path` (empty when the path leads to no object). */
function keysAt(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  let node: z.ZodType | undefined = schema;
  for (const segment of path) {
    if (node === undefined) return [];
    const def = defOf(unwrap(node));
    if (def.type === "array") node = def.element;
    else if (def.type === "object") node = def.shape?.[String(segment)];
    else return [];
  }
  if (node === undefined) return [];
  const def = defOf(unwrap(node));
  return def.type === "object" ? Object.keys(def.shape ?? {}) : [];
}

/**
 * One issue per problem, `<path>: <message>`; unknown keys get one each, with the closest known
 * key of that object when one is close enough to be a typo.
 */
export function configIssues(
  issues: readonly z.core.$ZodIssue[],
  schema?: z.ZodType,
): ConfigIssue[] {
  const out: ConfigIssue[] = [];
  for (const issue of issues) {
    const at = issue.path.map((s) => typeof s === "number" ? s : String(s));
    const where = formatPath(issue.path);
    if (issue.code === "unrecognized_keys") {
      const known = schema === undefined ? [] : keysAt(schema, issue.path);
      for (const key of issue.keys) {
        const hint = didYouMean(key, known.filter((k) => !issue.keys.includes(k)));
        const text = `${where === "" ? key : `${where}.${key}`}: unrecognized key${hint}`;
        out.push({ at: [...at, key], key: true, text });
      }
    } else {
      out.push({ at, key: false, text: `${where === "" ? "(root)" : where}: ${issue.message}` });
    }
  }
  return out;
}

/** One line per problem, `<path>: <message>`; unknown keys get one line each. */
export function formatIssues(
  issues: readonly z.core.$ZodIssue[],
  schema?: z.ZodType,
): string[] {
  return configIssues(issues, schema).map((i) => i.text);
}

function failure(issues: ConfigIssue[]): ParseResult {
  return { ok: false, errors: issues.map((i) => i.text), issues };
}

/**
 * Strictly decodes a config object of either kind (dispatching on `kind`). Defaults of the
 * top-level spec fields (`conversionReviewVersions`, `unmappedFieldPolicy`, `driftPolicy`,
 * `spokes[].rules`) are applied.
 */
export function parseConfig(obj: unknown): ParseResult {
  if (!isRecord(obj)) {
    return failure([{
      at: [],
      key: false,
      text: `(root): expected a map, got ${describeType(obj)}`,
    }]);
  }
  const kind = obj.kind;
  if (kind === undefined || kind === null || kind === "") {
    return failure([{ at: ["kind"], key: false, text: "kind: missing kind" }]);
  }
  const schema = kind === XRD_CONFIG_KIND
    ? XRDConversionConfigSchema
    : kind === CRD_CONFIG_KIND
    ? CRDConversionConfigSchema
    : undefined;
  if (schema === undefined) {
    const text = `kind: unrecognized kind ${JSON.stringify(kind)} (expected ${
      CONFIG_KINDS.join(" or ")
    })`;
    return failure([{ at: ["kind"], key: false, text }]);
  }
  const result = schema.safeParse(obj, { error: errorMap });
  if (!result.success) return failure(configIssues(result.error.issues, schema));
  return { ok: true, config: result.data };
}
