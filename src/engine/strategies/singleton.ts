/**
 * SingletonArrayToObject / ObjectToSingletonArray (engine.md §6.4, §6.5): a one-element array on
 * one side is its element on the other.
 */
import type { OpLinker, StrategyDefinition } from "../strategy.ts";
import type { JsonObject, SchemaNode } from "../types.ts";
import { ABSENT, deepCopy, getPath, setPath } from "../value.ts";

interface SingletonParams {
  hubPath: string;
  spokePath: string;
}

const translate: StrategyDefinition<SingletonParams>["translate"] = (p) => ({
  hubPath: p.path("hubPath"),
  spokePath: p.path("spokePath"),
});

/** Taking element 0 loses nothing only if the schema caps the array at one element. */
function atMostOne(node: SchemaNode | undefined): boolean {
  return typeof node?.maxItems === "number" && node.maxItems <= 1;
}

export const singletonArrayToObject: StrategyDefinition<SingletonParams> = {
  name: "SingletonArrayToObject",
  translate,
  compile(p, ctx) {
    const hub = ctx.resolveHub(p.hubPath, "hubPath");
    const spoke = ctx.resolveSpoke(p.spokePath, "spokePath");
    ctx.claimHub(hub);
    ctx.claimSpoke(spoke, true);
    return {
      hubPaths: [p.hubPath],
      spokePaths: [p.spokePath],
      lossless: { hubToSpoke: atMostOne(hub.node), spokeToHub: true },
      hubToSpoke: { op: "firstElement", from: hub.segments, to: spoke.segments },
      spokeToHub: { op: "wrapInArray", from: spoke.segments, to: hub.segments },
    };
  },
  ops: { firstElement: linkFirstElement, wrapInArray: linkWrapInArray },
};

export const objectToSingletonArray: StrategyDefinition<SingletonParams> = {
  name: "ObjectToSingletonArray",
  translate,
  compile(p, ctx) {
    const hub = ctx.resolveHub(p.hubPath, "hubPath");
    const spoke = ctx.resolveSpoke(p.spokePath, "spokePath");
    ctx.claimHub(hub, true);
    ctx.claimSpoke(spoke);
    return {
      hubPaths: [p.hubPath],
      spokePaths: [p.spokePath],
      lossless: { hubToSpoke: true, spokeToHub: atMostOne(spoke.node) },
      hubToSpoke: { op: "wrapInArray", from: hub.segments, to: spoke.segments },
      spokeToHub: { op: "firstElement", from: spoke.segments, to: hub.segments },
    };
  },
  ops: {},
};

/** Non-array or empty array writes nothing. */
function linkFirstElement(...[op]: Parameters<OpLinker>) {
  const from = op.from as string[];
  const to = op.to as string[];
  return (input: JsonObject, output: JsonObject) => {
    const v = getPath(input, from);
    if (Array.isArray(v) && v.length > 0) setPath(output, to, deepCopy(v[0]));
  };
}

/** Any present value (null included) becomes `[value]`. */
function linkWrapInArray(...[op]: Parameters<OpLinker>) {
  const from = op.from as string[];
  const to = op.to as string[];
  return (input: JsonObject, output: JsonObject) => {
    const v = getPath(input, from);
    if (v !== ABSENT) setPath(output, to, [deepCopy(v)]);
  };
}
