/**
 * The engine's vocabulary: JSON values, the config shape it reads, schema sources, diagnostics,
 * analysis reports and plans. Everything here is plain data (structured-cloneable), so a plan
 * compiled in a Worker can be posted back and linked on the main thread.
 */

import type { JsonValue } from "../lib/json.ts";
export type { JsonObject, JsonPrimitive, JsonValue } from "../lib/json.ts";

/** The 29 strategy names of the reference, in its order. */
export const STRATEGY_NAMES = [
  "FieldRename",
  "ScalarToObject",
  "ObjectToScalar",
  "SingletonArrayToObject",
  "ObjectToSingletonArray",
  "FieldsToMap",
  "MapToFields",
  "ToAnnotation",
  "ToLabel",
  "FromAnnotation",
  "FromLabel",
  "EnumRemap",
  "DefaultValue",
  "Constant",
  "Delete",
  "JSONPatch",
  "ForEach",
  "TypeCoerce",
  "ScalarToFields",
  "FieldsToScalar",
  "ArrayToMapByKey",
  "MapToArrayByKey",
  "NumericScale",
  "ListJoin",
  "ListSplit",
  "Quantity",
  "Duration",
  "MapKeyRename",
  "CEL",
] as const;
export type StrategyName = typeof STRATEGY_NAMES[number];

/** Params key of a strategy: lower-camel of its name; JSONPatch and CEL are the exceptions. */
export function paramsKeyOf(strategy: StrategyName): string {
  if (strategy === "JSONPatch") return "jsonPatch";
  if (strategy === "CEL") return "cel";
  return strategy[0].toLowerCase() + strategy.slice(1);
}

export const PARAMS_KEYS: readonly string[] = STRATEGY_NAMES.map(paramsKeyOf);

export type Side = "Hub" | "Spoke";
export type UnknownKeyPolicy = "Error" | "Drop";
export type UnmappedFieldPolicy = "Error" | "Warn";

export interface WhenPredicate {
  path: string;
  equals?: JsonValue;
}

/**
 * One rule as written in a config (`spec.spokes[].rules[]`): the strategy name plus exactly one
 * params block keyed by `paramsKeyOf(strategy)`. Params blocks stay loosely typed here; each
 * strategy validates its own block during translation.
 */
export interface ConversionRuleSpec {
  strategy: string;
  acknowledgeLossy?: boolean;
  reason?: string;
  when?: WhenPredicate;
  [paramsKey: string]: unknown;
}

export interface SpokeSpec {
  version: string;
  rules?: ConversionRuleSpec[] | null;
}

/** The engine-relevant part of a `CRDConversionConfig`/`XRDConversionConfig` spec. */
export interface ConversionConfigSpec {
  targetCRD?: { name: string };
  targetXRD?: { name: string };
  hubVersion: string;
  spokes: SpokeSpec[];
  unmappedFieldPolicy?: UnmappedFieldPolicy | "";
  unmappedFieldReason?: string;
  webhookServerRef?: { name: string };
  conversionReviewVersions?: string[];
  driftPolicy?: string;
}

/** A node of an `openAPIV3Schema`, kept generic: the engine reads only what it needs. */
export interface SchemaNode {
  type?: string;
  properties?: Record<string, SchemaNode>;
  items?: SchemaNode | SchemaNode[];
  additionalProperties?: SchemaNode | boolean;
  required?: string[];
  maxItems?: number;
  enum?: JsonValue[];
  default?: JsonValue;
  "x-kubernetes-preserve-unknown-fields"?: boolean;
  "x-kubernetes-int-or-string"?: boolean;
  $ref?: string;
  oneOf?: SchemaNode[];
  anyOf?: SchemaNode[];
  allOf?: SchemaNode[];
  [other: string]: unknown;
}

export interface VersionSchema {
  name: string;
  served: boolean;
  /** CRD `storage: true`, XRD `referenceable: true`. */
  storage: boolean;
  /** The whole `schema.openAPIV3Schema` of the version (absent = empty schema). */
  schema?: SchemaNode;
}

/** Paths a platform overwrites at runtime (Crossplane machinery, docs/design/engine.md#platform-injected-fields). */
export interface InjectedPathSet {
  platform: string;
  roots: string[];
  uncertain: boolean;
  reason: string;
}

export interface SchemaSource {
  kind: "CRD" | "XRD";
  /** `metadata.name` of the target (`<plural>.<group>`), or "" when unnamed. */
  name: string;
  group: string;
  /** `spec.names.kind` of the target. */
  targetKind: string;
  versions: VersionSchema[];
  injected?: InjectedPathSet;
}

export type Severity = "error" | "warning";

export type DiagnosticClass =
  | "config-parse"
  | "structural"
  | "rule-translation"
  | "hub-version"
  | "spoke-version"
  | "path-not-found"
  | "type-mismatch"
  | "invalid-parameter"
  | "duplicate-claim"
  | "uncovered-field"
  | "unacknowledged-lossy"
  | "foreach-depth"
  | "foreach-shape"
  | "partial-coverage"
  | "unverifiable"
  | "non-injective-enum"
  | "required-field-deleted"
  | "AuthoredFieldShadowedByPlatform"
  | "RuleTargetsInjectedPath"
  | "RequiredFieldUnsatisfiable"
  | "RequiredFieldConditional"
  | "RequiredFieldUnprovable";

export interface Diagnostic {
  class: DiagnosticClass;
  severity: Severity;
  message: string;
  /** Top-level rule index, or -1 when no single rule is responsible. */
  ruleIndex: number;
  /** The field path concerned (qualified with ForEach items paths), or "". */
  path: string;
  /** For uncovered-field diagnostics: which schema the leaf belongs to. */
  side?: "hub" | "spoke";
}

export interface Lossless {
  hubToSpoke: boolean;
  spokeToHub: boolean;
}

export interface RuleResult {
  index: number;
  strategy: string;
  hubPaths: string[];
  spokePaths: string[];
  lossless: Lossless;
  errors: Diagnostic[];
  warnings: Diagnostic[];
}

export interface SpokeReport {
  version: string;
  lossless: Lossless;
  ruleResults: RuleResult[];
  errors: Diagnostic[];
  warnings: Diagnostic[];
  uncoveredHub: string[];
  uncoveredSpoke: string[];
  /** Present iff the spoke has no error diagnostics. */
  plan?: PlanData;
}

export interface AnalysisResult {
  kind: "CRD" | "XRD";
  target: string;
  group: string;
  hubVersion: string;
  /** Fatal problems (hub missing / not storage, untranslatable rules): no spoke was analysed. */
  hardErrors: Diagnostic[];
  spokes: SpokeReport[];
  /** Any hard error or any spoke error. */
  hasErrors: boolean;
  /** Every spoke lossless in both directions (spokes with errors included). */
  overallLossless: boolean;
}

/**
 * One precompiled conversion step, as data. `op` names the linker that turns it into a closure
 * (see link.ts); the other fields are that op's parameters (paths pre-split into segments).
 */
export interface OpData {
  op: string;
  [param: string]: unknown;
}

/** The compiled, executable result for one hub↔spoke pair. */
export interface PlanData {
  hubVersion: string;
  spokeVersion: string;
  hubToSpoke: OpData[];
  spokeToHub: OpData[];
}

export type Direction = "hubToSpoke" | "spokeToHub";
