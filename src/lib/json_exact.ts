/**
 * JSON text read and written with every int64 exact. `JSON.parse` reads every number as a double,
 * so `9007199254740993` would come back as `9007199254740992`; Kubernetes keeps int64 exact, and
 * so must we. An integer literal outside the double-exact range (|n| > 2^53 - 1) but inside int64
 * is read as a `bigint` with its digits; beyond int64 it stays a double, which is what the
 * apiserver itself made of it. A literal beyond the double range (`1e400`) is an error, never
 * ±Infinity (which `JSON.stringify` would write as `null`).
 *
 * The common case stays at `JSON.parse` speed: {@link hasLongNumbers} (or a caller's own scan of
 * the text, such as the `/convert` body check) selects the exact parse only when a number in the
 * text could be read inexactly or out of range. Writing, {@link stringifyJson} uses plain
 * `JSON.stringify` unless a `bigint` is met. Both exact paths stay on the native parser and
 * encoder: reading carries such numbers through marked strings (U+0001 + digits), writing through
 * `JSON.rawJSON` values swapped in for the bigints; a reviver reading each number's source text
 * (`JSON.parse` source access) is the fallback for text that already holds U+0001, a replacer the
 * fallback for a value that cannot be swapped in place (a frozen holder).
 */
import type { JsonValue } from "./json.ts";

/** Smallest and largest int64. */
export const INT64_MIN = -(2n ** 63n);
export const INT64_MAX = 2n ** 63n - 1n;

/** A digit run this long may not be a safe integer (2^53 - 1 has 16 digits). */
export const LONG_DIGIT_RUN = 16;

/** `JSON` with the parts of the source-text-access API the TypeScript lib does not declare yet. */
const SourceJSON = JSON as JSON & {
  rawJSON(text: string): unknown;
  parse(
    text: string,
    reviver: (this: unknown, key: string, value: unknown, context: { source?: string }) => unknown,
  ): unknown;
};

/**
 * A number as the JSON value model holds it: a safe integer or any other double as a `number`, an
 * integer outside the safe range but inside int64 as a `bigint`, beyond int64 as the nearest
 * double.
 */
export function normalizeInteger(n: bigint): number | bigint {
  if (n >= -9007199254740991n && n <= 9007199254740991n) return Number(n);
  if (n >= INT64_MIN && n <= INT64_MAX) return n;
  return Number(n);
}

const INTEGER_LITERAL = /^-?\d+$/;

function exactReviver(_key: string, value: unknown, context: { source?: string }): unknown {
  if (typeof value !== "number" || Number.isSafeInteger(value)) return value;
  const source = context.source ?? String(value);
  if (!Number.isFinite(value)) {
    throw new SyntaxError(`number ${source} is outside the range of a double`);
  }
  return INTEGER_LITERAL.test(source) ? normalizeInteger(BigInt(source)) : value;
}

/**
 * Whether JSON text, outside its strings, holds a number that `JSON.parse` may not read exactly or
 * in range: a run of {@link LONG_DIGIT_RUN} or more digits, or an exponent. One pass with
 * `indexOf` over string contents; malformed text is left to the parser.
 */
export function hasLongNumbers(s: string): boolean {
  const n = s.length;
  let i = 0;
  while (i < n) {
    const c = s.charCodeAt(i++);
    if (c === 0x22) {
      i = afterString(s, i);
      if (i < 0) return false;
    } else if (c <= 0x39 && c >= 0x30) {
      const end = digitRunEnd(s, i);
      if (end - i + 1 >= LONG_DIGIT_RUN || (s.charCodeAt(end) | 0x20) === 0x65) return true; // e/E
      i = end;
    }
  }
  return false;
}

/** Index of the first non-digit at or after `i` (`s.length` when none). */
export function digitRunEnd(s: string, i: number): number {
  const n = s.length;
  while (i < n) {
    const c = s.charCodeAt(i);
    if (c < 0x30 || c > 0x39) return i;
    i++;
  }
  return n;
}

/**
 * Index just past the closing quote of the string whose contents start at `i`, or -1 when the
 * string does not end. Skips contents with `indexOf` (memchr), counting backslashes only at a
 * quote.
 */
export function afterString(s: string, i: number): number {
  for (;;) {
    const q = s.indexOf('"', i);
    if (q < 0) return -1;
    i = q + 1;
    if (s.charCodeAt(q - 1) !== 0x5c) return i;
    let backslashes = 0;
    for (let j = q - 1; s.charCodeAt(j) === 0x5c; j--) backslashes++;
    if ((backslashes & 1) === 0) return i; // an escaped backslash, not an escaped quote
  }
}

/**
 * Whether a double that plain `JSON.parse` produced may differ from what the exact parse reads:
 * ±Infinity (a literal beyond the double range) or an integer beyond ±(2^53 − 1), which an
 * integer literal of that size rounds to. A parsed value without such a number is exactly what
 * {@link parseJson} would have read, which lets a caller parse first and check afterwards.
 */
export function mayBeInexact(n: number): boolean {
  return !Number.isFinite(n) || (Number.isInteger(n) && Math.abs(n) > Number.MAX_SAFE_INTEGER);
}

/**
 * Parses JSON text keeping int64 exact (see the module comment); throws `SyntaxError`. Pass
 * `longNumbers` when the text was already scanned ({@link hasLongNumbers}); `false` reads it with
 * plain `JSON.parse`, which is exact for such text.
 */
export function parseJson(text: string, longNumbers: boolean = hasLongNumbers(text)): JsonValue {
  if (!longNumbers) return JSON.parse(text) as JsonValue;
  return parseMarked(text) ?? SourceJSON.parse(text, exactReviver) as JsonValue;
}

/**
 * The marker of a long integer literal rewritten into a string: U+0001, which valid JSON text can
 * hold only as this escape — so text without it has no string that starts with U+0001.
 */
const MARK_ESCAPE = "\\u0001";

/**
 * The fast exact parse (a reviver costs ~8× `JSON.parse`): every integer literal of 16+ digits
 * outside strings is rewritten into the string `"\u0001<literal>"`, the text is parsed natively,
 * and one walk turns those strings into integers and refuses non-finite numbers. Undefined when
 * the text holds the marker's escape (the reviver then reads it).
 */
function parseMarked(text: string): JsonValue | undefined {
  if (text.includes(MARK_ESCAPE)) return undefined;
  const parts: string[] = [];
  let from = 0;
  const n = text.length;
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      i = afterString(text, i + 1);
      if (i < 0) break;
      continue;
    }
    if (c !== 0x2d && (c < 0x30 || c > 0x39)) {
      i++;
      continue;
    }
    // A number token: the longest run of number characters.
    const start = i;
    while (i < n && isNumberChar(text.charCodeAt(i))) i++;
    const token = text.slice(start, i);
    const digits = token.charCodeAt(0) === 0x2d ? token.length - 1 : token.length;
    if (digits >= LONG_DIGIT_RUN && CANONICAL_INTEGER.test(token)) {
      parts.push(text.slice(from, start), '"', MARK_ESCAPE, token, '"');
      from = i;
    }
  }
  if (parts.length === 0) return unmark(JSON.parse(text) as JsonValue);
  parts.push(text.slice(from));
  // The rewritten text is valid exactly when the original is, except a literal in key position,
  // which the walk refuses.
  return unmark(JSON.parse(parts.join("")) as JsonValue);
}

/** A JSON integer literal (no leading zero), which the rewrite may turn into a string. */
const CANONICAL_INTEGER = /^-?[1-9]\d*$/;

function isNumberChar(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x2b || c === 0x2e || c === 0x65 ||
    c === 0x45;
}

/** Marked strings → integers, in place; a non-finite number or a marked key is a SyntaxError. */
function unmark(v: JsonValue): JsonValue {
  if (typeof v === "string") {
    if (v.charCodeAt(0) !== 1) return v;
    const int = normalizeInteger(BigInt(v.slice(1)));
    if (typeof int === "number" && !Number.isFinite(int)) {
      throw new SyntaxError(`number ${v.slice(1)} is outside the range of a double`);
    }
    return int;
  }
  if (typeof v === "number") {
    if (!Number.isFinite(v)) throw new SyntaxError("a number is outside the range of a double");
    return v;
  }
  if (typeof v !== "object" || v === null) return v;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const x = v[i];
      if (typeof x === "object" || typeof x === "string" || typeof x === "number") v[i] = unmark(x);
    }
    return v;
  }
  for (const key in v) {
    if (key.charCodeAt(0) === 1) throw new SyntaxError(`a number cannot be an object key`);
    const x = v[key];
    if (typeof x === "object" || typeof x === "string" || typeof x === "number") {
      const y = unmark(x);
      if (y !== x) v[key] = y; // an own key, `__proto__` included: assignment stays a data write
    }
  }
  return v;
}

function exactReplacer(_key: string, value: unknown): unknown {
  return typeof value === "bigint" ? SourceJSON.rawJSON(value.toString()) : value;
}

/**
 * `JSON.stringify` that writes a `bigint` as its digits. Without `mayHoldBigints` (a hint: the
 * value's text had long numbers) plain `JSON.stringify` runs first, which is all a value without
 * a `bigint` costs. With one, each bigint is swapped in place for a `JSON.rawJSON` of its digits
 * while the value is written natively (below), or — when a holder is frozen or the value nests
 * too deep — written through a replacer (several times slower).
 */
export function stringifyJson(
  value: unknown,
  options: { indent?: number; mayHoldBigints?: boolean } = {},
): string {
  if (options.mayHoldBigints !== true) {
    try {
      return writeNative(value, options.indent);
    } catch (e) {
      // A bigint is the only TypeError a JSON value can raise (a cycle raises it again below).
      if (!(e instanceof TypeError)) throw e;
    }
  }
  return stringifyRaw(value, options.indent) ??
    JSON.stringify(value, exactReplacer, options.indent);
}

/**
 * `JSON.stringify` without an indent is called with the value alone: V8 takes its fast
 * serializer only when replacer and gap are both undefined, and an explicit `null` replacer
 * halves its speed (docs/design/webhook.md#writing-the-answer).
 */
function writeNative(value: unknown, indent: number | undefined): string {
  return indent === undefined ? JSON.stringify(value) : JSON.stringify(value, null, indent);
}

/** One bigint taken out of its holder while the value is written. */
interface Slot {
  holder: Record<string, unknown> | unknown[];
  key: string | number;
  value: bigint;
}

/**
 * Each bigint is swapped in place for `JSON.rawJSON(digits)`, which the native serializer writes
 * as the bare digits, the value is written, and the bigints are put back: a third faster than
 * marking them as strings and rewriting the output. Undefined when a holder is frozen or the
 * value nests past {@link MAX_MARK_DEPTH} (a cycle, or nesting no review reaches).
 */
function stringifyRaw(value: unknown, indent: number | undefined): string | undefined {
  const slots: Slot[] = [];
  try {
    if (!swapBigints(value, slots, 0)) return undefined;
    return writeNative(value, indent);
  } catch (e) {
    if (e instanceof TypeError) return undefined;
    throw e;
  } finally {
    for (let i = slots.length - 1; i >= 0; i--) {
      const { holder, key, value } = slots[i];
      (holder as Record<string, unknown>)[key] = value;
    }
  }
}

/** Swaps the bigints under `v` for raw JSON; false past {@link MAX_MARK_DEPTH}. */
function swapBigints(v: unknown, slots: Slot[], depth: number): boolean {
  if (typeof v !== "object" || v === null) return true;
  if (depth > MAX_MARK_DEPTH) return false;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const x = v[i];
      if (typeof x === "bigint") {
        v[i] = SourceJSON.rawJSON(x.toString()); // throws on a frozen holder: nothing to put back
        slots.push({ holder: v, key: i, value: x });
      } else if (typeof x === "object" && !swapBigints(x, slots, depth + 1)) return false;
    }
    return true;
  }
  const o = v as Record<string, unknown>;
  for (const key of Object.keys(o)) {
    const x = o[key];
    if (typeof x === "bigint") {
      o[key] = SourceJSON.rawJSON(x.toString()); // an own key, `__proto__` included: a data write
      slots.push({ holder: o, key, value: x });
    } else if (typeof x === "object" && !swapBigints(x, slots, depth + 1)) return false;
  }
  return true;
}

/** Deeper values are written by the replacer (JSON.stringify's own recursion). */
const MAX_MARK_DEPTH = 1000;
