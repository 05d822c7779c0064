/**
 * The run behind `convctl test`: one sample at a time through every target version, graded as
 * pass, acknowledged loss, unacknowledged loss or error (docs/design/cli.md#grading-a-round-trip),
 * and the report built from the graded samples. A sample's grading depends on nothing but the
 * sample, so samples can be graded in any order or in parallel and the report is the same.
 */
import {
  type AnalysisResult,
  ConversionError,
  convertObject,
  createRouter,
  type JsonObject,
  type Router,
  type SchemaSource,
} from "../engine/mod.ts";
import { validateStructural } from "../engine/structural_validate.ts";
import { createRng } from "../engine/generate_rng.ts";
import { isJsonObject } from "../lib/json.ts";
import { rfc3339 } from "../lib/time.ts";
import { stringifyJson } from "../lib/json_exact.ts";
import type { Sample } from "./load.ts";
import {
  isAcknowledged,
  leafCount,
  leafDiff,
  type SampleStrategy,
  type TestIssue,
  type TestPath,
  type TestReport,
  type TestSample,
  valueAtDiffPath,
  withoutIndices,
} from "./test_report.ts";

export interface TestRunOptions {
  /** Only these target versions (from `--version-pair`); empty = all configured. */
  versionPairs: readonly string[];
  skipIdentity: boolean;
  /** Check every converted object against its destination version's schema. */
  validateOutput: boolean;
}

/** The object one path produced (the sample itself on an identity path). */
export interface ConvertedOutput {
  from: string;
  to: string;
  object: JsonObject;
}

export interface SampleOutcome {
  sample: TestSample;
  outputs: ConvertedOutput[];
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

/** `<spoke>:rule[<index>]:<Strategy>` of every top-level rule, per spoke, in config order. */
export function ruleIdsBySpoke(analysis: AnalysisResult): Map<string, string[]> {
  return new Map(
    analysis.spokes.map((s) => [
      s.version,
      s.ruleResults.map((r) => `${s.version}:rule[${r.index}]:${r.strategy}`),
    ]),
  );
}

function micros(start: number): number {
  return Math.round((performance.now() - start) * 1000);
}

function describe(v: unknown): string {
  return v === undefined ? "absent" : stringifyJson(v);
}

const under = (path: string, root: string) =>
  root === "" || path === root || path.startsWith(`${root}.`);

/** Grades one sample at a time; `source` gives the destination schemas for `validateOutput`. */
export function createSampleTester(
  analysis: AnalysisResult,
  source: SchemaSource,
  served: readonly string[],
  options: TestRunOptions,
): (sample: Sample) => SampleOutcome {
  const router: Router = createRouter(analysis);
  const hub = analysis.hubVersion;
  const { configured, targets } = exercisedVersions(analysis, served, options.versionPairs);
  const spokeByVersion = new Map(analysis.spokes.map((s) => [s.version, s]));
  const ruleIds = ruleIdsBySpoke(analysis);
  const schemaOf = new Map(source.versions.map((v) => [v.name, v.schema]));
  const injectedRoots = source.kind === "XRD" ? source.injected?.roots ?? [] : [];

  // Per spoke: the paths its lossy rules declare.
  const lossyPaths = new Map<string, Set<string>>();
  for (const s of analysis.spokes) {
    const lossy = new Set<string>();
    for (const r of s.ruleResults) {
      if (!r.lossless.hubToSpoke || !r.lossless.spokeToHub) {
        for (const p of [...r.hubPaths, ...r.spokePaths]) lossy.add(p);
      }
    }
    lossyPaths.set(s.version, lossy);
  }

  /** The rule id claiming a destination path, when exactly one rule does. */
  const claimant = (from: string, to: string, field: string): string | undefined => {
    const plain = withoutIndices(field);
    const claims: string[] = [];
    const spoke = to === hub ? spokeByVersion.get(from) : spokeByVersion.get(to);
    if (spoke === undefined) return undefined;
    spoke.ruleResults.forEach((r, i) => {
      const paths = to === hub ? r.hubPaths : r.spokePaths;
      if (paths.some((p) => under(plain, p) || under(p, plain))) {
        claims.push(ruleIds.get(spoke.version)![i]);
      }
    });
    return claims.length === 1 ? claims[0] : undefined;
  };

  const apiVersion = (v: string) => `${analysis.group}/${v}`;

  const testPath = (sample: Sample, to: string, outputs: ConvertedOutput[]): TestPath => {
    const from = sample.version;
    const start = performance.now();
    if (to === from) {
      outputs.push({ from, to, object: sample.object });
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
    outputs.push({ from, to, object: forward });
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
    if (options.validateOutput) {
      const { violations } = validateStructural(schemaOf.get(to), forward);
      for (const v of violations) {
        if (injectedRoots.some((root) => under(v.path, root))) continue;
        const rule = claimant(from, to, v.path);
        const detail = `${v.constraint}: ${v.message}${rule === undefined ? "" : ` (${rule})`}`;
        issues.push(issue(v.path === "" ? "(root)" : v.path, "schema-violation", detail));
      }
    }
    const result = issues.some((i) => i.type === "schema-violation")
      ? "error"
      : issues.some((i) => i.type === "unacknowledged-loss")
      ? "fail"
      : issues.length > 0
      ? "loss"
      : "pass";
    const rulesMatched = touched.flatMap((v) => ruleIds.get(v) ?? []);
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

  return (sample) => {
    const v = sample.version;
    const outputs: ConvertedOutput[] = [];
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
        testPath(sample, t, outputs)
      );
    }
    return { sample: { file: sample.name, assertedVersion: v, paths }, outputs };
  };
}

/** What the report header names. */
export interface ReportContext {
  configName: string;
  served: readonly string[];
  /** `performance.now()` when the run started. */
  started: number;
}

/**
 * The report over graded samples (in input order). A rule's coverage counts the graded paths
 * (not error paths) whose touched spokes include the rule's spoke.
 */
export function buildTestReport(
  analysis: AnalysisResult,
  results: readonly TestSample[],
  context: ReportContext,
): TestReport {
  const usage = new Map<string, number>();
  for (const ids of ruleIdsBySpoke(analysis).values()) for (const id of ids) usage.set(id, 0);
  const all = results.flatMap((s) => s.paths);
  for (const p of all) {
    if (p.result === "error") continue;
    for (const id of p.rulesMatched ?? []) {
      if (usage.has(id)) usage.set(id, usage.get(id)! + 1);
    }
  }
  const count = (r: TestPath["result"]) => all.filter((p) => p.result === r).length;
  const report: TestReport = {
    meta: {
      resourceKind: analysis.kind,
      resource: analysis.target === "" ? "(unnamed)" : analysis.target,
      config: context.configName,
      hubVersion: analysis.hubVersion,
      servedVersions: [...context.served],
      generatedAt: rfc3339(Date.now()),
      durationMs: Math.round((performance.now() - context.started) * 1000) / 1000,
    },
    summary: {
      samples: results.length,
      pathsTested: all.length,
      pass: count("pass"),
      acknowledgedLoss: count("loss"),
      unacknowledgedLoss: count("fail"),
      errors: count("error"),
    },
    samples: [...results],
  };
  const coverage = [...usage].map(([ruleId, matchedSamples]) => ({ ruleId, matchedSamples }));
  if (coverage.length > 0) report.ruleCoverage = coverage;
  return report;
}

/**
 * `--max-samples N --sample-strategy S` over an ordered population: `first` keeps the first N,
 * `random` a reservoir sample reproducible by `seed`, `newest` the N with the latest
 * `metadata.creationTimestamp` (objects without one count as oldest). The kept samples stay in
 * population order, so the report order does not depend on the strategy.
 */
export function selectSamples<T extends { object: JsonObject }>(
  population: readonly T[],
  max: number,
  strategy: SampleStrategy,
  seed: number,
): T[] {
  if (population.length <= max) return [...population];
  const selector = new SampleSelector<T>(max, strategy, seed, (t) => t.object);
  for (const t of population) selector.offer(t);
  return selector.kept();
}

/**
 * The streaming form of {@link selectSamples}, for a population that arrives page by page (live
 * objects): offer each item once, in order; `full` says when `first` needs no more; `kept()` is
 * the selection in population order. Same seed, same order of offers → same selection.
 */
export class SampleSelector<T> {
  #max: number;
  #strategy: SampleStrategy;
  #rng;
  #objectOf: (t: T) => JsonObject;
  /** Reservoir / kept slots: [population index, item, creation time]. */
  #slots: [number, T, number][] = [];
  #offered = 0;

  constructor(max: number, strategy: SampleStrategy, seed: number, objectOf: (t: T) => JsonObject) {
    this.#max = max;
    this.#strategy = strategy;
    this.#rng = createRng(`sample/${seed}`);
    this.#objectOf = objectOf;
  }

  /** How many items were offered. */
  get offered(): number {
    return this.#offered;
  }

  /** True when more offers cannot change the selection (`first` with N kept). */
  get full(): boolean {
    return this.#strategy === "first" && this.#slots.length >= this.#max;
  }

  offer(item: T): void {
    const i = this.#offered++;
    const slots = this.#slots;
    if (slots.length < this.#max) {
      slots.push([i, item, this.#created(item)]);
      // Kept newest first (earlier first on ties) once full, so the oldest is the last.
      if (this.#strategy === "newest" && slots.length === this.#max) {
        slots.sort((a, b) => b[2] - a[2] || a[0] - b[0]);
      }
      return;
    }
    if (this.#strategy === "random") {
      const j = this.#rng.int(0, i);
      if (j < this.#max) slots[j] = [i, item, 0];
    } else if (this.#strategy === "newest") {
      const created = this.#created(item);
      // A later item loses ties, so only a strictly newer one displaces the oldest.
      if (!(created > slots[slots.length - 1][2])) return;
      const at = slots.findIndex((s) => created > s[2]);
      slots.splice(at, 0, [i, item, created]);
      slots.pop();
    }
  }

  kept(): T[] {
    return [...this.#slots].sort((a, b) => a[0] - b[0]).map(([, item]) => item);
  }

  #created(item: T): number {
    if (this.#strategy !== "newest") return 0;
    const m = this.#objectOf(item).metadata;
    const ts = isJsonObject(m) && typeof m.creationTimestamp === "string"
      ? Date.parse(m.creationTimestamp)
      : NaN;
    return Number.isNaN(ts) ? -Infinity : ts;
  }
}
