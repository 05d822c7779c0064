/**
 * The fuzz run behind `convctl fuzz`: generate schema-valid objects for every configured version,
 * round-trip each through every other configured version, group failures by path and signature,
 * and shrink one object per group. Deterministic for a given seed.
 */
import {
  type AnalysisResult,
  convertObject,
  createRouter,
  type Direction,
  type JsonObject,
  type JsonValue,
  type Router,
  type SchemaNode,
  type SchemaSource,
} from "../engine/mod.ts";
import { type GenerateOptions, generateResource } from "../engine/generate.ts";
import { isJsonObject } from "../lib/json.ts";
import { stringifyJson } from "../lib/json_exact.ts";
import { CliError } from "./args.ts";
import type { FuzzDirection, FuzzFinding, FuzzGeneratorGap, FuzzReport } from "./fuzz_report.ts";
import { sortKeysDeep } from "./output.ts";
import { type Repair, repairByDeletion, shrink, withoutEmptyObjects } from "./shrink.ts";
import { exercisedVersions } from "./test_run.ts";
import { leafDiff, valueAtDiffPath, withoutIndices } from "./test_report.ts";

/** Most predicate calls spent shrinking one finding. */
export const SHRINK_BUDGET = 2000;

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
  custom?: GenerateOptions["custom"],
): Repair {
  const schema = source.versions.find((v) => v.name === version)?.schema;
  const generated = generateResource(schema, {
    apiVersion: `${source.group}/${version}`,
    kind: source.targetKind,
    name: `fuzz-${version}-${index}`,
    seed: `${seed}/${version}/${index}`,
    custom,
  });
  return repairByDeletion(generated, schema);
}

const QUANTITIES = ["0", "1", "100m", "1500m", "2", "64Mi", "1Gi", "2k", "3M", "0.5"];
const DURATIONS = ["0s", "1s", "45s", "1m", "1m30s", "2h", "1h30m", "24h"];

/**
 * Values in the lexical form a Quantity or Duration rule reads at `version`: a random string
 * would only exercise the rule's parse error. Integer sides get small non-negative values (whole
 * seconds, milli-units) so the string side can represent them. Other paths are left to the schema.
 */
export function unitShaper(
  analysis: AnalysisResult,
  version: string,
): GenerateOptions["custom"] | undefined {
  const shaped = new Map<string, readonly string[]>();
  for (const spoke of analysis.spokes) {
    for (const r of spoke.ruleResults) {
      const forms = r.strategy === "Quantity"
        ? QUANTITIES
        : r.strategy === "Duration"
        ? DURATIONS
        : undefined;
      if (forms === undefined) continue;
      const paths = version === analysis.hubVersion
        ? r.hubPaths
        : spoke.version === version
        ? r.spokePaths
        : [];
      for (const p of paths) shaped.set(withoutIndices(p), forms);
    }
  }
  if (shaped.size === 0) return undefined;
  return (node, path, rng) => {
    const forms = shaped.get(path.filter((s) => s !== "[]" && s !== "{}").join("."));
    if (forms === undefined) return undefined;
    if (node.type === "string") return rng.pick(forms);
    if (node.type === "integer") return rng.int(0, 86_400);
    return undefined;
  };
}

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

/** Paths of the non-map values and empty maps under a map. */
function leavesUnder(v: JsonValue, path: string): string[] {
  if (!isJsonObject(v) || Object.keys(v).length === 0) return [path];
  return Object.keys(v).flatMap((k) => leavesUnder(v[k], `${path}.${k}`));
}

function describe(v: JsonValue | undefined): string {
  return v === undefined ? "absent" : stringifyJson(v);
}

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
      if (isJsonObject(a) && !isJsonObject(b)) return leavesUnder(a, f);
      if (isJsonObject(b) && !isJsonObject(a)) return leavesUnder(b, f);
      return [f];
    });
    return [...new Set(fields.map((f) => `loss ${withoutIndices(f)}`))];
  };

  const shapers = new Map(origins.map((v) => [v, unitShaper(analysis, v)]));
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
      const { object, gaps: broken, valid } = generateFuzzObject(
        source,
        from,
        options.seed,
        index,
        shapers.get(from),
      );
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
