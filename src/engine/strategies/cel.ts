/**
 * CEL: one expression per direction computes a map of destination values
 * from the whole input object. Always lossy in both directions (nothing can be proved about an
 * arbitrary expression), so `acknowledgeLossy: true` is mandatory (also enforced structurally).
 * The environment, the checker and the per-evaluation cost bound live in cel_env.ts.
 */
import { CelCompileError, CelProgram, type ResultLookup } from "../cel_env.ts";
import type { OpLinker, Resolved, RuleContext, StrategyDefinition } from "../strategy.ts";
import type { JsonObject, OpData } from "../types.ts";
import { ConversionError, setPath } from "../value.ts";

interface CelParams {
  hubPaths: string[];
  spokePaths: string[];
  hubToSpoke: string;
  spokeToHub: string;
}

export const cel: StrategyDefinition<CelParams> = {
  name: "CEL",
  translate: (p) => ({
    hubPaths: p.stringList("hubPaths", false),
    spokePaths: p.stringList("spokePaths", false),
    hubToSpoke: p.optString("hubToSpoke", ""),
    spokeToHub: p.optString("spokeToHub", ""),
  }),
  compile(p, ctx) {
    for (const [param, list] of [["hubPaths", p.hubPaths], ["spokePaths", p.spokePaths]] as const) {
      if (list.length === 0) ctx.error("invalid-parameter", `${param} must list at least one path`);
    }
    const hub = p.hubPaths.map((path) => ctx.resolveHub(path, "hubPaths"));
    const spoke = p.spokePaths.map((path) => ctx.resolveSpoke(path, "spokePaths"));
    for (const r of hub) ctx.claimHub(r);
    for (const r of spoke) ctx.claimSpoke(r);
    return {
      hubPaths: [...p.hubPaths],
      spokePaths: [...p.spokePaths],
      lossless: { hubToSpoke: false, spokeToHub: false },
      hubToSpoke: compileDirection(p.hubToSpoke, "hubToSpoke", spoke, ctx),
      spokeToHub: compileDirection(p.spokeToHub, "spokeToHub", hub, ctx),
    };
  },
  ops: { cel: linkCel },
};

/** Checks one expression; a failure is an error and builds no op for that direction. */
function compileDirection(
  source: string,
  param: string,
  destinations: Resolved[],
  ctx: RuleContext,
): OpData | undefined {
  if (source.trim() === "") {
    ctx.error("invalid-parameter", `${param} must be a non-empty CEL expression`);
    return undefined;
  }
  try {
    CelProgram.compile(source);
  } catch (e) {
    if (!(e instanceof CelCompileError)) throw e;
    ctx.error("invalid-parameter", `${param}: invalid CEL expression: ${e.message}`);
    return undefined;
  }
  const to: ResultLookup[] = destinations.map((r) => ({ segments: r.segments, dotted: r.path }));
  return { op: "cel", expression: source, param, to };
}

/**
 * Evaluates unconditionally (a missing field is an evaluation error; guard with `has()`), then
 * writes each destination found in the result map, as a nested path or as a dotted key.
 */
function linkCel(...[op]: Parameters<OpLinker>) {
  const program = CelProgram.compile(op.expression as string);
  const param = op.param as string;
  const to = op.to as ResultLookup[];
  return (input: JsonObject, output: JsonObject) => {
    let values: ReturnType<CelProgram["evaluate"]>;
    try {
      values = program.evaluate(input, to);
    } catch (e) {
      if (e instanceof ConversionError) throw new ConversionError(`CEL ${param}: ${e.message}`);
      throw e;
    }
    for (let i = 0; i < to.length; i++) {
      const v = values[i];
      if (v !== undefined) setPath(output, to[i].segments, v);
    }
  };
}
