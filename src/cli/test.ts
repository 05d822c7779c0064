/**
 * `convctl test`: round-trip every sample through every configured version and grade each path as
 * pass, acknowledged loss, unacknowledged loss or error; optionally validate converted objects
 * against their destination schema, fuzz with generated objects, and record or replay a golden
 * corpus. Samples are files (`--samples`), generated objects (`--fuzz`) or a cluster's live
 * objects (`--live`, src/cli/live_samples.ts), on one cluster or several (src/cli/fleet.ts); with
 * `--verify-propagation` an XRD's webhook is also checked against its generated CRDs
 * (src/cli/propagation_live.ts).
 */
import {
  type AnalysisResult,
  analyze,
  type ConversionConfigSpec,
  type SchemaSource,
} from "../engine/mod.ts";
import {
  choice,
  CliError,
  FLAGS,
  outputFlag,
  type ParsedFlags,
  VALIDATE_INPUT_FLAGS,
  validateInputOf,
} from "./args.ts";
import { CLUSTER_FLAGS, type ClusterTarget, openCluster } from "./cluster.ts";
import { defineCommand, type SchemaInvocation } from "./command.ts";
import {
  FLEET_PARALLELISM,
  fleetExitCode,
  fleetLine,
  type FleetReport,
  fleetTargets,
  renderFleetJunit,
  renderFleetTable,
  runFleet,
} from "./fleet.ts";
import {
  fetchLiveSamples,
  type LiveSample,
  type LiveSampleOptions,
  type LiveSamples,
} from "./live_samples.ts";
import { checkPropagation } from "./propagation_live.ts";
import { targetCRDs } from "./schema_versions.ts";
import { ciFormats } from "./findings/render.ts";
import { fileLocator } from "./findings/positions.ts";
import { testFindings } from "./findings/sources.ts";
import { generateFuzzObject, unitShaper } from "./fuzz_run.ts";
import { MAX_FUZZ_OBJECTS } from "./fuzz.ts";
import { requireCleanAnalysis, requireGroup, requireStructurallyValid } from "./gates.ts";
import { compareGolden, goldenManifest, recordGolden } from "./golden.ts";
import { loadSamples, type Sample } from "./load.ts";
import { withoutEmptyObjects } from "./shrink.ts";
import { validateStructural } from "../engine/structural_validate.ts";
import { progressLine, toJson, toYaml } from "./output.ts";
import { effectiveConcurrency, gradeSamples } from "./test_parallel.ts";
import {
  exitCodeFor,
  type FailOn,
  renderJunit,
  renderTestTable,
  type SampleStrategy,
  summaryLine,
  type TestReport,
} from "./test_report.ts";
import {
  buildTestReport,
  createSampleTester,
  exercisedVersions,
  selectSamples,
  type TestRunOptions,
} from "./test_run.ts";
import { buildVersion } from "./version.ts";

export { exercisedVersions };

export interface TestOptions {
  /** Only these target versions (from `--version-pair`); empty = all configured. */
  versionPairs: readonly string[];
  skipIdentity: boolean;
  configName: string;
  /** Called after each sample (progress). */
  onSample?: (done: number, total: number) => void;
}

/** Grades every sample in this thread and builds the report (no output validation). */
export function runConversionTests(
  analysis: AnalysisResult,
  served: readonly string[],
  samples: readonly Sample[],
  options: TestOptions,
): TestReport {
  const started = performance.now();
  const source: SchemaSource = {
    kind: analysis.kind,
    name: analysis.target,
    group: analysis.group,
    targetKind: "",
    versions: [],
  };
  const grade = createSampleTester(analysis, source, served, {
    versionPairs: options.versionPairs,
    skipIdentity: options.skipIdentity,
    validateOutput: false,
  });
  const results = samples.map((s, i) => {
    const outcome = grade(s);
    options.onSample?.(i + 1, samples.length);
    return outcome.sample;
  });
  return buildTestReport(analysis, results, { configName: options.configName, served, started });
}

/** An integer flag within [min, max]. */
function integerFlag(
  flags: ParsedFlags,
  flag: string,
  range: [number, number],
): number | undefined {
  const raw = flags.string(flag);
  if (raw === undefined) return undefined;
  const n = /^-?\d+$/.test(raw.trim()) ? Number(raw.trim()) : NaN;
  const [min, max] = range;
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    throw new CliError(
      `invalid value ${
        JSON.stringify(raw)
      } for --${flag}: expected an integer from ${min} to ${max}`,
    );
  }
  return n;
}

const FAIL_ON: readonly FailOn[] = ["none", "warn", "loss"];
const SAMPLE_STRATEGIES: readonly SampleStrategy[] = ["first", "random", "newest"];

interface TestFlags {
  failOn: FailOn;
  concurrency: number;
  fuzz?: number;
  seed: number;
  maxSamples?: number;
  sampleStrategy: SampleStrategy;
}

/** The result of a run: the report and the analysis the findings are placed with. */
export interface TestRun {
  report: TestReport;
  analysis: AnalysisResult;
}

function shellQuote(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}

/** The command line that regenerates the same fuzz objects. */
function reproduceCommand(
  { flags, config }: SchemaInvocation<TestFlags>,
  count: number,
  seed: number,
): string {
  const schemaFlag = flags.has("xrd")
    ? ["-x", flags.string("xrd")!]
    : ["--crd", flags.string("crd")!];
  const samples = flags.has("samples") ? ["-s", flags.string("samples")!] : [];
  return ["convctl", "test", "-c", config.file, ...schemaFlag, ...samples, "--fuzz", String(count)]
    .concat(["--seed", String(seed)]).map(shellQuote).join(" ");
}

/** `--fuzz N`: N objects generated from the hub schema, Quantity/Duration paths shaped. */
function fuzzSamples(
  analysis: AnalysisResult,
  source: SchemaSource,
  count: number,
  seed: number,
): Sample[] {
  const hub = analysis.hubVersion;
  const shape = unitShaper(analysis, hub);
  const hubSchema = source.versions.find((v) => v.name === hub)?.schema;
  const out: Sample[] = [];
  for (let i = 0; i < count; i++) {
    const { object, gaps, valid } = generateFuzzObject(source, hub, seed, i, shape);
    if (!valid) {
      const gap = gaps[gaps.length - 1];
      throw new CliError(
        `--fuzz: cannot construct the required field ${gap.field} of ${hub} ` +
          `(${gap.keyword} cannot be satisfied by the generator; seed ${seed})`,
      );
    }
    // Empty declared maps hold no data and the engine never writes an empty parent.
    const body = withoutEmptyObjects(object, hubSchema);
    // CEL rules are not the generator's to honour; anything else it must get right.
    const broken = validateStructural(hubSchema, body).violations.find((v) =>
      v.constraint !== "x-kubernetes-validations"
    );
    if (broken !== undefined) {
      throw new CliError(
        `--fuzz: generator bug: object ${i} (seed ${seed}) violates the ${hub} schema at ` +
          `${broken.path || "(root)"} (${broken.constraint}: ${broken.message})`,
      );
    }
    out.push({ name: `fuzz-${seed}-${i}`, object: body, version: hub });
  }
  return out;
}

/** `--record-failures DIR`: each sample with a failing or erroring path, as a sample file. */
async function recordFailures(dir: string, report: TestReport, samples: readonly Sample[]) {
  const failing = new Set(
    report.samples.filter((s) => s.paths.some((p) => p.result === "fail" || p.result === "error"))
      .map((s) => s.file),
  );
  const root = dir.replace(/\/+$/, "");
  try {
    await Deno.mkdir(root, { recursive: true });
    for (const s of samples) {
      if (!failing.has(s.name)) continue;
      const base = s.name.replace(/\.ya?ml(#\d+)?$/i, "$1").replace(/[/#]/g, "_");
      await Deno.writeTextFile(`${root}/${base}.yaml`, toYaml(s.object));
    }
  } catch (e) {
    throw new CliError(`cannot write failures to ${dir}: ${(e as Error).message}`);
  }
  return failing.size;
}

function randomSeed(): number {
  return crypto.getRandomValues(new Uint32Array(1))[0];
}

/** Where a run's samples came from, and how it is graded and reported. */
interface RunContext {
  started: number;
  sampling?: TestReport["sampling"];
  live?: TestReport["live"];
  propagation?: TestReport["propagation"];
  /** One cluster of several: no progress line, no fuzz, no recording (refused up front). */
  inFleet?: boolean;
  /** Clusters graded at the same time, which share the `--concurrency` Workers. */
  sharing?: number;
}

async function runTest(invocation: SchemaInvocation<TestFlags>): Promise<TestResult> {
  const { flags, source, spec, options } = invocation;
  const started = performance.now();
  requireStructurallyValid(spec);
  if (!flags.bool("live")) {
    const samplesDir = flags.string("samples");
    let samples = samplesDir === undefined ? [] : await loadSamples(samplesDir, source, {
      validate: validateInputOf(flags),
    });
    const analysis = analyze(source, spec);
    requireCleanAnalysis(analysis, "cannot test conversions");
    let sampling: TestReport["sampling"];
    if (options.maxSamples !== undefined && samples.length > options.maxSamples) {
      const population = samples.length;
      samples = selectSamples(samples, options.maxSamples, options.sampleStrategy, options.seed);
      sampling = { strategy: options.sampleStrategy, population, tested: samples.length };
      if (options.sampleStrategy === "random") sampling.seed = options.seed;
    }
    return await gradeRun(invocation, analysis, samples, { started, sampling });
  }

  if (source.name === "") {
    throw new CliError("--live: the target has no metadata.name (the CRD to read objects of)");
  }
  const analysis = analyze(source, spec);
  requireCleanAnalysis(analysis, "cannot test conversions");
  const targets = await fleetTargets(flags);
  const liveOptions: LiveSampleOptions = {
    maxSamples: options.maxSamples,
    strategy: options.sampleStrategy,
    seed: options.seed,
    namespace: flags.string("namespace"),
  };
  const crds = targetCRDs(invocation.schema);
  const verify = flags.bool("verify-propagation");
  if (verify && source.kind !== "XRD") {
    throw new CliError(
      "--verify-propagation is for XRD targets (-x): a CRD target is its own generated CRD",
    );
  }
  const fetch = async (target: ClusterTarget) => {
    using cluster = await openCluster(target);
    const live = await fetchLiveSamples(cluster, source, crds, liveOptions);
    const propagation = verify
      ? await checkPropagation(cluster, source.name, crds, invocation.config.name)
      : undefined;
    return { ...live, propagation };
  };
  const contextOf = (live: LiveSamples & { propagation?: TestReport["propagation"] }) => ({
    sampling: live.sampling,
    live: live.live,
    ...(live.propagation !== undefined ? { propagation: live.propagation } : {}),
  });
  if (targets.length === 1) {
    const live = await fetch(targets[0]);
    return await gradeRun(invocation, analysis, live.samples, { started, ...contextOf(live) });
  }

  refuseInFleet(flags);
  const fleet = await runFleet(targets, async (target) => {
    const clusterStarted = performance.now();
    const live = await fetch(target);
    const run = await gradeRun(invocation, analysis, live.samples, {
      started: clusterStarted,
      ...contextOf(live),
      inFleet: true,
      sharing: Math.min(FLEET_PARALLELISM, targets.length),
    });
    return run.report;
  }, (cluster) => {
    if (flags.bool("quiet")) return;
    const outcome = cluster.error !== undefined
      ? `ERROR: ${cluster.error}`
      : summaryLine(cluster.report!);
    invocation.io.err(`=== ${cluster.label} ===\n${outcome}\n`);
  });
  return { fleet, analysis };
}

/** What a fleet run cannot do: one golden corpus or fuzz set per run, CI formats per cluster. */
function refuseInFleet(flags: ParsedFlags): void {
  for (const flag of ["record", "golden", "record-failures", "fuzz"]) {
    if (flags.has(flag)) throw new CliError(`--${flag} cannot be used with several clusters`);
  }
  const output = flags.string("output");
  if (output !== undefined && !FLEET_FORMATS.includes(output)) {
    throw new CliError(
      `-o ${output} cannot be used with several clusters (use ${FLEET_FORMATS.join("|")})`,
    );
  }
}

const FLEET_FORMATS = ["table", "json", "junit"];

/** Grades `samples` (plus `--fuzz` objects) and records or compares the golden corpus. */
async function gradeRun(
  invocation: SchemaInvocation<TestFlags>,
  analysis: AnalysisResult,
  given: readonly Sample[],
  context: RunContext,
): Promise<TestRun> {
  const { flags, io, config, source, spec, options } = invocation;
  let samples = [...given];
  let fuzz: TestReport["fuzz"];
  if (options.fuzz !== undefined && !context.inFleet) {
    requireGroup(source);
    samples = [...samples, ...fuzzSamples(analysis, source, options.fuzz, options.seed)];
    fuzz = {
      generated: options.fuzz,
      seed: options.seed,
      reproduce: reproduceCommand(invocation, options.fuzz, options.seed),
    };
    io.err(`FUZZ: ${options.fuzz} generated object(s), seed ${options.seed}\n`);
  }

  const served = source.versions.filter((v) => v.served).map((v) => v.name);
  const runOptions: TestRunOptions = {
    versionPairs: flags.list("version-pair"),
    skipIdentity: flags.bool("skip-identity"),
    validateOutput: flags.bool("validate-output"),
  };
  const progress = progressLine(
    io,
    samples.length > 1 && !flags.bool("quiet") && !context.inFleet,
  );
  const concurrency = effectiveConcurrency(
    options.concurrency <= 0
      ? Math.max(1, Math.floor(navigator.hardwareConcurrency / (context.sharing ?? 1)))
      : Math.max(1, Math.floor(options.concurrency / (context.sharing ?? 1))),
    samples.length,
    navigator.hardwareConcurrency,
  );
  const outcomes = await gradeSamples(
    { source, spec: spec as ConversionConfigSpec, served, options: runOptions },
    samples,
    concurrency,
    createSampleTester(analysis, source, served, runOptions),
    (done, total) => progress.update(`tested ${done}/${total} samples`),
  );
  progress.done();
  const report = buildTestReport(analysis, outcomes.map((o) => o.sample), {
    configName: config.name,
    served,
    started: context.started,
  });
  if (context.live !== undefined) report.live = context.live;
  if (context.propagation !== undefined) report.propagation = context.propagation;
  // Live samples of an XRD say which generated CRD they were read from.
  given.forEach((s, i) => {
    if (source.kind === "XRD" && "crd" in s) {
      const { name, role } = (s as LiveSample).crd;
      const { paths, ...rest } = report.samples[i];
      report.samples[i] = { ...rest, crd: name, crdRole: role, paths };
    }
  });
  if (context.sampling !== undefined) report.sampling = context.sampling;
  if (fuzz !== undefined) report.fuzz = fuzz;
  if (context.inFleet) return { report, analysis };

  const recorded = outcomes.map((o) => ({ sample: o.sample.file, outputs: o.outputs }));
  const recordDir = flags.string("record");
  const goldenDir = flags.string("golden");
  if (recordDir !== undefined || goldenDir !== undefined) {
    const manifest = await goldenManifest(spec, source, buildVersion());
    if (recordDir !== undefined) {
      const n = await recordGolden(recordDir, recorded, manifest);
      io.err(`recorded ${n} converted object(s) under ${recordDir}\n`);
    } else {
      report.golden = await compareGolden(goldenDir!, recorded, manifest);
      if (report.golden.manifestWarning !== undefined) {
        io.err(`WARNING: golden corpus ${goldenDir}: ${report.golden.manifestWarning}\n`);
      }
    }
  }
  const failuresDir = flags.string("record-failures");
  if (failuresDir !== undefined) {
    const n = await recordFailures(failuresDir, report, samples);
    if (n > 0) io.err(`wrote ${n} failing sample(s) to ${failuresDir}\n`);
  }
  return { report, analysis };
}

/** A fleet run: one report (or error) per cluster. */
export interface FleetRun {
  fleet: FleetReport;
  analysis: AnalysisResult;
}

export type TestResult = TestRun | FleetRun;

const isFleet = (r: TestResult): r is FleetRun => "fleet" in r;

/** The CI formats are refused up front in fleet mode, so only single runs reach them. */
const singleRun = (r: TestResult): TestRun => {
  if (isFleet(r)) throw new CliError("this output format is not available for several clusters");
  return r;
};

const findingsOf = (r: TestResult, { config }: SchemaInvocation<TestFlags>) => {
  const { report, analysis } = singleRun(r);
  return testFindings(report, analysis, config.file, fileLocator(config.file));
};

const title = (r: TestResult) => {
  const { report } = singleRun(r);
  return `convctl test: ${report.meta.resourceKind} ${report.meta.resource}`;
};

export const testCommand = defineCommand({
  name: "test",
  usage: "convctl test -c CONFIG (-x XRD | --crd CRD) (-s DIR | --live | --fuzz N) [flags]",
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
    {
      name: "live",
      kind: "bool",
      help: "test the target's live objects, read through the cluster's apiserver",
    },
    ...CLUSTER_FLAGS,
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
    {
      name: "namespace",
      kind: "string",
      value: "NS",
      help: "with --live: only objects of this namespace (namespaced objects only)",
    },
    {
      name: "verify-propagation",
      kind: "bool",
      help: "with --live on an XRD: check that its conversion webhook reached every generated CRD",
    },
    outputFlag("table, json, junit, github, sarif or markdown", "table"),
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
      help: "samples graded in parallel Workers (≤0 means #CPUs)",
      default: "#CPUs",
    },
    {
      name: "validate-output",
      kind: "bool",
      help: "check every converted object against its destination version's schema",
    },
    {
      name: "fuzz",
      kind: "string",
      value: "N",
      help: `also test N objects generated from the hub schema (1–${MAX_FUZZ_OBJECTS})`,
    },
    {
      name: "seed",
      kind: "string",
      value: "S",
      help: "seed of --fuzz and --sample-strategy random",
      default: "random, printed",
    },
    {
      name: "record-failures",
      kind: "string",
      value: "DIR",
      help: "write every failing object to DIR as a sample file",
    },
    {
      name: "record",
      kind: "string",
      value: "DIR",
      help: "record every converted object as a golden corpus under DIR",
    },
    {
      name: "golden",
      kind: "string",
      value: "DIR",
      help: "compare every converted object with the golden corpus under DIR",
    },
    {
      name: "max-samples",
      kind: "string",
      value: "N",
      help: "test at most N of the samples",
    },
    {
      name: "sample-strategy",
      kind: "string",
      value: "S",
      help: "which samples --max-samples keeps: first, random or newest",
      default: "first",
    },
    FLAGS.quiet,
    ...VALIDATE_INPUT_FLAGS,
  ],
  groups: [
    { atMostOne: ["samples", "live"] },
    { atMostOne: ["record", "golden"] },
    { atMostOne: ["validate-input", "no-validate-input"] },
    { atMostOne: ["kubeconfig", "kubeconfig-dir"] },
    { atMostOne: ["context", "contexts"] },
  ],
  requires: {
    contexts: "live",
    "kubeconfig-dir": "live",
    kubeconfig: "live",
    context: "live",
    namespace: "live",
    "verify-propagation": "live",
  },
  options: (flags): TestFlags => {
    const failOn = choice("fail-on", flags.string("fail-on"), FAIL_ON, "loss");
    const sampleStrategy = choice(
      "sample-strategy",
      flags.string("sample-strategy"),
      SAMPLE_STRATEGIES,
      "first",
    );
    const concurrency = integerFlag(flags, "concurrency", [
      Number.MIN_SAFE_INTEGER,
      Number.MAX_SAFE_INTEGER,
    ]) ?? 0;
    const fuzz = integerFlag(flags, "fuzz", [1, MAX_FUZZ_OBJECTS]);
    const given = integerFlag(flags, "seed", [0, 2 ** 32 - 1]);
    const maxSamples = integerFlag(flags, "max-samples", [1, Number.MAX_SAFE_INTEGER]);
    if (!flags.has("samples") && !flags.bool("live") && fuzz === undefined) {
      throw new CliError("one of the flags --samples, --live, --fuzz is required");
    }
    return {
      failOn,
      concurrency,
      fuzz,
      seed: given ?? randomSeed(),
      maxSamples,
      sampleStrategy,
    };
  },
  run: runTest,
  output: {
    formats: {
      table: (r) => isFleet(r) ? renderFleetTable(r.fleet) : renderTestTable(r.report),
      json: (r) => toJson(isFleet(r) ? r.fleet : r.report),
      junit: (r) => isFleet(r) ? renderFleetJunit(r.fleet) : renderJunit(r.report),
      ...ciFormats(findingsOf, title),
    },
    default: "table",
  },
  write: async (text, r, { flags, io }) => {
    const outputFile = flags.string("output-file");
    if (outputFile === undefined) return io.out(text);
    try {
      await Deno.writeTextFile(outputFile, text);
    } catch (e) {
      throw new CliError(`cannot write ${outputFile}: ${(e as Error).message}`);
    }
    const summary = isFleet(r) ? fleetLine(r.fleet) : summaryLine(r.report);
    io.out(`output written to file ${outputFile}\n${summary}\n`);
  },
  exitCode: (r, { flags, options }) =>
    isFleet(r)
      ? fleetExitCode(r.fleet, options.failOn, flags.bool("strict"))
      : exitCodeFor(r.report, options.failOn, flags.bool("strict")),
});
