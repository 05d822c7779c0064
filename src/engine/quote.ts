/**
 * A value as an error message shows it: strings quoted (a long one cut after its first 40
 * characters, with its length), numbers and bigints as digits. Bounded, so a megabyte string does
 * not make a megabyte message.
 */
import type { JsonValue } from "./types.ts";

const LONG = 80;

export function quoteValue(v: JsonValue): string {
  if (typeof v === "bigint") return v.toString();
  if (typeof v === "string" && v.length > LONG) {
    return `${JSON.stringify(v.slice(0, 40))}… (${v.length} characters)`;
  }
  return JSON.stringify(v);
}
