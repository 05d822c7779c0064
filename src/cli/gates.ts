/**
 * Analysis gates shared by the commands: which analysis problems stop a command as tool errors
 * (exit 2) instead of being reported as results.
 */
import type { AnalysisResult } from "../engine/mod.ts";
import { CliError } from "./args.ts";
import { formatDiagnostic, formatSpokeDiagnostic } from "./output.ts";

/** Translation and hub errors leave nothing to report on: every command stops there. */
export function failOnHardErrors(analysis: AnalysisResult): void {
  if (analysis.hardErrors.length > 0) {
    throw new CliError(analysis.hardErrors.map(formatDiagnostic).join("\n  "));
  }
}

/**
 * Commands that execute plans (`convert`, `test`) need every spoke clean: a plan from an erroring
 * analysis must never run. Lists every spoke error.
 */
export function requireCleanAnalysis(analysis: AnalysisResult, what: string): void {
  failOnHardErrors(analysis);
  const lines = analysis.spokes.flatMap((s) =>
    s.errors.map((d) => `\n  ${formatSpokeDiagnostic(s.version, d)}`)
  );
  if (lines.length > 0) {
    throw new CliError(
      `configuration is invalid against the ${analysis.kind} schema, ${what}:${lines.join("")}`,
    );
  }
}
