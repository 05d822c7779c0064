/**
 * Kubernetes quantities and Go durations: parsing with exact integer
 * arithmetic and canonical formatting, as `resource.Quantity` and `time.Duration` do.
 */
import { INT64_MAX, INT64_MIN } from "./int64.ts";

/** Why `resource.ParseQuantity` refuses a string: the names of its three errors. */
export type QuantityError = "format" | "numeric" | "suffix";

/**
 * A quantity's exact value, `unscaled × 10^exp`, as Kubernetes holds it after parsing: rounded up
 * (away from zero) to a whole number of nano-units, and binary-suffixed values capped at the
 * int64 maximum, as `resource.ParseQuantity` does.
 */
export interface QuantityValue {
  unscaled: bigint;
  exp: number;
}

function isDigit(c: string): boolean {
  return c >= "0" && c <= "9";
}
const SUFFIX_CHARS = "eEinumkKMGTP";
const INT64_TEXT = /^[+-]?[0-9]+$/;

/** Go's int32 conversion (two's complement wrap), which Kubernetes applies to exponents. */
function int32(n: number | bigint): number {
  return Number(BigInt.asIntN(32, BigInt(n)));
}

interface QuantityParts {
  positive: boolean;
  value: string;
  num: string;
  denom: string;
  suffix: string;
}

/** Kubernetes' split of a quantity string into sign, digits and suffix. */
function splitQuantity(str: string): QuantityParts | "format" {
  const parts: QuantityParts = { positive: true, value: "", num: "", denom: "", suffix: "" };
  const end = str.length;
  let pos = 0;
  if (str[0] === "-" || str[0] === "+") {
    parts.positive = str[0] === "+";
    pos++;
  }
  while (pos < end && str[pos] === "0") pos++; // leading zeros
  if (pos >= end) return { ...parts, value: "0", num: "0" };
  let i = pos;
  while (i < end && isDigit(str[i])) i++;
  parts.num = str.slice(pos, i);
  if (i >= end) return { ...parts, value: str };
  pos = i;
  if (parts.num === "") parts.num = "0";
  if (str[pos] === ".") {
    pos++;
    i = pos;
    while (i < end && isDigit(str[i])) i++;
    parts.denom = str.slice(pos, i);
    if (i >= end) return { ...parts, value: str };
    pos = i;
  }
  parts.value = str.slice(0, pos);
  const suffixStart = pos;
  while (pos < end && SUFFIX_CHARS.includes(str[pos])) pos++;
  if (pos < end && (str[pos] === "-" || str[pos] === "+")) pos++;
  while (pos < end && isDigit(str[pos])) pos++;
  if (pos < end) return "format";
  parts.suffix = str.slice(suffixStart);
  return parts;
}

const DECIMAL_SUFFIX: Record<string, number> = {
  "": 0,
  n: -9,
  u: -6,
  m: -3,
  k: 3,
  M: 6,
  G: 9,
  T: 12,
  P: 15,
  E: 18,
};
const BINARY_SUFFIX: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };

type Format = "decimal" | "binary" | "exponent";

/** The suffix as base, exponent and format; undefined when Kubernetes does not know it. */
function interpretSuffix(suffix: string): { exponent: number; format: Format } | undefined {
  if (Object.hasOwn(DECIMAL_SUFFIX, suffix)) {
    return { exponent: DECIMAL_SUFFIX[suffix], format: "decimal" };
  }
  if (Object.hasOwn(BINARY_SUFFIX, suffix)) {
    return { exponent: BINARY_SUFFIX[suffix], format: "binary" };
  }
  if (suffix.length > 1 && (suffix[0] === "e" || suffix[0] === "E")) {
    // strconv.ParseInt(…, 10, 64), then a conversion to int32 that wraps.
    const text = suffix.slice(1);
    if (!INT64_TEXT.test(text)) return undefined;
    const n = BigInt(text);
    if (n < INT64_MIN || n > INT64_MAX) return undefined;
    return { exponent: int32(n), format: "exponent" };
  }
  return undefined;
}

const POW10: readonly bigint[] = Array.from({ length: 41 }, (_, i) => 10n ** BigInt(i));

/** 10^n as a bigint (n ≥ 0), from a table for the common exponents. */
function pow10(n: number): bigint {
  return n < POW10.length ? POW10[n] : 10n ** BigInt(n);
}

function digitCount(n: bigint): number {
  return (n < 0n ? -n : n).toString().length;
}

/**
 * inf.Dec's SetString of the number part: its significant digits (no leading zeros; "" is zero),
 * the count of digits after the point, and the sign. Undefined without a digit.
 */
function decimalOf(
  value: string,
): { negative: boolean; digits: string; scale: number } | undefined {
  if (!/[0-9]/.test(value)) return undefined;
  const negative = value[0] === "-";
  const body = value[0] === "-" || value[0] === "+" ? value.slice(1) : value;
  const dot = body.indexOf(".");
  const all = dot < 0 ? body : body.slice(0, dot) + body.slice(dot + 1);
  const digits = all.replace(/^0+/, "");
  return { negative, digits, scale: dot < 0 ? 0 : body.length - dot - 1 };
}

/** Beyond 10^LARGE no int64 milli-value is near: such values keep only their first digits. */
const LARGE = 40;

/** Kubernetes `resource.ParseQuantity`: the exact value, or the error it returns. */
export function parseQuantity(str: string): QuantityValue | QuantityError {
  if (str === "") return "format";
  if (str === "0") return { unscaled: 0n, exp: 0 };
  const parts = splitQuantity(str);
  if (parts === "format") return parts;
  const { positive, value, num, denom, suffix } = parts;
  const meaning = interpretSuffix(suffix);
  if (meaning === undefined) return "suffix";
  const { exponent, format } = meaning;
  // The int64 fast path, taken when the digits are few enough.
  let precision: number;
  let scale = 0;
  let mantissa = 1n;
  if (format === "binary") {
    if (denom.length === 0) {
      mantissa = 1n << BigInt(exponent);
      precision = 15 - num.length - (exponent * 3) / 10 - 1;
    } else {
      precision = -1;
    }
  } else {
    scale = exponent;
    precision = 18 - (num.length + denom.length);
  }
  if (precision >= 0) {
    scale = int32(scale - denom.length);
    if (scale >= -9) {
      const result = BigInt(num + denom) * mantissa;
      if (result <= INT64_MAX) return { unscaled: positive ? result : -result, exp: scale };
    }
  }
  // The inf.Dec path, on the digit string: linear in its length. (Kubernetes computes
  // 10^(scale - 9) to round, which does not finish for exponents near the int32 limits.)
  const dec = decimalOf(value);
  if (dec === undefined) return "numeric";
  const { negative, digits } = dec;
  if (digits === "") return { unscaled: 0n, exp: 0 };
  const sign = (n: bigint) => (negative ? -n : n);
  // value = digits × 10^-decScale (× 2^exponent when binary)
  const decScale = format === "binary" ? dec.scale : int32(dec.scale + int32(-exponent));
  const intLen = digits.length - decScale; // digits before the point
  if (format === "binary") {
    // Kubernetes caps binary-suffixed values at the int64 maximum.
    if (intLen > LARGE) return { unscaled: sign(INT64_MAX), exp: 0 };
    // Below a nano-unit even after × 2^60 (< 10^19): rounded up to one.
    if (intLen + 19 < -9) return { unscaled: sign(1n), exp: -9 };
    // Exact (the whole digit string: superlinear only for absurdly long binary quantities).
    let n = BigInt(digits) << BigInt(exponent);
    let s = decScale;
    if (s > 9) {
      const unit = pow10(s - 9);
      n = n / unit + (n % unit === 0n ? 0n : 1n);
      s = 9;
    }
    if (n > INT64_MAX * pow10(s)) return { unscaled: sign(INT64_MAX), exp: 0 };
    return { unscaled: sign(n), exp: -s };
  }
  if (intLen > LARGE) {
    // Far beyond any int64 milli-value: the first digits keep the magnitude.
    const kept = Math.min(digits.length, LARGE);
    return { unscaled: sign(BigInt(digits.slice(0, kept))), exp: digits.length - kept - decScale };
  }
  if (decScale <= 9) return { unscaled: sign(BigInt(digits)), exp: -decScale };
  // Rounded up (away from zero) to a whole number of nano-units.
  const keep = digits.length - (decScale - 9);
  if (keep <= 0) return { unscaled: sign(1n), exp: -9 };
  const rest = /[1-9]/.test(digits.slice(keep)) ? 1n : 0n;
  return { unscaled: sign(BigInt(digits.slice(0, keep)) + rest), exp: -9 };
}

/**
 * A quantity's milli-value, rounded away from zero; "range" when it does not fit an int64
 * (Kubernetes' `MilliValue` overflows silently there).
 */
export function quantityMillis(q: QuantityValue): bigint | "range" {
  const { unscaled, exp } = q;
  if (unscaled === 0n) return 0n;
  const shift = exp + 3;
  let millis: bigint;
  if (shift >= 0) {
    if (shift > 20 || digitCount(unscaled) + shift > 20) return "range";
    millis = unscaled * pow10(shift);
  } else if (-shift > 20 && -shift > digitCount(unscaled) + 1) {
    millis = unscaled < 0n ? -1n : 1n;
  } else {
    const unit = pow10(-shift);
    millis = unscaled / unit; // toward zero
    if (unscaled % unit !== 0n) millis += unscaled < 0n ? -1n : 1n;
  }
  return millis >= INT64_MIN && millis <= INT64_MAX ? millis : "range";
}

/** A quantity string's milli-value; undefined when invalid or beyond int64. */
export function quantityToMillis(text: string): bigint | undefined {
  const q = parseQuantity(text);
  if (typeof q === "string") return undefined;
  const millis = quantityMillis(q);
  return millis === "range" ? undefined : millis;
}

const SI_SUFFIX: Record<number, string> = {
  [-3]: "m",
  0: "",
  3: "k",
  6: "M",
  9: "G",
  12: "T",
  15: "P",
  18: "E",
};

/** Canonical decimal-SI spelling of a milli-value (`500m`, `1`, `2k`); never binary suffixes. */
export function formatMillis(millis: bigint): string {
  if (millis === 0n) return "0";
  const negative = millis < 0n;
  let mantissa = negative ? -millis : millis;
  let exp = -3;
  while (mantissa % 10n === 0n) {
    mantissa /= 10n;
    exp++;
  }
  const down = ((exp % 3) + 3) % 3;
  mantissa *= pow10(down);
  exp -= down;
  if (exp > 18) {
    mantissa *= pow10(exp - 18);
    exp = 18;
  }
  return (negative ? "-" : "") + mantissa.toString() + SI_SUFFIX[exp];
}

const NS_PER_UNIT: Record<string, number> = {
  ns: 1,
  us: 1e3,
  "\u00b5s": 1e3,
  "\u03bcs": 1e3,
  ms: 1e6,
  s: 1e9,
  m: 60e9,
  h: 3600e9,
};
const DURATION_PART = /(\d*)(?:\.(\d*))?(ns|us|\u00b5s|\u03bcs|ms|s|m|h)/y;

/** Go `time.ParseDuration` in nanoseconds; undefined when invalid or out of int64 range. */
export function parseGoDuration(text: string): bigint | undefined {
  let s = text;
  let negative = false;
  if (s.startsWith("-") || s.startsWith("+")) {
    negative = s[0] === "-";
    s = s.slice(1);
  }
  if (s === "0") return 0n;
  if (s === "") return undefined;
  let total = 0n;
  let at = 0;
  while (at < s.length) {
    DURATION_PART.lastIndex = at;
    const m = DURATION_PART.exec(s);
    if (m === null) return undefined;
    const [whole, int, frac = "", unit] = m;
    if (int === "" && frac === "") return undefined;
    const perUnit = NS_PER_UNIT[unit];
    let part = BigInt(int === "" ? "0" : int) * BigInt(perUnit);
    if (frac !== "") {
      // Go computes the fraction in float64 and truncates, as here.
      part += BigInt(Math.trunc(Number(frac) * (perUnit / Math.pow(10, frac.length))));
    }
    total += part;
    if (total > INT64_MAX + (negative ? 1n : 0n)) return undefined;
    at += whole.length;
  }
  return negative ? -total : total;
}

/** Go `Duration.String` for a whole number of seconds (`300` → `5m0s`). */
export function formatGoSeconds(seconds: bigint): string {
  if (seconds === 0n) return "0s";
  const negative = seconds < 0n;
  let s = negative ? -seconds : seconds;
  const h = s / 3600n;
  s %= 3600n;
  const m = s / 60n;
  s %= 60n;
  let out: string;
  if (h > 0n) out = `${h}h${m}m${s}s`;
  else if (m > 0n) out = `${m}m${s}s`;
  else out = `${s}s`;
  return (negative ? "-" : "") + out;
}

/** Whether whole seconds fit Go's int64 nanoseconds (the reference wraps silently; we error). */
export function secondsFitDuration(seconds: bigint): boolean {
  const ns = seconds * 1_000_000_000n;
  return ns <= INT64_MAX && ns >= -INT64_MAX - 1n;
}
