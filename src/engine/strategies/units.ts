/**
 * Quantity / Duration: a Kubernetes quantity or Go duration string on one
 * side is an integer on the other (milli-units for Quantity, whole seconds for Duration). Parsing
 * the string loses nothing; formatting canonicalises (`"0.5"` comes back as `"500m"`), which is
 * the declared loss of the integer→string direction.
 */
import { classify } from "../schema.ts";
import type { OpLinker, StrategyDefinition } from "../strategy.ts";
import type { JsonObject } from "../types.ts";
import {
  formatGoSeconds,
  formatMillis,
  parseGoDuration,
  quantityToMillis,
  secondsFitDuration,
} from "../units.ts";
import { ABSENT, ConversionError, getPath, setPath, typeName } from "../value.ts";

interface UnitParams {
  hubPath: string;
  spokePath: string;
}

type Unit = "quantity" | "duration";

function unitStrategy(name: "Quantity" | "Duration", unit: Unit): StrategyDefinition<UnitParams> {
  return {
    name,
    translate: (p) => ({ hubPath: p.path("hubPath"), spokePath: p.path("spokePath") }),
    compile(p, ctx) {
      const hub = ctx.resolveHub(p.hubPath, "hubPath");
      const spoke = ctx.resolveSpoke(p.spokePath, "spokePath");
      ctx.claimHub(hub);
      ctx.claimSpoke(spoke);
      const declared = { hubPaths: [p.hubPath], spokePaths: [p.spokePath] };
      if (hub.node === undefined || spoke.node === undefined) {
        return { ...declared, lossless: { hubToSpoke: false, spokeToHub: false } };
      }
      const hubKind = classify(hub.node).kind;
      const spokeKind = classify(spoke.node).kind;
      const hubIsString = hubKind === "string" && spokeKind === "integer";
      if (!hubIsString && !(hubKind === "integer" && spokeKind === "string")) {
        ctx.error(
          "type-mismatch",
          `${name} needs one string side and one integer side (hub ${p.hubPath} is ${hubKind}, spoke ${p.spokePath} is ${spokeKind})`,
          p.hubPath,
        );
        return { ...declared, lossless: { hubToSpoke: false, spokeToHub: false } };
      }
      const parse = (from: string[], to: string[]) => ({ op: "parseUnit", unit, from, to });
      const format = (from: string[], to: string[]) => ({ op: "formatUnit", unit, from, to });
      return {
        ...declared,
        lossless: { hubToSpoke: hubIsString, spokeToHub: !hubIsString },
        hubToSpoke: hubIsString
          ? parse(hub.segments, spoke.segments)
          : format(hub.segments, spoke.segments),
        spokeToHub: hubIsString
          ? format(spoke.segments, hub.segments)
          : parse(spoke.segments, hub.segments),
      };
    },
    ops: { parseUnit: linkParse, formatUnit: linkFormat },
  };
}

export const quantity = unitStrategy("Quantity", "quantity");
export const duration = unitStrategy("Duration", "duration");

function linkParse(...[op]: Parameters<OpLinker>) {
  const from = op.from as string[];
  const to = op.to as string[];
  const unit = op.unit as Unit;
  const what = from.join(".");
  return (input: JsonObject, output: JsonObject) => {
    const v = getPath(input, from);
    if (v === ABSENT) return;
    if (typeof v !== "string") {
      throw new ConversionError(`${what} is a ${typeName(v)}, not a string`);
    }
    if (unit === "quantity") {
      const millis = quantityToMillis(v);
      if (millis === undefined) {
        throw new ConversionError(`${what}: ${JSON.stringify(v)} is not a Kubernetes quantity`);
      }
      setPath(output, to, Number(millis));
      return;
    }
    const ns = parseGoDuration(v);
    if (ns === undefined) {
      throw new ConversionError(`${what}: ${JSON.stringify(v)} is not a Go duration`);
    }
    if (ns % 1_000_000_000n !== 0n) {
      throw new ConversionError(`${what}: ${JSON.stringify(v)} is not a whole number of seconds`);
    }
    setPath(output, to, Number(ns / 1_000_000_000n));
  };
}

function linkFormat(...[op]: Parameters<OpLinker>) {
  const from = op.from as string[];
  const to = op.to as string[];
  const unit = op.unit as Unit;
  const what = from.join(".");
  return (input: JsonObject, output: JsonObject) => {
    const v = getPath(input, from);
    if (v === ABSENT) return;
    if (typeof v !== "number" || !Number.isFinite(v)) {
      throw new ConversionError(`${what} is a ${typeName(v)}, not a number`);
    }
    const whole = BigInt(Math.trunc(v));
    if (unit === "quantity") {
      setPath(output, to, formatMillis(whole));
      return;
    }
    if (!secondsFitDuration(whole)) {
      throw new ConversionError(`${what}: ${v} seconds does not fit a Go duration`);
    }
    setPath(output, to, formatGoSeconds(whole));
  };
}
