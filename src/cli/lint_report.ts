/**
 * `convctl lint`'s report: one entry per config found (walk order), its status and findings, the
 * summary, the verdict under `--fail-on`, and the table and JSON renderings.
 */
import { LINT_IDS, type LintFinding } from "./lint_check.ts";
import { renderTable } from "./output.ts";

export const LINT_FAIL_ON = ["none", "warn", "loss"] as const;
export type LintFailOn = typeof LINT_FAIL_ON[number];

export type LintStatus = "OK" | "WARN" | "ERROR" | "UNPAIRED" | "DUPLICATE";

export interface LintEntry {
  file: string;
  line: number;
  /** The config's `metadata.name` ("" when it has none or could not be read). */
  name: string;
  kind: string;
  target: string;
  schema?: { file: string; line: number };
  status: LintStatus;
  findings: LintFinding[];
}

export interface LintSummary {
  configs: number;
  schemas: number;
  errors: number;
  warnings: number;
  unpaired: number;
  duplicate: number;
}

export interface LintReport {
  configs: LintEntry[];
  summary: LintSummary;
  failOn: LintFailOn;
  /** Nothing at or above `failOn`, and no unpaired or duplicate config. */
  passed: boolean;
}

/** The status a config's findings give it (unpaired and duplicate are decided by pairing). */
export function statusOf(findings: readonly LintFinding[]): LintStatus {
  if (findings.some((f) => f.level === "error")) return "ERROR";
  if (findings.some((f) => f.level === "warning")) return "WARN";
  return "OK";
}

export function summarize(
  configs: LintEntry[],
  schemas: number,
  failOn: LintFailOn,
): LintReport {
  // Unpaired and duplicate configs are counted as such, not again as errors.
  const pairing: readonly string[] = [LINT_IDS.unpairedConfig, LINT_IDS.duplicateConfig];
  const all = configs.flatMap((c) => c.findings).filter((f) => !pairing.includes(f.ruleId));
  const summary: LintSummary = {
    configs: configs.length,
    schemas,
    errors: all.filter((f) => f.level === "error").length,
    warnings: all.filter((f) => f.level === "warning").length,
    unpaired: configs.filter((c) => c.status === "UNPAIRED").length,
    duplicate: configs.filter((c) => c.status === "DUPLICATE").length,
  };
  const atThreshold = failOn === "loss"
    ? summary.errors > 0
    : failOn === "warn"
    ? summary.errors + summary.warnings > 0
    : false;
  const passed = !atThreshold && summary.unpaired === 0 && summary.duplicate === 0;
  return { configs, summary, failOn, passed };
}

/** Every finding of the report, in report order (what the CI renderers take). */
export function lintFindings(report: LintReport): LintFinding[] {
  return report.configs.flatMap((c) => c.findings);
}

const at = (file: string, line?: number) => (line !== undefined ? `${file}:${line}` : file);

export function lintTable(report: LintReport): string {
  const rows = report.configs.map((c) => [
    c.status,
    at(c.file, c.line),
    c.target === "" ? "-" : c.target,
    c.schema !== undefined ? at(c.schema.file, c.schema.line) : "-",
    String(c.findings.length),
  ]);
  let text = report.configs.length === 0
    ? "no conversion configs found\n"
    : renderTable(["STATUS", "CONFIG", "TARGET", "SCHEMA", "FINDINGS"], rows);
  const findings = lintFindings(report);
  if (findings.length > 0) text += "\n";
  for (const f of findings) {
    text += `${at(f.file, f.line)}: ${f.level.toUpperCase()} [${f.ruleId}] ${f.message}\n`;
  }
  const s = report.summary;
  text += `\nSUMMARY: ${s.errors} error(s), ${s.warnings} warning(s), ${s.unpaired} unpaired, ` +
    `${s.duplicate} duplicate\n`;
  return text;
}
