/**
 * The scalar coercion table, shared by TypeCoerce, ListJoin/ListSplit and the
 * ScalarToFields/FieldsToScalar captures.
 */
import { formatPlainNumber, parseGoBool, parseGoFloat, roundHalfAwayFromZero } from "./go.ts";
import type { JsonValue } from "./types.ts";
import { ConversionError, typeName } from "./value.ts";

export type ScalarKind = "string" | "integer" | "number" | "boolean";
export type FractionPolicy = "Error" | "Truncate" | "Round";

function toNumber(v: JsonValue, what: string): number {
  if (typeof v === "number") return v;
  if (typeof v === "boolean") return v ? 1 : 0;
  if (typeof v === "string") {
    const n = parseGoFloat(v);
    if (n === undefined) throw new ConversionError(`${what}: ${JSON.stringify(v)} is not a number`);
    return n;
  }
  throw new ConversionError(`${what}: cannot coerce a ${typeName(v)} to a number`);
}

function finite(n: number, v: JsonValue, what: string): number {
  if (!Number.isFinite(n)) {
    throw new ConversionError(`${what}: ${JSON.stringify(v)} is not a finite number`);
  }
  return n;
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
      if (typeof v === "boolean") return v ? "true" : "false";
      throw new ConversionError(`${what}: cannot coerce a ${typeName(v)} to a string`);
    case "number":
      return finite(toNumber(v, what), v, what);
    case "integer": {
      const n = finite(toNumber(v, what), v, what);
      if (Number.isInteger(n)) return n;
      if (policy === "Truncate") return Math.trunc(n);
      if (policy === "Round") return roundHalfAwayFromZero(n);
      throw new ConversionError(`${what}: ${JSON.stringify(v)} is not a whole number`);
    }
    case "boolean":
      if (typeof v === "boolean") return v;
      if (typeof v === "string") {
        const b = parseGoBool(v);
        if (b === undefined) {
          throw new ConversionError(`${what}: ${JSON.stringify(v)} is not a boolean`);
        }
        return b;
      }
      throw new ConversionError(`${what}: cannot coerce a ${typeName(v)} to a boolean`);
  }
}
