/**
 * `convctl fuzz` (new, beyond the reference CLI): generate schema-valid objects for every
 * configured version, round-trip each through every other configured version, and report every
 * direction the analysis declares lossless that does not round-trip — plus conversion errors on
 * valid input — each with a shrunk, minimal failing object. Deterministic for a given seed.
 */
import { analyze } from "../engine/mod.ts";
import { CliError, FLAGS, outputFlag } from "./args.ts";
import { defineCommand, type SchemaInvocation } from "./command.ts";
import { type FuzzReport, renderFuzzTable } from "./fuzz_report.ts";
import { runFuzz } from "./fuzz_run.ts";
import { requireCleanAnalysis, requireGroup, requireStructurallyValid } from "./gates.ts";
import { progressLine, toJson } from "./output.ts";

/** Most objects per version: a run stays within seconds to minutes. */
export const MAX_FUZZ_OBJECTS = 10_000;

/** A non-negative integer flag within [min, max]. */
function parseInteger(
  flag: string,
  raw: string | undefined,
  dflt: number,
  range: [number, number],
) {
  if (raw === undefined) return dflt;
  const [min, max] = range;
  const n = /^\d+$/.test(raw.trim()) ? Number(raw.trim()) : NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    const shown = JSON.stringify(raw);
    throw new CliError(
      `invalid value ${shown} for --${flag}: expected an integer from ${min} to ${max}`,
    );
  }
  return n;
}

function shellQuote(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}

interface FuzzFlags {
  perVersion: number;
  seed: number;
}

/** The command line that reruns this fuzz run, for the table's last line. */
function reproduceCommand({ flags, config, options }: SchemaInvocation<FuzzFlags>): string {
  const schemaFlag = flags.has("xrd")
    ? ["-x", flags.string("xrd")!]
    : ["--crd", flags.string("crd")!];
  return [
    "convctl",
    "fuzz",
    "-c",
    config.file,
    ...schemaFlag,
    "-n",
    String(options.perVersion),
    "--seed",
    String(options.seed),
    ...flags.list("version").flatMap((v) => ["--version", v]),
  ].map(shellQuote).join(" ");
}

export const fuzzCommand = defineCommand({
  name: "fuzz",
  usage: "convctl fuzz -c CONFIG (-x XRD | --crd CRD) [-n N] [--seed S] [--version V]... " +
    "[-o table|json] [--quiet]",
  summary: "Round-trip generated objects and report lossless-declared directions that lose data.",
  target: "config+schema",
  flags: [
    {
      name: "count",
      short: "n",
      kind: "string",
      value: "N",
      help: `objects generated per version (1–${MAX_FUZZ_OBJECTS})`,
      default: "200",
    },
    {
      name: "seed",
      kind: "string",
      value: "S",
      help: "seed of the generator (a non-negative integer); same seed, same report",
      default: "1",
    },
    {
      name: "version",
      kind: "list",
      value: "V",
      help: "generate objects only at these configured versions (repeatable, comma-separated)",
      default: "every configured version",
    },
    outputFlag("table or json", "table"),
    FLAGS.quiet,
  ],
  options: (flags): FuzzFlags => ({
    perVersion: parseInteger("count", flags.string("count"), 200, [1, MAX_FUZZ_OBJECTS]),
    seed: parseInteger("seed", flags.string("seed"), 1, [0, Number.MAX_SAFE_INTEGER]),
  }),
  run: ({ flags, io, config, source, spec, options }): FuzzReport => {
    requireStructurallyValid(spec);
    requireGroup(source);
    const analysis = analyze(source, spec);
    requireCleanAnalysis(analysis, "cannot fuzz conversions");

    const progress = progressLine(io, !flags.bool("quiet"));
    let report: FuzzReport;
    try {
      report = runFuzz(analysis, source, {
        configName: config.name,
        seed: options.seed,
        perVersion: options.perVersion,
        versions: flags.list("version"),
        onProgress: (done, total) => progress.update(`fuzzed ${done}/${total} objects`),
      });
    } finally {
      progress.done();
    }
    if (report.skipped > 0) {
      const total = report.perVersion * report.versions.length;
      io.err(
        `warning: ${report.skipped} of ${total} generated object(s) skipped: a required value ` +
          `could not be made valid (see generatorGaps)\n`,
      );
    }
    return report;
  },
  output: {
    formats: {
      table: (report, invocation) => renderFuzzTable(report, reproduceCommand(invocation)),
      json: toJson,
    },
    default: "table",
  },
  exitCode: (report) => report.findings.length > 0 ? 1 : 0,
});
