/**
 * ArrayToMapByKey / MapToArrayByKey: an array of objects keyed by a field on one side is a map on
 * the other. Map → array sorts keys byte-wise: the original order cannot be recovered, which is
 * the declared loss of that direction. One inverse pair: A is the array side, B the map side.
 */
import { isJsonObject } from "../../lib/json.ts";
import { compareBytes } from "../go.ts";
import { bindPathPair, mirror, readPathPair } from "../mirror.ts";
import { spend } from "../request_budget.ts";
import type { JsonObject, JsonValue } from "../types.ts";
import { ConversionError, deepCopy, setKey } from "../value.ts";
import { valueLinker, wrongType } from "./_link.ts";

interface KeyedParams {
  /** The array's path (A) and the map's (B). */
  aPath: string;
  bPath: string;
  keyField: string;
}

const linkArrayToMap = valueLinker((op, what) => {
  const keyField = op.keyField as string;
  return (v) => {
    if (!Array.isArray(v)) throw wrongType(what, v, "an array");
    spend(v.length); // the request budget, before the pass
    const map: JsonObject = {};
    v.forEach((element, i) => {
      if (!isJsonObject(element)) throw wrongType(`${what}[${i}]`, element, "a map");
      if (!Object.hasOwn(element, keyField)) {
        throw new ConversionError(`${what}[${i}] has no ${keyField}`);
      }
      const key = element[keyField];
      if (typeof key !== "string") throw wrongType(`${what}[${i}].${keyField}`, key, "a string");
      if (Object.hasOwn(map, key)) {
        throw new ConversionError(`${what}: duplicate ${keyField} ${JSON.stringify(key)}`);
      }
      const entry: JsonObject = {};
      for (const k of Object.keys(element)) {
        if (k !== keyField) setKey(entry, k, deepCopy(element[k]));
      }
      setKey(map, key, entry);
    });
    return map;
  };
});

const linkMapToArray = valueLinker((op, what) => {
  const keyField = op.keyField as string;
  return (v) => {
    if (!isJsonObject(v)) throw wrongType(what, v, "a map");
    return Object.keys(v).sort(compareBytes).map((key): JsonValue => {
      const value = v[key];
      if (!isJsonObject(value)) throw wrongType(`${what}.${key}`, value, "a map");
      spend(1); // the request budget, inside the object
      const element: JsonObject = {};
      setKey(element, keyField, key);
      for (const k of Object.keys(value)) setKey(element, k, deepCopy(value[k]));
      return element;
    });
  };
});

export const [arrayToMapByKey, mapToArrayByKey] = mirror<KeyedParams>({
  names: ["ArrayToMapByKey", "MapToArrayByKey"],
  translate: (p, o) => ({ ...readPathPair(p, o), keyField: p.path("keyField") }),
  compile(p, sides) {
    const [array, map] = bindPathPair(sides, p);
    return {
      aPaths: [p.aPath],
      bPaths: [p.bPath],
      lossless: { aToB: true, bToA: false },
      aToB: { op: "arrayToMap", from: array.segments, to: map.segments, keyField: p.keyField },
      bToA: { op: "mapToArray", from: map.segments, to: array.segments, keyField: p.keyField },
    };
  },
  ops: { arrayToMap: linkArrayToMap, mapToArray: linkMapToArray },
});
