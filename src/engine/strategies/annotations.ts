/**
 * ToAnnotation / ToLabel / FromAnnotation / FromLabel: a field that exists on one side only is
 * stashed in the other side's metadata and restored on the way back.
 */
import { isJsonObject } from "../../lib/json.ts";
import { parseJson } from "../../lib/json_exact.ts";
import { goJSON, labelValueError, qualifiedNameError } from "../go.ts";
import { mirror } from "../mirror.ts";
import type { OpLinker, RuleContext } from "../strategy.ts";
import type { JsonObject, JsonValue, StrategyName } from "../types.ts";
import { ABSENT, ConversionError, deletePath, getPath, setPath, typeName } from "../value.ts";

type Serialization = "JSON" | "String";
type MetadataMap = "annotations" | "labels";

interface StashParams {
  path: string;
  key: string;
  serialization: Serialization;
  /** restoreOnReverse (To*) / stashOnReverse (From*). */
  reverse: boolean;
}

function checkLabelKey(map: MetadataMap, key: string, ctx: RuleContext): void {
  if (map !== "labels") return;
  const reason = qualifiedNameError(key);
  if (reason !== undefined) ctx.error("invalid-parameter", reason);
}

/**
 * One pair per metadata map: A is the field's side, B the side whose metadata holds it (To*: the
 * field is on the hub; From*: on the spoke). Not a plain swap of hub and spoke: the leg towards
 * the spoke always runs (stash for To*, restore for From*), the leg towards the hub only with
 * restoreOnReverse / stashOnReverse, and strips the key otherwise.
 */
function stashPair(names: readonly [StrategyName, StrategyName], map: MetadataMap) {
  return mirror<StashParams>({
    names,
    translate: (p, o) => ({
      path: p.path(`${o.a}Path`),
      key: p.path("key"),
      // FromLabel's JSON is kept here so compile can name it (invalid-parameter).
      serialization: p.choice(
        "serialization",
        ["JSON", "String"] as const,
        map === "labels" && o.a === "spoke" ? "String" : "JSON",
      ),
      reverse: p.optBool(o.a === "hub" ? "restoreOnReverse" : "stashOnReverse"),
    }),
    compile(p, { a }, ctx) {
      const field = a.resolve(p.path, `${a.side}Path`);
      checkLabelKey(map, p.key, ctx);
      if (map === "labels" && a.side === "spoke" && p.serialization === "JSON") {
        ctx.error(
          "invalid-parameter",
          "fromLabel.serialization JSON is not allowed (label values are plain strings)",
        );
      }
      a.claim(field, true);
      const meta = { map, key: p.key, serialization: p.serialization };
      const stash = a.side === "hub" || p.reverse;
      const restore = a.side === "spoke" || p.reverse;
      return {
        aPaths: [p.path],
        bPaths: [],
        lossless: { aToB: stash, bToA: restore },
        aToB: stash ? { op: "stash", from: field.segments, ...meta } : { op: "strip", ...meta },
        bToA: restore ? { op: "restore", to: field.segments, ...meta } : { op: "strip", ...meta },
      };
    },
    ops: { stash: linkStash, restore: linkRestore, strip: linkStrip },
  });
}

/**
 * Removes a metadata key and prunes an emptied map, but never `metadata` itself: the reference
 * also drops an emptied `metadata`, after which its webhook re-inserts the *original* metadata,
 * stash included (docs/design/engine.md#empty-metadata). Keeping `metadata: {}` avoids that leak.
 */
function removeMetadataKey(output: JsonObject, map: MetadataMap, key: string): void {
  deletePath(output, ["metadata", map, key]);
  const m = getPath(output, ["metadata", map]);
  if (isJsonObject(m) && Object.keys(m).length === 0) deletePath(output, ["metadata", map]);
}

function linkStash(...[op]: Parameters<OpLinker>) {
  const from = op.from as string[];
  const map = op.map as MetadataMap;
  const key = op.key as string;
  const asString = op.serialization === "String";
  const dest = ["metadata", map, key];
  return (input: JsonObject, output: JsonObject) => {
    const v = getPath(input, from);
    if (v === ABSENT) return;
    let s: string;
    if (asString) {
      if (typeof v !== "string") {
        throw new ConversionError(
          `${from.join(".")} is a ${typeName(v)}; serialization String needs a string`,
        );
      }
      s = v;
    } else {
      s = goJSON(v);
    }
    if (map === "labels") {
      const reason = qualifiedNameError(key) ?? labelValueError(s);
      if (reason !== undefined) {
        throw new ConversionError(`cannot stash ${from.join(".")} as a label: ${reason}`);
      }
    }
    setPath(output, dest, s);
  };
}

function linkRestore(...[op]: Parameters<OpLinker>) {
  const to = op.to as string[];
  const map = op.map as MetadataMap;
  const key = op.key as string;
  const asString = op.serialization === "String";
  const source = ["metadata", map, key];
  return (input: JsonObject, output: JsonObject) => {
    const v = getPath(input, source);
    if (v === ABSENT) return;
    if (typeof v !== "string") {
      throw new ConversionError(
        `metadata.${map}[${JSON.stringify(key)}] is a ${typeName(v)}, not a string`,
      );
    }
    let value: JsonValue;
    if (asString) {
      value = v;
    } else {
      try {
        // Exact: an int64 stashed as digits comes back as the same digits; a number beyond the
        // double range (`1e400`) is an error here, never ±Infinity written as null.
        value = parseJson(v);
      } catch (e) {
        throw new ConversionError(
          `cannot restore ${to.join(".")}: metadata.${map}[${JSON.stringify(key)}] is not ` +
            `valid JSON: ${(e as Error).message}`,
        );
      }
    }
    setPath(output, to, value);
    removeMetadataKey(output, map, key);
  };
}

function linkStrip(...[op]: Parameters<OpLinker>) {
  const map = op.map as MetadataMap;
  const key = op.key as string;
  return (_input: JsonObject, output: JsonObject) => removeMetadataKey(output, map, key);
}

export const [toAnnotation, fromAnnotation] = stashPair(
  ["ToAnnotation", "FromAnnotation"],
  "annotations",
);
export const [toLabel, fromLabel] = stashPair(["ToLabel", "FromLabel"], "labels");
