/**
 * NumericScale: `hub = spoke × factor`; a result landing on an integer field is
 * rounded half away from zero, which is the declared loss of that direction.
 */
import { roundHalfAwayFromZero } from "../go.ts";
import { classify } from "../schema.ts";
import type { OpLinker, StrategyDefinition } from "../strategy.ts";
import type { JsonObject } from "../types.ts";
import { ABSENT, ConversionError, getPath, setPath, typeName } from "../value.ts";

interface NumericScaleParams {
  hubPath: string;
  spokePath: string;
  factor: number;
}

export const numericScale: StrategyDefinition<NumericScaleParams> = {
  name: "NumericScale",
  translate: (p) => ({
    hubPath: p.path("hubPath"),
    spokePath: p.path("spokePath"),
    factor: p.number("factor"),
  }),
  compile(p, ctx) {
    const hub = ctx.resolveHub(p.hubPath, "hubPath");
    const spoke = ctx.resolveSpoke(p.spokePath, "spokePath");
    ctx.claimHub(hub);
    ctx.claimSpoke(spoke);
    const declared = { hubPaths: [p.hubPath], spokePaths: [p.spokePath] };
    if (p.factor === 0) ctx.error("invalid-parameter", "factor must not be 0", p.hubPath);
    if (hub.node === undefined || spoke.node === undefined) {
      return { ...declared, lossless: { hubToSpoke: false, spokeToHub: false } };
    }
    const hubKind = classify(hub.node).kind;
    const spokeKind = classify(spoke.node).kind;
    for (
      const [side, path, kind] of [["hub", p.hubPath, hubKind], [
        "spoke",
        p.spokePath,
        spokeKind,
      ]] as const
    ) {
      if (kind !== "integer" && kind !== "number") {
        ctx.error(
          "type-mismatch",
          `${side} ${path} is ${kind}; NumericScale needs integer or number`,
          path,
        );
      }
    }
    return {
      ...declared,
      lossless: { hubToSpoke: spokeKind === "number", spokeToHub: hubKind === "number" },
      hubToSpoke: {
        op: "scale",
        from: hub.segments,
        to: spoke.segments,
        multiply: false,
        factor: p.factor,
        round: spokeKind === "integer",
      },
      spokeToHub: {
        op: "scale",
        from: spoke.segments,
        to: hub.segments,
        multiply: true,
        factor: p.factor,
        round: hubKind === "integer",
      },
    };
  },
  ops: { scale: linkScale },
};

function linkScale(...[op]: Parameters<OpLinker>) {
  const from = op.from as string[];
  const to = op.to as string[];
  const factor = op.factor as number;
  const multiply = op.multiply === true;
  const round = op.round === true;
  return (input: JsonObject, output: JsonObject) => {
    const v = getPath(input, from);
    if (v === ABSENT) return;
    if (typeof v !== "number") {
      throw new ConversionError(`${from.join(".")} is a ${typeName(v)}, not a number`);
    }
    const scaled = multiply ? v * factor : v / factor;
    setPath(output, to, round ? roundHalfAwayFromZero(scaled) : scaled);
  };
}
