/**
 * `convctl validate`: the admission-time checks, offline. Structural checks always; translation
 * and schema analysis when a schema file is given.
 */
import { analyze, structuralError } from "../engine/mod.ts";
import { outputFlag } from "./args.ts";
import { defineCommand } from "./command.ts";
import { suggestCommandLine, suggestHint } from "./gates.ts";
import { formatDiagnostic, formatSpokeDiagnostic, toJson } from "./output.ts";
import type { Finding } from "./findings/finding.ts";
import { fileLocator } from "./findings/positions.ts";
import { ciFormats } from "./findings/render.ts";
import { analysisFindings, structuralFinding } from "./findings/sources.ts";

export interface ValidateResult {
  config: string;
  structurallyValid: boolean;
  schemaValidated: boolean;
  errors?: string[];
}

interface Validation {
  result: ValidateResult;
  errors: string[];
  warnings: string[];
  /** Whether a schema file was given (the text form then reports `schema validated`). */
  withSchema: boolean;
  /** A pointer to `convctl suggest` when it can draft the fix (table form only). */
  hint?: string;
  /** The errors and warnings placed in the config, for the CI formats. */
  findings: Finding[];
}

function validationText({ result, errors, warnings, withSchema, hint }: Validation): string {
  let text = `config: ${result.config}\nstructurally valid: ${result.structurallyValid}\n`;
  if (withSchema) text += `schema validated: ${result.schemaValidated}\n`;
  for (const e of errors) text += `ERROR: ${e}\n`;
  for (const w of warnings) text += `WARNING: ${w}\n`;
  if (hint !== undefined) text += `${hint}\n`;
  return text;
}

export const validateCommand = defineCommand({
  name: "validate",
  usage: "convctl validate -c CONFIG [-x XRD | --crd CRD] [-o table|json|github|sarif|markdown]",
  summary: "Validate a conversion config (structure; with a schema file also rules and coverage).",
  target: "config",
  flags: [outputFlag("table, json, github, sarif or markdown", "table")],
  run: ({ config, schema, spec }): Validation => {
    const errors: string[] = [];
    const warnings: string[] = [];
    let hint: string | undefined;
    const findings: Finding[] = [];
    const result: ValidateResult = {
      config: config.name,
      structurallyValid: true,
      schemaValidated: false,
    };
    const structural = structuralError(spec);
    if (structural !== undefined) {
      result.structurallyValid = false;
      errors.push(`[structural] ${structural}`);
      findings.push(structuralFinding(`[structural] ${structural}`, config.file));
    } else if (schema !== undefined) {
      const analysis = analyze(schema.source, spec);
      findings.push(...analysisFindings(analysis, config.file, fileLocator(config.file)));
      for (const d of analysis.hardErrors) errors.push(formatDiagnostic(d));
      const spokeLines: string[] = [];
      for (const report of analysis.spokes) {
        for (const d of report.errors) spokeLines.push(formatSpokeDiagnostic(report.version, d));
        for (const d of report.warnings) warnings.push(formatSpokeDiagnostic(report.version, d));
      }
      if (spokeLines.length > 0) {
        errors.push(
          `configuration is invalid against the ${schema.source.kind} schema:` +
            spokeLines.map((l) => `\n  ${l}`).join(""),
        );
      }
      result.schemaValidated = errors.length === 0;
      hint = suggestHint(analysis, suggestCommandLine(config, schema));
    }
    if (errors.length > 0) result.errors = errors;
    return { result, errors, warnings, withSchema: schema !== undefined, hint, findings };
  },
  output: {
    formats: {
      table: validationText,
      json: (v) => toJson(v.result),
      ...ciFormats((v: Validation) => v.findings, (v) => `convctl validate: ${v.result.config}`),
    },
    default: "table",
  },
  // Exit 1 on errors in both formats (the reference exits 0 in json mode; docs/cli.md).
  exitCode: (v) => v.errors.length > 0 ? 1 : 0,
});
