/**
 * The rule vocabulary of the config kinds: one params block per strategy (what each block holds is
 * docs/strategies.md), `when`, and the nesting of `forEach` (three levels, built out explicitly
 * because a CRD schema cannot recurse). Free-form JSON values become
 * `x-kubernetes-preserve-unknown-fields` nodes. The schemas do not check "exactly one params
 * block" or "the block matches the strategy": the engine's structural and translation stages
 * report those with the right diagnostic classes.
 */
import { z } from "zod";
import { type JsonValue, STRATEGY_NAMES, type StrategyName } from "../engine/mod.ts";
import { stringMap } from "./meta.ts";

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
    case "bigint": // an int64 beyond 2^53, read exactly
      return true;
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
export const jsonValue = z.unknown()
  .refine(isJsonValue, { message: "expected a JSON value" })
  .meta({ "x-kubernetes-preserve-unknown-fields": true }) as unknown as z.ZodType<JsonValue>;

export const jsonMap = z.record(z.string(), jsonValue);

/** An enum whose CRD default is applied in-cluster only; the engine substitutes the same default. */
export function policy<const T extends readonly [string, ...string[]]>(
  values: T,
  crdDefault: T[number],
) {
  return z.enum(values).optional().meta({ default: crdDefault });
}

const UNKNOWN_KEY_POLICIES = ["Error", "Drop"] as const;
const SERIALIZATIONS = ["JSON", "String"] as const;
const SIDES = ["Hub", "Spoke"] as const;
const FRACTIONAL_INTEGER_POLICIES = ["Error", "Truncate", "Round"] as const;
const JSON_PATCH_OPS = ["add", "remove", "replace", "move", "copy", "test"] as const;

// ---------------------------------------------------------------------------------------------
// Params blocks, one per strategy

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

/** `fromAnnotation`/`fromLabel`: they differ only in the default serialization. */
function fromMetadata(serialization: typeof SERIALIZATIONS[number]) {
  return z.strictObject({
    spokePath: z.string(),
    key: z.string(),
    serialization: policy(SERIALIZATIONS, serialization),
    stashOnReverse: z.boolean().optional(),
  });
}

const fromAnnotation = fromMetadata("JSON");

/** `JSON` is accepted here so the structural stage can reject it with its own class. */
const fromLabel = fromMetadata("String");

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

export function isStrategyName(name: string): name is StrategyName {
  return (STRATEGY_NAMES as readonly string[]).includes(name);
}
