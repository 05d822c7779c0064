/**
 * The gates on the config itself: it is well-formed (structural checks), its rules translate and
 * analyze against the live target's schema, and the analysis finds no validation errors.
 */
import {
  type AnalysisResult,
  analyze,
  type Diagnostic,
  schemaSourceFromCRD,
  schemaSourceFromXRD,
  structuralError,
} from "../../../engine/mod.ts";
import { applyDriftPolicy } from "../drift_policy.ts";
import type { Gate, GateRun } from "../gate.ts";
import { schemaHash } from "../hashes.ts";
import { targetGeneration } from "../target.ts";
import type { ReconcileResult, SpokeStatus } from "../types.ts";

function diagText(d: Diagnostic): string {
  return `[${d.class}] ${d.message}`;
}

/** `status.spokeStatuses` from an analysis: always the last attempt, even a failed one. */
export function spokeStatusesOf(result: AnalysisResult): SpokeStatus[] {
  return result.spokes.map((s) => ({
    version: s.version,
    lossless: { ...s.lossless },
    fieldsUncoveredHub: [...s.uncoveredHub],
    fieldsUncoveredSpoke: [...s.uncoveredSpoke],
    ruleResults: s.ruleResults.map((r) => ({
      index: r.index,
      strategy: r.strategy,
      hubPaths: [...r.hubPaths],
      spokePaths: [...r.spokePaths],
      lossless: { ...r.lossless },
      errors: r.errors.map(diagText),
      warnings: r.warnings.map(diagText),
    })),
    errors: s.errors.map(diagText),
    warnings: s.warnings.map(diagText),
  }));
}

/** The config is invalid as written (counted as `InvalidConfig`). */
async function invalidConfig(run: GateRun, message: string): Promise<ReconcileResult> {
  run.analyzeFailure("InvalidConfig");
  run.setInvalid(message, "InvalidConfig");
  await run.patch();
  return {};
}

/** The analysis could not run to the end (counted as `AnalyzeFailed`). */
async function analyzeFailed(run: GateRun, message: string): Promise<ReconcileResult> {
  run.analyzeFailure("AnalyzeFailed");
  run.setInvalid(`analysis failed: ${message}`, "AnalyzeFailed");
  await run.patch();
  return {};
}

/** The structural checks of the spec (no schema needed). */
export const translatedGate: Gate = {
  name: "translated",
  async pass(run) {
    const structural = structuralError(run.config.spec);
    if (structural === undefined) return undefined;
    return await invalidConfig(run, `invalid config: [structural] ${structural}`);
  },
};

/**
 * Analyzes the config against the live target's schema: rules that do not translate make it
 * invalid, other hard errors a failed analysis; else the spoke statuses and schema hash are set.
 */
export const analyzedGate: Gate = {
  name: "analyzed",
  async pass(run) {
    const target = run.targetObject;
    let result: AnalysisResult;
    try {
      const source = run.targetKind === "XRD"
        ? schemaSourceFromXRD(target)
        : schemaSourceFromCRD(target);
      result = analyze(source, run.config.spec);
    } catch (e) {
      return await analyzeFailed(run, e instanceof Error ? e.message : String(e));
    }
    const translation = result.hardErrors.filter((d) => d.class === "rule-translation");
    if (translation.length > 0) {
      return await invalidConfig(run, `invalid config: ${translation.map(diagText).join("; ")}`);
    }
    if (result.hardErrors.length > 0) {
      return await analyzeFailed(run, result.hardErrors.map(diagText).join("; "));
    }
    run.analysis = result;
    run.status.spokeStatuses = spokeStatusesOf(result);
    run.status.overallLossless = result.overallLossless;
    run.schemaHash = await schemaHash(
      targetGeneration(target),
      run.config.spec.hubVersion,
      run.generation,
    );
    run.status.schemaHash = run.schemaHash;
    return undefined;
  },
};

/** Validation errors of the analysis go to the config's drift policy. */
export const validatedGate: Gate = {
  name: "validated",
  async pass(run) {
    const result = run.analysis;
    if (result.hasErrors) {
      const lines = result.spokes.flatMap((s) =>
        s.errors.map((d) => `[spoke ${s.version}] ${diagText(d)}`)
      );
      const message = `validation failed against the live ${run.targetLabel}: ${lines.join("; ")}`;
      run.analyzeFailure("ValidationErrors");
      run.cond({ type: "Validated", status: "False", reason: "ValidationFailed", message });
      return await applyDriftPolicy(run, run.targetObject, message);
    }
    run.dropCond("RevertBlocked"); // no revert is pending once the config validates again
    run.cond({
      type: "Validated",
      status: "True",
      reason: "Validated",
      message: `validated against the live ${run.targetLabel}`,
    });
    return undefined;
  },
};
