/**
 * The `convctl test` report: the leaf diff that grades a round trip, the report
 * shape (the JSON contract), its table and JUnit renderings, and the exit-code rule.
 */
import type { JsonValue } from "../engine/mod.ts";
import { driftLine, type GoldenResult } from "./golden.ts";
import { renderTable } from "./output.ts";
import { isJsonObject } from "../lib/json.ts";

export type PathResult = "pass" | "loss" | "fail" | "error";
export type IssueType =
  | "acknowledged-loss"
  | "unacknowledged-loss"
  | "error"
  | "schema-violation";

export interface TestIssue {
  field: string;
  from: string;
  to: string;
  type: IssueType;
  detail: string;
  sample: string;
}

export interface TestPath {
  from: string;
  to: string;
  result: PathResult;
  timingMicros: number;
  fieldsConverted: number;
  rulesMatched?: string[];
  issues?: TestIssue[];
}

export interface TestSample {
  file: string;
  assertedVersion: string;
  /** `--live` on an XRD: the generated CRD the object was read from, and its role. */
  crd?: string;
  crdRole?: "composite" | "claim";
  paths: TestPath[];
}

export interface TestReport {
  meta: {
    resourceKind: "XRD" | "CRD";
    resource: string;
    config: string;
    hubVersion: string;
    servedVersions: string[];
    generatedAt: string;
    durationMs: number;
  };
  summary: {
    samples: number;
    pathsTested: number;
    pass: number;
    acknowledgedLoss: number;
    unacknowledgedLoss: number;
    errors: number;
  };
  samples: TestSample[];
  ruleCoverage?: { ruleId: string; matchedSamples: number }[];
  /** Set when `--max-samples` tested fewer samples than there were. */
  sampling?: SamplingInfo;
  /** Set with `--live`: where the samples came from. */
  live?: LiveInfo;
  /** Set with `--verify-propagation`: whether the XRD's webhook reached its generated CRDs. */
  propagation?: PropagationReport;
  /** Set with `--fuzz`. */
  fuzz?: { generated: number; seed: number; reproduce: string };
  /** Set with `--golden`. */
  golden?: GoldenResult;
}

export type SampleStrategy = "first" | "random" | "newest";

export interface SamplingInfo {
  strategy: SampleStrategy;
  /** Objects there were (files' objects, or live objects). */
  population: number;
  /** Objects selected (a live object is tested once per listed version). */
  tested: number;
  seed?: number;
  /** True when the population is a cluster's live objects. */
  live?: boolean;
}

/** Where `--live` read its samples: the cluster, the target CRD and the versions listed. */
export interface LiveInfo {
  cluster: string;
  crd: string;
  /** The CRD's `spec.conversion.strategy` in that cluster (`None` when unset). */
  conversionStrategy: string;
  /** Every served version with a webhook; the storage version alone without one. */
  versions: string[];
  namespace?: string;
  /** XRD targets: every generated CRD listed (composite, then claim). */
  crds?: LiveCRD[];
}

/** One generated CRD of an XRD as `--live` read it. */
export interface LiveCRD {
  name: string;
  role: "composite" | "claim";
  conversionStrategy: string;
  versions: string[];
  /** Set when `--namespace` narrowed this CRD (the namespaced ones only). */
  namespace?: string;
  /** Objects there were. */
  population: number;
  /** Objects selected. */
  objects: number;
  /** Samples (each selected object once per listed version). */
  samples: number;
}

/** `--verify-propagation`: the XRD's conversion against each CRD generated from it. */
export interface PropagationReport {
  propagated: boolean;
  /** As the operator's `ConversionPropagated` would say it. */
  reason: string;
  message: string;
  xrd: string;
  /** Where the XRD's conversion webhook is (a service or a URL); absent when it has none. */
  webhook?: string;
  crds: {
    name: string;
    role: "composite" | "claim";
    state: "propagated" | "notFound" | "mismatch" | "stale";
    observedCABundleHash: string;
    message?: string;
  }[];
  /** The config applied in the cluster (by the config file's name), and what its status says. */
  config?: {
    name: string;
    found: boolean;
    condition?: { status: string; reason?: string; message?: string };
    /** False when its `ConversionPropagated` says otherwise than this check. */
    agrees?: boolean;
    /** Whether its status' `webhookPath`/`webhookPort` are the XRD's (a Service webhook). */
    webhook?: { matches: boolean; message?: string };
  };
}

// ---------------------------------------------------------------------------------------------
// Leaf diff: what a round trip changed (docs/design/cli.md#grading-a-round-trip)

const IGNORED_PATHS: ReadonlySet<string> = new Set([
  "apiVersion",
  "kind",
  "metadata.resourceVersion",
  "metadata.uid",
  "metadata.creationTimestamp",
  "metadata.generation",
]);

/** Deep equality where two numbers compare by value. */
function leafEqual(a: JsonValue, b: JsonValue): boolean {
  if (typeof a === "number" && typeof b === "number") return a === b;
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((x, i) => leafEqual(x, b[i]));
  }
  if (isJsonObject(a) && isJsonObject(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length &&
      keys.every((k) => Object.hasOwn(b, k) && leafEqual(a[k], b[k]));
  }
  return a === b;
}

/**
 * The sorted paths where `original` and `roundTripped` differ. Maps recurse over the union of
 * keys (absent reads as null); arrays of equal length recurse by index; anything else is a leaf.
 */
export function leafDiff(original: JsonValue, roundTripped: JsonValue): string[] {
  const out: string[] = [];
  const walk = (a: JsonValue, b: JsonValue, path: string) => {
    if (IGNORED_PATHS.has(path)) return;
    if (isJsonObject(a) && isJsonObject(b)) {
      const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
      for (const k of keys) {
        const av = Object.hasOwn(a, k) ? a[k] : null;
        const bv = Object.hasOwn(b, k) ? b[k] : null;
        walk(av, bv, path === "" ? k : `${path}.${k}`);
      }
      return;
    }
    if (Array.isArray(a) && Array.isArray(b) && a.length === b.length) {
      a.forEach((x, i) => walk(x, b[i], `${path}[${i}]`));
      return;
    }
    if (!leafEqual(a, b)) out.push(path);
  };
  walk(original, roundTripped, "");
  return out.sort();
}

/** Number of non-map, non-array values (empty containers count 0). */
export function leafCount(v: JsonValue): number {
  if (Array.isArray(v)) return v.reduce<number>((n, x) => n + leafCount(x), 0);
  if (isJsonObject(v)) return Object.values(v).reduce<number>((n, x) => n + leafCount(x), 0);
  return 1;
}

/** The value at a leaf-diff path (`a.b[2].c`), or undefined when absent. */
export function valueAtDiffPath(root: JsonValue, path: string): JsonValue | undefined {
  let cur: JsonValue | undefined = root;
  for (const part of path.match(/[^.[\]]+|\[\d+\]/g) ?? []) {
    if (cur === undefined) return undefined;
    if (part.startsWith("[")) {
      cur = Array.isArray(cur) ? cur[Number(part.slice(1, -1))] : undefined;
    } else {
      cur = isJsonObject(cur) && Object.hasOwn(cur, part) ? cur[part] : undefined;
    }
  }
  return cur;
}

/** `spec.volumes[0].size` → `spec.volumes.size` (lossy-path sets hold schema paths). */
export function withoutIndices(path: string): string {
  return path.replace(/\[\d+\]/g, "");
}

/** True if the path or any dotted prefix of it is in `lossyPaths`. */
export function isAcknowledged(diffPath: string, lossyPaths: ReadonlySet<string>): boolean {
  const segments = withoutIndices(diffPath).split(".");
  for (let i = segments.length; i >= 1; i--) {
    if (lossyPaths.has(segments.slice(0, i).join("."))) return true;
  }
  return false;
}

// ---------------------------------------------------------------------------------------------
// Exit code: 1 on any unacknowledged loss or error (and, with `--verify-propagation`, a webhook
// that has not reached every generated CRD); with `--strict` (or `--fail-on warn`) also
// when a rule no sample exercised; `--fail-on none` always 0

export type FailOn = "none" | "warn" | "loss";

export function unexercisedRules(report: TestReport): string[] {
  return (report.ruleCoverage ?? []).filter((r) => r.matchedSamples === 0).map((r) => r.ruleId);
}

/** Golden drift fails the run whatever `--fail-on` says. */
export function exitCodeFor(report: TestReport, failOn: FailOn, strict: boolean): number {
  if ((report.golden?.drift.length ?? 0) > 0) return 1;
  if (failOn === "none") return 0;
  const threshold = strict ? "warn" : failOn;
  const failed = report.summary.unacknowledgedLoss > 0 || report.summary.errors > 0 ||
    report.propagation?.propagated === false;
  if (failed) return 1;
  if (threshold === "warn" && unexercisedRules(report).length > 0) return 1;
  return 0;
}

// ---------------------------------------------------------------------------------------------
// Renderings

export function summaryLine(report: TestReport): string {
  const s = report.summary;
  return `SUMMARY: ${s.samples} samples, ${s.pathsTested} paths — ${s.pass} PASS, ` +
    `${s.acknowledgedLoss} LOSS(acknowledged), ${s.unacknowledgedLoss} FAIL(unacknowledged loss), ` +
    `${s.errors} ERROR`;
}

export function renderTestTable(report: TestReport): string {
  const m = report.meta;
  let text = `${m.resourceKind} Conversion Test Report\n`;
  text += `target: ${m.resource}  config: ${m.config}  hub: ${m.hubVersion}\n`;
  text += `samples: ${report.summary.samples}  paths: ${report.summary.pathsTested}  ` +
    `time: ${m.durationMs.toFixed(1)}ms\n`;
  if (report.live !== undefined) text += liveLines(report.live);
  if (report.propagation !== undefined) text += propagationLines(report.propagation);
  if (report.sampling !== undefined) text += `${samplingLine(report.sampling)}\n`;
  if (report.fuzz !== undefined) text += `${fuzzLine(report.fuzz)}\n`;
  text += "\n";
  const rows: string[][] = [];
  for (const sample of report.samples) {
    sample.paths.forEach((p, i) => {
      rows.push([
        i === 0 ? sample.file : "",
        `${p.from}→${p.to}`,
        p.result.toUpperCase(),
        String(p.fieldsConverted),
        String(p.timingMicros),
        (p.rulesMatched ?? []).join(", "),
      ]);
    });
  }
  text += renderTable(
    ["SAMPLE", "PATH (from→to)", "RESULT", "FIELDS", "TIME(µs)", "RULES MATCHED"],
    rows,
  );
  const issues = report.samples.flatMap((s) => s.paths.flatMap((p) => p.issues ?? []));
  if (issues.length > 0) {
    text += `\nISSUES (${issues.length})\n`;
    text += renderTable(
      ["SAMPLE", "FIELD", "FROM → TO", "TYPE", "DETAIL"],
      issues.map((i) => [i.sample, i.field, `${i.from} → ${i.to}`, i.type, i.detail]),
    );
  }
  const coverage = [...(report.ruleCoverage ?? [])].sort((a, b) =>
    a.ruleId < b.ruleId ? -1 : a.ruleId > b.ruleId ? 1 : 0
  );
  if (coverage.length > 0) {
    text += `\nRULE COVERAGE\n`;
    text += renderTable(
      ["RULE", "USE"],
      coverage.map((r) => [
        r.ruleId,
        r.matchedSamples > 0
          ? `matched ${r.matchedSamples} sample(s)`
          : "NOT EXERCISED by any sample (warning)",
      ]),
      "  ",
    ).split("\n").slice(1).join("\n");
  }
  const golden = report.golden;
  if (golden !== undefined) {
    text += `\nGOLDEN ${golden.dir}: ${golden.compared} output(s) compared, ` +
      `${golden.drift.length} drift(s)\n`;
    if (golden.manifestWarning !== undefined) {
      text += `  WARNING: ${golden.manifestWarning}\n`;
    }
    for (const d of golden.drift) text += `  ${driftLine(d)}\n`;
  }
  return `${text}\n${summaryLine(report)}\n`;
}

/** `SAMPLED: 5 of 12 object(s), strategy random, seed 3 — this run did NOT cover every object`. */
export function samplingLine(s: SamplingInfo): string {
  const seed = s.seed !== undefined ? `, seed ${s.seed}` : "";
  const what = s.live ? "live object(s)" : "object(s)";
  return `SAMPLED: ${s.tested} of ${s.population} ${what}, strategy ${s.strategy}${seed} — ` +
    "this run did NOT cover every object";
}

/** `LIVE: cluster kind-a, widgets.example.com read at v1, v2 through its conversion webhook`. */
export function liveLine(l: LiveInfo, crd?: LiveCRD): string {
  const namespace = crd !== undefined ? crd.namespace : l.namespace;
  const versions = crd !== undefined ? crd.versions : l.versions;
  const where = namespace !== undefined ? ` in namespace ${namespace}` : "";
  const how = l.conversionStrategy === "Webhook"
    ? "through its conversion webhook"
    : `(storage version only: conversion strategy ${l.conversionStrategy})`;
  return `LIVE: cluster ${l.cluster}, ${l.crd}${where} read at ${versions.join(", ")} ${how}`;
}

/** The LIVE line, or one per generated CRD of an XRD with the sample count of each. */
export function liveLines(l: LiveInfo): string {
  if (l.crds === undefined || l.crds.length === 0) return `${liveLine(l)}\n`;
  return l.crds.map((c) => {
    const line = liveLine({ ...l, crd: c.name, conversionStrategy: c.conversionStrategy }, c);
    return `${line}: ${c.samples} sample(s) of ${c.objects} ${c.role} object(s)\n`;
  }).join("");
}

/** `PROPAGATION: …` and one line per generated CRD. */
export function propagationLines(p: PropagationReport): string {
  let text = `PROPAGATION: ${p.propagated ? "propagated" : "NOT PROPAGATED"} (${p.reason}): ` +
    `${p.message}\n`;
  for (const c of p.crds) {
    text += `  ${c.role} ${c.name}: ${c.state}${c.message ? ` — ${c.message}` : ""}\n`;
  }
  const cfg = p.config;
  if (cfg !== undefined) {
    if (!cfg.found) text += `  config ${cfg.name}: not applied in the cluster\n`;
    else {
      const c = cfg.condition;
      text += `  config ${cfg.name}: ConversionPropagated=${c?.status ?? "(not set)"}` +
        `${c?.reason ? ` (${c.reason})` : ""}${cfg.agrees === false ? " — DISAGREES" : ""}\n`;
      if (cfg.webhook?.matches === false) text += `  config ${cfg.name}: ${cfg.webhook.message}\n`;
    }
  }
  return text;
}

export function fuzzLine(f: NonNullable<TestReport["fuzz"]>): string {
  return `FUZZ: ${f.generated} generated object(s), seed ${f.seed} — reproduce with ${f.reproduce}`;
}

/** Text safe inside an XML attribute or element. */
export function xmlEscape(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;").replace(/'/g, "&apos;");
}

const seconds = (micros: number) => (micros / 1e6).toFixed(6);

function issueLines(issues: readonly TestIssue[]): string {
  return issues.map((i) => `${i.type}: ${i.field} (${i.from} -> ${i.to}): ${i.detail}`).join("\n");
}

export function renderJunit(report: TestReport): string {
  const m = report.meta;
  const paths = report.samples.flatMap((s) => s.paths.map((p) => ({ sample: s.file, s, p })));
  const drift = report.golden?.drift ?? [];
  const failures = paths.filter(({ p }) => p.result === "fail").length + drift.length;
  const errors = paths.filter(({ p }) => p.result === "error").length;
  const time = seconds(m.durationMs * 1000);
  const tests = paths.length + drift.length;
  const counts = `tests="${tests}" failures="${failures}" errors="${errors}" time="${time}"`;
  const lines = [
    `<?xml version="1.0" encoding="UTF-8"?>`,
    `<testsuites name="${
      xmlEscape(`${m.resourceKind} conversion test: ${m.resource}`)
    }" ${counts}>`,
    `  <testsuite name="${xmlEscape(`${m.resourceKind}/${m.resource}`)}" ${counts}>`,
  ];
  const sampling = report.sampling;
  if (sampling !== undefined) {
    lines.push(
      "    <properties>",
      `      <property name="sampled" value="true"/>`,
      `      <property name="samplePopulation" value="${sampling.population}"/>`,
      `      <property name="sampleTested" value="${sampling.tested}"/>`,
      "    </properties>",
    );
  }
  for (const { sample, s, p } of paths) {
    const attrs = `name="${xmlEscape(`${sample}: ${p.from}→${p.to}`)}" classname="${
      xmlEscape(`${m.config}.${m.hubVersion}`)
    }" time="${seconds(p.timingMicros)}"`;
    const body = xmlEscape(issueLines(p.issues ?? []));
    const inner: string[] = [];
    if (s.crd !== undefined) {
      inner.push(
        "      <properties>",
        `        <property name="crd" value="${xmlEscape(s.crd)}"/>`,
        `        <property name="crdRole" value="${s.crdRole ?? "composite"}"/>`,
        "      </properties>",
      );
    }
    if (p.result === "fail") {
      inner.push(`      <failure message="unacknowledged loss">${body}</failure>`);
    } else if (p.result === "error") {
      inner.push(`      <error message="conversion error">${body}</error>`);
    } else if (p.result === "loss") inner.push(`      <system-out>${body}</system-out>`);
    if (inner.length === 0) lines.push(`    <testcase ${attrs}></testcase>`);
    else lines.push(`    <testcase ${attrs}>`, ...inner, `    </testcase>`);
  }
  for (const d of drift) {
    lines.push(
      `    <testcase name="${xmlEscape(`golden: ${d.file}`)}" classname="${
        xmlEscape(`${m.config}.golden`)
      }" time="0.000000">`,
      `      <failure message="golden drift">${xmlEscape(driftLine(d))}</failure>`,
      `    </testcase>`,
    );
  }
  lines.push(`  </testsuite>`, `</testsuites>`);
  return lines.join("\n") + "\n";
}
