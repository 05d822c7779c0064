/**
 * Fleet mode of `convctl test --live`: the same test against several clusters (`--contexts`,
 * `--kubeconfig-dir`). Each cluster runs independently, a few at a time; one that fails (an
 * unreachable server, no objects, a refused LIST) records its error and the others still run.
 * The fleet report wraps each cluster's normal report under its label.
 */
import { CliError, type ParsedFlags } from "./args.ts";
import type { ClusterTarget } from "./cluster.ts";
import {
  exitCodeFor,
  type FailOn,
  renderJunit,
  renderTestTable,
  type TestReport,
  xmlEscape,
} from "./test_report.ts";

/** Clusters tested at the same time. */
export const FLEET_PARALLELISM = 4;

/** One cluster of a fleet run: its report, or the one-line error that stopped it. */
export interface FleetCluster {
  label: string;
  error?: string;
  report?: TestReport;
}

export interface FleetReport {
  clusters: FleetCluster[];
}

const IGNORED_FILE = /^\.|\.md$|^readme/i;

/**
 * The clusters `--live` targets: `--kubeconfig-dir` (each regular file but hidden ones, `*.md`
 * and `readme*`, sorted by name; × each of `--contexts` when given), else each of `--contexts`
 * in the one kubeconfig, else that kubeconfig's `--context` (or its current context).
 */
export async function fleetTargets(flags: ParsedFlags): Promise<ClusterTarget[]> {
  const contexts = flags.list("contexts");
  if (flags.has("contexts") && (contexts.length === 0 || contexts.some((c) => c.trim() === ""))) {
    throw new CliError("--contexts: empty context name");
  }
  const dir = flags.string("kubeconfig-dir");
  if (dir === undefined) {
    if (contexts.length === 0) {
      return [{ kubeconfig: flags.string("kubeconfig"), context: flags.string("context") }];
    }
    return contexts.map((context) => ({ kubeconfig: flags.string("kubeconfig"), context }));
  }
  const files: string[] = [];
  try {
    for await (const e of Deno.readDir(dir)) {
      if (e.isFile && !IGNORED_FILE.test(e.name)) files.push(e.name);
    }
  } catch (e) {
    throw new CliError(`--kubeconfig-dir ${dir}: ${(e as Error).message}`);
  }
  if (files.length === 0) throw new CliError(`--kubeconfig-dir ${dir}: no kubeconfig files`);
  files.sort();
  const path = (f: string) => `${dir.replace(/\/+$/, "")}/${f}`;
  if (contexts.length === 0) {
    return files.map((f) => ({ kubeconfig: path(f), name: f }));
  }
  return files.flatMap((f) =>
    contexts.map((context) => ({ kubeconfig: path(f), context, name: `${f}:${context}` }))
  );
}

/** The label a fleet report gives a target. */
export function targetLabel(t: ClusterTarget): string {
  return t.name ?? t.context ?? t.kubeconfig ?? "current-context";
}

/**
 * Runs `test` on every target, at most {@link FLEET_PARALLELISM} at once; results keep the
 * targets' order. A `CliError` (or any other failure) of one target becomes that cluster's error.
 */
export async function runFleet(
  targets: readonly ClusterTarget[],
  test: (target: ClusterTarget, label: string) => Promise<TestReport>,
  onDone?: (cluster: FleetCluster) => void,
): Promise<FleetReport> {
  const clusters: FleetCluster[] = new Array(targets.length);
  let next = 0;
  const worker = async () => {
    while (next < targets.length) {
      const i = next++;
      const label = targetLabel(targets[i]);
      let result: FleetCluster;
      try {
        result = { label, report: await test({ ...targets[i], name: label }, label) };
      } catch (e) {
        result = { label, error: e instanceof Error ? e.message : String(e) };
      }
      clusters[i] = result;
      onDone?.(result);
    }
  };
  const workers = Math.min(FLEET_PARALLELISM, targets.length);
  await Promise.all(Array.from({ length: workers }, worker));
  return { clusters };
}

/** 1 if any cluster errored (whatever `--fail-on` says), else 1 if any report fails, else 0. */
export function fleetExitCode(fleet: FleetReport, failOn: FailOn, strict: boolean): number {
  if (fleet.clusters.some((c) => c.error !== undefined)) return 1;
  return fleet.clusters.some((c) => exitCodeFor(c.report!, failOn, strict) !== 0) ? 1 : 0;
}

/** Failed = errored, or its report fails under the default rule. */
function failedCount(fleet: FleetReport): number {
  return fleet.clusters.filter((c) =>
    c.error !== undefined || exitCodeFor(c.report!, "loss", false) !== 0
  ).length;
}

export function renderFleetTable(fleet: FleetReport): string {
  const parts = fleet.clusters.map((c) =>
    `=== ${c.label} ===\n` +
    (c.error !== undefined ? `ERROR: ${c.error}\n` : renderTestTable(c.report!))
  );
  return `${parts.join("\n")}\n${fleetLine(fleet)}\n`;
}

/** `FLEET: 3 clusters, 1 failed`. */
export function fleetLine(fleet: FleetReport): string {
  return `FLEET: ${fleet.clusters.length} clusters, ${failedCount(fleet)} failed`;
}

const attr = (name: string, value: string) => `${name}="${xmlEscape(value)}"`;

/**
 * One `<testsuites name="convctl fleet">`: each healthy cluster's suite renamed
 * `<label>/<KIND>/<target>` with classnames prefixed `<label>.`; a failed cluster is a suite with
 * one erroring case.
 */
export function renderFleetJunit(fleet: FleetReport): string {
  const suites: string[] = [];
  let tests = 0, failures = 0, errors = 0, time = 0;
  for (const c of fleet.clusters) {
    if (c.error !== undefined) {
      tests++, errors++;
      suites.push(
        `  <testsuite ${attr("name", c.label)} tests="1" failures="0" errors="1" time="0.000000">`,
        `    <testcase ${attr("name", `${c.label}: cluster`)} ${
          attr("classname", c.label)
        } time="0.000000">`,
        `      <error message="cluster error">${xmlEscape(c.error)}</error>`,
        `    </testcase>`,
        `  </testsuite>`,
      );
      continue;
    }
    const m = c.report!.meta;
    const own = renderJunit(c.report!).split("\n");
    // The single report's lines: header, <testsuites>, <testsuite>, cases…, </testsuite>, </testsuites>.
    const suiteOpen = own[2].replace(
      attr("name", `${m.resourceKind}/${m.resource}`),
      attr("name", `${c.label}/${m.resourceKind}/${m.resource}`),
    );
    const counts = own[1].match(/tests="(\d+)" failures="(\d+)" errors="(\d+)" time="([\d.]+)"/);
    if (counts !== null) {
      tests += Number(counts[1]);
      failures += Number(counts[2]);
      errors += Number(counts[3]);
      time += Number(counts[4]);
    }
    const body = own.slice(3, own.lastIndexOf("  </testsuite>")).map((line) =>
      line.replace(/ classname="([^"]*)"/, (_, cls) => ` classname="${xmlEscape(c.label)}.${cls}"`)
    );
    suites.push(suiteOpen, ...body, "  </testsuite>");
  }
  return [
    `<?xml version="1.0" encoding="UTF-8"?>`,
    `<testsuites name="convctl fleet" tests="${tests}" failures="${failures}" errors="${errors}" ` +
    `time="${time.toFixed(6)}">`,
    ...suites,
    `</testsuites>`,
  ].join("\n") + "\n";
}
