/**
 * `convctl analyze` (cli.md §3): schema-only lossiness and coverage report. Informational: spoke
 * errors are reported but exit 0; translation and hub errors are tool errors (exit 2).
 */
import { engineSpecOf } from "../api/mod.ts";
import { type AnalysisResult, analyze } from "../engine/mod.ts";
import {
  type CommandSpec,
  FLAGS,
  mutuallyExclusive,
  noPositionals,
  oneRequired,
  type ParsedFlags,
  requireFlags,
} from "./args.ts";
import { failOnHardErrors } from "./gates.ts";
import { type LoadedConfig, loadTarget } from "./load.ts";
import { formatDiagnostic, type Io, renderTable, toJson } from "./output.ts";

export const analyzeCommand: CommandSpec = {
  name: "analyze",
  usage: "convctl analyze -c CONFIG (-x XRD | --crd CRD) [-o table|json]",
  summary: "Report per-spoke lossiness and field coverage of a config against its schema.",
  flags: [
    { ...FLAGS.config, help: `${FLAGS.config.help} (required)` },
    FLAGS.xrd,
    FLAGS.crd,
    {
      name: "output",
      short: "o",
      kind: "string",
      value: "FORMAT",
      help: "json, or table for anything else",
      default: "table",
    },
  ],
};

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

export function analyzeJson(analysis: AnalysisResult, config: LoadedConfig): AnalyzeJson {
  const spec = engineSpecOf(config.config);
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

export async function runAnalyze(flags: ParsedFlags, io: Io): Promise<number> {
  noPositionals(flags, "analyze");
  requireFlags(flags, "config");
  mutuallyExclusive(flags, "xrd", "crd");
  oneRequired(flags, "xrd", "crd");
  const { config, schema } = await loadTarget(flags, "required");
  const analysis = analyze(schema!.source, engineSpecOf(config.config));
  failOnHardErrors(analysis);
  const report = analyzeJson(analysis, config);
  io.out(flags.string("output") === "json" ? toJson(report) : analyzeTable(report));
  return 0;
}
