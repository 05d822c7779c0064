/**
 * `convctl fuzz` (new, beyond the reference CLI): generate schema-valid objects for every
 * configured version, round-trip each through every other configured version, and report every
 * direction the analysis declares lossless that does not round-trip — plus conversion errors on
 * valid input — each with a shrunk, minimal failing object. Deterministic for a given seed.
 */
import { engineSpecOf } from "../api/mod.ts";
import {
  type AnalysisResult,
  analyze,
  convertObject,
  createRouter,
  type Direction,
  type JsonObject,
  type JsonValue,
  type Router,
  type SchemaNode,
  type SchemaSource,
  structuralError,
} from "../engine/mod.ts";
import { generateResource } from "../engine/generate.ts";
import {
  choice,
  CliError,
  type CommandSpec,
  FLAGS,
  mutuallyExclusive,
  noPositionals,
  oneRequired,
  type ParsedFlags,
  requireFlags,
} from "./args.ts";
import { requireCleanAnalysis } from "./gates.ts";
import { loadTarget } from "./load.ts";
import { type Io, renderTable, sortKeysDeep, toJson, toYaml } from "./output.ts";
import { type Repair, repairByDeletion, shrink, withoutEmptyObjects } from "./shrink.ts";
import { exercisedVersions } from "./test.ts";
import { leafDiff, valueAtDiffPath, withoutIndices } from "./test_report.ts";

/** Most objects per version (the cap cli.md §13.4 sets for `test --fuzz`). */
export const MAX_FUZZ_OBJECTS = 10_000;
/** Most predicate calls spent shrinking one finding. */
export const SHRINK_BUDGET = 2000;

const OUTPUTS = ["table", "json"] as const;

export const fuzzCommand: CommandSpec = {
  name: "fuzz",
  usage: "convctl fuzz -c CONFIG (-x XRD | --crd CRD) [-n N] [--seed S] [--version V]... " +
    "[-o table|json] [--quiet]",
  summary: "Round-trip generated objects and report lossless-declared directions that lose data.",
  flags: [
    { ...FLAGS.config, help: `${FLAGS.config.help} (required)` },
    FLAGS.xrd,
    FLAGS.crd,
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
    {
      name: "output",
      short: "o",
      kind: "string",
      value: "FORMAT",
      help: "table or json",
      default: "table",
    },
    { name: "quiet", kind: "bool", help: "no progress line on stderr" },
  ],
};

// ---------------------------------------------------------------------------------------------
// Report shape (the JSON contract of `-o json`)

export type FuzzFindingClass = "round-trip-loss" | "conversion-error";

/** One conversion direction a round trip exercises, with the analysis verdict for it. */
export interface FuzzDirection {
  spoke: string;
  direction: Direction;
  lossless: boolean;
}

export interface FuzzFieldDiff {
  /** A leaf-diff path (`spec.items[0].name`). */
  field: string;
  /** `<original> came back as <round-tripped>` (`absent` for a missing value). */
  detail: string;
}

export interface FuzzFinding {
  class: FuzzFindingClass;
  /** The version the object was generated at; the round trip is `from → to → from`. */
  from: string;
  to: string;
  /** Every direction the round trip exercises, forward legs first. */
  directions: FuzzDirection[];
  /** round-trip-loss: the leaf diff of the shrunk object. */
  fields?: FuzzFieldDiff[];
  /** conversion-error: which conversion failed (`forward` = from → to, `back` = to → from). */
  leg?: "forward" | "back";
  /** conversion-error: the engine's message for the shrunk object. */
  error?: string;
  /** The generated object that first failed this way: `seed`, its version and index. */
  seed: number;
  version: string;
  index: number;
  /** How many generated objects failed this way on this path. */
  occurrences: number;
  /** Shrink steps taken from the generated object to `object`. */
  shrinkSteps: number;
  /** The smallest failing object found (keys sorted). */
  object: JsonObject;
}

export interface FuzzReport {
  resourceKind: "XRD" | "CRD";
  resource: string;
  config: string;
  hubVersion: string;
  /** Versions objects were generated at. */
  versions: string[];
  seed: number;
  perVersion: number;
  /** Round trips run (valid objects × other configured versions). */
  pathsTested: number;
  /** Generated objects left untested because a required value could not be made valid. */
  skipped: number;
  /** Constraints the generator could not satisfy (omitted when none). */
  generatorGaps?: FuzzGeneratorGap[];
  findings: FuzzFinding[];
}

/**
 * A constraint generated values broke. An optional value is left out of the object (`leftOut`
 * counts those objects); when no optional value encloses it, the object is skipped.
 */
export interface FuzzGeneratorGap {
  version: string;
  field: string;
  constraint: string;
  leftOut: number;
  skipped: number;
}

// ---------------------------------------------------------------------------------------------
// Generation

/**
 * The `index`-th generated object of `version` for `seed`: `apiVersion` `<group>/<version>`, the
 * target kind, `metadata.name` `fuzz-<version>-<index>`, and a body generated from the version's
 * schema. Each object has its own stream (`<seed>/<version>/<index>`), so an object never depends
 * on `-n` or on the other versions. Optional values the generator could not get right (patterns
 * are best effort) are left out; `valid` is false when a required one is among them.
 */
export function generateFuzzObject(
  source: SchemaSource,
  version: string,
  seed: number,
  index: number,
): Repair {
  const schema = source.versions.find((v) => v.name === version)?.schema;
  const generated = generateResource(schema, {
    apiVersion: `${source.group}/${version}`,
    kind: source.targetKind,
    name: `fuzz-${version}-${index}`,
    seed: `${seed}/${version}/${index}`,
  });
  return repairByDeletion(generated, schema);
}

// ---------------------------------------------------------------------------------------------
// One round trip

interface RoundTrip {
  error?: { leg: "forward" | "back"; message: string };
  /** Normalised original and round-tripped object, and their leaf diff. */
  original?: JsonObject;
  back?: JsonObject;
  diffs?: string[];
}

function messageOf(e: unknown): string {
  if (e instanceof Error) {
    return e.name === "ConversionError" ? e.message : `${e.name}: ${e.message}`;
  }
  return String(e);
}

/** Indices, quoted values and numbers vary between objects that fail the same way. */
function errorSignature(message: string): string {
  return message.replace(/\[\d+\]/g, "[]").replace(/"(?:[^"\\]|\\.)*"/g, '"…"')
    .replace(/\b\d+(\.\d+)?\b/g, "N");
}

function isMap(v: JsonValue | undefined): v is JsonObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Paths of the non-map values and empty maps under a map. */
function leavesUnder(v: JsonValue, path: string): string[] {
  if (!isMap(v) || Object.keys(v).length === 0) return [path];
  return Object.keys(v).flatMap((k) => leavesUnder(v[k], `${path}.${k}`));
}

function describe(v: JsonValue | undefined): string {
  return v === undefined ? "absent" : JSON.stringify(v);
}

// ---------------------------------------------------------------------------------------------
// The run

export interface FuzzOptions {
  configName: string;
  seed: number;
  perVersion: number;
  /** Versions to generate at (empty = every configured version). */
  versions: readonly string[];
  onProgress?: (done: number, total: number) => void;
}

/** The first object that failed one way on one path, and how many did. */
interface Recorded {
  from: string;
  to: string;
  signature: string;
  index: number;
  object: JsonObject;
  occurrences: number;
}

/** Generates, round-trips, groups failures by path and signature, shrinks one object per group. */
export function runFuzz(
  analysis: AnalysisResult,
  source: SchemaSource,
  options: FuzzOptions,
): FuzzReport {
  const router: Router = createRouter(analysis);
  const hub = analysis.hubVersion;
  const served = source.versions.filter((v) => v.served).map((v) => v.name);
  const { configured } = exercisedVersions(analysis, served, []);
  for (const v of options.versions) {
    if (!configured.includes(v)) {
      throw new CliError(
        `--version ${v} is not a configured version (configured: ${configured.join(", ")})`,
      );
    }
  }
  const origins = configured.filter((v) =>
    options.versions.length === 0 || options.versions.includes(v)
  );
  const schemaOf = new Map<string, SchemaNode | undefined>(
    source.versions.map((v) => [v.name, v.schema]),
  );
  const verdict = new Map(analysis.spokes.map((s) => [s.version, s.lossless]));
  const apiVersion = (v: string) => `${source.group}/${v}`;

  const directionsOf = (from: string, to: string): FuzzDirection[] => {
    const legs: [string, Direction][] = [];
    if (from !== hub) legs.push([from, "spokeToHub"]);
    if (to !== hub) legs.push([to, "hubToSpoke"], [to, "spokeToHub"]);
    if (from !== hub) legs.push([from, "hubToSpoke"]);
    return legs.map(([spoke, direction]) => ({
      spoke,
      direction,
      lossless: verdict.get(spoke)?.[direction] ?? false,
    }));
  };

  const roundTrip = (obj: JsonObject, from: string, to: string): RoundTrip => {
    let forward: JsonObject;
    try {
      forward = convertObject(router, obj, apiVersion(to));
    } catch (e) {
      return { error: { leg: "forward", message: messageOf(e) } };
    }
    let back: JsonObject;
    try {
      back = convertObject(router, forward, apiVersion(from));
    } catch (e) {
      return { error: { leg: "back", message: messageOf(e) } };
    }
    const schema = schemaOf.get(from);
    const original = withoutEmptyObjects(obj, schema);
    const normalisedBack = withoutEmptyObjects(back, schema);
    return { original, back: normalisedBack, diffs: leafDiff(original, normalisedBack) };
  };

  /**
   * What a round trip counts as: one signature per error; on lossless paths one per differing
   * leaf (indices removed). A map that vanished or appeared as a whole counts by the leaves (and
   * empty containers) inside it, so `spec: {m: {}}` and `spec: {m: {}, x: 1}` fail the same way.
   */
  const signatures = (r: RoundTrip, lossless: boolean): string[] => {
    if (r.error !== undefined) return [`error ${r.error.leg} ${errorSignature(r.error.message)}`];
    if (!lossless) return [];
    const fields = (r.diffs ?? []).flatMap((f) => {
      const a = valueAtDiffPath(r.original!, f);
      const b = valueAtDiffPath(r.back!, f);
      if (isMap(a) && !isMap(b)) return leavesUnder(a, f);
      if (isMap(b) && !isMap(a)) return leavesUnder(b, f);
      return [f];
    });
    return [...new Set(fields.map((f) => `loss ${withoutIndices(f)}`))];
  };

  const recorded = new Map<string, Recorded>();
  const gaps = new Map<string, FuzzGeneratorGap>();
  const total = origins.length * options.perVersion;
  let done = 0;
  let skipped = 0;
  let pathsTested = 0;
  for (const from of origins) {
    const targets = configured.filter((t) => t !== from);
    const lossless = new Map(
      targets.map((t) => [t, directionsOf(from, t).every((d) => d.lossless)]),
    );
    let skippedHere = 0;
    for (let index = 0; index < options.perVersion; index++) {
      const { object, gaps: broken, valid } = generateFuzzObject(source, from, options.seed, index);
      broken.forEach((g, i) => {
        const key = `${from}\u0000${g.field}\u0000${g.keyword}`;
        const gap = gaps.get(key) ??
          { version: from, field: g.field, constraint: g.keyword, leftOut: 0, skipped: 0 };
        // Every gap but an invalid object's last one was fixed by leaving the value out.
        if (!valid && i === broken.length - 1) gap.skipped++;
        else gap.leftOut++;
        gaps.set(key, gap);
      });
      done++;
      if (done % 50 === 0 || done === total) options.onProgress?.(done, total);
      if (!valid) {
        skippedHere++;
        continue;
      }
      for (const to of targets) {
        pathsTested++;
        for (const signature of signatures(roundTrip(object, from, to), lossless.get(to)!)) {
          const key = `${from}\u0000${to}\u0000${signature}`;
          const rec = recorded.get(key) ?? { from, to, signature, index, object, occurrences: 0 };
          rec.occurrences++;
          recorded.set(key, rec);
        }
      }
    }
    if (skippedHere === options.perVersion) {
      const blocked = [...gaps.values()].filter((g) => g.version === from && g.skipped > 0);
      throw new CliError(
        `no valid ${from} object could be generated: the generator cannot satisfy ` +
          blocked.map((g) => `${g.field} (${g.constraint})`).join(", ") +
          " and the field is required",
      );
    }
    skipped += skippedHere;
  }

  const findings = [...recorded.values()].map((rec): FuzzFinding => {
    const directions = directionsOf(rec.from, rec.to);
    const lossless = directions.every((d) => d.lossless);
    const shrunk = shrink(rec.object, {
      schema: schemaOf.get(rec.from),
      fails: (candidate) =>
        signatures(roundTrip(candidate, rec.from, rec.to), lossless).includes(rec.signature),
      budget: SHRINK_BUDGET,
    });
    const result = roundTrip(shrunk.object, rec.from, rec.to);
    const outcome: Pick<FuzzFinding, "class" | "fields" | "leg" | "error"> =
      result.error !== undefined
        ? { class: "conversion-error", leg: result.error.leg, error: result.error.message }
        : {
          class: "round-trip-loss",
          fields: (result.diffs ?? []).map((field) => ({
            field,
            detail: `${describe(valueAtDiffPath(result.original!, field))} came back as ${
              describe(valueAtDiffPath(result.back!, field))
            }`,
          })),
        };
    return {
      class: outcome.class,
      from: rec.from,
      to: rec.to,
      directions,
      ...(outcome.fields !== undefined ? { fields: outcome.fields } : {}),
      ...(outcome.leg !== undefined ? { leg: outcome.leg, error: outcome.error } : {}),
      seed: options.seed,
      version: rec.from,
      index: rec.index,
      occurrences: rec.occurrences,
      shrinkSteps: shrunk.steps,
      object: sortKeysDeep(shrunk.object) as JsonObject,
    };
  });

  return {
    resourceKind: analysis.kind,
    resource: analysis.target === "" ? "(unnamed)" : analysis.target,
    config: options.configName,
    hubVersion: hub,
    versions: origins,
    seed: options.seed,
    perVersion: options.perVersion,
    pathsTested,
    skipped,
    ...(gaps.size > 0 ? { generatorGaps: [...gaps.values()] } : {}),
    findings,
  };
}

// ---------------------------------------------------------------------------------------------
// Rendering

const DIRECTION_LABEL: Record<Direction, string> = {
  hubToSpoke: "hub→spoke",
  spokeToHub: "spoke→hub",
};

function indent(text: string, prefix: string): string {
  return text.replace(/\n$/, "").split("\n").map((l) => prefix + l).join("\n") + "\n";
}

export function renderFuzzTable(report: FuzzReport, reproduce: string): string {
  let text = `${report.resourceKind} Conversion Fuzz Report\n`;
  text += `target: ${report.resource}  config: ${report.config}  hub: ${report.hubVersion}\n`;
  text += `seed: ${report.seed}  objects: ${report.perVersion} per version (` +
    `${report.versions.join(", ")})  round trips: ${report.pathsTested}` +
    (report.skipped > 0 ? `  skipped objects: ${report.skipped}` : "") + "\n";
  if (report.generatorGaps !== undefined) {
    text += `\nGENERATOR GAPS (values the generator could not make valid: left out, or the ` +
      `object skipped when required)\n`;
    text += renderTable(
      ["VERSION", "FIELD", "CONSTRAINT", "LEFT OUT", "SKIPPED"],
      report.generatorGaps.map((g) => [
        g.version,
        g.field,
        g.constraint,
        String(g.leftOut),
        String(g.skipped),
      ]),
      "  ",
    );
  }
  if (report.findings.length > 0) text += `\nFINDINGS (${report.findings.length})\n`;
  report.findings.forEach((f, i) => {
    const route = f.class === "conversion-error"
      ? `${f.leg === "forward" ? `${f.from}→${f.to}` : `${f.to}→${f.from}`} (${f.leg} leg of ` +
        `${f.from}→${f.to}→${f.from})`
      : `${f.from}→${f.to}→${f.from}`;
    text += `\n#${i + 1} ${f.class}  ${route}\n`;
    const directions = f.directions.map((d) =>
      `${d.spoke} ${DIRECTION_LABEL[d.direction]} (${d.lossless ? "lossless" : "LOSSY"})`
    );
    text += `  directions: ${directions.join(", ")}\n`;
    text += `  found by:   seed ${f.seed}, ${f.version} object ${f.index} ` +
      `(${f.occurrences} generated object(s) fail this way)\n`;
    if (f.error !== undefined) text += `  error:      ${f.error}\n`;
    for (const d of f.fields ?? []) text += `  field:      ${d.field}: ${d.detail}\n`;
    text += `  shrunk object (${f.shrinkSteps} step(s)):\n`;
    text += indent(toYaml(f.object), "    ");
  });
  const summary = report.findings.length === 0
    ? `no findings in ${report.pathsTested} round trips: every declared-lossless direction ` +
      `round-tripped`
    : `${report.findings.length} finding(s) in ${report.pathsTested} round trips`;
  return `${text}\nSUMMARY: ${summary} (seed ${report.seed}; reproduce with: ${reproduce})\n`;
}

// ---------------------------------------------------------------------------------------------
// Command

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

export async function runFuzzCommand(flags: ParsedFlags, io: Io): Promise<number> {
  noPositionals(flags, "fuzz");
  requireFlags(flags, "config");
  mutuallyExclusive(flags, "xrd", "crd");
  oneRequired(flags, "xrd", "crd");
  const output = choice("output", flags.string("output"), OUTPUTS, "table");
  const perVersion = parseInteger("count", flags.string("count"), 200, [1, MAX_FUZZ_OBJECTS]);
  const seed = parseInteger("seed", flags.string("seed"), 1, [0, Number.MAX_SAFE_INTEGER]);

  const { config, schema } = await loadTarget(flags, "required");
  const spec = engineSpecOf(config.config);
  const structural = structuralError(spec);
  if (structural !== undefined) {
    throw new CliError(`configuration is structurally invalid: ${structural}`);
  }
  const source = schema!.source;
  if (source.group === "") throw new CliError(`${source.kind} file has no spec.group`);
  const analysis = analyze(source, spec);
  requireCleanAnalysis(analysis, "cannot fuzz conversions");

  const quiet = flags.bool("quiet");
  let progressShown = false;
  let report: FuzzReport;
  try {
    report = runFuzz(analysis, source, {
      configName: config.name,
      seed,
      perVersion,
      versions: flags.list("version"),
      onProgress: quiet ? undefined : (done, total) => {
        progressShown = true;
        io.err(`\rfuzzed ${done}/${total} objects`);
      },
    });
  } finally {
    if (progressShown) io.err("\n");
  }
  if (report.skipped > 0) {
    const total = report.perVersion * report.versions.length;
    io.err(
      `warning: ${report.skipped} of ${total} generated object(s) skipped: a required value ` +
        `could not be made valid (see generatorGaps)\n`,
    );
  }

  if (output === "json") {
    io.out(toJson(report));
  } else {
    const schemaFlag = flags.has("xrd")
      ? ["-x", flags.string("xrd")!]
      : ["--crd", flags.string("crd")!];
    const reproduce = [
      "convctl",
      "fuzz",
      "-c",
      config.file,
      ...schemaFlag,
      "-n",
      String(perVersion),
      "--seed",
      String(seed),
      ...flags.list("version").flatMap((v) => ["--version", v]),
    ].map(shellQuote).join(" ");
    io.out(renderFuzzTable(report, reproduce));
  }
  return report.findings.length > 0 ? 1 : 0;
}
