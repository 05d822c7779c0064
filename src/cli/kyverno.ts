/**
 * The two Kyverno `MutatingPolicy` objects of `convctl generate kyverno`, as data: one labels every
 * Composition of the XRD's kind with the version it composes, the other moves composite resources
 * onto the Composition of the new hub version by selecting that label. Pure; nothing is applied.
 */
import type { JsonObject } from "../engine/mod.ts";

export const KYVERNO_API_VERSION = "policies.kyverno.io/v1";
export const DEFAULT_LABEL_KEY = "xrd-api-version";

export interface KyvernoInput {
  group: string;
  kind: string;
  plural: string;
  /** The XRD's served versions (served true or absent), in XRD order. */
  servedVersions: readonly string[];
  to: string;
  /** Only resources selecting this version move (a canary); without it, every other one does. */
  from?: string;
  labelKey: string;
  compositionPolicyName: string;
  migratePolicyName: string;
}

/**
 * The plural as a name part: lower case, each run of separators (`.`, `_`, `-`, letters and digits
 * outside a–z/0–9) one `-`, anything else dropped, no `-` at either end.
 */
export function namePart(plural: string): string {
  let out = "";
  for (const ch of plural.toLowerCase()) {
    if (/[a-z0-9]/.test(ch)) out += ch;
    else if (/[\p{L}\p{N}._-]/u.test(ch)) out += out.endsWith("-") ? "" : "-";
  }
  return out.replace(/^-+|-+$/g, "");
}

/** A CEL double-quoted string literal. */
export function celString(text: string): string {
  return `"${text.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n")}"`;
}

/** One JSON-pointer reference token. */
export function pointerToken(text: string): string {
  return text.replace(/~/g, "~0").replace(/\//g, "~1");
}

const EVALUATION = { admission: { enabled: true }, mutateExisting: { enabled: true } };
const OPERATIONS = ["CREATE", "UPDATE"];

function compositionLabeler(input: KyvernoInput): JsonObject {
  const ref = "object.spec.compositeTypeRef";
  const prefix = `${input.group}/`;
  const matches = `has(object.spec.compositeTypeRef) && has(${ref}.kind) && ` +
    `has(${ref}.apiVersion) && ${ref}.kind == ${celString(input.kind)} && ` +
    `${ref}.apiVersion.startsWith(${celString(prefix)})`;
  const label = `${ref}.apiVersion.substring(${[...prefix].length})`;
  const expression = `${matches}\n` +
    `  ? Object{metadata: Object.metadata{labels: {${celString(input.labelKey)}: ${label}}}}\n` +
    `  : Object{}\n`;
  return {
    apiVersion: KYVERNO_API_VERSION,
    kind: "MutatingPolicy",
    metadata: { name: input.compositionPolicyName },
    spec: {
      evaluation: EVALUATION,
      matchConstraints: {
        resourceRules: [{
          apiGroups: ["apiextensions.crossplane.io"],
          apiVersions: ["v1"],
          resources: ["compositions"],
          operations: OPERATIONS,
        }],
      },
      mutations: [{ patchType: "ApplyConfiguration", applyConfiguration: { expression } }],
    },
  };
}

function xrMigrator(input: KyvernoInput): JsonObject {
  const key = celString(input.labelKey);
  const to = celString(input.to);
  const src = "variables.source.spec.crossplane";
  const selected = `${src}.compositionSelector.matchLabels[${key}]`;
  const stale = input.from !== undefined
    ? `${selected} == ${celString(input.from)}`
    : `${selected} != ${to}`;
  const needs = `has(variables.source.spec.crossplane) && (` +
    `!has(${src}.compositionSelector) || ` +
    `!has(${src}.compositionSelector.matchLabels) || ` +
    `!(${key} in ${src}.compositionSelector.matchLabels) || ${stale})`;

  const xp = "object.spec.crossplane";
  const base = "/spec/crossplane";
  const entryPath = celString(
    `${base}/compositionSelector/matchLabels/${pointerToken(input.labelKey)}`,
  );
  const patch = (op: string, path: string, value?: string) =>
    `[JSONPatch{op: "${op}", path: ${path}${value !== undefined ? `, value: ${value}` : ""}}]`;
  const expression = [
    `variables.needsMigration`,
    `  ? (has(${xp}.compositionRef) ? ${patch("remove", `"${base}/compositionRef"`)} : []) +`,
    `    (has(${xp}.compositionRevisionRef) ? ${
      patch("remove", `"${base}/compositionRevisionRef"`)
    } : []) +`,
    `    (has(${xp}.compositionSelector) && has(${xp}.compositionSelector.matchLabels) && ` +
    `${key} in ${xp}.compositionSelector.matchLabels`,
    `      ? ${patch("replace", entryPath, to)}`,
    `      : has(${xp}.compositionSelector) && has(${xp}.compositionSelector.matchLabels)`,
    `      ? ${patch("add", entryPath, to)}`,
    `      : has(${xp}.compositionSelector)`,
    `      ? ${patch("add", `"${base}/compositionSelector/matchLabels"`, `{${key}: ${to}}`)}`,
    `      : ${patch("add", `"${base}/compositionSelector"`, `{"matchLabels": {${key}: ${to}}}`)})`,
    `  : []`,
    "",
  ].join("\n");
  return {
    apiVersion: KYVERNO_API_VERSION,
    kind: "MutatingPolicy",
    metadata: { name: input.migratePolicyName },
    spec: {
      evaluation: EVALUATION,
      matchConstraints: {
        resourceRules: [{
          apiGroups: [input.group],
          apiVersions: [...input.servedVersions],
          resources: [input.plural],
          operations: OPERATIONS,
        }],
      },
      variables: [
        // UPDATE decides from the stored object, CREATE from the new one.
        {
          name: "source",
          expression: "oldObject != null && has(oldObject.spec) ? oldObject : object",
        },
        { name: "needsMigration", expression: needs },
      ],
      mutations: [{ patchType: "JSONPatch", jsonPatch: { expression } }],
    },
  };
}

/** The Composition labeler, then the XR migrator. */
export function kyvernoPolicies(input: KyvernoInput): [JsonObject, JsonObject] {
  return [compositionLabeler(input), xrMigrator(input)];
}
