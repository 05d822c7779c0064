/**
 * Integers as Kubernetes keeps them: int64. An integer value in the engine is a `number` while
 * it is exact as a double (|n| ≤ 2^53 - 1) and a `bigint` beyond (src/lib/json.ts); strategies that
 * make integers use these helpers so that no int64 is rounded and nothing beyond int64 is written.
 */

export const INT64_MIN = -(1n << 63n);
export const INT64_MAX = (1n << 63n) - 1n;

/** Whether `n` fits Go's int64. */
export function fitsInt64(n: bigint): boolean {
  return n >= INT64_MIN && n <= INT64_MAX;
}

/** The JSON value of an exact integer: a number when a double holds it exactly, else the bigint. */
export function integerValue(n: bigint): number | bigint {
  return n >= -9007199254740991n && n <= 9007199254740991n ? Number(n) : n;
}

/**
 * The exact integer a JSON number holds, or undefined when it has a fraction or is not finite.
 * A double beyond 2^53 is whole and exact as the double it is (the digits it was read from are
 * gone: the JSON reader keeps integer literals as bigint, so such a double was spelled with a
 * fraction or an exponent).
 */
export function exactInteger(v: number | bigint): bigint | undefined {
  if (typeof v === "bigint") return v;
  return Number.isInteger(v) ? BigInt(v) : undefined;
}
