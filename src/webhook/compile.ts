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
import type { CompiledTarget, CompileResult, ConfigKind } from "./compiled.ts";
import { boundedCost } from "./convert/inline_policy.ts";
import { encodePlans, linkPlans } from "./plan_codec.ts";

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
  return compiledResult({
    ...base,
    hubVersion: result.hubVersion,
    plans,
    reviewVersions: reviewVersions !== undefined && reviewVersions.length > 0
      ? reviewVersions
      : ["v1"],
    lossless,
    planHash: `gen=${generationOf(target)}/${generationOf(config)}`,
  });
}

/** A successful compile before its plans are checked and encoded. */
export type PlannedTarget =
  & Omit<CompiledTarget, "ok" | "plans" | "spokeVersions" | "boundedCost">
  & {
    plans: readonly PlanData[];
  };

/**
 * The result of a successful analysis: its plans linked once here (and dropped) so a result
 * never carries plans that cannot be linked where they are used — version skew or a bug fails
 * the compile, and the old plan keeps serving — then encoded.
 */
export function compiledResult(planned: PlannedTarget): CompileResult {
  const { plans, ...rest } = planned;
  try {
    linkPlans(plans);
  } catch (e) {
    const message = `linking compiled plans: ${e instanceof Error ? e.message : String(e)}`;
    return {
      target: rest.target,
      kind: rest.kind,
      config: rest.config,
      ok: false,
      reason: "AnalyzeFailed",
      message,
    };
  }
  return {
    ...rest,
    ok: true,
    plans: encodePlans(plans),
    spokeVersions: plans.map((p) => p.spokeVersion),
    boundedCost: boundedCost(plans),
  };
}
