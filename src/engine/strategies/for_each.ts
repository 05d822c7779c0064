/**
 * ForEach: applies a nested rule list to every element of an array; the
 * nested list is its own scope over the two item schemas. Nesting is limited to two levels.
 */
import { isJsonObject } from "../../lib/json.ts";
import { MAX_FOREACH_DEPTH } from "../limits.ts";
import { spend } from "../request_budget.ts";
import { classify, itemSchema } from "../schema.ts";
import type { EngineRule, OpFn, OpLinker, StrategyDefinition } from "../strategy.ts";
import type { JsonObject, JsonValue, OpData } from "../types.ts";
import { ABSENT, ConversionError, getPath, setPath, typeName } from "../value.ts";

interface ForEachParams {
  hubItemsPath: string;
  spokeItemsPath: string;
  rules: EngineRule[];
}

const LOSSY = { hubToSpoke: false, spokeToHub: false };

export const forEach: StrategyDefinition<ForEachParams> = {
  name: "ForEach",
  translate: (p) => ({
    hubItemsPath: p.path("hubItemsPath"),
    spokeItemsPath: p.path("spokeItemsPath"),
    rules: p.rules("rules"),
  }),
  compile({ hubItemsPath, spokeItemsPath, rules }, ctx) {
    const declared = { hubPaths: [hubItemsPath], spokePaths: [spokeItemsPath] };
    const hub = ctx.resolveHub(hubItemsPath, "hubItemsPath");
    const spoke = ctx.resolveSpoke(spokeItemsPath, "spokeItemsPath");
    ctx.claimHub(hub);
    ctx.claimSpoke(spoke);
    if (ctx.depth >= MAX_FOREACH_DEPTH) {
      ctx.error(
        "foreach-depth",
        `ForEach nesting depth exceeds the supported maximum of ${MAX_FOREACH_DEPTH}`,
        hubItemsPath,
      );
      return { ...declared, lossless: LOSSY };
    }
    if (hub.node === undefined || spoke.node === undefined) return { ...declared, lossless: LOSSY };
    const hubItems = itemSchema(hub.node);
    const spokeItems = itemSchema(spoke.node);
    if (hubItems === undefined || spokeItems === undefined) {
      const bad = hubItems === undefined
        ? `hubItemsPath ${hubItemsPath}`
        : `spokeItemsPath ${spokeItemsPath}`;
      const node = hubItems === undefined ? hub.node : spoke.node;
      ctx.error(
        "foreach-shape",
        `${bad} must be an array with a single item schema (it is ${classify(node).kind})`,
        hubItemsPath,
      );
      return { ...declared, lossless: LOSSY };
    }
    const nested = ctx.compileNested(rules, hubItems, spokeItems, hubItemsPath, spokeItemsPath);
    return {
      ...declared,
      lossless: nested.lossless,
      hubToSpoke: { op: "forEach", from: hub.segments, to: spoke.segments, ops: nested.hubToSpoke },
      spokeToHub: { op: "forEach", from: spoke.segments, to: hub.segments, ops: nested.spokeToHub },
    };
  },
  ops: { forEach: linkForEach },
};

function linkForEach(...[op, link]: Parameters<OpLinker>): OpFn {
  const from = op.from as string[];
  const to = op.to as string[];
  const ops = link(op.ops as OpData[]);
  const where = (segs: string[]) => segs.join(".");
  return (input, output) => {
    const source = getPath(input, from);
    if (source === ABSENT) return;
    if (!Array.isArray(source)) {
      throw new ConversionError(`forEach: ${where(from)} is a ${typeName(source)}, not an array`);
    }
    const existing = getPath(input, to);
    if (existing !== ABSENT) {
      if (!Array.isArray(existing)) {
        throw new ConversionError(`forEach: ${where(to)} is a ${typeName(existing)}, not an array`);
      }
      if (existing.length !== source.length) {
        throw new ConversionError(
          `forEach: ${where(from)} has ${source.length} elements but ${
            where(to)
          } has ${existing.length}`,
        );
      }
    }
    const result: JsonValue[] = new Array(source.length);
    for (let i = 0; i < source.length; i++) {
      spend(1); // the request budget, inside the object
      const element = source[i];
      if (!isJsonObject(element)) {
        throw new ConversionError(
          `forEach: ${where(from)}[${i}] is a ${typeName(element)}, not a map`,
        );
      }
      const out: JsonObject = {};
      try {
        for (let j = 0; j < ops.length; j++) ops[j](element, out);
      } catch (e) {
        if (e instanceof ConversionError) {
          throw new ConversionError(`${where(from)}[${i}]: ${e.message}`);
        }
        throw e;
      }
      result[i] = out;
    }
    setPath(output, to, result);
  };
}
