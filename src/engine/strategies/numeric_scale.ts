/**
 * NumericScale: `hub = spoke × factor`; a result landing on an integer field is
 * rounded half away from zero, which is the declared loss of that direction.
 */
import { roundHalfAwayFromZero } from "../go.ts";
import type { StrategyDefinition } from "../strategy.ts";
import { valueLinker, wrongType } from "./_link.ts";
import { bindHubSpoke, type HubSpokePaths, readHubSpoke, unresolved } from "./_paths.ts";

interface NumericScaleParams extends HubSpokePaths {
  factor: number;
}

const linkScale = valueLinker((op, what) => {
  const factor = op.factor as number;
  const multiply = op.multiply === true;
  const round = op.round === true;
  return (v) => {
    if (typeof v !== "number") throw wrongType(what, v, "a number");
    const scaled = multiply ? v * factor : v / factor;
    return round ? roundHalfAwayFromZero(scaled) : scaled;
  };
});

export const numericScale: StrategyDefinition<NumericScaleParams> = {
  name: "NumericScale",
  translate: (p) => ({ ...readHubSpoke(p), factor: p.number("factor") }),
  compile(p, ctx) {
    const { hub, spoke, declared, kinds } = bindHubSpoke(p, ctx);
    if (p.factor === 0) ctx.error("invalid-parameter", "factor must not be 0", p.hubPath);
    if (kinds === undefined) return { ...declared, lossless: unresolved() };
    const hubKind = kinds.hub;
    const spokeKind = kinds.spoke;
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
