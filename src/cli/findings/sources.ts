/**
 * Findings from what the commands compute: analysis diagnostics (`validate`, `analyze`) and the
 * test report (`test`). Each finding is placed in the config where it can be: a rule's
 * diagnostic at `spec.spokes[<i>].rules[<r>]`, a spoke's at `spec.spokes[<i>]`, a hub error at
 * `spec.hubVersion`, a round-trip problem at the rule that claims the field (else its spoke).
 */
import type { AnalysisResult, Diagnostic } from "../../engine/mod.ts";
import { formatDiagnostic } from "../output.ts";
import { driftLine } from "../golden.ts";
import { type TestReport, unexercisedRules, withoutIndices } from "../test_report.ts";
import { type Finding, FINDING_IDS, type FindingLevel, requiredFieldFindingId } from "./finding.ts";
import type { Locate } from "./positions.ts";

/** The id of an analysis diagnostic. */
export function diagnosticFindingId(d: Diagnostic): string {
  if (d.class.startsWith("RequiredField")) return requiredFieldFindingId(d.class);
  if (d.class === "uncovered-field") return FINDING_IDS.uncoveredField;
  return d.severity === "error" ? FINDING_IDS.configError : FINDING_IDS.configWarning;
}

function placed(
  ruleId: string,
  level: FindingLevel,
  message: string,
  file: string,
  locate: Locate,
  configPath: string,
): Finding {
  const at = locate(configPath);
  return at === undefined
    ? { ruleId, level, message, file }
    : { ruleId, level, message, file, line: at.line, column: at.column };
}

/** Where a spoke's diagnostic points in the config. */
function diagnosticPath(spokeIndex: number, d: Diagnostic): string {
  if (spokeIndex < 0) return d.class === "hub-version" ? "spec.hubVersion" : "spec";
  const spoke = `spec.spokes[${spokeIndex}]`;
  return d.ruleIndex >= 0 ? `${spoke}.rules[${d.ruleIndex}]` : spoke;
}

/** Hard errors and every spoke's errors and warnings. */
export function analysisFindings(
  analysis: AnalysisResult,
  configFile: string,
  locate: Locate,
): Finding[] {
  const out: Finding[] = [];
  const add = (spokeIndex: number, version: string | undefined, d: Diagnostic) => {
    const prefix = version === undefined ? "" : `[spoke ${version}] `;
    out.push(placed(
      diagnosticFindingId(d),
      d.severity === "error" ? "error" : "warning",
      prefix + formatDiagnostic(d),
      configFile,
      locate,
      diagnosticPath(spokeIndex, d),
    ));
  };
  for (const d of analysis.hardErrors) add(-1, undefined, d);
  analysis.spokes.forEach((s, i) => {
    for (const d of [...s.errors, ...s.warnings]) add(i, s.version, d);
  });
  return out;
}

/** A structural error of the config (before any analysis): placed at the file. */
export function structuralFinding(message: string, configFile: string): Finding {
  return { ruleId: FINDING_IDS.configError, level: "error", message, file: configFile };
}

const ISSUE_FINDING: Record<string, { id: string; level: FindingLevel }> = {
  "unacknowledged-loss": { id: FINDING_IDS.unacknowledgedLoss, level: "error" },
  "acknowledged-loss": { id: FINDING_IDS.acknowledgedLoss, level: "note" },
  error: { id: FINDING_IDS.conversionError, level: "error" },
  "schema-violation": { id: FINDING_IDS.schemaViolation, level: "error" },
};

/** `v1:rule[2]:FieldRename` → `spec.spokes[<index of v1>].rules[2]`. */
function ruleConfigPath(analysis: AnalysisResult, ruleId: string): string {
  const m = /^(.*):rule\[(\d+)\]:/.exec(ruleId);
  if (m === null) return "spec";
  const i = analysis.spokes.findIndex((s) => s.version === m[1]);
  return i < 0 ? "spec" : `spec.spokes[${i}].rules[${m[2]}]`;
}

/**
 * The config path of the rule that claims `field` on a path between `from` and `to` (the
 * touched spokes' rules, by their declared paths), else the first touched spoke, else `spec`.
 */
function issueConfigPath(
  analysis: AnalysisResult,
  from: string,
  to: string,
  field: string,
): string {
  const plain = withoutIndices(field);
  const within = (a: string, b: string) => a === b || a.startsWith(`${b}.`);
  const touched = [from, to].filter((v) => v !== analysis.hubVersion);
  for (const version of touched) {
    const i = analysis.spokes.findIndex((s) => s.version === version);
    if (i < 0) continue;
    const rule = analysis.spokes[i].ruleResults.find((r) =>
      [...r.hubPaths, ...r.spokePaths].some((p) => within(plain, p) || within(p, plain))
    );
    if (rule !== undefined) return `spec.spokes[${i}].rules[${rule.index}]`;
  }
  for (const version of touched) {
    const i = analysis.spokes.findIndex((s) => s.version === version);
    if (i >= 0) return `spec.spokes[${i}]`;
  }
  return "spec";
}

/** Every issue, every rule no sample exercised (a warning) and every golden drift. */
export function testFindings(
  report: TestReport,
  analysis: AnalysisResult,
  configFile: string,
  locate: Locate,
): Finding[] {
  const out: Finding[] = [];
  for (const sample of report.samples) {
    for (const path of sample.paths) {
      for (const issue of path.issues ?? []) {
        const { id, level } = ISSUE_FINDING[issue.type];
        const message = `${sample.file} ${issue.from}→${issue.to}: ${issue.field}: ${issue.detail}`;
        const at = issueConfigPath(analysis, issue.from, issue.to, issue.field);
        out.push(placed(id, level, message, configFile, locate, at));
      }
    }
  }
  for (const ruleId of unexercisedRules(report)) {
    out.push(placed(
      FINDING_IDS.ruleNeverExercised,
      "warning",
      `${ruleId} was not exercised by any sample`,
      configFile,
      locate,
      ruleConfigPath(analysis, ruleId),
    ));
  }
  const golden = report.golden;
  for (const d of golden?.drift ?? []) {
    const file = `${golden!.dir.replace(/\/+$/, "")}/${d.file}`;
    out.push({ ruleId: FINDING_IDS.goldenDrift, level: "error", message: driftLine(d), file });
  }
  return out;
}
