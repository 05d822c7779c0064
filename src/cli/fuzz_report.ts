/**
 * The `convctl fuzz` report: its JSON shape (the contract of `-o json`) and its table rendering.
 */
import type { Direction, JsonObject } from "../engine/mod.ts";
import { renderTable, toYaml } from "./output.ts";

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
