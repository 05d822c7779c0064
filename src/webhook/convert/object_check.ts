/**
 * What an object of a ConversionReview must be before it is converted: a JSON object with an
 * `apiVersion`, a string `kind` if any, whose `metadata`, when present, is an object whose `labels` and `annotations`, when
 * present, map strings to strings. Anything else is answered with a Failure that names the object:
 * converting it would mean repairing it silently (a string `metadata` would come back as `{}`, a
 * numeric label would be carried into an object the apiserver then rejects or prunes).
 */
import { isJsonObject, type JsonValue } from "../../lib/json.ts";

/** The problem with object `i`, or undefined when it may be converted. */
export function objectProblem(obj: unknown, i: number): string | undefined {
  if (!isJsonObject(obj)) return `decoding object ${i}: not a JSON object`;
  const apiVersion = obj.apiVersion;
  if (typeof apiVersion !== "string" || apiVersion === "") {
    return `decoding object ${i}: apiVersion is missing`;
  }
  const kind = obj.kind;
  if (kind !== undefined && typeof kind !== "string") {
    return `decoding object ${i}: kind is ${typeName(kind)}, not a string`;
  }
  const metadata = obj.metadata;
  if (metadata === undefined) return undefined;
  if (!isJsonObject(metadata)) {
    return `decoding object ${i}: metadata is ${typeName(metadata)}, not an object`;
  }
  const labels = stringMapProblem(metadata.labels);
  if (labels !== undefined) {
    return `decoding object ${i}${named(metadata)}: metadata.labels${labels}`;
  }
  const annotations = stringMapProblem(metadata.annotations);
  if (annotations !== undefined) {
    return `decoding object ${i}${named(metadata)}: metadata.annotations${annotations}`;
  }
  return undefined;
}

function stringMapProblem(v: JsonValue | undefined): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (!isJsonObject(v)) return ` is ${typeName(v)}, not a map of strings`;
  for (const key in v) {
    const value = v[key];
    if (typeof value !== "string") {
      return `[${JSON.stringify(key)}] is ${typeName(value)}, not a string`;
    }
  }
  return undefined;
}

/** ` (namespace/name)` when the metadata names the object. */
function named(metadata: { [key: string]: JsonValue }): string {
  const name = metadata.name;
  if (typeof name !== "string") return "";
  const ns = metadata.namespace;
  return typeof ns === "string" && ns !== "" ? ` (${ns}/${name})` : ` (${name})`;
}

function typeName(v: JsonValue): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "an array";
  return typeof v === "object" ? "an object" : `a ${typeof v}`;
}
