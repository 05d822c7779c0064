/**
 * Scalar values for the generator: integers and numbers within the schema's bounds (edge values
 * first when edge cases are on), strings honouring length, `pattern` (best effort) and `format`,
 * and int-or-string values.
 */
import { rfc3339 } from "../lib/time.ts";
import type { Rng } from "./generate_rng.ts";
import type { SchemaNode } from "./types.ts";

/** What scalar generation reads of the generator's context. */
export interface ScalarCtx {
  rng: Rng;
  edge: boolean;
  patterns: Map<string, RegExp | null>;
}

interface Bounds {
  min: number;
  max: number;
}

/** The allowed range; `step(v)` is the distance to the next value above `v` (exclusive bounds). */
function bounds(node: SchemaNode, lo: number, hi: number, step: (v: number) => number): Bounds {
  let min = lo;
  let max = hi;
  if (typeof node.minimum === "number") {
    const m = node.minimum;
    min = Math.max(min, node.exclusiveMinimum === true ? m + step(m) : m);
  }
  if (typeof node.maximum === "number") {
    const m = node.maximum;
    max = Math.min(max, node.exclusiveMaximum === true ? m - step(m) : m);
  }
  return { min, max };
}

/** A sub-range of [min, max] around small values, so generated numbers stay readable. */
function smallRange(min: number, max: number): Bounds {
  const lo = Math.max(min, Math.min(max, -100));
  const hi = Math.min(max, Math.max(min, 1000));
  return lo < hi || min >= max ? { min: lo, max: hi } : { min: lo, max: Math.min(max, lo + 1000) };
}

const NUMBER_STEP = (v: number) => Math.max(Math.abs(v) * Number.EPSILON, Number.MIN_VALUE);

const INT_EDGES = [0, -1, 1, 2147483647, -2147483648, Number.MAX_SAFE_INTEGER, 1e15, 4096];

export function integer(node: SchemaNode, ctx: ScalarCtx): number {
  const wide = node.format === "int32" ? 2147483647 : Number.MAX_SAFE_INTEGER;
  const b = bounds(node, -wide - (wide === 2147483647 ? 1 : 0), wide, () => 1);
  const min = Math.ceil(b.min);
  const max = Math.floor(b.max);
  const multipleOf = typeof node.multipleOf === "number" && node.multipleOf > 0
    ? node.multipleOf
    : undefined;
  if (multipleOf !== undefined) {
    const lo = Math.ceil(min / multipleOf);
    const hi = Math.floor(max / multipleOf);
    const k = ctx.rng.int(Math.max(lo, Math.min(hi, -50)), Math.min(hi, Math.max(lo, 50)));
    return k * multipleOf + 0;
  }
  if (ctx.edge && ctx.rng.chance(0.15)) {
    const edges = [...INT_EDGES, min, max].filter((v) => v >= min && v <= max);
    if (edges.length > 0) return ctx.rng.pick(edges);
  }
  const small = smallRange(min, max);
  return ctx.rng.int(small.min, small.max) + 0;
}

const NUMBER_EDGES = [0, 0.5, -2.5, 1e21, 1e-7, 123456.789, 2.5e-5, Number.MAX_SAFE_INTEGER, 1e300];

export function number(node: SchemaNode, ctx: ScalarCtx): number {
  const b = bounds(node, -1e308, 1e308, NUMBER_STEP);
  if (typeof node.multipleOf === "number" && node.multipleOf > 0) {
    return integer({ ...node, type: "integer", multipleOf: node.multipleOf }, ctx);
  }
  if (ctx.edge && ctx.rng.chance(0.15)) {
    const edges = [...NUMBER_EDGES, b.min, b.max].filter((v) =>
      v >= b.min && v <= b.max && Math.abs(v) < 1e308
    );
    if (edges.length > 0) return ctx.rng.pick(edges);
  }
  // Eighths are exact in binary, so generated values survive any decimal round trip.
  const { min: lo, max: hi } = smallRange(b.min, b.max);
  const v = lo + ctx.rng.int(0, Math.floor((hi - lo) * 8)) / 8;
  return Math.min(hi, Math.max(lo, v)) + 0;
}

export const PLAIN = "abcdefghijklmnopqrstuvwxyz0123456789";
const PLAIN_CHARS = [...PLAIN];
/** One code point each: escapes Go and JSON treat specially, non-ASCII, a surrogate pair. */
const SPICY = [..."AZ-_. /:<>&\"'\\\n\t\u2028é中😀", "\u0001"];
const HEX = "0123456789abcdef";

/** `n` characters of an ASCII alphabet. */
export function chars(ctx: ScalarCtx, alphabet: string, n: number): string {
  let s = "";
  for (let i = 0; i < n; i++) s += alphabet[ctx.rng.int(0, alphabet.length - 1)];
  return s;
}

export function string(node: SchemaNode, ctx: ScalarCtx): string {
  const formatted = formatString(node.format, ctx);
  if (formatted !== undefined) return formatted;
  const minLength = typeof node.minLength === "number" ? node.minLength : 0;
  const maxLength = typeof node.maxLength === "number" ? node.maxLength : minLength + 12;
  const n = () => ctx.rng.int(minLength, Math.max(minLength, Math.min(maxLength, minLength + 12)));
  if (typeof node.pattern === "string") return patterned(node.pattern, ctx, n);
  if (ctx.edge && ctx.rng.chance(0.2)) {
    const len = n();
    const out: string[] = [];
    for (let i = 0; i < len; i++) {
      out.push(ctx.rng.pick(ctx.rng.chance(0.5) ? SPICY : PLAIN_CHARS));
    }
    return out.join("");
  }
  return chars(ctx, PLAIN, n());
}

const PATTERN_ALPHABETS = [
  PLAIN,
  "abcdefghijklmnopqrstuvwxyz",
  "0123456789",
  "ABCDEFGHIJKLMNOPQRSTUVWXYZ",
  "abcdef0123456789-.",
];

/** Best effort: candidates from a few alphabets, checked against the pattern. */
function patterned(pattern: string, ctx: ScalarCtx, length: () => number): string {
  let re = ctx.patterns.get(pattern);
  if (re === undefined) {
    try {
      re = new RegExp(pattern, "u");
    } catch {
      re = null;
    }
    ctx.patterns.set(pattern, re);
  }
  let last = "";
  for (let i = 0; i < 40; i++) {
    last = chars(ctx, PATTERN_ALPHABETS[i % PATTERN_ALPHABETS.length], length());
    if (re === null || re.test(last)) return last;
  }
  return last;
}

function formatString(format: unknown, ctx: ScalarCtx): string | undefined {
  const rng = ctx.rng;
  const pad = (v: number, w: number) => String(v).padStart(w, "0");
  switch (format) {
    case "date-time":
      return rfc3339(rng.int(0, 4102444800) * 1000);
    case "date":
      return `${rng.int(1970, 2099)}-${pad(rng.int(1, 12), 2)}-${pad(rng.int(1, 28), 2)}`;
    case "uuid":
      return [8, 4, 4, 4, 12].map((w) => chars(ctx, HEX, w)).join("-");
    case "byte":
      return btoa(chars(ctx, PLAIN, rng.int(0, 12)));
    case "ipv4":
      return [0, 0, 0, 0].map(() => rng.int(0, 255)).join(".");
    case "hostname":
      return `${dnsLabel(rng)}.${dnsLabel(rng)}`;
    case "email":
      return `${dnsLabel(rng)}@example.com`;
  }
  return undefined;
}

export function intOrStringString(node: SchemaNode, ctx: ScalarCtx): string {
  if (typeof node.pattern === "string") return patterned(node.pattern, ctx, () => 3);
  return ctx.rng.pick([
    `${ctx.rng.int(0, 100)}%`,
    String(ctx.rng.int(0, 65535)),
    dnsLabel(ctx.rng),
  ]);
}

const DNS_CHARS = PLAIN + "-";

export function dnsLabel(rng: Rng): string {
  const letters = "abcdefghijklmnopqrstuvwxyz";
  let s = letters[rng.int(0, letters.length - 1)];
  const n = rng.int(0, 10);
  for (let i = 0; i < n; i++) s += DNS_CHARS[rng.int(0, DNS_CHARS.length - 1)];
  return s.endsWith("-") ? s + "0" : s;
}
