/**
 * Compiles one config against its target's manifest into a `CompileResult` (a missing target,
 * rule translation, analysis, then the plans): pure, so it runs unchanged in a compile Worker or
 * on the main isolate.
 */
import {
  analyze,
  type ConversionConfigSpec,
  type JsonObject,
  type Lossless,
  type PlanData,
  schemaSourceFromCRD,
  schemaSourceFromXRD,
} from "../engine/mod.ts";
import type { CompileResult, ConfigKind } from "./compiled.ts";

/** The parts of a config object compile reads. */
export interface ConfigObject {
  metadata: { name: string; generation?: number };
  spec: ConversionConfigSpec;
}

/** The target resource name a config points at. */
export function targetOf(kind: ConfigKind, config: ConfigObject): string {
  return (kind === "xrd" ? config.spec.targetXRD?.name : config.spec.targetCRD?.name) ?? "";
}

function generationOf(obj: { metadata?: unknown }): number {
  const g = (obj.metadata as { generation?: unknown } | undefined)?.generation;
  return typeof g === "number" ? g : 0;
}

/** `target` is the live CRD/XRD manifest, or undefined when it does not exist. */
export function compileConfig(
  kind: ConfigKind,
  config: ConfigObject,
  target: JsonObject | undefined,
): CompileResult {
  const base = { target: targetOf(kind, config), kind, config: config.metadata.name };
  if (target === undefined) {
    return {
      ...base,
      ok: false,
      reason: kind === "xrd" ? "XRDNotFound" : "CRDNotFound",
      message: `${kind === "xrd" ? "XRD" : "CRD"} ${JSON.stringify(base.target)} not found`,
    };
  }
  const source = kind === "xrd" ? schemaSourceFromXRD(target) : schemaSourceFromCRD(target);
  const result = analyze(source, config.spec);
  const translation = result.hardErrors.find((d) => d.class === "rule-translation");
  if (translation !== undefined) {
    return { ...base, ok: false, reason: "InvalidRules", message: translation.message };
  }
  if (result.hardErrors.length > 0) {
    return {
      ...base,
      ok: false,
      reason: "AnalyzeFailed",
      message: result.hardErrors.map((d) => d.message).join("; "),
    };
  }
  if (result.hasErrors) {
    const lines = result.spokes.flatMap((s) =>
      s.errors.map((d) => `[spoke ${s.version}] [${d.class}] ${d.message}`)
    );
    return { ...base, ok: false, reason: "ValidationErrors", message: lines.join("; ") };
  }
  const plans: PlanData[] = [];
  const lossless: Record<string, Lossless> = {};
  for (const spoke of result.spokes) {
    if (spoke.plan !== undefined) plans.push(spoke.plan);
    lossless[spoke.version] = spoke.lossless;
  }
  const reviewVersions = config.spec.conversionReviewVersions;
  return {
    ...base,
    ok: true,
    hubVersion: result.hubVersion,
    plans,
    reviewVersions: reviewVersions !== undefined && reviewVersions.length > 0
      ? reviewVersions
      : ["v1"],
    lossless,
    planHash: `gen=${generationOf(target)}/${generationOf(config)}`,
  };
}
