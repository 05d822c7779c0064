/**
 * What the differential tests share (two linkings or encodings of the same plans must agree): every
 * law case with its mirrored case, the analysis of a case, the observable outcome of a conversion
 * (the answer's bytes or the error message), and inputs with values of wrong types spliced in.
 */
import { stringifyJson } from "../../src/lib/json_exact.ts";
import {
  type AnalysisResult,
  analyze,
  ConversionError,
  convertObject,
  type Direction,
  type JsonObject,
  type JsonValue,
  type Router,
} from "../../src/engine/mod.ts";
import type { Rng } from "../../src/engine/generate.ts";
import { isJsonObject } from "../../src/lib/json.ts";
import { setKey } from "../../src/engine/value.ts";
import { configFor } from "./_helpers.ts";
import { SPOKE } from "./_schemas.ts";
import "./laws/cases/mod.ts";
import { caseSource, type LawCase, lawCases } from "./laws/registry.ts";
import { mirroredCase } from "./laws/mirror.ts";

export const DIRECTIONS: readonly Direction[] = ["hubToSpoke", "spokeToHub"];

/** Every law case, and the mirrored form of each that has one. */
export const DIFFERENTIAL_CASES: readonly LawCase[] = [
  ...lawCases(),
  ...lawCases().flatMap((c) => c.noMirror === undefined ? mirroredCase(c) ?? [] : []),
];

export function analyzeCase(c: LawCase): AnalysisResult {
  const spec = configFor(
    { [SPOKE]: c.rules },
    c.policy === "Warn"
      ? { unmappedFieldPolicy: "Warn", unmappedFieldReason: "law case" }
      : { unmappedFieldPolicy: c.policy },
  );
  return analyze(caseSource(c), spec);
}

/** The observable outcome: the answer's bytes, or the error message. */
export function outcome(router: Router, input: JsonObject, to: string): string {
  try {
    return `ok ${stringifyJson(convertObject(router, input, to))}`;
  } catch (e) {
    if (e instanceof ConversionError) return `error ${e.message}`;
    throw e;
  }
}

const WRONG: readonly JsonValue[] = ["x", 7, -1.5, null, true, [], [1, "a"], {}, { k: "v" }];

/** Replaces some values (maps descended) with values of random other types. */
export function corrupt(v: JsonValue, rng: Rng, depth: number): JsonValue {
  if (Array.isArray(v)) return v.map((e) => corrupt(e, rng, depth + 1));
  if (!isJsonObject(v)) return v;
  const out: JsonObject = {};
  for (const key of Object.keys(v)) {
    const replace = depth > 0 && key !== "apiVersion" && rng.chance(0.25);
    setKey(out, key, replace ? rng.pick(WRONG) : corrupt(v[key], rng, depth + 1));
  }
  return out;
}
