/**
 * `convctl diff -c A -c B`: what changes between two configs for the same target, compared by
 * their analyses against one schema file (not by their YAML). `diff -c CONFIG --live` compares
 * one config with the cluster's (./diff_live.ts). A delta is a result (exit 1), not an error.
 */
import { engineSpecOf } from "../api/mod.ts";
import { analyze } from "../engine/mod.ts";
import { type AnalysisDelta, analysisDelta, deltaLines } from "./analysis_delta.ts";
import { CliError, FLAGS, outputFlag } from "./args.ts";
import { CLUSTER_FLAGS } from "./cluster.ts";
import { defineCommand } from "./command.ts";
import { clusterConfigLines, type ClusterConfigState, liveDiff } from "./diff_live.ts";
import { failOnHardErrors } from "./gates.ts";
import { loadConfig, loadSchema, schemaFlagOf } from "./load.ts";
import { toJson } from "./output.ts";

export interface DiffReport extends AnalysisDelta {
  resourceKind: "CRD" | "XRD";
  resource: string;
  from: string;
  to: string;
  /** `--live`: what the cluster says about its copy of the config. */
  clusterConfig?: ClusterConfigState;
}

function diffTable(r: DiffReport): string {
  const lines = [
    `${r.resourceKind} Conversion Diff`,
    `target: ${r.resource}`,
    `${r.from} → ${r.to}`,
    ...deltaLines(r),
    ...(r.clusterConfig !== undefined ? clusterConfigLines(r.clusterConfig) : []),
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
  const live = r.clusterConfig !== undefined
    ? ["", "```text", ...clusterConfigLines(r.clusterConfig), "```"]
    : [];
  return [...head, ...body, ...live].join("\n") + "\n";
}

/** The JSON contract's field order: identification first, then the delta. */
function diffJson(r: DiffReport): string {
  const { resourceKind, resource, from, to, hasDeltas, clusterConfig, ...rest } = r;
  return toJson({ resourceKind, resource, from, to, hasDeltas, ...rest, clusterConfig });
}

export const diffCommand = defineCommand({
  name: "diff",
  usage: "convctl diff -c A -c B (-x XRD | --crd CRD) [-o json|table|markdown]\n" +
    "  convctl diff -c CONFIG --live [-x XRD | --crd CRD] [--kubeconfig F] [--context C] " +
    "[-o json|table|markdown]",
  summary: "Compare the analyses of two configs for one target (or a config with the cluster's).",
  target: "none",
  flags: [
    {
      ...FLAGS.config,
      kind: "list",
      help: "the two configs to compare, first the old one, then the new one (twice; once with " +
        "--live)",
    },
    { ...FLAGS.xrd, help: `${FLAGS.xrd.help}; with --live, instead of the cluster's XRD` },
    { ...FLAGS.crd, help: `${FLAGS.crd.help}; with --live, instead of the cluster's CRD` },
    {
      name: "live",
      kind: "bool",
      help: "compare the config with the one of the same name in the cluster",
    },
    ...CLUSTER_FLAGS,
    outputFlag("json, table or markdown", "json"),
  ],
  required: ["config"],
  groups: [{ atMostOne: ["xrd", "crd"] }],
  requires: { kubeconfig: "live", context: "live" },
  options: (flags) => {
    const files = flags.list("config");
    if (flags.bool("live")) {
      if (files.length !== 1) {
        throw new CliError(`--config must be given once with --live (got ${files.length})`);
      }
      return { live: true, from: "", to: files[0] };
    }
    if (!flags.has("xrd") && !flags.has("crd")) {
      throw new CliError("one of the flags --xrd, --crd is required");
    }
    if (files.length !== 2) {
      throw new CliError(`--config must be given exactly twice (got ${files.length})`);
    }
    return { live: false, from: files[0], to: files[1] };
  },
  run: async ({ flags, options }): Promise<DiffReport> => {
    if (options.live) return await liveDiff(options.to, flags);
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
