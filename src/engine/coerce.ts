/**
 * The scalar coercion table, shared by TypeCoerce, ListJoin/ListSplit and the
 * ScalarToFields/FieldsToScalar captures. Strings are read with Go's ParseFloat grammar; integers
 * are exact (int64, never through a double), docs/limitations.md#parsing-numbers-and-quantities-like-go-and-kubernetes.
 */
import {
  formatPlainNumber,
  type GoFloatLiteral,
  goFloatValue,
  goTrimSpace,
  parseGoBool,
  roundHalfAwayFromZero,
  scanGoFloat,
} from "./go.ts";
import { fitsInt64, integerValue } from "./int64.ts";
import { quoteValue } from "./quote.ts";
import type { JsonValue } from "./types.ts";
import { ConversionError, typeName } from "./value.ts";

export type ScalarKind = "string" | "integer" | "number" | "boolean";
export type FractionPolicy = "Error" | "Truncate" | "Round";

const MAX_SAFE = 9007199254740991;

/** Integers of up to 15 digits: exact as doubles, read by Number() as Go reads them. */
const SHORT_INTEGER = /^[+-]?[0-9]{1,15}$/;
/** Decimals Number() reads exactly as Go's ParseFloat does: no underscores, short. */
const PLAIN_DECIMAL = /^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$/;

/** A trimmed string as a number literal, or the ConversionError saying why it is none. */
function readString(
  t: string,
  what: string,
  v: string,
): Exclude<GoFloatLiteral, { special: number }> {
  const lit = scanGoFloat(t);
  if (lit === undefined) throw new ConversionError(`${what}: ${quoteValue(v)} is not a number`);
  if (lit.special !== undefined) {
    throw new ConversionError(`${what}: ${quoteValue(v)} is not a finite number`);
  }
  return lit;
}

function outOfRange(v: JsonValue, what: string, target: string): ConversionError {
  return new ConversionError(`${what}: ${quoteValue(v)} is out of range for ${target}`);
}

/**
 * The integer a literal denotes under `policy`: "fraction" when it has one under Error, "range"
 * when the result does not fit int64. Exact: no double is involved, and huge exponents are
 * answered from the magnitude without building the number.
 */
export function literalToInt64(
  lit: Exclude<GoFloatLiteral, { special: number }>,
  policy: FractionPolicy,
): bigint | "fraction" | "range" {
  const whole = lit.radix === 10 ? decimalToInteger(lit.digits, lit.exp, policy) : hexToInteger(
    lit.digits,
    lit.exp,
    policy,
  );
  if (typeof whole === "string") return whole;
  const n = lit.negative ? -whole : whole;
  return fitsInt64(n) ? n : "range";
}

/**
 * `digits × 10^exp` (non-negative) to an integer under `policy`, on the digit string: linear in
 * its length (a BigInt of a long decimal string costs more than that).
 */
function decimalToInteger(digits: string, exp: number, policy: FractionPolicy) {
  if (digits === "") return 0n;
  const intLen = digits.length + exp; // digits before the point
  if (intLen > 19) return "range"; // int64 magnitudes have at most 19 digits
  if (exp >= 0) return BigInt(digits) * 10n ** BigInt(exp);
  const whole = intLen > 0 ? BigInt(digits.slice(0, intLen)) : 0n;
  // The fraction: its first digit decides the rounding (digits has no leading zeros, so a
  // fraction with implicit leading zeros starts with 0).
  const fraction = intLen > 0 ? digits.slice(intLen) : digits;
  if (!/[1-9]/.test(fraction)) return whole;
  if (policy === "Error") return "fraction";
  const first = intLen >= 0 ? fraction[0] : "0";
  return policy === "Round" && first >= "5" ? whole + 1n : whole;
}

/** `digits (hex) × 2^exp` to an integer under `policy`. */
function hexToInteger(digits: string, exp: number, policy: FractionPolicy) {
  if (digits === "") return 0n;
  const m = BigInt("0x" + digits);
  const bits = m.toString(2).length;
  if (bits + exp > 64) return "range"; // int64 magnitudes have at most 64 bits
  if (exp >= 0) return m << BigInt(exp);
  if (-exp > bits + 1) {
    // Below a quarter: no whole part, and below a half.
    return policy === "Error" ? "fraction" : 0n;
  }
  const k = BigInt(-exp);
  const whole = m >> k;
  const rest = m - (whole << k);
  if (rest === 0n) return whole;
  if (policy === "Error") return "fraction";
  return policy === "Round" && 2n * rest >= 1n << k ? whole + 1n : whole;
}

/**
 * A string to a number field: ParseFloat's double, except that a whole value in int64 range
 * beyond 2^53 is the exact integer (a bigint, written with its digits; the double's shortest
 * digits would name another integer).
 */
function stringToNumber(v: string, what: string): number | bigint {
  const t = goTrimSpace(v);
  if (t.length <= 30 && PLAIN_DECIMAL.test(t)) {
    // Go's exponent cap and long-literal path cannot matter at this length.
    const f = Number(t);
    if (Math.abs(f) <= MAX_SAFE) return f;
  }
  const lit = readString(t, what, v);
  const f = goFloatValue(lit);
  if (!Number.isFinite(f)) throw outOfRange(v, what, "a double");
  if (Math.abs(f) > MAX_SAFE && Math.abs(f) <= 2 ** 63) {
    const n = literalToInt64(lit, "Error");
    if (typeof n === "bigint") return n;
  }
  return f;
}

function toInteger(v: JsonValue, policy: FractionPolicy, what: string): number | bigint {
  switch (typeof v) {
    case "bigint":
      if (!fitsInt64(v)) throw outOfRange(v, what, "an int64");
      return v;
    case "boolean":
      return v ? 1 : 0;
    case "number": {
      if (!Number.isFinite(v)) throw new ConversionError(`${what}: ${v} is not a finite number`);
      let n = v;
      if (!Number.isInteger(v)) {
        if (policy === "Error") {
          throw new ConversionError(`${what}: ${quoteValue(v)} is not a whole number`);
        }
        n = policy === "Truncate" ? Math.trunc(v) : roundHalfAwayFromZero(v);
      }
      if (Math.abs(n) <= MAX_SAFE) return n === 0 ? 0 : n; // -0 is 0
      // Beyond 2^53 as a bigint: JSON.stringify would print a double's shortest digits
      // (2^60 as 1152921504606847000), which the apiserver reads as another int64.
      const exact = BigInt(n);
      if (!fitsInt64(exact)) throw outOfRange(v, what, "an int64");
      return exact;
    }
    case "string": {
      const t = goTrimSpace(v);
      if (SHORT_INTEGER.test(t)) return Number(t) || 0; // exact as a double; -0 is 0
      const n = literalToInt64(readString(t, what, v), policy);
      if (n === "fraction") {
        throw new ConversionError(`${what}: ${quoteValue(v)} is not a whole number`);
      }
      if (n === "range") throw outOfRange(v, what, "an int64");
      return integerValue(n);
    }
  }
  throw new ConversionError(`${what}: cannot coerce a ${typeName(v)} to a number`);
}

function toNumber(v: JsonValue, what: string): number | bigint {
  switch (typeof v) {
    case "number":
      if (!Number.isFinite(v)) throw new ConversionError(`${what}: ${v} is not a finite number`);
      return v;
    case "bigint":
      return v; // an integer is a number: kept with all its digits
    case "boolean":
      return v ? 1 : 0;
    case "string":
      return stringToNumber(v, what);
  }
  throw new ConversionError(`${what}: cannot coerce a ${typeName(v)} to a number`);
}

/** Converts a value to `kind`; throws ConversionError naming `what` on failure. */
export function coerceScalar(
  v: JsonValue,
  kind: ScalarKind,
  policy: FractionPolicy,
  what: string,
): JsonValue {
  switch (kind) {
    case "string":
      if (typeof v === "string") return v;
      if (typeof v === "number") return formatPlainNumber(v);
      if (typeof v === "bigint") return v.toString();
      if (typeof v === "boolean") return v ? "true" : "false";
      throw new ConversionError(`${what}: cannot coerce a ${typeName(v)} to a string`);
    case "number":
      return toNumber(v, what);
    case "integer":
      return toInteger(v, policy, what);
    case "boolean":
      if (typeof v === "boolean") return v;
      if (typeof v === "string") {
        const b = parseGoBool(v);
        if (b === undefined) {
          throw new ConversionError(`${what}: ${quoteValue(v)} is not a boolean`);
        }
        return b;
      }
      throw new ConversionError(
        `${what}: cannot coerce a ${typeof v === "bigint" ? "number" : typeName(v)} to a boolean`,
      );
  }
}
