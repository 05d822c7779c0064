/**
 * `convctl test`: round-trip every sample through every configured version and grade each path as
 * pass, acknowledged loss, unacknowledged loss or error. Offline (`--samples`) only for now;
 * `--live` and fleet mode are rejected as not implemented.
 */
import {
  type AnalysisResult,
  analyze,
  ConversionError,
  convertObject,
  createRouter,
  type JsonObject,
  type Router,
} from "../engine/mod.ts";
import { choice, CliError, FLAGS, outputFlag } from "./args.ts";
import { defineCommand } from "./command.ts";
import { requireCleanAnalysis, requireStructurallyValid } from "./gates.ts";
import { loadSamples, type Sample } from "./load.ts";
import { toJson } from "./output.ts";
import { rfc3339 } from "../lib/time.ts";
import { stringifyJson } from "../lib/json_exact.ts";
import {
  exitCodeFor,
  type FailOn,
  isAcknowledged,
  leafCount,
  leafDiff,
  renderJunit,
  renderTestTable,
  summaryLine,
  type TestIssue,
  type TestPath,
  type TestReport,
  type TestSample,
  valueAtDiffPath,
} from "./test_report.ts";

export interface TestOptions {
  /** Only these target versions (from `--version-pair`); empty = all configured. */
  versionPairs: readonly string[];
  skipIdentity: boolean;
  configName: string;
  /** Called after each sample (progress). */
  onSample?: (done: number, total: number) => void;
}

/**
 * The versions a run exercises: `configured` are the served versions the config can convert (the
 * hub and every spoke with a plan; all served ones when none is), `targets` those of them
 * `--version-pair` names (all configured when it names none of them).
 */
export function exercisedVersions(
  analysis: AnalysisResult,
  served: readonly string[],
  versionPairs: readonly string[],
): { configured: string[]; targets: string[] } {
  const planned = new Set(
    analysis.spokes.filter((s) => s.plan !== undefined).map((s) => s.version),
  );
  let configured = served.filter((v) => v === analysis.hubVersion || planned.has(v));
  if (configured.length === 0) configured = [...served];
  const wanted = new Set(versionPairs.flatMap((p) => p.split(":")).filter((v) => v !== ""));
  const restricted = configured.filter((v) => wanted.has(v));
  return { configured, targets: restricted.length > 0 ? restricted : configured };
}

function micros(start: number): number {
  return Math.round((performance.now() - start) * 1000);
}

function describe(v: unknown): string {
  return v === undefined ? "absent" : stringifyJson(v);
}

/** Runs every sample through every target and builds the report (docs/design/cli.md#grading-a-round-trip). */
export function runConversionTests(
  analysis: AnalysisResult,
  served: readonly string[],
  samples: readonly Sample[],
  options: TestOptions,
): TestReport {
  const started = performance.now();
  const router: Router = createRouter(analysis);
  const hub = analysis.hubVersion;
  const { configured, targets } = exercisedVersions(analysis, served, options.versionPairs);
  const spokeByVersion = new Map(analysis.spokes.map((s) => [s.version, s]));

  // Per spoke: its top-level rule ids and the paths its lossy rules declare.
  const ruleIds = new Map<string, string[]>();
  const lossyPaths = new Map<string, Set<string>>();
  const usage = new Map<string, number>();
  for (const s of analysis.spokes) {
    const ids = s.ruleResults.map((r) => `${s.version}:rule[${r.index}]:${r.strategy}`);
    ruleIds.set(s.version, ids);
    for (const id of ids) usage.set(id, 0);
    const lossy = new Set<string>();
    for (const r of s.ruleResults) {
      if (!r.lossless.hubToSpoke || !r.lossless.spokeToHub) {
        for (const p of [...r.hubPaths, ...r.spokePaths]) lossy.add(p);
      }
    }
    lossyPaths.set(s.version, lossy);
  }
  const apiVersion = (v: string) => `${analysis.group}/${v}`;

  const testPath = (sample: Sample, to: string): TestPath => {
    const from = sample.version;
    const start = performance.now();
    if (to === from) {
      return {
        from,
        to,
        result: "pass",
        timingMicros: micros(start),
        fieldsConverted: leafCount(sample.object),
        rulesMatched: ["(identity)"],
      };
    }
    const issue = (field: string, type: TestIssue["type"], detail: string): TestIssue => ({
      field,
      from,
      to,
      type,
      detail,
      sample: sample.name,
    });
    const errorPath = (field: string, e: unknown): TestPath => {
      if (!(e instanceof ConversionError)) throw e;
      return {
        from,
        to,
        result: "error",
        timingMicros: micros(start),
        fieldsConverted: 0,
        issues: [issue(field, "error", e.message)],
      };
    };
    let forward: JsonObject;
    try {
      forward = convertObject(router, sample.object, apiVersion(to));
    } catch (e) {
      return errorPath("(conversion)", e);
    }
    let back: JsonObject;
    try {
      back = convertObject(router, forward, apiVersion(from));
    } catch (e) {
      return errorPath("(round-trip conversion)", e);
    }
    const touched = [from, to].filter((v, i, all) => v !== hub && all.indexOf(v) === i);
    const acknowledged = new Set(touched.flatMap((v) => [...(lossyPaths.get(v) ?? [])]));
    const issues = leafDiff(sample.object, back).map((field) => {
      const type = isAcknowledged(field, acknowledged)
        ? "acknowledged-loss"
        : "unacknowledged-loss";
      const detail = `${describe(valueAtDiffPath(sample.object, field))} came back as ${
        describe(valueAtDiffPath(back, field))
      }`;
      return issue(field, type, detail);
    });
    const result = issues.some((i) => i.type === "unacknowledged-loss")
      ? "fail"
      : issues.length > 0
      ? "loss"
      : "pass";
    const rulesMatched = touched.flatMap((v) => ruleIds.get(v) ?? []);
    for (const id of rulesMatched) usage.set(id, (usage.get(id) ?? 0) + 1);
    const path: TestPath = {
      from,
      to,
      result,
      timingMicros: micros(start),
      fieldsConverted: leafCount(forward),
    };
    if (rulesMatched.length > 0) path.rulesMatched = rulesMatched;
    if (issues.length > 0) path.issues = issues;
    return path;
  };

  const results: TestSample[] = [];
  for (const sample of samples) {
    const v = sample.version;
    let paths: TestPath[];
    if (!configured.includes(v)) {
      const reason = spokeByVersion.has(v)
        ? `spoke ${v} has no compiled plan`
        : `version ${v} is neither the hub nor a spoke of the config`;
      paths = [{
        from: v,
        to: v,
        result: "error",
        timingMicros: 0,
        fieldsConverted: 0,
        issues: [{
          field: "(sample)",
          from: v,
          to: v,
          type: "error",
          detail: `no conversion plan for version ${v}: ${reason}`,
          sample: sample.name,
        }],
      }];
    } else {
      paths = targets.filter((t) => !(options.skipIdentity && t === v)).map((t) =>
        testPath(sample, t)
      );
    }
    results.push({ file: sample.name, assertedVersion: v, paths });
    options.onSample?.(results.length, samples.length);
  }

  const all = results.flatMap((s) => s.paths);
  const count = (r: TestPath["result"]) => all.filter((p) => p.result === r).length;
  const report: TestReport = {
    meta: {
      resourceKind: analysis.kind,
      resource: analysis.target === "" ? "(unnamed)" : analysis.target,
      config: options.configName,
      hubVersion: hub,
      servedVersions: [...served],
      generatedAt: rfc3339(Date.now()),
      durationMs: Math.round((performance.now() - started) * 1000) / 1000,
    },
    summary: {
      samples: results.length,
      pathsTested: all.length,
      pass: count("pass"),
      acknowledgedLoss: count("loss"),
      unacknowledgedLoss: count("fail"),
      errors: count("error"),
    },
    samples: results,
  };
  const coverage = [...usage].map(([ruleId, matchedSamples]) => ({ ruleId, matchedSamples }));
  if (coverage.length > 0) report.ruleCoverage = coverage;
  return report;
}

function parseConcurrency(raw: string | undefined): number {
  if (raw === undefined) return 0;
  if (!/^-?\d+$/.test(raw.trim())) {
    throw new CliError(
      `invalid value ${JSON.stringify(raw)} for --concurrency: expected an integer`,
    );
  }
  return Number(raw);
}

const FAIL_ON: readonly FailOn[] = ["none", "warn", "loss"];

interface TestFlags {
  failOn: FailOn;
}

export const testCommand = defineCommand({
  name: "test",
  usage: "convctl test -c CONFIG (-x XRD | --crd CRD) -s DIR [flags]",
  summary: "Round-trip sample objects through every configured version and grade the result.",
  target: "config+schema",
  flags: [
    {
      name: "samples",
      short: "s",
      kind: "string",
      value: "DIR",
      help: "directory of sample objects (*.yaml, *.yml; searched recursively)",
    },
    { name: "live", kind: "bool", help: "fetch samples from a cluster (not implemented yet)" },
    { name: "kubeconfig", kind: "string", value: "FILE", help: "kubeconfig (with --live)" },
    { name: "context", kind: "string", value: "NAME", help: "kubeconfig context (with --live)" },
    {
      name: "contexts",
      kind: "list",
      value: "NAMES",
      help: "several contexts, comma-separated or repeated (with --live)",
    },
    {
      name: "kubeconfig-dir",
      kind: "string",
      value: "DIR",
      help: "one kubeconfig per file (with --live)",
    },
    outputFlag("table, json or junit", "table"),
    {
      name: "output-file",
      kind: "string",
      value: "FILE",
      help: "write the full report to FILE; stdout gets the summary",
    },
    { name: "strict", kind: "bool", help: "treat rules no sample exercised as failures" },
    {
      name: "fail-on",
      kind: "string",
      value: "LEVEL",
      help: "none, warn or loss",
      default: "loss",
      choices: FAIL_ON,
    },
    {
      name: "version-pair",
      kind: "list",
      value: "A:B",
      help: "restrict target versions (repeatable, comma-separated; `a:b` or `a`)",
    },
    { name: "skip-identity", kind: "bool", help: "skip same-version paths" },
    {
      name: "concurrency",
      kind: "string",
      value: "N",
      help: "samples in flight (≤0 means #CPUs)",
      default: "#CPUs",
    },
    FLAGS.quiet,
  ],
  groups: [
    { exactlyOne: ["samples", "live"] },
    { atMostOne: ["kubeconfig", "kubeconfig-dir"] },
    { atMostOne: ["context", "contexts"] },
  ],
  requires: { contexts: "live", "kubeconfig-dir": "live" },
  options: (flags): TestFlags => {
    const failOn = choice("fail-on", flags.string("fail-on"), FAIL_ON, "loss");
    // Conversions are synchronous CPU work on one thread, so the value is validated and accepted
    // for compatibility but samples run one after another (results are identical either way).
    parseConcurrency(flags.string("concurrency"));
    if (flags.bool("live")) {
      throw new CliError(
        "--live is not implemented yet; test against sample files with -s/--samples DIR",
      );
    }
    return { failOn };
  },
  run: async ({ flags, io, config, source, spec }): Promise<TestReport> => {
    requireStructurallyValid(spec);
    const samples = await loadSamples(flags.string("samples")!, source);
    const analysis = analyze(source, spec);
    requireCleanAnalysis(analysis, "cannot test conversions");

    const served = source.versions.filter((v) => v.served).map((v) => v.name);
    const showProgress = samples.length > 1 && !flags.bool("quiet");
    const report = runConversionTests(analysis, served, samples, {
      versionPairs: flags.list("version-pair"),
      skipIdentity: flags.bool("skip-identity"),
      configName: config.name,
      onSample: showProgress
        ? (done, total) => io.err(`\rtested ${done}/${total} samples`)
        : undefined,
    });
    if (showProgress) io.err("\n");
    return report;
  },
  output: {
    formats: { table: renderTestTable, json: toJson, junit: renderJunit },
    default: "table",
  },
  write: async (text, report, { flags, io }) => {
    const outputFile = flags.string("output-file");
    if (outputFile === undefined) return io.out(text);
    try {
      await Deno.writeTextFile(outputFile, text);
    } catch (e) {
      throw new CliError(`cannot write ${outputFile}: ${(e as Error).message}`);
    }
    io.out(`output written to file ${outputFile}\n${summaryLine(report)}\n`);
  },
  exitCode: (report, { flags, options }) =>
    exitCodeFor(report, options.failOn, flags.bool("strict")),
});
