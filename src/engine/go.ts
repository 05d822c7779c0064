/**
 * Behaviours inherited from Go and Kubernetes libraries that a naive TypeScript
 * port gets wrong: number formatting, Go `encoding/json` output, label validation.
 */
import type { JsonValue } from "./types.ts";

/**
 * Number → string (docs/design/engine.md#number-formatting): whole values below 1e15 as integer
 * digits; everything else as the shortest round-trip digits in plain positional notation, never
 * with an exponent.
 */
export function formatPlainNumber(v: number): string {
  if (Number.isInteger(v) && Math.abs(v) < 1e15) return v === 0 ? "0" : String(v);
  const s = String(v);
  const e = s.indexOf("e");
  if (e < 0) return s;
  const negative = s[0] === "-";
  const mantissa = s.slice(negative ? 1 : 0, e);
  const exp = Number(s.slice(e + 1));
  const dot = mantissa.indexOf(".");
  const digits = dot < 0 ? mantissa : mantissa.slice(0, dot) + mantissa.slice(dot + 1);
  // The decimal point sits after `pointAt` digits.
  const pointAt = (dot < 0 ? mantissa.length : dot) + exp;
  let out: string;
  if (pointAt <= 0) out = "0." + "0".repeat(-pointAt) + digits;
  else if (pointAt >= digits.length) out = digits + "0".repeat(pointAt - digits.length);
  else out = digits.slice(0, pointAt) + "." + digits.slice(pointAt);
  return negative ? "-" + out : out;
}

const JSON_ESCAPES: Record<string, string> = {
  '"': '\\"',
  "\\": "\\\\",
  "\n": "\\n",
  "\r": "\\r",
  "\t": "\\t",
  "\b": "\\b",
  "\f": "\\f",
  "<": "\\u003c",
  ">": "\\u003e",
  "&": "\\u0026",
  "\u2028": "\\u2028",
  "\u2029": "\\u2029",
};

// deno-lint-ignore no-control-regex
const NEEDS_ESCAPE = /["\\\u0000-\u001f<>&\u2028\u2029]/g;

function goQuote(s: string): string {
  return '"' +
    s.replace(
      NEEDS_ESCAPE,
      (c) => JSON_ESCAPES[c] ?? "\\u00" + c.charCodeAt(0).toString(16).padStart(2, "0"),
    ) + '"';
}

/** Byte-wise (UTF-8) string order, as Go sorts map keys. */
export function compareBytes(a: string, b: string): number {
  if (a === b) return 0;
  // UTF-16 order differs from UTF-8 byte order only around surrogates; compare by code point.
  const ia = a[Symbol.iterator]();
  const ib = b[Symbol.iterator]();
  for (;;) {
    const x = ia.next();
    const y = ib.next();
    if (x.done) return y.done ? 0 : -1;
    if (y.done) return 1;
    const cx = x.value.codePointAt(0)!;
    const cy = y.value.codePointAt(0)!;
    if (cx !== cy) return cx < cy ? -1 : 1;
  }
}

/** Go `encoding/json` output — compact, sorted keys, HTML-safe escapes. */
export function goJSON(v: JsonValue): string {
  if (v === null) return "null";
  switch (typeof v) {
    case "string":
      return goQuote(v);
    case "number":
      if (!Number.isFinite(v)) throw new Error(`json: unsupported value: ${v}`);
      return JSON.stringify(v);
    case "bigint":
      return v.toString();
    case "boolean":
      return v ? "true" : "false";
  }
  if (Array.isArray(v)) return "[" + v.map(goJSON).join(",") + "]";
  const keys = Object.keys(v).sort(compareBytes);
  return "{" + keys.map((k) => goQuote(k) + ":" + goJSON(v[k])).join(",") + "}";
}

const LABEL_NAME = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** A qualified name (label key); returns a reason when invalid. */
export function qualifiedNameError(key: string): string | undefined {
  const parts = key.split("/");
  if (parts.length > 2) return `label key ${JSON.stringify(key)} has more than one "/"`;
  const name = parts[parts.length - 1];
  if (parts.length === 2) {
    const prefix = parts[0];
    if (prefix.length === 0 || prefix.length > 253 || !DNS1123_SUBDOMAIN.test(prefix)) {
      return `label key prefix ${JSON.stringify(prefix)} must be a DNS-1123 subdomain`;
    }
  }
  if (name.length === 0 || name.length > 63 || !LABEL_NAME.test(name)) {
    return `label key name ${
      JSON.stringify(name)
    } must be 1-63 alphanumerics, '-', '_' or '.', starting and ending alphanumeric`;
  }
  return undefined;
}

/** A label value; returns a reason when invalid. */
export function labelValueError(value: string): string | undefined {
  if (value === "") return undefined;
  if (value.length > 63 || !LABEL_NAME.test(value)) {
    return `label value ${
      JSON.stringify(value)
    } must be empty or 1-63 alphanumerics, '-', '_' or '.', starting and ending alphanumeric`;
  }
  return undefined;
}

/** Go's `unicode.IsSpace`: what `strings.TrimSpace` removes (U+0085 yes, U+FEFF no). */
function isGoSpace(c: number): boolean {
  if (c <= 0x20) return c === 0x20 || (c >= 0x09 && c <= 0x0d);
  if (c < 0x85) return false;
  if (c === 0x85 || c === 0xa0 || c === 0x1680) return true;
  if (c >= 0x2000 && c <= 0x200a) return true;
  return c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000;
}

/** Go `strings.TrimSpace`. JavaScript's `trim` differs: it keeps U+0085 and removes U+FEFF. */
export function goTrimSpace(s: string): string {
  let start = 0;
  let end = s.length;
  while (start < end && isGoSpace(s.charCodeAt(start))) start++;
  while (end > start && isGoSpace(s.charCodeAt(end - 1))) end--;
  return start === 0 && end === s.length ? s : s.slice(start, end);
}

/**
 * A number as Go's `strconv.ParseFloat` reads it, before rounding to a double: `special` for
 * inf/infinity/nan; otherwise `digits` (the significant digits, no leading zeros; "" is zero) in
 * `radix` 10 or 16, the value being `digits × 10^exp` (radix 10) or `digits × 2^exp` (radix 16).
 * `exp` is the exponent Go computes: it stops reading exponent digits once the exponent reaches
 * 10000, as Go does.
 */
export type GoFloatLiteral =
  | { special: number }
  | { special?: undefined; negative: boolean; radix: 10 | 16; digits: string; exp: number };

function lowerAscii(c: string): string {
  return c >= "A" && c <= "Z" ? String.fromCharCode(c.charCodeAt(0) + 32) : c;
}

function isDigit(c: string | undefined): boolean {
  return c !== undefined && c >= "0" && c <= "9";
}

function isHexLetter(c: string): boolean {
  const l = lowerAscii(c);
  return l >= "a" && l <= "f";
}

/** The specials ParseFloat accepts: a signed inf/infinity, an unsigned nan (ASCII case-blind). */
function special(s: string): number | undefined {
  if (s.length > 9) return undefined;
  let lower = "";
  for (const c of s) lower += lowerAscii(c);
  if (lower === "nan") return NaN;
  const sign = lower[0] === "-" ? -1 : 1;
  const body = lower[0] === "-" || lower[0] === "+" ? lower.slice(1) : lower;
  return body === "inf" || body === "infinity" ? sign * Infinity : undefined;
}

/**
 * Underscores may only separate digits (a base prefix counts as a digit): Go's rule, applied to a
 * literal that contains one.
 */
function underscoresOk(s: string): boolean {
  let i = s[0] === "+" || s[0] === "-" ? 1 : 0;
  // saw: "^" start, "0" a digit or the base prefix, "_" an underscore, "!" anything else.
  let saw = "^";
  let hex = false;
  const p = lowerAscii(s[i + 1] ?? "");
  if (s[i] === "0" && (p === "b" || p === "o" || p === "x")) {
    i += 2;
    saw = "0";
    hex = p === "x";
  }
  for (; i < s.length; i++) {
    const c = s[i];
    if (isDigit(c) || (hex && isHexLetter(c))) {
      saw = "0";
    } else if (c === "_") {
      if (saw !== "0") return false;
      saw = "_";
    } else {
      if (saw === "_") return false;
      saw = "!";
    }
  }
  return saw !== "_";
}

/** Reads `s` with Go `strconv.ParseFloat`'s grammar (no trimming); undefined on a syntax error. */
export function scanGoFloat(s: string): GoFloatLiteral | undefined {
  const sp = special(s);
  if (sp !== undefined) return { special: sp };
  let i = 0;
  let negative = false;
  if (s[0] === "+" || s[0] === "-") {
    negative = s[0] === "-";
    i++;
  }
  let radix: 10 | 16 = 10;
  if (i + 2 < s.length && s[i] === "0" && lowerAscii(s[i + 1]) === "x") {
    radix = 16;
    i += 2;
  }
  let underscores = false;
  let sawDot = false;
  let sawDigits = false;
  let digits = "";
  let dp = 0; // position of the point, in digits, relative to the first significant digit
  for (; i < s.length; i++) {
    const c = s[i];
    if (c === "_") {
      underscores = true;
    } else if (c === ".") {
      if (sawDot) break;
      sawDot = true;
      dp = digits.length;
    } else if (isDigit(c) || (radix === 16 && isHexLetter(c))) {
      sawDigits = true;
      if (c === "0" && digits.length === 0) dp--; // a leading zero
      else digits += c;
    } else {
      break;
    }
  }
  if (!sawDigits) return undefined;
  if (!sawDot) dp = digits.length;
  if (radix === 16) dp *= 4;
  if (i < s.length && lowerAscii(s[i]) === (radix === 16 ? "p" : "e")) {
    i++;
    let sign = 1;
    if (s[i] === "+" || s[i] === "-") {
      sign = s[i] === "-" ? -1 : 1;
      i++;
    }
    if (!isDigit(s[i])) return undefined;
    let e = 0;
    for (; i < s.length && (isDigit(s[i]) || s[i] === "_"); i++) {
      if (s[i] === "_") underscores = true;
      else if (e < 10000) e = e * 10 + (s.charCodeAt(i) - 48);
    }
    dp += e * sign;
  } else if (radix === 16) {
    return undefined; // a hexadecimal float needs its p exponent
  }
  if (i !== s.length) return undefined;
  if (underscores && !underscoresOk(s)) return undefined;
  const exp = dp - (radix === 16 ? 4 : 1) * digits.length;
  return { negative, radix, digits, exp: digits === "" ? 0 : exp };
}

const POW2 = new DataView(new ArrayBuffer(8));

/** 2^k as a double, built from its bits, for -1022 ≤ k ≤ 1023. */
function pow2(k: number): number {
  POW2.setUint16(0, (k + 1023) << 4);
  return POW2.getFloat64(0);
}

/** `m × 2^e` rounded to the nearest double, ties to even; Infinity when it overflows. */
function scaleBinary(m: bigint, e: number): number {
  if (m === 0n) return 0;
  const bits = m.toString(2).length;
  const top = bits - 1 + e; // the exponent of the leading bit
  if (top > 1023) return Infinity;
  const ulp = Math.max(top - 52, -1074); // the exponent of the last bit a double keeps
  const shift = ulp - e;
  let q: bigint;
  if (shift <= 0) {
    q = m << BigInt(-shift);
  } else if (shift > bits + 1) {
    q = 0n; // below half of the smallest step
  } else {
    const s = BigInt(shift);
    q = m >> s;
    const rest = m - (q << s);
    const half = 1n << (s - 1n);
    if (rest > half || (rest === half && (q & 1n) === 1n)) q++;
  }
  // Two steps keep every intermediate a normal double; the product is exact or overflows.
  const n = Number(q);
  return ulp < -1000 ? n * pow2(-1000) * pow2(ulp + 1000) : n * pow2(ulp);
}

/** The double Go's ParseFloat rounds a literal to (±Infinity when out of range). */
export function goFloatValue(lit: GoFloatLiteral): number {
  if (lit.special !== undefined) return lit.special;
  const { negative, radix, digits, exp } = lit;
  if (radix === 10) return Number(`${negative ? "-" : ""}${digits || "0"}e${exp}`);
  const v = digits === "" ? 0 : scaleBinary(BigInt("0x" + digits), exp);
  return negative ? -v : v;
}

/** Go `strconv.ParseFloat(s, 64)` without trimming: the value and Go's error, if any. */
export function goParseFloat(s: string): { value: number; error?: "syntax" | "range" } {
  const lit = scanGoFloat(s);
  if (lit === undefined) return { value: 0, error: "syntax" };
  const value = goFloatValue(lit);
  if (lit.special === undefined && !Number.isFinite(value)) return { value, error: "range" };
  return { value };
}

/**
 * Go `strconv.ParseFloat(strings.TrimSpace(text), 64)`: undefined on a syntax error; inf, nan
 * and out-of-range values come back non-finite (callers reject those).
 */
export function parseGoFloat(text: string): number | undefined {
  const r = goParseFloat(goTrimSpace(text));
  return r.error === "syntax" ? undefined : r.value;
}

const GO_TRUE: ReadonlySet<string> = new Set(["1", "t", "T", "TRUE", "true", "True"]);
const GO_FALSE: ReadonlySet<string> = new Set(["0", "f", "F", "FALSE", "false", "False"]);

/** Go `strconv.ParseBool(strings.TrimSpace(text))`; undefined when not a boolean. */
export function parseGoBool(text: string): boolean | undefined {
  const s = goTrimSpace(text);
  if (GO_TRUE.has(s)) return true;
  if (GO_FALSE.has(s)) return false;
  return undefined;
}

/** Go `math.Round` — half away from zero (JS Math.round is wrong for negatives). */
export function roundHalfAwayFromZero(x: number): number {
  if (!Number.isFinite(x)) return x;
  const t = Math.trunc(x);
  return Math.abs(x - t) >= 0.5 ? t + Math.sign(x) : t;
}
