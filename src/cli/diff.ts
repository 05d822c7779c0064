/**
 * `convctl diff -c A -c B`: what changes between two configs for the same target, compared by
 * their analyses against one schema file (not by their YAML). A delta is a result (exit 1), not an
 * error.
 */
import { engineSpecOf } from "../api/mod.ts";
import { analyze } from "../engine/mod.ts";
import { type AnalysisDelta, analysisDelta, deltaLines } from "./analysis_delta.ts";
import { CliError, FLAGS, outputFlag } from "./args.ts";
import { defineCommand } from "./command.ts";
import { failOnHardErrors } from "./gates.ts";
import { loadConfig, loadSchema, schemaFlagOf } from "./load.ts";
import { toJson } from "./output.ts";

export interface DiffReport extends AnalysisDelta {
  resourceKind: "CRD" | "XRD";
  resource: string;
  from: string;
  to: string;
}

function diffTable(r: DiffReport): string {
  const lines = [
    `${r.resourceKind} Conversion Diff`,
    `target: ${r.resource}`,
    `${r.from} → ${r.to}`,
    ...deltaLines(r),
  ];
  return lines.join("\n") + "\n";
}

function diffMarkdown(r: DiffReport): string {
  const head = [
    `### ${r.resourceKind} Conversion Diff`,
    "",
    `Target \`${r.resource}\`: \`${r.from}\` → \`${r.to}\``,
    "",
  ];
  const body = r.hasDeltas ? ["```diff", ...deltaLines(r), "```"] : ["No differences."];
  return [...head, ...body].join("\n") + "\n";
}

/** The JSON contract's field order: identification first, then the delta. */
function diffJson(r: DiffReport): string {
  const { resourceKind, resource, from, to, hasDeltas, ...rest } = r;
  return toJson({ resourceKind, resource, from, to, hasDeltas, ...rest });
}

export const diffCommand = defineCommand({
  name: "diff",
  usage: "convctl diff -c A -c B (-x XRD | --crd CRD) [-o json|table|markdown]",
  summary: "Compare the analyses of two configs for one target: coverage, rules, lossiness.",
  target: "none",
  flags: [
    {
      ...FLAGS.config,
      kind: "list",
      help: "the two configs to compare, first the old one, then the new one (required, twice)",
    },
    FLAGS.xrd,
    FLAGS.crd,
    { name: "live", kind: "bool", help: "compare with the cluster's config (not implemented yet)" },
    outputFlag("json, table or markdown", "json"),
  ],
  required: ["config"],
  groups: [{ exactlyOne: ["xrd", "crd"] }],
  options: (flags) => {
    if (flags.bool("live")) {
      throw new CliError(
        "--live is not implemented yet; compare two config files with -c A -c B",
      );
    }
    const files = flags.list("config");
    if (files.length !== 2) {
      throw new CliError(`--config must be given exactly twice (got ${files.length})`);
    }
    return { from: files[0], to: files[1] };
  },
  run: async ({ flags, options }): Promise<DiffReport> => {
    const from = await loadConfig(options.from, flags);
    const to = await loadConfig(options.to, flags);
    if (from.kind !== to.kind) {
      throw new CliError(
        `configs ${from.file} (${from.kind}) and ${to.file} (${to.kind}) are of different kinds`,
      );
    }
    const schema = await loadSchema(from.kind, flags.string(schemaFlagOf(from.kind).flag)!);
    const fromAnalysis = analyze(schema.source, engineSpecOf(from.config));
    const toAnalysis = analyze(schema.source, engineSpecOf(to.config));
    failOnHardErrors(fromAnalysis);
    failOnHardErrors(toAnalysis);
    return {
      resourceKind: schema.source.kind,
      resource: schema.source.name,
      from: from.file,
      to: to.file,
      ...analysisDelta(fromAnalysis, toAnalysis),
    };
  },
  output: {
    formats: { json: diffJson, table: diffTable, markdown: diffMarkdown },
    default: "json",
  },
  exitCode: (r) => r.hasDeltas ? 1 : 0,
});
