/**
 * Decoding a config object of either kind with messages that name the offending path in YAML
 * terms (`spec.spokes[0].rules[2].fieldRename: unrecognized key`), one line per problem.
 */
import { z } from "zod";
import { isRecord } from "../lib/json.ts";
import {
  CONFIG_KINDS,
  type ConversionConfig,
  CRD_CONFIG_KIND,
  CRDConversionConfigSchema,
  XRD_CONFIG_KIND,
  XRDConversionConfigSchema,
} from "./config.ts";

export type ParseResult =
  | { ok: true; config: ConversionConfig }
  | { ok: false; errors: string[] };

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

/** One line per problem, `<path>: <message>`; unknown keys get one line each. */
export function formatIssues(issues: readonly z.core.$ZodIssue[]): string[] {
  const lines: string[] = [];
  for (const issue of issues) {
    const where = formatPath(issue.path);
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys) {
        lines.push(`${where === "" ? key : `${where}.${key}`}: unrecognized key`);
      }
    } else {
      lines.push(`${where === "" ? "(root)" : where}: ${issue.message}`);
    }
  }
  return lines;
}

/**
 * Strictly decodes a config object of either kind (dispatching on `kind`). Defaults of the
 * top-level spec fields (`conversionReviewVersions`, `unmappedFieldPolicy`, `driftPolicy`,
 * `spokes[].rules`) are applied.
 */
export function parseConfig(obj: unknown): ParseResult {
  if (!isRecord(obj)) {
    return { ok: false, errors: [`(root): expected a map, got ${describeType(obj)}`] };
  }
  const kind = obj.kind;
  if (kind === undefined || kind === null || kind === "") {
    return { ok: false, errors: ["kind: missing kind"] };
  }
  const schema = kind === XRD_CONFIG_KIND
    ? XRDConversionConfigSchema
    : kind === CRD_CONFIG_KIND
    ? CRDConversionConfigSchema
    : undefined;
  if (schema === undefined) {
    return {
      ok: false,
      errors: [
        `kind: unrecognized kind ${JSON.stringify(kind)} (expected ${CONFIG_KINDS.join(" or ")})`,
      ],
    };
  }
  const result = schema.safeParse(obj, { error: errorMap });
  if (!result.success) return { ok: false, errors: formatIssues(result.error.issues) };
  return { ok: true, config: result.data };
}
