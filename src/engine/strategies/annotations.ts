/**
 * ToAnnotation / ToLabel / FromAnnotation / FromLabel (engine.md §6.8, §6.9): a field that
 * exists on one side only is stashed in the other side's metadata and restored on the way back.
 */
import { isJsonObject } from "../../lib/json.ts";
import { goJSON, labelValueError, qualifiedNameError } from "../go.ts";
import type {
  OpLinker,
  ParamReader,
  RuleContext,
  RuleOutcome,
  StrategyDefinition,
} from "../strategy.ts";
import type { JsonObject, JsonValue } from "../types.ts";
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

function reader(pathField: string, reverseField: string, dflt: Serialization) {
  return (p: ParamReader): StashParams => ({
    path: p.path(pathField),
    key: p.path("key"),
    // FromLabel's JSON is kept here so compile can name it (invalid-parameter).
    serialization: p.choice("serialization", ["JSON", "String"] as const, dflt),
    reverse: p.optBool(reverseField),
  });
}

function checkLabelKey(map: MetadataMap, key: string, ctx: RuleContext): void {
  if (map !== "labels") return;
  const reason = qualifiedNameError(key);
  if (reason !== undefined) ctx.error("invalid-parameter", reason);
}

function toMetadata(
  name: "ToAnnotation" | "ToLabel",
  map: MetadataMap,
): StrategyDefinition<StashParams> {
  return {
    name,
    translate: reader("hubPath", "restoreOnReverse", "JSON"),
    compile(p, ctx): RuleOutcome {
      const hub = ctx.resolveHub(p.path, "hubPath");
      checkLabelKey(map, p.key, ctx);
      ctx.claimHub(hub, true);
      const meta = { map, key: p.key, serialization: p.serialization };
      return {
        hubPaths: [p.path],
        spokePaths: [],
        lossless: { hubToSpoke: true, spokeToHub: p.reverse },
        hubToSpoke: { op: "stash", from: hub.segments, ...meta },
        spokeToHub: p.reverse
          ? { op: "restore", to: hub.segments, ...meta }
          : { op: "strip", ...meta },
      };
    },
    ops: { stash: linkStash, restore: linkRestore, strip: linkStrip },
  };
}

function fromMetadata(
  name: "FromAnnotation" | "FromLabel",
  map: MetadataMap,
): StrategyDefinition<StashParams> {
  return {
    name,
    translate: reader("spokePath", "stashOnReverse", map === "labels" ? "String" : "JSON"),
    compile(p, ctx): RuleOutcome {
      const spoke = ctx.resolveSpoke(p.path, "spokePath");
      checkLabelKey(map, p.key, ctx);
      if (map === "labels" && p.serialization === "JSON") {
        ctx.error(
          "invalid-parameter",
          "fromLabel.serialization JSON is not allowed (label values are plain strings)",
        );
      }
      ctx.claimSpoke(spoke, true);
      const meta = { map, key: p.key, serialization: p.serialization };
      return {
        hubPaths: [],
        spokePaths: [p.path],
        lossless: { hubToSpoke: true, spokeToHub: p.reverse },
        hubToSpoke: { op: "restore", to: spoke.segments, ...meta },
        spokeToHub: p.reverse
          ? { op: "stash", from: spoke.segments, ...meta }
          : { op: "strip", ...meta },
      };
    },
    ops: {},
  };
}

export const toAnnotation = toMetadata("ToAnnotation", "annotations");
export const toLabel = toMetadata("ToLabel", "labels");
export const fromAnnotation = fromMetadata("FromAnnotation", "annotations");
export const fromLabel = fromMetadata("FromLabel", "labels");

/**
 * Removes a metadata key and prunes an emptied map, but never `metadata` itself: the reference
 * also drops an emptied `metadata`, after which its webhook re-inserts the *original* metadata,
 * stash included (engine.md §8 quirk 15). Keeping `metadata: {}` avoids that leak.
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
        value = JSON.parse(v);
      } catch (e) {
        throw new ConversionError(
          `metadata.${map}[${JSON.stringify(key)}] is not valid JSON: ${(e as Error).message}`,
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
