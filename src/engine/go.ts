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

const GO_DECIMAL_FLOAT = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
const GO_HEX_FLOAT = /^([+-]?)0[xX]([0-9a-fA-F]*)\.?([0-9a-fA-F]*)[pP]([+-]?\d+)$/;
const GO_SPECIAL_FLOAT = /^[+-]?(?:inf|infinity|nan)$/i;

/**
 * Go `strconv.ParseFloat` after trimming Unicode whitespace. Returns undefined when the text
 * is not a number, and a non-finite number for inf/nan/out-of-range (callers reject those).
 */
export function parseGoFloat(text: string): number | undefined {
  const s = text.trim();
  if (GO_DECIMAL_FLOAT.test(s)) return Number(s);
  const hex = GO_HEX_FLOAT.exec(s);
  if (hex !== null) {
    const [, sign, int, frac, exp] = hex;
    if (int === "" && frac === "") return undefined;
    const mantissa = parseInt((int || "0") + frac, 16);
    const value = mantissa * Math.pow(2, Number(exp) - 4 * frac.length);
    return sign === "-" ? -value : value;
  }
  if (GO_SPECIAL_FLOAT.test(s)) {
    if (/nan/i.test(s)) return NaN;
    return s.startsWith("-") ? -Infinity : Infinity;
  }
  return undefined;
}

const GO_TRUE: ReadonlySet<string> = new Set(["1", "t", "T", "TRUE", "true", "True"]);
const GO_FALSE: ReadonlySet<string> = new Set(["0", "f", "F", "FALSE", "false", "False"]);

/** Go `strconv.ParseBool` after trimming; undefined when not a boolean. */
export function parseGoBool(text: string): boolean | undefined {
  const s = text.trim();
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
