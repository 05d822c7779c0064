/**
 * ArrayToMapByKey / MapToArrayByKey (engine.md §6.19, §6.20): an array of objects keyed by a field
 * on one side is a map on the other. Map → array sorts keys byte-wise: the original order cannot
 * be recovered, which is the declared loss of that direction.
 */
import { isJsonObject } from "../../lib/json.ts";
import { compareBytes } from "../go.ts";
import type { OpLinker, StrategyDefinition } from "../strategy.ts";
import type { JsonObject, JsonValue } from "../types.ts";
import { ABSENT, ConversionError, deepCopy, getPath, setKey, setPath, typeName } from "../value.ts";

interface KeyedParams {
  hubPath: string;
  spokePath: string;
  keyField: string;
}

function keyed(name: "ArrayToMapByKey" | "MapToArrayByKey"): StrategyDefinition<KeyedParams> {
  const hubIsArray = name === "ArrayToMapByKey";
  return {
    name,
    translate: (p) => ({
      hubPath: p.path("hubPath"),
      spokePath: p.path("spokePath"),
      keyField: p.path("keyField"),
    }),
    compile(p, ctx) {
      const hub = ctx.resolveHub(p.hubPath, "hubPath");
      const spoke = ctx.resolveSpoke(p.spokePath, "spokePath");
      ctx.claimHub(hub);
      ctx.claimSpoke(spoke);
      const toMap = (from: string[], to: string[]) => ({
        op: "arrayToMap",
        from,
        to,
        keyField: p.keyField,
      });
      const toArray = (from: string[], to: string[]) => ({
        op: "mapToArray",
        from,
        to,
        keyField: p.keyField,
      });
      return {
        hubPaths: [p.hubPath],
        spokePaths: [p.spokePath],
        lossless: { hubToSpoke: hubIsArray, spokeToHub: !hubIsArray },
        hubToSpoke: hubIsArray
          ? toMap(hub.segments, spoke.segments)
          : toArray(hub.segments, spoke.segments),
        spokeToHub: hubIsArray
          ? toArray(spoke.segments, hub.segments)
          : toMap(spoke.segments, hub.segments),
      };
    },
    ops: { arrayToMap: linkArrayToMap, mapToArray: linkMapToArray },
  };
}

export const arrayToMapByKey = keyed("ArrayToMapByKey");
export const mapToArrayByKey = keyed("MapToArrayByKey");

function linkArrayToMap(...[op]: Parameters<OpLinker>) {
  const from = op.from as string[];
  const to = op.to as string[];
  const keyField = op.keyField as string;
  const what = from.join(".");
  return (input: JsonObject, output: JsonObject) => {
    const v = getPath(input, from);
    if (v === ABSENT) return;
    if (!Array.isArray(v)) throw new ConversionError(`${what} is a ${typeName(v)}, not an array`);
    const map: JsonObject = {};
    v.forEach((element, i) => {
      if (!isJsonObject(element)) {
        throw new ConversionError(`${what}[${i}] is a ${typeName(element)}, not a map`);
      }
      if (!Object.hasOwn(element, keyField)) {
        throw new ConversionError(`${what}[${i}] has no ${keyField}`);
      }
      const key = element[keyField];
      if (typeof key !== "string") {
        throw new ConversionError(`${what}[${i}].${keyField} is a ${typeName(key)}, not a string`);
      }
      if (Object.hasOwn(map, key)) {
        throw new ConversionError(`${what}: duplicate ${keyField} ${JSON.stringify(key)}`);
      }
      const entry: JsonObject = {};
      for (const k of Object.keys(element)) {
        if (k !== keyField) setKey(entry, k, deepCopy(element[k]));
      }
      setKey(map, key, entry);
    });
    setPath(output, to, map);
  };
}

function linkMapToArray(...[op]: Parameters<OpLinker>) {
  const from = op.from as string[];
  const to = op.to as string[];
  const keyField = op.keyField as string;
  const what = from.join(".");
  return (input: JsonObject, output: JsonObject) => {
    const v = getPath(input, from);
    if (v === ABSENT) return;
    if (!isJsonObject(v)) throw new ConversionError(`${what} is a ${typeName(v)}, not a map`);
    const out: JsonValue[] = Object.keys(v).sort(compareBytes).map((key) => {
      const value = v[key];
      if (!isJsonObject(value)) {
        throw new ConversionError(`${what}.${key} is a ${typeName(value)}, not a map`);
      }
      const element: JsonObject = {};
      setKey(element, keyField, key);
      for (const k of Object.keys(value)) setKey(element, k, deepCopy(value[k]));
      return element;
    });
    setPath(output, to, out);
  };
}
