/**
 * The nightly scale comparison, pure: a current result against the previous successful run's.
 * Only runs with the same schemaVersion and the same envelope are compared (otherwise the numbers
 * are published and the comparison is skipped, so a changed input never reads as a regression).
 * A value regresses when it grew by more than the threshold *and* is above the noise floor of its
 * unit; errors and an empty run fail regardless of history.
 */
import {
  ENVELOPE_KEYS,
  MEASUREMENT_KEYS,
  parseScaleResult,
  SCALE_RESULT_SCHEMA_VERSION,
  type ScaleResult,
} from "./result.ts";

export const DEFAULT_THRESHOLD = 1.5;

const MIB = 1024 * 1024;

/** Noise floors by key suffix: a value at or below its floor never regresses. */
export const NOISE_FLOORS = { Bytes: 32 * MIB, Seconds: 1, Ms: 20 } as const;

export type Unit = keyof typeof NOISE_FLOORS;

/** The unit of a gated key, by its suffix (anything else is milliseconds). */
export function unitOf(key: string): Unit {
  if (key.endsWith("Bytes")) return "Bytes";
  if (key.endsWith("Seconds")) return "Seconds";
  return "Ms";
}

export type RowStatus = "ok" | "new" | "REGRESSED" | "not compared";

export interface ReportRow {
  /** Display name, e.g. `listV1 p50`, `createMs`, `webhookWorkingSetBytes`. */
  label: string;
  unit: Unit;
  current: number;
  previous?: number;
  ratio?: number;
  status: RowStatus;
}

/** The baseline: a usable previous result, or why there is none. */
export type Baseline = { result: ScaleResult } | { unusable: string };

export interface ScaleReport {
  threshold: number;
  /** Set when the comparison was skipped; says why. */
  notComparable?: string;
  baselineRecordedAt?: string;
  rows: ReportRow[];
  throughput: { key: string; current: number; previous?: number }[];
  /** Absolute failures and regressions, one `FAIL: …` line each. */
  failures: string[];
}

/** A previous run's document as a baseline; any defect makes it unusable, never an error. */
export function baselineOf(doc: unknown, source = "previous"): Baseline {
  try {
    return { result: parseScaleResult(doc, source) };
  } catch (e) {
    return { unusable: (e as Error).message };
  }
}

function envelopeDifference(previous: ScaleResult, current: ScaleResult): string | undefined {
  const changed = ENVELOPE_KEYS.filter((k) => previous.envelope[k] !== current.envelope[k]).map(
    (k) => `${k} ${previous.envelope[k]} -> ${current.envelope[k]}`,
  );
  return changed.length ? `the envelope differs (${changed.join(", ")})` : undefined;
}

/** The gated values of a result, label → value (absent observed figures are left out). */
export function gatedValues(r: ScaleResult): Map<string, number> {
  const out = new Map<string, number>();
  for (const k of MEASUREMENT_KEYS) {
    out.set(`${k} p50`, r.measurements[k].p50Ms);
    out.set(`${k} p99`, r.measurements[k].p99Ms);
  }
  out.set("createMs", r.createMs);
  for (const k of ["webhookInitialSyncSeconds", "webhookWorkingSetBytes"] as const) {
    const v = r.observed?.[k];
    if (v !== undefined) out.set(k, v);
  }
  return out;
}

/** `90.0 ms`, `1.2 s`, `45.0 MiB`. */
export function formatValue(v: number, unit: Unit): string {
  switch (unit) {
    case "Bytes":
      return `${(v / MIB).toFixed(1)} MiB`;
    case "Seconds":
      return `${v.toFixed(1)} s`;
    case "Ms":
      return `${v.toFixed(1)} ms`;
  }
}

/** Failures that hold regardless of history: any Get/List error, a run without requests. */
export function absoluteFailures(r: ScaleResult): string[] {
  const out: string[] = [];
  for (const k of MEASUREMENT_KEYS) {
    const m = r.measurements[k];
    if (m.errors > 0) out.push(`FAIL: ${k}: ${m.errors} of ${m.n} requests failed`);
  }
  const requests = MEASUREMENT_KEYS.reduce((sum, k) => sum + r.measurements[k].n, 0);
  if (requests === 0) out.push("FAIL: the run issued zero requests");
  return out;
}

/** Compares `current` with `baseline` (undefined: there was no previous successful run). */
export function compareScaleResults(
  current: ScaleResult,
  baseline: Baseline | undefined,
  threshold = DEFAULT_THRESHOLD,
): ScaleReport {
  if (!(threshold > 1)) throw new RangeError(`threshold ${threshold} must be > 1.0`);
  const failures = absoluteFailures(current);
  let previous: ScaleResult | undefined;
  let notComparable: string | undefined;
  if (baseline === undefined) notComparable = "there is no previous successful run";
  else if ("unusable" in baseline) notComparable = baseline.unusable;
  else {
    notComparable = envelopeDifference(baseline.result, current);
    if (notComparable === undefined) previous = baseline.result;
  }

  const before = previous ? gatedValues(previous) : new Map<string, number>();
  const rows: ReportRow[] = [];
  for (const [label, value] of gatedValues(current)) {
    const unit = unitOf(label);
    const row: ReportRow = { label, unit, current: value, status: "not compared" };
    rows.push(row);
    if (!previous) continue;
    const old = before.get(label);
    if (old === undefined || old <= 0) {
      row.status = "new";
      if (old !== undefined) row.previous = old;
      continue;
    }
    row.previous = old;
    row.ratio = value / old;
    if (row.ratio > threshold && value > NOISE_FLOORS[unit]) {
      row.status = "REGRESSED";
      failures.push(
        `FAIL: ${label}: ${formatValue(old, unit)} -> ${formatValue(value, unit)} ` +
          `(${row.ratio.toFixed(2)}x, threshold ${threshold.toFixed(2)}x)`,
      );
    } else row.status = "ok";
  }
  const throughput = MEASUREMENT_KEYS.map((key) => ({
    key,
    current: current.measurements[key].throughputPerSecond,
    previous: previous?.measurements[key].throughputPerSecond,
  }));
  return {
    threshold,
    notComparable,
    baselineRecordedAt: previous?.recordedAt,
    rows,
    throughput,
    failures,
  };
}

/** The job-summary Markdown of a report. */
export function renderMarkdown(report: ScaleReport, current: ScaleResult): string {
  const lines = [
    "## Scale report",
    "",
    `${current.targets} CRDs × ${current.instances} instances (${current.totalObjects} objects), ` +
    `recorded ${current.recordedAt}, schemaVersion ${SCALE_RESULT_SCHEMA_VERSION}.`,
    "",
    report.notComparable
      ? `Not comparable: ${report.notComparable}. The numbers are published; the comparison is skipped.`
      : `Compared with the run recorded ${report.baselineRecordedAt} ` +
        `(threshold ${report.threshold.toFixed(2)}×).`,
    "",
    "| value | previous | current | ratio | status |",
    "|---|---:|---:|---:|---|",
  ];
  for (const r of report.rows) {
    const prev = r.previous === undefined ? "" : formatValue(r.previous, r.unit);
    const ratio = r.ratio === undefined ? "" : `${r.ratio.toFixed(2)}×`;
    const status = r.status === "REGRESSED" ? "**REGRESSED**" : r.status;
    lines.push(
      `| ${r.label} | ${prev} | ${formatValue(r.current, r.unit)} | ${ratio} | ${status} |`,
    );
  }
  lines.push("", "| throughput (req/s) | previous | current |", "|---|---:|---:|");
  for (const t of report.throughput) {
    lines.push(`| ${t.key} | ${t.previous?.toFixed(1) ?? ""} | ${t.current.toFixed(1)} |`);
  }
  if (report.failures.length) {
    lines.push("", "### Failures", "", ...report.failures.map((f) => `- \`${f}\``));
  }
  return lines.join("\n") + "\n";
}
