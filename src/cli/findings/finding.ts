/**
 * Findings: the one shape every CI-facing output (`-o github|sarif|markdown`) renders, and the
 * stable finding ids. The ids are a compatibility surface for code-scanning and annotations:
 * new ones are added, existing ones are never renamed.
 */

export type FindingLevel = "error" | "warning" | "note";

export interface Finding {
  /** A stable id, e.g. `convctl/unacknowledged-loss`. */
  ruleId: string;
  level: FindingLevel;
  message: string;
  /** The file the finding is about, as given on the command line. */
  file: string;
  /** 1-based; absent when the finding cannot be placed inside the file. */
  line?: number;
  column?: number;
}

export const FINDING_IDS = {
  unacknowledgedLoss: "convctl/unacknowledged-loss",
  acknowledgedLoss: "convctl/acknowledged-loss",
  conversionError: "convctl/conversion-error",
  schemaViolation: "convctl/schema-violation",
  uncoveredField: "convctl/uncovered-field",
  ruleNeverExercised: "convctl/rule-never-exercised",
  goldenDrift: "convctl/golden-drift",
  configError: "convctl/config-error",
  configWarning: "convctl/config-warning",
  unpairedConfig: "convctl/unpaired-config",
  duplicateConfig: "convctl/duplicate-config",
  duplicateSchema: "convctl/duplicate-schema",
} as const;

/** What each id means, for SARIF's rule table. */
export const FINDING_DESCRIPTIONS: Readonly<Record<string, string>> = {
  [FINDING_IDS.unacknowledgedLoss]: "A round trip lost data no rule declares lossy.",
  [FINDING_IDS.acknowledgedLoss]: "A round trip lost data a lossy rule declares (informational).",
  [FINDING_IDS.conversionError]: "A conversion failed.",
  [FINDING_IDS.schemaViolation]: "A converted object violates its destination version's schema.",
  [FINDING_IDS.uncoveredField]: "A schema field no rule or identity copy carries.",
  [FINDING_IDS.ruleNeverExercised]: "No sample exercised this rule.",
  [FINDING_IDS.goldenDrift]: "A converted object differs from its golden file.",
  [FINDING_IDS.configError]: "The conversion config is invalid.",
  [FINDING_IDS.configWarning]: "The conversion config has a warning.",
  [FINDING_IDS.unpairedConfig]: "No CRD or XRD in the tree has the config's target name.",
  [FINDING_IDS.duplicateConfig]: "Two conversion configs target the same CRD or XRD.",
  [FINDING_IDS.duplicateSchema]: "Two CRD or XRD files have the same name; the first is used.",
};

/** `RequiredFieldUnsatisfiable` → `convctl/required-field-unsatisfiable`. */
export function requiredFieldFindingId(diagnosticClass: string): string {
  const kebab = diagnosticClass.replace(/([a-z0-9])([A-Z])/g, "$1-$2").toLowerCase();
  return `convctl/${kebab}`;
}

const ORDER: Record<FindingLevel, number> = { error: 0, warning: 1, note: 2 };

/** Errors first, then by file, line and id: the order every rendering uses. */
export function sortFindings(findings: readonly Finding[]): Finding[] {
  return [...findings].sort((a, b) =>
    ORDER[a.level] - ORDER[b.level] || (a.file < b.file ? -1 : a.file > b.file ? 1 : 0) ||
    (a.line ?? 0) - (b.line ?? 0) || (a.ruleId < b.ruleId ? -1 : a.ruleId > b.ruleId ? 1 : 0)
  );
}
