/**
 * NumericScale: `hub = spoke × factor`; a result landing on an integer field is
 * rounded half away from zero, which is the declared loss of that direction.
 *
 * Doubles are exact below 2^53, so a result in that range is computed as the reference computes
 * it, in doubles. Above it (an int64 input read as a `bigint`, or a large product) the result is
 * computed exactly on decimals — the factor as written (its shortest decimal digits), the input
 * as its digits — and written as an exact integer when it is one within int64 (a `bigint` above
 * 2^53). An integer field whose result lies beyond int64, and any result beyond the double range,
 * fail the conversion: the value cannot be represented, and JSON cannot hold ±Infinity.
 */
import { INT64_MAX, INT64_MIN, normalizeInteger } from "../../lib/json_exact.ts";
import { roundHalfAwayFromZero } from "../go.ts";
import type { StrategyDefinition } from "../strategy.ts";
import type { JsonValue } from "../types.ts";
import { ConversionError } from "../value.ts";
import { valueLinker, wrongType } from "./_link.ts";
import { bindHubSpoke, type HubSpokePaths, readHubSpoke, unresolved } from "./_paths.ts";

interface NumericScaleParams extends HubSpokePaths {
  factor: number;
}

/** An exact fraction `n / d` (d > 0). */
interface Fraction {
  n: bigint;
  d: bigint;
}

const DECIMAL = /^(-?)(\d+)(?:\.(\d+))?(?:e([+-]?\d+))?$/;

/** The exact value of a finite number's shortest decimal digits, or of a bigint. */
function fractionOf(v: number | bigint): Fraction {
  if (typeof v === "bigint") return { n: v, d: 1n };
  const m = DECIMAL.exec(String(v))!;
  const [, sign, int, frac = "", exp = "0"] = m;
  let n = BigInt(sign + int + frac);
  let d = 1n;
  const shift = Number(exp) - frac.length; // value = n × 10^shift
  if (shift >= 0) n *= 10n ** BigInt(shift);
  else d = 10n ** BigInt(-shift);
  return { n, d };
}

/** `n / d` rounded half away from zero. */
function roundFraction({ n, d }: Fraction): bigint {
  const q = n / d; // truncates towards zero
  const r = n % d;
  const twice = 2n * (r < 0n ? -r : r);
  return twice >= d ? q + (n < 0n ? -1n : 1n) : q;
}

/** The double nearest `n / d` (through 20 significant decimal digits); ±Infinity beyond range. */
function doubleOf({ n, d }: Fraction): number {
  const magnitude = (n < 0n ? -n : n).toString().length - d.toString().length;
  const k = Math.max(0, 21 - magnitude);
  return Number(`${(n * 10n ** BigInt(k)) / d}e-${k}`);
}

const linkScale = valueLinker((op, what) => {
  const factor = op.factor as number;
  const multiply = op.multiply === true;
  const round = op.round === true;
  const f = fractionOf(factor);
  const fail = (detail: string) =>
    new ConversionError(
      `${what}: ${multiply ? "multiplying" : "dividing"} by ${factor} gives ${detail}`,
    );
  return (v): JsonValue => {
    if (typeof v !== "number" && typeof v !== "bigint") throw wrongType(what, v, "a number");
    let double: number | undefined;
    if (typeof v === "number") {
      double = multiply ? v * factor : v / factor;
      if (!Number.isFinite(double)) throw fail("a value beyond the double range");
      if (Math.abs(double) <= Number.MAX_SAFE_INTEGER) {
        return round ? roundHalfAwayFromZero(double) : double;
      }
      // A fraction scaled into a number field stays double arithmetic, as in the reference.
      if (!round && !Number.isInteger(v)) return double;
    }
    // Beyond 2^53: exact decimal arithmetic.
    const x = fractionOf(v);
    const exact: Fraction = multiply
      ? { n: x.n * f.n, d: x.d * f.d }
      : { n: f.n < 0n ? -x.n * f.d : x.n * f.d, d: x.d * (f.n < 0n ? -f.n : f.n) };
    if (round || exact.n % exact.d === 0n) {
      const n = roundFraction(exact);
      if (n >= INT64_MIN && n <= INT64_MAX) return normalizeInteger(n);
      if (round) throw fail(`${n}, beyond the int64 range of an integer field`);
    }
    // A number field: the nearest double.
    if (double !== undefined) return double;
    const nearest = doubleOf(exact);
    if (!Number.isFinite(nearest)) throw fail("a value beyond the double range");
    return nearest;
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
