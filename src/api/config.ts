/**
 * zod schemas for the two config kinds, `XRDConversionConfig` and `CRDConversionConfig`
 * (`terasky.com/v1alpha1`, api.md §1–§2), and their rule vocabulary (engine.md §2.2, §6).
 *
 * The schemas decode strictly: an unknown key anywhere in the typed shape is an error, including
 * inside nested `forEach.rules`. They deliberately do NOT check "exactly one params block" or
 * "the block matches the strategy": those are the engine's structural and translation stages,
 * which report them with the right diagnostic classes.
 *
 * They are also the source for the CRDs' OpenAPI schemas (`z.toJSONSchema(schema, {io: "input",
 * target: "openapi-3.0"})`), hence: no unions of objects, no recursion (ForEach nesting is built
 * out explicitly for the three allowed levels), free-form JSON marked
 * `x-kubernetes-preserve-unknown-fields`, and CRD-only defaults/limits expressed as `.meta()`
 * (emitted into the JSON schema but not applied by the offline decode, as in the reference).
 */
import { z } from "zod";
import {
  type ConversionConfigSpec,
  type JsonValue,
  STRATEGY_NAMES,
  type StrategyName,
} from "../engine/mod.ts";

export const CONFIG_GROUP = "terasky.com";
export const CONFIG_VERSION = "v1alpha1";
export const CONFIG_API_VERSION = `${CONFIG_GROUP}/${CONFIG_VERSION}`;
export const XRD_CONFIG_KIND = "XRDConversionConfig";
export const CRD_CONFIG_KIND = "CRDConversionConfig";
export const CONFIG_KINDS = [XRD_CONFIG_KIND, CRD_CONFIG_KIND] as const;
export type ConfigKind = typeof CONFIG_KINDS[number];

// ---------------------------------------------------------------------------------------------
// Free-form JSON

/** Plain JSON data: what a YAML/JSON decode of a manifest yields (finite numbers only). */
export function isJsonValue(v: unknown): v is JsonValue {
  if (v === null) return true;
  switch (typeof v) {
    case "string":
    case "boolean":
      return true;
    case "number":
      return Number.isFinite(v);
    case "object":
      if (Array.isArray(v)) return v.every(isJsonValue);
      if (Object.getPrototypeOf(v) !== Object.prototype && Object.getPrototypeOf(v) !== null) {
        return false;
      }
      return Object.values(v).every(isJsonValue);
    default:
      return false;
  }
}

/**
 * Any JSON value (`default`, `value`, `equals`, enum mapping sides, ...). Typed as JsonValue so
 * parsed configs feed the engine without casts; in a CRD it becomes a preserve-unknown-fields node.
 */
const jsonValue = z.unknown()
  .refine(isJsonValue, { message: "expected a JSON value" })
  .meta({ "x-kubernetes-preserve-unknown-fields": true }) as unknown as z.ZodType<JsonValue>;

const stringMap = z.record(z.string(), z.string());
const jsonMap = z.record(z.string(), jsonValue);

/** An enum whose CRD default is applied in-cluster only; the engine substitutes the same default. */
function policy<const T extends readonly [string, ...string[]]>(values: T, crdDefault: T[number]) {
  return z.enum(values).optional().meta({ default: crdDefault });
}

const UNKNOWN_KEY_POLICIES = ["Error", "Drop"] as const;
const SERIALIZATIONS = ["JSON", "String"] as const;
const SIDES = ["Hub", "Spoke"] as const;
const FRACTIONAL_INTEGER_POLICIES = ["Error", "Truncate", "Round"] as const;
const JSON_PATCH_OPS = ["add", "remove", "replace", "move", "copy", "test"] as const;

// ---------------------------------------------------------------------------------------------
// Params blocks (engine.md §6), one per strategy

const hubSpokePaths = { hubPath: z.string(), spokePath: z.string() };

const fieldRename = z.strictObject({ ...hubSpokePaths });

const scalarObject = z.strictObject({
  ...hubSpokePaths,
  key: z.string(),
  defaultsForOtherKeys: jsonMap.optional(),
});

const singleton = z.strictObject({ ...hubSpokePaths });

const fieldsToMap = z.strictObject({
  hubPaths: z.array(z.string()),
  spokeMapPath: z.string(),
  keyNames: stringMap.optional(),
  onUnknownSpokeKey: policy(UNKNOWN_KEY_POLICIES, "Error"),
});

const mapToFields = z.strictObject({
  hubMapPath: z.string(),
  spokePaths: z.array(z.string()),
  keyNames: stringMap.optional(),
  onUnknownHubKey: policy(UNKNOWN_KEY_POLICIES, "Error"),
});

const toMetadata = z.strictObject({
  hubPath: z.string(),
  key: z.string(),
  serialization: policy(SERIALIZATIONS, "JSON"),
  restoreOnReverse: z.boolean().optional(),
});

const fromAnnotation = z.strictObject({
  spokePath: z.string(),
  key: z.string(),
  serialization: policy(SERIALIZATIONS, "JSON"),
  stashOnReverse: z.boolean().optional(),
});

/** `JSON` is accepted here so the structural stage can reject it with its own class. */
const fromLabel = z.strictObject({
  spokePath: z.string(),
  key: z.string(),
  serialization: policy(SERIALIZATIONS, "String"),
  stashOnReverse: z.boolean().optional(),
});

const enumRemap = z.strictObject({
  path: z.string(),
  mapping: z.array(z.strictObject({ hub: jsonValue.optional(), spoke: jsonValue.optional() })),
  onUnmappedHubValue: policy(UNKNOWN_KEY_POLICIES, "Error"),
  onUnmappedSpokeValue: policy(UNKNOWN_KEY_POLICIES, "Error"),
});

const defaultValue = z.strictObject({
  path: z.string(),
  existsOn: z.enum(SIDES),
  default: jsonValue.optional(),
});

const constant = z.strictObject({
  path: z.string(),
  existsOn: z.enum(SIDES),
  value: jsonValue.optional(),
});

const deleteField = z.strictObject({ path: z.string(), existsOn: z.enum(SIDES) });

const jsonPatchOperation = z.strictObject({
  op: z.enum(JSON_PATCH_OPS),
  path: z.string(),
  from: z.string().optional(),
  value: jsonValue.optional(),
});

const jsonPatch = z.strictObject({
  hubToSpoke: z.array(jsonPatchOperation).optional(),
  spokeToHub: z.array(jsonPatchOperation).optional(),
  losslessOverride: z.boolean().optional(),
});

const typeCoerce = z.strictObject({
  path: z.string(),
  onFractionalInteger: policy(FRACTIONAL_INTEGER_POLICIES, "Error"),
});

const scalarToFields = z.strictObject({
  hubPath: z.string(),
  pattern: z.string(),
  spokeFields: stringMap,
  joinTemplate: z.string(),
  losslessOverride: z.boolean().optional(),
});

const fieldsToScalar = z.strictObject({
  hubFields: stringMap,
  pattern: z.string(),
  spokePath: z.string(),
  joinTemplate: z.string(),
  losslessOverride: z.boolean().optional(),
});

const byKey = z.strictObject({ ...hubSpokePaths, keyField: z.string() });

const numericScale = z.strictObject({ ...hubSpokePaths, factor: z.number() });

/** The separator may be empty (split into code points), so it is optional and unvalidated. */
const listJoinSplit = z.strictObject({ ...hubSpokePaths, separator: z.string().optional() });

const quantityDuration = z.strictObject({ ...hubSpokePaths });

const mapKeyRename = z.strictObject({ ...hubSpokePaths, renames: stringMap });

const cel = z.strictObject({
  hubPaths: z.array(z.string()),
  spokePaths: z.array(z.string()),
  hubToSpoke: z.string(),
  spokeToHub: z.string(),
});

/** Every params block except `forEach` (whose nested rule type depends on the nesting level). */
const PARAMS_BLOCKS = {
  fieldRename,
  scalarToObject: scalarObject,
  objectToScalar: scalarObject,
  singletonArrayToObject: singleton,
  objectToSingletonArray: singleton,
  fieldsToMap,
  mapToFields,
  toAnnotation: toMetadata,
  toLabel: toMetadata,
  fromAnnotation,
  fromLabel,
  enumRemap,
  defaultValue,
  constant,
  delete: deleteField,
  jsonPatch,
  typeCoerce,
  scalarToFields,
  fieldsToScalar,
  arrayToMapByKey: byKey,
  mapToArrayByKey: byKey,
  numericScale,
  listJoin: listJoinSplit,
  listSplit: listJoinSplit,
  quantity: quantityDuration,
  duration: quantityDuration,
  mapKeyRename,
  cel,
};

const when = z.strictObject({ path: z.string(), equals: jsonValue.optional() });

/** One rule at a given ForEach level; `nestedRules` is the type of its `forEach.rules`. */
function ruleSchema<R extends z.ZodType>(nestedRules: R) {
  const optionalBlocks = Object.fromEntries(
    Object.entries(PARAMS_BLOCKS).map(([key, block]) => [key, block.optional()]),
  ) as { [K in keyof typeof PARAMS_BLOCKS]: z.ZodOptional<typeof PARAMS_BLOCKS[K]> };
  return z.strictObject({
    strategy: z.enum(STRATEGY_NAMES),
    acknowledgeLossy: z.boolean().optional().meta({ default: false }),
    reason: z.string().optional(),
    when: when.optional(),
    ...optionalBlocks,
    forEach: z.strictObject({
      hubItemsPath: z.string(),
      spokeItemsPath: z.string(),
      rules: nestedRules.optional(),
    }).optional(),
  });
}

/**
 * A third ForEach level is always rejected by the structural stage ("nesting depth exceeds the
 * supported maximum of 2"); its rules are kept free-form so that check, not the decode, reports it.
 */
const rulesAtDepth2 = z.array(ruleSchema(z.array(jsonValue)));
const rulesAtDepth1 = z.array(ruleSchema(rulesAtDepth2));
export const ConversionRuleSchema = ruleSchema(rulesAtDepth1);

export type ConversionRule = z.infer<typeof ConversionRuleSchema>;

/** Every params key the rule schema accepts (one per strategy, 29 in all). */
export const RULE_PARAMS_KEYS: readonly string[] = [...Object.keys(PARAMS_BLOCKS), "forEach"];

// ---------------------------------------------------------------------------------------------
// Config objects (api.md §1.1, §2)

const spoke = z.strictObject({
  version: z.string(),
  // null is what `rules:` with no value decodes to; the engine treats it as an empty list.
  rules: z.array(ConversionRuleSchema).nullable().default([]),
});

const commonSpec = {
  hubVersion: z.string(),
  // minItems is the structural stage's check offline ("spokes non-empty"); the CRD enforces it.
  spokes: z.array(spoke).meta({ minItems: 1 }),
  webhookServerRef: z.strictObject({ name: z.string() }).optional(),
  conversionReviewVersions: z.array(z.string()).default(["v1"]),
  unmappedFieldPolicy: z.enum(["Error", "Warn"]).default("Error"),
  unmappedFieldReason: z.string().optional(),
  driftPolicy: z.enum(["KeepServingStale", "FailClosed"]).default("KeepServingStale"),
};

const targetRef = z.strictObject({ name: z.string() });

export const XRDConversionConfigSpecSchema = z.strictObject({
  targetXRD: targetRef,
  ...commonSpec,
});
export const CRDConversionConfigSpecSchema = z.strictObject({
  targetCRD: targetRef,
  ...commonSpec,
});

/** The ObjectMeta fields convctl and the operator read; everything else is kept as is. */
const objectMeta = z.looseObject({
  name: z.string().optional(),
  generateName: z.string().optional(),
  namespace: z.string().optional(),
  uid: z.string().optional(),
  resourceVersion: z.string().optional(),
  generation: z.number().optional(),
  creationTimestamp: z.string().nullable().optional(),
  deletionTimestamp: z.string().nullable().optional(),
  labels: stringMap.optional(),
  annotations: stringMap.optional(),
  finalizers: z.array(z.string()).optional(),
});

const condition = z.looseObject({
  type: z.string(),
  status: z.string(),
  reason: z.string().optional(),
  message: z.string().optional(),
  lastTransitionTime: z.string().optional(),
  observedGeneration: z.number().optional(),
});

export const CONFIG_PHASES = [
  "Pending",
  "Validating",
  "Validated",
  "Invalid",
  "Applied",
  "Stale",
  "Reverting",
  "Failed",
] as const;

/**
 * Written by the controller (api.md §1.2), never by users: typed loosely so that an older or
 * newer operator's status never makes a config unreadable.
 */
const configStatus = z.looseObject({
  observedGeneration: z.number().optional(),
  observedXRDGeneration: z.number().optional(),
  observedCRDGeneration: z.number().optional(),
  schemaHash: z.string().optional(),
  phase: z.string().optional(),
  conditions: z.array(condition).optional(),
  assignedWebhookServer: z.string().optional(),
  webhookPath: z.string().optional(),
  webhookURL: z.string().optional(),
  webhookPort: z.number().optional(),
  generatedCRDs: z.array(jsonMap).optional(),
  overallLossless: z.boolean().optional(),
  spokeStatuses: z.array(jsonMap).optional(),
  lastAppliedPlanHash: z.string().optional(),
  message: z.string().optional(),
});

export const XRDConversionConfigSchema = z.strictObject({
  apiVersion: z.literal(CONFIG_API_VERSION),
  kind: z.literal(XRD_CONFIG_KIND),
  metadata: objectMeta.optional(),
  spec: XRDConversionConfigSpecSchema,
  status: configStatus.optional(),
});

export const CRDConversionConfigSchema = z.strictObject({
  apiVersion: z.literal(CONFIG_API_VERSION),
  kind: z.literal(CRD_CONFIG_KIND),
  metadata: objectMeta.optional(),
  spec: CRDConversionConfigSpecSchema,
  status: configStatus.optional(),
});

export type XRDConversionConfigSpec = z.infer<typeof XRDConversionConfigSpecSchema>;
export type CRDConversionConfigSpec = z.infer<typeof CRDConversionConfigSpecSchema>;
export type SpokeConfig = z.infer<typeof spoke>;
export type XRDConversionConfig = z.infer<typeof XRDConversionConfigSchema>;
export type CRDConversionConfig = z.infer<typeof CRDConversionConfigSchema>;
export type ConversionConfig = XRDConversionConfig | CRDConversionConfig;
export type ConversionConfigStatus = z.infer<typeof configStatus>;

/**
 * The engine reads the parsed spec directly. This function is also the compile-time proof that a
 * parsed spec is assignable to the engine's `ConversionConfigSpec`.
 */
export function engineSpecOf(config: ConversionConfig): ConversionConfigSpec {
  return config.spec;
}

/** `spec.targetXRD.name` or `spec.targetCRD.name`. */
export function targetNameOf(config: ConversionConfig): string {
  return config.kind === XRD_CONFIG_KIND ? config.spec.targetXRD.name : config.spec.targetCRD.name;
}

export function isStrategyName(name: string): name is StrategyName {
  return (STRATEGY_NAMES as readonly string[]).includes(name);
}

// ---------------------------------------------------------------------------------------------
// Parsing with messages that name the offending path

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

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
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

// ---------------------------------------------------------------------------------------------
// Typed status shapes for the CRDs (api.md §0, §1.2–§1.4, §2)
//
// `configStatus` above stays loose for decoding; these are the schemas the generated CRDs carry
// (hence what the apiserver validates and prunes status writes against).

/** Condition types written on the config kinds (api.md §1.4). */
export const CONFIG_CONDITION_TYPES = [
  "Validated",
  "XRDHealthy",
  "CRDHealthy",
  "WebhookServerReady",
  "Applied",
  "Stale",
  "DeletionBlocked",
  "HandoverReady",
  "ConversionPropagated",
  "PackageManaged",
] as const;

/** The reasons of the `HandoverReady` condition [P15]; the first two are successes. */
export const HANDOVER_REASONS = [
  "HandoverReady",
  "HandoverUnverified",
  "HandoverPending",
  "HandoverAwaitingReports",
  "HandoverUnknown",
] as const;

/**
 * A standard `metav1.Condition` (api.md §0). The list it lives in is a list-map keyed by `type`.
 * `lastTransitionTime` is only restamped when `status` flips.
 */
export const ConditionSchema = z.object({
  type: z.string().min(1).max(316),
  status: z.enum(["True", "False", "Unknown"]),
  observedGeneration: z.int().min(0).optional(),
  lastTransitionTime: z.string().meta({ format: "date-time" }),
  reason: z.string().max(1024),
  message: z.string().max(32768),
});
export type Condition = z.infer<typeof ConditionSchema>;

/** `conditions[]`, a list-map keyed by `type`. */
export const conditionList = z.array(ConditionSchema).meta({
  "x-kubernetes-list-type": "map",
  "x-kubernetes-list-map-keys": ["type"],
});

const losslessPair = z.object({ hubToSpoke: z.boolean(), spokeToHub: z.boolean() });
const stringList = z.array(z.string());

const ruleResult = z.object({
  index: z.int32(),
  strategy: z.string(),
  hubPaths: stringList.optional(),
  spokePaths: stringList.optional(),
  lossless: losslessPair.optional(),
  errors: stringList.optional(),
  warnings: stringList.optional(),
});

/** Per spoke: always the last analysis attempt, even a failed one (api.md §1.2). */
export const SpokeStatusSchema = z.object({
  version: z.string(),
  lossless: losslessPair.optional(),
  fieldsUncoveredHub: stringList.optional(),
  fieldsUncoveredSpoke: stringList.optional(),
  ruleResults: z.array(ruleResult).optional(),
  errors: stringList.optional(),
  warnings: stringList.optional(),
});

/** [P11] One CRD Crossplane renders from the target XRD (XRD kind only). */
export const GeneratedCRDStatusSchema = z.object({
  name: z.string(),
  role: z.enum(["composite", "claim"]).optional(),
  propagated: z.boolean().optional(),
  observedCABundleHash: z.string().optional(),
  observedAt: z.string().meta({ format: "date-time" }).optional(),
  message: z.string().optional(),
});

const commonStatus = {
  observedGeneration: z.int().optional(),
  schemaHash: z.string().optional(),
  phase: z.enum(CONFIG_PHASES).optional(),
  conditions: conditionList.optional(),
  assignedWebhookServer: z.string().optional(),
  webhookPath: z.string().optional(),
  webhookURL: z.string().optional(),
  overallLossless: z.boolean().optional(),
  spokeStatuses: z.array(SpokeStatusSchema).optional(),
  lastAppliedPlanHash: z.string().optional(),
  message: z.string().optional(),
};

/** `status` of an XRDConversionConfig as the CRD declares it (api.md §1.2). */
export const XRDConversionConfigStatusSchema = z.object({
  ...commonStatus,
  observedXRDGeneration: z.int().optional(),
  webhookPort: z.int32().optional(),
  generatedCRDs: z.array(GeneratedCRDStatusSchema).meta({
    "x-kubernetes-list-type": "map",
    "x-kubernetes-list-map-keys": ["name"],
  }).optional(),
});

/** `status` of a CRDConversionConfig as the CRD declares it (api.md §2). */
export const CRDConversionConfigStatusSchema = z.object({
  ...commonStatus,
  observedCRDGeneration: z.int().optional(),
});

export type XRDConversionConfigStatus = z.infer<typeof XRDConversionConfigStatusSchema>;
export type CRDConversionConfigStatus = z.infer<typeof CRDConversionConfigStatusSchema>;
