/**
 * Quantity / Duration: a Kubernetes quantity or Go duration string on one
 * side is an integer on the other (milli-units for Quantity, whole seconds for Duration). Parsing
 * the string loses nothing; formatting canonicalises (`"0.5"` comes back as `"500m"`), which is
 * the declared loss of the integer→string direction. The integer side is an int64: a milli-value
 * beyond 2^53 is written as a bigint, one beyond int64 (or a fraction) fails the conversion.
 */
import type { StrategyDefinition } from "../strategy.ts";
import { exactInteger, fitsInt64, integerValue } from "../int64.ts";
import { quoteValue } from "../quote.ts";
import {
  formatGoSeconds,
  formatMillis,
  parseGoDuration,
  parseQuantity,
  type QuantityError,
  quantityMillis,
  secondsFitDuration,
} from "../units.ts";
import { ConversionError } from "../value.ts";
import { valueLinker, wrongType } from "./_link.ts";
import { bindHubSpoke, type HubSpokePaths, readHubSpoke, unresolved } from "./_paths.ts";

type UnitParams = HubSpokePaths;

type Unit = "quantity" | "duration";

function unitStrategy(name: "Quantity" | "Duration", unit: Unit): StrategyDefinition<UnitParams> {
  return {
    name,
    translate: readHubSpoke,
    compile(p, ctx) {
      const { hub, spoke, declared, kinds } = bindHubSpoke(p, ctx);
      if (kinds === undefined) return { ...declared, lossless: unresolved() };
      const hubIsString = kinds.hub === "string" && kinds.spoke === "integer";
      if (!hubIsString && !(kinds.hub === "integer" && kinds.spoke === "string")) {
        ctx.error(
          "type-mismatch",
          `${name} needs one string side and one integer side (hub ${p.hubPath} is ${kinds.hub}, spoke ${p.spokePath} is ${kinds.spoke})`,
          p.hubPath,
        );
        return { ...declared, lossless: unresolved() };
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

const linkParse = valueLinker((op, what) => {
  const unit = op.unit as Unit;
  return (v) => {
    if (typeof v !== "string") throw wrongType(what, v, "a string");
    if (unit === "quantity") {
      const q = parseQuantity(v);
      if (typeof q === "string") {
        throw new ConversionError(
          `${what}: ${quoteValue(v)} is not a Kubernetes quantity (${QUANTITY_ERRORS[q]})`,
        );
      }
      const millis = quantityMillis(q);
      if (millis === "range") {
        throw new ConversionError(
          `${what}: the milli-value of ${quoteValue(v)} does not fit an int64`,
        );
      }
      return integerValue(millis);
    }
    const ns = parseGoDuration(v);
    if (ns === undefined) {
      throw new ConversionError(`${what}: ${quoteValue(v)} is not a Go duration`);
    }
    if (ns % 1_000_000_000n !== 0n) {
      throw new ConversionError(`${what}: ${quoteValue(v)} is not a whole number of seconds`);
    }
    return Number(ns / 1_000_000_000n);
  };
});

/** Kubernetes' messages for its three parse errors. */
const QUANTITY_ERRORS: Record<QuantityError, string> = {
  format:
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
  numeric: "unable to parse numeric part of quantity",
  suffix: "unable to parse quantity's suffix",
};

const linkFormat = valueLinker((op, what) => {
  const unit = op.unit as Unit;
  const units = unit === "quantity" ? "milli-units" : "seconds";
  return (v) => {
    if (typeof v !== "number" && typeof v !== "bigint") throw wrongType(what, v, "a number");
    const whole = exactInteger(v);
    if (whole === undefined) {
      throw new ConversionError(`${what}: ${v} is not a whole number of ${units}`);
    }
    if (!fitsInt64(whole)) throw new ConversionError(`${what}: ${v} does not fit an int64`);
    if (unit === "quantity") return formatMillis(whole);
    if (!secondsFitDuration(whole)) {
      throw new ConversionError(`${what}: ${v} seconds does not fit a Go duration`);
    }
    return formatGoSeconds(whole);
  };
});

export const quantity = unitStrategy("Quantity", "quantity");
export const duration = unitStrategy("Duration", "duration");
