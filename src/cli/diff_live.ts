/**
 * `convctl diff -c CONFIG --live`: the config on disk against the config of the same kind and
 * name the cluster holds, compared by their analyses (as the file diff does), plus what the
 * cluster says about its copy: generation, phase, the hash of the conversion last applied and the
 * conditions. The schema is the cluster's target (CRD or XRD) unless a schema file is given.
 * Without a config of that name in the cluster, the "from" side is the local config with the
 * same hub, policy and spoke versions but no rules — so the delta is exactly what the rules add.
 */
import { type ConversionConfig, engineSpecOf, targetNameOf } from "../api/mod.ts";
import { analyze } from "../engine/mod.ts";
import { analysisDelta } from "./analysis_delta.ts";
import { CliError, type ParsedFlags } from "./args.ts";
import { clusterTargetOf, openCluster } from "./cluster.ts";
import { readClusterConfig, readClusterSchema } from "./cluster_reads.ts";
import type { DiffReport } from "./diff.ts";
import { failOnHardErrors } from "./gates.ts";
import {
  loadConfig,
  type LoadedSchema,
  loadSchema,
  requireSameTarget,
  schemaFlagOf,
} from "./load.ts";

/** One condition of the cluster's config, as the report shows it. */
export interface LiveCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}

/** What the cluster says about its copy of the config. */
export interface ClusterConfigState {
  cluster: string;
  name: string;
  /** False: the cluster has no config of that kind and name. */
  found: boolean;
  /** Where the schema came from: `cluster` (the live target) or the schema file given. */
  schema: string;
  generation?: number;
  observedGeneration?: number;
  phase?: string;
  /** The plan hash of the conversion last applied to the target. */
  lastAppliedPlanHash?: string;
  conditions?: LiveCondition[];
}

/** The local config with the same versions and policy but no rules: "nothing applied yet". */
function withoutRules(config: ConversionConfig): ConversionConfig {
  const spokes = config.spec.spokes.map((s) => ({ version: s.version, rules: [] }));
  return { ...config, spec: { ...config.spec, spokes } } as ConversionConfig;
}

function stateOf(
  cluster: string,
  name: string,
  schema: string,
  applied: ConversionConfig | undefined,
): ClusterConfigState {
  const state: ClusterConfigState = { cluster, name, found: applied !== undefined, schema };
  if (applied === undefined) return state;
  const status = applied.status ?? {};
  if (applied.metadata?.generation !== undefined) state.generation = applied.metadata.generation;
  if (status.observedGeneration !== undefined) state.observedGeneration = status.observedGeneration;
  if (status.phase !== undefined) state.phase = status.phase;
  if (status.lastAppliedPlanHash !== undefined) {
    state.lastAppliedPlanHash = status.lastAppliedPlanHash;
  }
  const conditions = (status.conditions ?? []).map((c): LiveCondition => ({
    type: c.type,
    status: c.status,
    ...(c.reason ? { reason: c.reason } : {}),
    ...(c.message ? { message: c.message } : {}),
  }));
  if (conditions.length > 0) state.conditions = conditions;
  return state;
}

/** The live diff of the one `-c` config, read with the cluster flags of `flags`. */
export async function liveDiff(file: string, flags: ParsedFlags): Promise<DiffReport> {
  const local = await loadConfig(file, flags);
  if (local.name === "") {
    throw new CliError(`config ${local.file} has no metadata.name: --live compares by name`);
  }
  const schemaFile = flags.string(schemaFlagOf(local.kind).flag);
  using cluster = await openCluster(clusterTargetOf(flags));
  const applied = await readClusterConfig(cluster, local.kind, local.name);
  let schema: LoadedSchema;
  if (schemaFile !== undefined) {
    schema = await loadSchema(local.kind, schemaFile);
    requireSameTarget(local, schema);
  } else {
    schema = await readClusterSchema(cluster, local.kind, targetNameOf(local.config));
  }
  const from = applied ?? withoutRules(local.config);
  const fromAnalysis = analyze(schema.source, engineSpecOf(from));
  const toAnalysis = analyze(schema.source, engineSpecOf(local.config));
  failOnHardErrors(fromAnalysis);
  failOnHardErrors(toAnalysis);
  return {
    resourceKind: schema.source.kind,
    resource: schema.source.name,
    from: applied !== undefined
      ? `cluster:${local.name}`
      : `cluster:(no ${local.kind} ${local.name})`,
    to: local.file,
    ...analysisDelta(fromAnalysis, toAnalysis),
    clusterConfig: stateOf(
      cluster.name,
      local.name,
      schemaFile === undefined ? "cluster" : schema.file,
      applied,
    ),
  };
}

/** The table lines about the cluster's copy (after the delta). */
export function clusterConfigLines(state: ClusterConfigState): string[] {
  if (!state.found) {
    return [
      `cluster ${state.cluster}: no config named ${state.name} — compared with the local ` +
      "config's versions and no rules",
    ];
  }
  const facts: string[] = [];
  if (state.phase !== undefined) facts.push(`phase ${state.phase}`);
  if (state.generation !== undefined) {
    const observed = state.observedGeneration !== undefined
      ? ` (observed ${state.observedGeneration})`
      : " (not observed yet)";
    facts.push(`generation ${state.generation}${observed}`);
  }
  facts.push(
    state.lastAppliedPlanHash !== undefined
      ? `applied plan ${state.lastAppliedPlanHash}`
      : "no plan applied",
  );
  const lines = [`cluster ${state.cluster}: ${state.name}: ${facts.join(", ")}`];
  for (const c of state.conditions ?? []) {
    const reason = c.reason !== undefined ? ` (${c.reason})` : "";
    const message = c.message !== undefined ? `: ${c.message}` : "";
    lines.push(`  ${c.type}=${c.status}${reason}${message}`);
  }
  return lines;
}
