/**
 * `convctl analyze`: schema-only lossiness and coverage report. Informational: spoke errors are
 * reported but exit 0; translation and hub errors are tool errors (exit 2).
 */
import { type AnalysisResult, analyze, type ConversionConfigSpec } from "../engine/mod.ts";
import { outputFlag } from "./args.ts";
import { defineCommand, type SchemaInvocation } from "./command.ts";
import { fileLocator } from "./findings/positions.ts";
import { ciFormats } from "./findings/render.ts";
import { analysisFindings } from "./findings/sources.ts";
import { failOnHardErrors } from "./gates.ts";
import type { LoadedConfig } from "./load.ts";
import { formatDiagnostic, renderTable, toJson } from "./output.ts";

export interface AnalyzeSpokeJson {
  version: string;
  losslessHubToSpoke: boolean;
  losslessSpokeToHub: boolean;
  errors?: string[];
  warnings?: string[];
  rulesEvaluated: number;
}

export interface AnalyzeJson {
  resourceKind: "XRD" | "CRD";
  resource: string;
  config: string;
  hubVersion: string;
  lossless: boolean;
  spokes: AnalyzeSpokeJson[];
}

export function analyzeJson(
  analysis: AnalysisResult,
  config: LoadedConfig,
  spec: ConversionConfigSpec,
): AnalyzeJson {
  return {
    resourceKind: analysis.kind,
    resource: analysis.target === "" ? "(unnamed)" : analysis.target,
    config: config.name,
    hubVersion: analysis.hubVersion,
    lossless: analysis.overallLossless,
    spokes: analysis.spokes.map((s, i) => ({
      version: s.version,
      losslessHubToSpoke: s.lossless.hubToSpoke,
      losslessSpokeToHub: s.lossless.spokeToHub,
      ...(s.errors.length > 0 ? { errors: s.errors.map(formatDiagnostic) } : {}),
      ...(s.warnings.length > 0 ? { warnings: s.warnings.map(formatDiagnostic) } : {}),
      rulesEvaluated: spec.spokes[i].rules?.length ?? 0,
    })),
  };
}

const verdict = (lossless: boolean) => (lossless ? "lossless" : "LOSSY");

export function analyzeTable(report: AnalyzeJson): string {
  let text = `${report.resourceKind} Conversion Analysis\n`;
  text += `target: ${report.resource}  config: ${report.config}  hub: ${report.hubVersion}  ` +
    `lossless: ${report.lossless}\n\n`;
  text += renderTable(
    ["SPOKE", "HUB→SPOKE", "SPOKE→HUB", "RULES", "ISSUES"],
    report.spokes.map((s) => [
      s.version,
      verdict(s.losslessHubToSpoke),
      verdict(s.losslessSpokeToHub),
      String(s.rulesEvaluated),
      String((s.errors?.length ?? 0) + (s.warnings?.length ?? 0)),
    ]),
  );
  for (const s of report.spokes) {
    for (const e of s.errors ?? []) text += `  [${s.version}] ERROR: ${e}\n`;
    for (const w of s.warnings ?? []) text += `  [${s.version}] WARNING: ${w}\n`;
  }
  return text;
}

export const analyzeCommand = defineCommand({
  name: "analyze",
  usage: "convctl analyze -c CONFIG (-x XRD | --crd CRD) [-o table|json|github|sarif|markdown]",
  summary: "Report per-spoke lossiness and field coverage of a config against its schema.",
  target: "config+schema",
  flags: [outputFlag("table, json, github, sarif or markdown", "table")],
  run: ({ config, source, spec }) => {
    const analysis = analyze(source, spec);
    failOnHardErrors(analysis);
    return analyzeJson(analysis, config, spec);
  },
  output: {
    formats: {
      table: analyzeTable,
      json: toJson,
      ...ciFormats(
        (_report: AnalyzeJson, { config, source, spec }: SchemaInvocation<undefined>) =>
          analysisFindings(analyze(source, spec), config.file, fileLocator(config.file)),
        (report) => `convctl analyze: ${report.resourceKind} ${report.resource}`,
      ),
    },
    default: "table",
  },
});
