/**
 * JSON values as every layer sees them, and the two questions asked of them everywhere: "is this a
 * JSON object?" and "are these two values equal?". This folder is the project's small standard
 * library (what `@std` would give us if JSR were reachable): it imports nothing, and every layer,
 * the pure engine included, may import it.
 */

/**
 * A `bigint` is an integer literal outside the double-exact range (|n| > 2^53 - 1) that was read
 * with its digits kept: Kubernetes keeps int64 exact, and so must we. Every other number is a
 * `number`. Read and write JSON text only with the exact helpers of `json_exact.ts`.
 */
export type JsonPrimitive = string | number | bigint | boolean | null;
export type JsonValue = JsonPrimitive | JsonValue[] | JsonObject;
export interface JsonObject {
  [key: string]: JsonValue;
}

/** A non-null, non-array object: a JSON object (map), or a record read from `unknown` input. */
export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** {@link isRecord} narrowed to JSON: for values already known to be JSON. */
export function isJsonObject(v: unknown): v is JsonObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * Deep JSON equality: numbers by value (a `bigint` equals a `number` of the same mathematical
 * value), maps by key set and values, arrays by position; a string never equals a number.
 */
export function jsonEqual(a: JsonValue, b: JsonValue): boolean {
  if (a === b) return true;
  if (typeof a === "bigint" || typeof b === "bigint") {
    // `==` compares a bigint and a number mathematically; the typeof checks keep strings out.
    return (typeof a === "bigint" || typeof a === "number") &&
      (typeof b === "bigint" || typeof b === "number") && a == b;
  }
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  for (const k of ka) {
    if (!Object.hasOwn(b, k) || !jsonEqual(a[k], b[k])) return false;
  }
  return true;
}
