/**
 * JSON text read and written with every int64 exact. `JSON.parse` reads every number as a double,
 * so `9007199254740993` would come back as `9007199254740992`; Kubernetes keeps int64 exact, and
 * so must we. An integer literal outside the double-exact range (|n| > 2^53 - 1) but inside int64
 * is read as a `bigint` with its digits; beyond int64 it stays a double, which is what the
 * apiserver itself made of it. A literal beyond the double range (`1e400`) is an error, never
 * ±Infinity (which `JSON.stringify` would write as `null`).
 *
 * The common case stays at `JSON.parse` speed: {@link hasLongNumbers} (or a caller's own scan of
 * the text, such as the `/convert` body check) selects the source-reading parse only when a
 * number in the text could be read inexactly or out of range. Writing, {@link stringifyJson} uses
 * plain `JSON.stringify` unless a `bigint` is met.
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
  let run = 0;
  while (i < n) {
    const c = s.charCodeAt(i++);
    if (c === 0x22) {
      run = 0;
      i = afterString(s, i);
      if (i < 0) return false;
    } else if (c >= 0x30 && c <= 0x39) {
      if (++run >= LONG_DIGIT_RUN) return true;
    } else {
      if ((c === 0x65 || c === 0x45) && run > 0) return true; // e/E after a digit: an exponent
      run = 0;
    }
  }
  return false;
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
 * Parses JSON text keeping int64 exact (see the module comment); throws `SyntaxError`. Pass
 * `longNumbers` when the text was already scanned ({@link hasLongNumbers}); `false` reads it with
 * plain `JSON.parse`, which is exact for such text.
 */
export function parseJson(text: string, longNumbers: boolean = hasLongNumbers(text)): JsonValue {
  return (longNumbers ? SourceJSON.parse(text, exactReviver) : JSON.parse(text)) as JsonValue;
}

function exactReplacer(_key: string, value: unknown): unknown {
  return typeof value === "bigint" ? SourceJSON.rawJSON(value.toString()) : value;
}

/**
 * `JSON.stringify` that writes a `bigint` as its digits. `mayHoldBigints` says the value probably
 * holds one (its text had long numbers), which goes straight to the replacer; otherwise plain
 * `JSON.stringify` runs first and the replacer only when it meets a `bigint`.
 */
export function stringifyJson(
  value: unknown,
  options: { indent?: number; mayHoldBigints?: boolean } = {},
): string {
  if (options.mayHoldBigints !== true) {
    try {
      return JSON.stringify(value, null, options.indent);
    } catch (e) {
      // A bigint is the only TypeError a JSON value can raise (a cycle raises it again below).
      if (!(e instanceof TypeError)) throw e;
    }
  }
  return JSON.stringify(value, exactReplacer, options.indent);
}
