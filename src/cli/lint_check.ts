/**
 * The two jobs of `convctl lint` that read and compute, run in its Worker pool (or inline with
 * `--concurrency 1`): scanning one file for configs and schemas, and checking one config against
 * its schema with the checks of `validate` and `analyze`. Findings carry a stable id, the file,
 * the line of the config's document, a level and a message — the shape every CI renderer takes.
 */
import {
  CONFIG_GROUP,
  CONFIG_KINDS,
  engineSpecOf,
  parseConfig,
  XRD_CONFIG_KIND,
} from "../api/mod.ts";
import {
  analyze,
  type Diagnostic,
  type JsonObject,
  schemaSourceFromCRD,
  schemaSourceFromXRD,
  structuralError,
} from "../engine/mod.ts";
import { isJsonObject } from "../lib/json.ts";
import { CliError } from "./args.ts";
import { parseYamlDocuments } from "./load.ts";
import { type Finding, FINDING_IDS, type FindingLevel } from "./findings/finding.ts";
import { formatDiagnostic } from "./output.ts";

/** Lint's findings are the CI formats' findings (src/cli/findings/finding.ts). */
export type LintLevel = FindingLevel;
export type LintFinding = Finding;

export const LINT_IDS = {
  configError: FINDING_IDS.configError,
  configWarning: FINDING_IDS.configWarning,
  acknowledgedLoss: FINDING_IDS.acknowledgedLoss,
  uncoveredField: FINDING_IDS.uncoveredField,
  unpairedConfig: FINDING_IDS.unpairedConfig,
  duplicateConfig: FINDING_IDS.duplicateConfig,
  duplicateSchema: FINDING_IDS.duplicateSchema,
} as const;

/** The kinds lint recognises, each with the API group its apiVersion must carry. */
const SCHEMA_GROUPS: Readonly<Record<string, string>> = {
  CompositeResourceDefinition: "apiextensions.crossplane.io",
  CustomResourceDefinition: "apiextensions.k8s.io",
};

/** A config or a schema found in a file. */
export interface ScannedDoc {
  role: "config" | "schema";
  kind: string;
  /** `metadata.name` ("" when absent). */
  name: string;
  /** Configs: the target's name as written ("" when absent). */
  target: string;
  file: string;
  line: number;
  doc: JsonObject;
}

export interface ScanResult {
  docs: ScannedDoc[];
  /** A file that names a config kind but does not parse: reported, never skipped. */
  unreadable?: LintFinding;
}

const CONFIG_HINT = new RegExp(CONFIG_KINDS.join("|"));

function groupOf(apiVersion: unknown): string | undefined {
  if (typeof apiVersion !== "string") return undefined;
  const i = apiVersion.lastIndexOf("/");
  return i < 0 ? undefined : apiVersion.slice(0, i);
}

function str(v: unknown): string {
  return typeof v === "string" ? v : "";
}

function classify(doc: JsonObject): "config" | "schema" | undefined {
  const group = groupOf(doc.apiVersion);
  const kind = str(doc.kind);
  if ((CONFIG_KINDS as readonly string[]).includes(kind) && group === CONFIG_GROUP) return "config";
  if (SCHEMA_GROUPS[kind] !== undefined && SCHEMA_GROUPS[kind] === group) return "schema";
  return undefined;
}

function targetOf(doc: JsonObject): string {
  const spec = isJsonObject(doc.spec) ? doc.spec : {};
  const ref = doc.kind === XRD_CONFIG_KIND ? spec.targetXRD : spec.targetCRD;
  return isJsonObject(ref) ? str(ref.name) : "";
}

/** YAML document markers start a line with `---` (block content is always indented). */
const DOC_MARKER = /^---(\s|$)/;
const CONTENT = /^\s*[^\s#]/;

/**
 * Every config and schema in `text`. The stream is cut at its document markers so each document
 * knows its line; each piece is parsed with its lines in place, so errors point into the file.
 */
export function scanText(text: string, file: string): ScanResult {
  const lines = text.split("\n");
  const docs: ScannedDoc[] = [];
  let start = 0;
  const flush = (end: number) => {
    const first = lines.slice(start, end).findIndex((l) => CONTENT.test(l) && !DOC_MARKER.test(l));
    if (first < 0) return;
    const piece = "\n".repeat(start) + lines.slice(start, end).join("\n");
    for (const value of parseYamlDocuments(piece, file)) {
      if (!isJsonObject(value)) continue;
      const role = classify(value);
      if (role === undefined) continue;
      const meta = isJsonObject(value.metadata) ? value.metadata : {};
      docs.push({
        role,
        kind: str(value.kind),
        name: str(meta.name),
        target: role === "config" ? targetOf(value) : "",
        file,
        line: start + first + 1,
        doc: value,
      });
    }
  };
  try {
    for (let i = 0; i < lines.length; i++) {
      if (i > start && DOC_MARKER.test(lines[i])) {
        flush(i);
        start = i;
      }
    }
    flush(lines.length);
  } catch (e) {
    if (!(e instanceof CliError)) throw e;
    if (!CONFIG_HINT.test(text)) return { docs: [] }; // not ours: other manifests are ignored
    const line = /:(\d+):\d+: /.exec(e.message)?.[1];
    return {
      docs,
      unreadable: {
        ruleId: LINT_IDS.configError,
        level: "error",
        message: e.message,
        file,
        ...(line !== undefined ? { line: Number(line) } : {}),
      },
    };
  }
  return { docs };
}

/** Reads and scans one file; a file with neither kind named in it is not parsed at all. */
export async function scanFile(file: string): Promise<ScanResult> {
  let text: string;
  try {
    text = await Deno.readTextFile(file);
  } catch (e) {
    throw new CliError(`cannot read ${file}: ${(e as Error).message}`);
  }
  if (!CONFIG_HINT.test(text) && !/ResourceDefinition/.test(text)) return { docs: [] };
  return scanText(text, file);
}

/** The id of an analysis diagnostic (required-field codes keep their own, in kebab case). */
export function diagnosticId(d: Diagnostic): string {
  if (d.class.startsWith("RequiredField")) {
    return `convctl/${d.class.replace(/([a-z0-9])([A-Z])/g, "$1-$2").toLowerCase()}`;
  }
  if (d.class === "uncovered-field") return LINT_IDS.uncoveredField;
  return d.severity === "error" ? LINT_IDS.configError : LINT_IDS.configWarning;
}

/** The checks of `validate` and `analyze` for one config and the schema it targets. */
export function checkPair(config: ScannedDoc, schema: ScannedDoc): LintFinding[] {
  const at = { file: config.file, line: config.line };
  const error = (message: string): LintFinding => ({
    ruleId: LINT_IDS.configError,
    level: "error",
    message,
    ...at,
  });
  const parsed = parseConfig(config.doc);
  if (!parsed.ok) return parsed.errors.map((e) => error(`invalid config: ${e}`));
  const spec = engineSpecOf(parsed.config);
  const structural = structuralError(spec);
  if (structural !== undefined) return [error(`[structural] ${structural}`)];

  const source = schema.kind === "CompositeResourceDefinition"
    ? schemaSourceFromXRD(schema.doc)
    : schemaSourceFromCRD(schema.doc);
  const analysis = analyze(source, spec);
  const out: LintFinding[] = analysis.hardErrors.map((d) => error(formatDiagnostic(d)));
  for (const spoke of analysis.spokes) {
    const prefix = `[spoke ${spoke.version}] `;
    for (const d of [...spoke.errors, ...spoke.warnings]) {
      out.push({
        ruleId: diagnosticId(d),
        level: d.severity === "error" ? "error" : "warning",
        message: prefix + formatDiagnostic(d),
        ...at,
      });
    }
    // A lossy direction without an error is one the config acknowledges: a note, never a failure.
    if (spoke.errors.length === 0) {
      for (
        const [lossless, direction] of [
          [spoke.lossless.hubToSpoke, "hub→spoke"],
          [spoke.lossless.spokeToHub, "spoke→hub"],
        ] as const
      ) {
        if (lossless) continue;
        out.push({
          ruleId: LINT_IDS.acknowledgedLoss,
          level: "note",
          message: `${prefix}${direction} is lossy (acknowledged)`,
          ...at,
        });
      }
    }
  }
  return out;
}
