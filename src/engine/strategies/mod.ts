/**
 * The strategy registry. Adding a strategy: write its file, then list it here.
 */
import type { OpLinker, StrategyDefinition } from "../strategy.ts";
import type { StrategyName } from "../types.ts";
import { CORE_OPS } from "./_core_ops.ts";
import { fromAnnotation, fromLabel, toAnnotation, toLabel } from "./annotations.ts";
import { arrayToMapByKey, mapToArrayByKey } from "./array_map.ts";
import { cel } from "./cel.ts";
import { enumRemap } from "./enum_remap.ts";
import { fieldsToMap, mapToFields } from "./fields_map.ts";
import { forEach } from "./for_each.ts";
import { jsonPatch } from "./json_patch.ts";
import { listJoin, listSplit } from "./list_join.ts";
import { mapKeyRename } from "./map_key_rename.ts";
import { numericScale } from "./numeric_scale.ts";
import { constant, defaultValue, deleteField } from "./presence.ts";
import { fieldsToScalar, scalarToFields } from "./regex_fields.ts";
import { fieldRename } from "./rename.ts";
import { objectToScalar, scalarToObject } from "./scalar_object.ts";
import { objectToSingletonArray, singletonArrayToObject } from "./singleton.ts";
import { typeCoerce } from "./type_coerce.ts";
import { duration, quantity } from "./units.ts";

// deno-lint-ignore no-explicit-any -- each definition has its own params type
type AnyStrategy = StrategyDefinition<any>;

const STRATEGIES: readonly AnyStrategy[] = [
  fieldRename,
  scalarToObject,
  objectToScalar,
  singletonArrayToObject,
  objectToSingletonArray,
  fieldsToMap,
  mapToFields,
  toAnnotation,
  toLabel,
  fromAnnotation,
  fromLabel,
  enumRemap,
  defaultValue,
  constant,
  deleteField,
  jsonPatch,
  forEach,
  typeCoerce,
  scalarToFields,
  fieldsToScalar,
  arrayToMapByKey,
  mapToArrayByKey,
  numericScale,
  listJoin,
  listSplit,
  quantity,
  duration,
  mapKeyRename,
  cel,
];

const BY_NAME = new Map<string, AnyStrategy>(STRATEGIES.map((s) => [s.name, s]));

export function strategyByName(name: string): StrategyDefinition<unknown> | undefined {
  return BY_NAME.get(name);
}

/** Names of the strategies this build implements. */
export function implementedStrategies(): StrategyName[] {
  return STRATEGIES.map((s) => s.name);
}

/** The inverse pairs built by `mirror()`, each once: `[A on the hub, A on the spoke]`. */
export function inversePairs(): [StrategyName, StrategyName][] {
  const pairs: [StrategyName, StrategyName][] = [];
  for (const s of STRATEGIES) {
    if (s.inverse !== undefined && !pairs.some(([, second]) => second === s.name)) {
      pairs.push([s.name, s.inverse]);
    }
  }
  return pairs;
}

/** Every op code → linker (core ops plus each strategy's). */
export function allOpLinkers(): Map<string, OpLinker> {
  const m = new Map<string, OpLinker>(Object.entries(CORE_OPS));
  for (const s of STRATEGIES) {
    for (const [code, linker] of Object.entries(s.ops)) {
      const existing = m.get(code);
      if (existing !== undefined && existing !== linker) {
        throw new Error(`op code ${code} registered by two different linkers`);
      }
      m.set(code, linker);
    }
  }
  return m;
}
