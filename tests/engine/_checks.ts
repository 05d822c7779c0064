/**
 * Assertions and value helpers for the engine tests: diagnostics by class, a readable dump of
 * diagnostics, test resources, deep freezing and conversion-error checks.
 */
import assert from "node:assert/strict";
import {
  ConversionError,
  type Diagnostic,
  type DiagnosticClass,
  type JsonObject,
  type SpokeReport,
} from "../../src/engine/mod.ts";
import { KIND } from "./_schemas.ts";

// --- diagnostics --------------------------------------------------------------------------------

export function describe(ds: readonly Diagnostic[]): string {
  return ds.map((d) => `[${d.class}] ${d.path}: ${d.message}`).join("\n");
}

export const classesOf = (ds: readonly Diagnostic[]): DiagnosticClass[] => ds.map((d) => d.class);

export function errorsOf(report: SpokeReport, cls: DiagnosticClass): Diagnostic[] {
  return report.errors.filter((d) => d.class === cls);
}

export function warningsOf(report: SpokeReport, cls: DiagnosticClass): Diagnostic[] {
  return report.warnings.filter((d) => d.class === cls);
}

/** Exactly one diagnostic of `cls` in `ds`; returns it. */
export function single(ds: readonly Diagnostic[], cls: DiagnosticClass): Diagnostic {
  const found = ds.filter((d) => d.class === cls);
  assert.equal(found.length, 1, `expected one ${cls}, got:\n${describe(ds)}`);
  return found[0];
}

// --- values -------------------------------------------------------------------------------------

/** A whole object: `kind`, `metadata` (name only by default) and the given body. */
export function resource(body: JsonObject, metadata: JsonObject = { name: "g" }): JsonObject {
  return { kind: KIND, metadata, ...body };
}

/** Object.freeze, recursively. */
export function deepFreeze<T>(v: T): T {
  if (typeof v === "object" && v !== null && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const key of Object.keys(v)) deepFreeze((v as Record<string, unknown>)[key]);
  }
  return v;
}

/** `fn` throws a ConversionError whose message contains every fragment. */
export function assertConversionError(fn: () => unknown, ...fragments: (string | RegExp)[]) {
  let caught: unknown;
  try {
    fn();
  } catch (e) {
    caught = e;
  }
  assert.ok(caught instanceof ConversionError, `expected a ConversionError, got ${caught}`);
  for (const f of fragments) {
    if (typeof f === "string") {
      assert.ok(caught.message.includes(f), `${JSON.stringify(caught.message)} lacks ${f}`);
    } else {
      assert.match(caught.message, f);
    }
  }
  return caught;
}
