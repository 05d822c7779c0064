/**
 * What stops a command as a tool error (exit 2) instead of being reported as a result: a config
 * the engine cannot read, a schema without a group, and analysis problems.
 */
import type { AnalysisResult, ConversionConfigSpec, SchemaSource } from "../engine/mod.ts";
import { structuralError } from "../engine/mod.ts";
import { CliError } from "./args.ts";
import { type LoadedConfig, type LoadedSchema, schemaFlagOf } from "./load.ts";
import { formatDiagnostic, formatSpokeDiagnostic } from "./output.ts";

/** Commands that run conversions need a structurally valid config. */
export function requireStructurallyValid(spec: ConversionConfigSpec): void {
  const structural = structuralError(spec);
  if (structural !== undefined) {
    throw new CliError(`configuration is structurally invalid: ${structural}`);
  }
}

/** Converted objects get `apiVersion: <group>/<version>`, so the schema must name its group. */
export function requireGroup(source: SchemaSource): void {
  if (source.group === "") throw new CliError(`${source.kind} file has no spec.group`);
}

/** Translation and hub errors leave nothing to report on: every command stops there. */
export function failOnHardErrors(analysis: AnalysisResult): void {
  if (analysis.hardErrors.length > 0) {
    throw new CliError(analysis.hardErrors.map(formatDiagnostic).join("\n  "));
  }
}

/** The `convctl suggest` line for a config and its schema file. */
export function suggestCommandLine(config: LoadedConfig, schema: LoadedSchema): string {
  return `convctl suggest -c ${config.file} ${schemaFlagOf(config.kind).shown.split("/").pop()} ` +
    schema.file;
}

/**
 * When some spoke leaves fields uncovered — what `convctl suggest` drafts rules for — the line
 * that says so (`suggest` being the given command line, or the command in general).
 */
export function suggestHint(analysis: AnalysisResult, suggest?: string): string | undefined {
  const uncovered = analysis.spokes.some((s) =>
    s.errors.some((d) => d.class === "uncovered-field")
  );
  if (!uncovered) return undefined;
  const command = suggest ?? "convctl suggest (same -c and schema flag)";
  return `hint: ${command} drafts rules for the uncovered fields`;
}

/**
 * Commands that execute plans (`convert`, `test`, `fuzz`) need every spoke clean: a plan from an
 * erroring analysis must never run. Lists every spoke error, then {@link suggestHint}'s line.
 */
export function requireCleanAnalysis(
  analysis: AnalysisResult,
  what: string,
  suggest?: string,
): void {
  failOnHardErrors(analysis);
  const lines = analysis.spokes.flatMap((s) =>
    s.errors.map((d) => `\n  ${formatSpokeDiagnostic(s.version, d)}`)
  );
  if (lines.length > 0) {
    const hint = suggestHint(analysis, suggest);
    throw new CliError(
      `configuration is invalid against the ${analysis.kind} schema, ${what}:${lines.join("")}` +
        (hint === undefined ? "" : `\n${hint}`),
    );
  }
}
