/**
 * `convctl compat --base REV --head REV`: a required-status-check gate. The config and its schema
 * file are read as they were at two git revisions, both are analysed, and every change is put in
 * a class with a severity; an unacknowledged breaking change fails the check (exit 1).
 */
import { engineSpecOf } from "../api/mod.ts";
import { type AnalysisResult, analyze, type SchemaSource } from "../engine/mod.ts";
import { type AnalysisDelta, analysisDelta, claimKey, type RuleClaim } from "./analysis_delta.ts";
import { CliError, FLAGS, outputFlag } from "./args.ts";
import { defineCommand } from "./command.ts";
import { showAtRevision } from "./git.ts";
import { loadConfig, loadSchema, schemaFlagOf } from "./load.ts";
import { formatDiagnostic, formatSpokeDiagnostic, renderTable, toJson } from "./output.ts";

export type Severity = "breaking" | "review" | "safe";

/** The classes and their severities, in the order findings are listed. */
export const COMPAT_CLASSES = {
  HubChanged: "breaking",
  ServedVersionRemoved: "breaking",
  LosslessToLossy: "breaking",
  CoverageLost: "breaking",
  RuleRemoved: "breaking",
  StrategyChanged: "review",
  MappingChanged: "review",
  CoverageGained: "safe",
  NewVersion: "safe",
} as const satisfies Record<string, Severity>;

export type CompatClass = keyof typeof COMPAT_CLASSES;
const CLASS_NAMES = Object.keys(COMPAT_CLASSES) as CompatClass[];

export interface Finding {
  class: CompatClass;
  severity: Severity;
  /** The version concerned ("" for the hub change). */
  version: string;
  detail: string;
  acknowledged: boolean;
}

export interface CompatReport {
  resourceKind: "CRD" | "XRD";
  resource: string;
  base: string;
  head: string;
  /** Revisions that do not analyse cleanly, said above the findings. */
  notes: string[];
  findings: Finding[];
  /** The `--allow` classes that acknowledged at least one finding, with how many. */
  acknowledgements: { class: CompatClass; findings: number }[];
  breaking: number;
  review: number;
  safe: number;
}

interface Revision {
  rev: string;
  source: SchemaSource;
  analysis: AnalysisResult;
}

async function readRevision(
  rev: string,
  configFile: string,
  schemaFlag: (kind: "XRDConversionConfig" | "CRDConversionConfig") => string,
): Promise<Revision> {
  const config = await loadConfig(
    `${rev}:${configFile}`,
    undefined,
    await showAtRevision(rev, configFile),
  );
  const schemaFile = schemaFlag(config.kind);
  const schema = await loadSchema(
    config.kind,
    `${rev}:${schemaFile}`,
    await showAtRevision(rev, schemaFile),
  );
  return {
    rev,
    source: schema.source,
    analysis: analyze(schema.source, engineSpecOf(config.config)),
  };
}

/** Why a revision's analysis is not clean, or undefined when it is. */
function noteOf(which: "base" | "head", r: Revision): string | undefined {
  const problems = [
    ...r.analysis.hardErrors.map(formatDiagnostic),
    ...r.analysis.spokes.flatMap((s) => s.errors.map((d) => formatSpokeDiagnostic(s.version, d))),
  ];
  if (problems.length === 0) return undefined;
  return `${which} (${r.rev}) does not analyse cleanly: ${problems.join("; ")}`;
}

const served = (s: SchemaSource) => new Set(s.versions.filter((v) => v.served).map((v) => v.name));
const pathsOf = (
  c: RuleClaim,
) => [...c.hubPaths.map((p) => `hub:${p}`), ...c.spokePaths.map((p) => `spoke:${p}`)];
const describe = (c: RuleClaim) =>
  `${c.strategy} ${c.hubPaths.join(",")} ↔ ${c.spokePaths.join(",")}`;

/** The rule findings of one spoke: removed claims replaced (or not) by added ones. */
function ruleFindings(version: string, removed: RuleClaim[], added: RuleClaim[]) {
  const out: { class: CompatClass; version: string; detail: string }[] = [];
  const unpairedAdded = [...added];
  const rest: RuleClaim[] = [];
  for (const r of removed) {
    const same = unpairedAdded.findIndex((a) =>
      a.strategy !== r.strategy &&
      claimKey({ ...a, strategy: "" }) === claimKey({ ...r, strategy: "" })
    );
    if (same >= 0) {
      const [a] = unpairedAdded.splice(same, 1);
      out.push({
        class: "StrategyChanged",
        version,
        detail: `${r.strategy} → ${a.strategy} on ${[...r.hubPaths, ...r.spokePaths].join(",")}`,
      });
    } else rest.push(r);
  }
  for (const r of rest) {
    const claimedBySame = new Set(
      unpairedAdded.filter((a) => a.strategy === r.strategy).flatMap(pathsOf),
    );
    const claimedByAny = new Set(unpairedAdded.flatMap(pathsOf));
    const paths = pathsOf(r);
    if (paths.length > 0 && paths.every((p) => claimedBySame.has(p))) {
      out.push({ class: "MappingChanged", version, detail: `${describe(r)} rewired` });
    } else if (paths.length > 0 && paths.every((p) => claimedByAny.has(p))) {
      out.push({ class: "StrategyChanged", version, detail: `${describe(r)} replaced` });
    } else {
      out.push({ class: "RuleRemoved", version, detail: `${describe(r)} removed` });
    }
  }
  return out;
}

/** Every classified change from base to head (unacknowledged, in class order). */
function compatFindings(base: Revision, head: Revision) {
  const found: { class: CompatClass; version: string; detail: string }[] = [];
  const comparable = base.analysis.hardErrors.length === 0 && head.analysis.hardErrors.length === 0;
  // A revision with hard errors has no spoke reports: only the schema and the hub are compared.
  const delta: Partial<AnalysisDelta> = comparable
    ? analysisDelta(base.analysis, head.analysis)
    : {};
  if (base.analysis.hubVersion !== head.analysis.hubVersion) {
    found.push({
      class: "HubChanged",
      version: "",
      detail: `hub ${base.analysis.hubVersion} → ${head.analysis.hubVersion}`,
    });
  }
  const baseServed = served(base.source);
  const headServed = served(head.source);
  for (const v of baseServed) {
    if (!headServed.has(v)) {
      found.push({ class: "ServedVersionRemoved", version: v, detail: `${v} no longer served` });
    }
  }
  const newVersions = new Set([...headServed].filter((v) => !baseServed.has(v)));
  // After a hub change the old hub is a spoke and the new hub no longer is: neither is news.
  for (const v of delta.spokesAdded ?? []) if (v !== base.analysis.hubVersion) newVersions.add(v);
  for (const v of newVersions) {
    found.push({ class: "NewVersion", version: v, detail: `${v} added` });
  }
  for (const v of delta.spokesRemoved ?? []) {
    if (headServed.has(v) && v !== head.analysis.hubVersion) {
      found.push({
        class: "CoverageLost",
        version: v,
        detail: `spoke ${v} removed while ${v} is served`,
      });
    }
  }
  for (const s of delta.spokes ?? []) {
    for (const c of s.losslessChanges ?? []) {
      if (c.from && !c.to) {
        const dir = c.direction === "hubToSpoke" ? "hub→spoke" : "spoke→hub";
        found.push({
          class: "LosslessToLossy",
          version: s.version,
          detail: `${dir} no longer lossless`,
        });
      }
    }
    for (const p of s.uncoveredHubAdded ?? []) {
      found.push({ class: "CoverageLost", version: s.version, detail: `hub field ${p} uncovered` });
    }
    for (const p of s.uncoveredSpokeAdded ?? []) {
      found.push({
        class: "CoverageLost",
        version: s.version,
        detail: `spoke field ${p} uncovered`,
      });
    }
    for (const p of s.uncoveredHubRemoved ?? []) {
      found.push({ class: "CoverageGained", version: s.version, detail: `hub field ${p} covered` });
    }
    for (const p of s.uncoveredSpokeRemoved ?? []) {
      found.push({
        class: "CoverageGained",
        version: s.version,
        detail: `spoke field ${p} covered`,
      });
    }
    found.push(...ruleFindings(s.version, s.ruleClaimsRemoved ?? [], s.ruleClaimsAdded ?? []));
  }
  const order = (c: CompatClass) => CLASS_NAMES.indexOf(c);
  return found.sort((a, b) =>
    order(a.class) - order(b.class) ||
    (a.version < b.version ? -1 : a.version > b.version ? 1 : 0) ||
    (a.detail < b.detail ? -1 : a.detail > b.detail ? 1 : 0)
  );
}

function summaryLine(r: CompatReport): string {
  const acked = r.findings.filter((f) => f.acknowledged).length;
  return `SUMMARY: ${r.breaking} breaking, ${r.review} review, ${r.safe} safe` +
    (acked > 0 ? ` (${acked} acknowledged)` : "");
}

const severityCell = (f: Finding) => f.acknowledged ? `${f.severity} (allowed)` : f.severity;

function compatTable(r: CompatReport): string {
  let text = `${r.resourceKind} ${r.resource}: ${r.base} → ${r.head}\n`;
  for (const n of r.notes) text += `NOTE: ${n}\n`;
  if (r.findings.length === 0) text += "no differences\n";
  else {
    text += renderTable(
      ["SEVERITY", "CLASS", "VERSION", "CHANGE"],
      r.findings.map((f) => [severityCell(f), f.class, f.version || "-", f.detail]),
    );
  }
  for (const a of r.acknowledgements) text += `ALLOWED: ${a.class} (${a.findings} finding(s))\n`;
  return text + summaryLine(r) + "\n";
}

const cell = (s: string) => s.replaceAll("|", "\\|");

/** Byte-stable between runs of the same revisions (a sticky PR comment is replaced, not added). */
function compatMarkdown(r: CompatReport): string {
  const lines = [
    `### ${r.resourceKind} compatibility: \`${r.resource}\``,
    "",
    `\`${r.base}\` → \`${r.head}\``,
    "",
  ];
  for (const n of r.notes) lines.push(`> **NOTE:** ${cell(n)}`, "");
  if (r.findings.length === 0) lines.push("No differences.");
  else {
    lines.push("| Severity | Class | Version | Change |", "| --- | --- | --- | --- |");
    for (const f of r.findings) {
      lines.push(`| ${severityCell(f)} | ${f.class} | ${f.version || "-"} | ${cell(f.detail)} |`);
    }
  }
  lines.push("");
  for (const a of r.acknowledgements) {
    lines.push(`Allowed: \`${a.class}\` (${a.findings} finding(s))`, "");
  }
  lines.push(`**${summaryLine(r)}**`);
  return lines.join("\n") + "\n";
}

export const compatCommand = defineCommand({
  name: "compat",
  usage: "convctl compat --base REV --head REV -c CONFIG (-x XRD | --crd CRD) [--allow CLASS]... " +
    "[-o table|json|markdown]",
  summary: "Gate a change: classify what changes between two git revisions of a config and schema.",
  target: "none",
  flags: [
    { ...FLAGS.config, help: `${FLAGS.config.help}, read at both revisions (required)` },
    { ...FLAGS.xrd, help: `${FLAGS.xrd.help}, read at both revisions` },
    { ...FLAGS.crd, help: `${FLAGS.crd.help}, read at both revisions` },
    {
      name: "base",
      kind: "string",
      value: "REV",
      help: "the git revision compared from (required)",
    },
    { name: "head", kind: "string", value: "REV", help: "the git revision compared to (required)" },
    {
      name: "allow",
      kind: "list",
      value: "CLASS",
      help: `acknowledge one change class (repeatable): ${CLASS_NAMES.join(", ")}`,
    },
    outputFlag("table, json or markdown", "table"),
  ],
  required: ["config", "base", "head"],
  groups: [{ exactlyOne: ["xrd", "crd"] }],
  options: (flags) => {
    const allow = flags.list("allow");
    for (const c of allow) {
      if (!(CLASS_NAMES as string[]).includes(c)) {
        throw new CliError(
          `invalid value ${JSON.stringify(c)} for --allow: must be one of ${
            CLASS_NAMES.join(", ")
          }`,
        );
      }
    }
    return { allow: new Set(allow as CompatClass[]) };
  },
  run: async ({ flags, options }): Promise<CompatReport> => {
    const configFile = flags.string("config")!;
    const schemaFile = (kind: "XRDConversionConfig" | "CRDConversionConfig") => {
      const { flag, shown } = schemaFlagOf(kind);
      const file = flags.string(flag);
      if (file === undefined) {
        throw new CliError(`config ${configFile} is a ${kind}: its schema comes from ${shown}`);
      }
      return file;
    };
    const base = await readRevision(flags.string("base")!, configFile, schemaFile);
    const head = await readRevision(flags.string("head")!, configFile, schemaFile);
    const findings: Finding[] = compatFindings(base, head).map((f) => ({
      class: f.class,
      severity: COMPAT_CLASSES[f.class],
      version: f.version,
      detail: f.detail,
      acknowledged: options.allow.has(f.class),
    }));
    const acknowledgements = CLASS_NAMES.filter((c) => options.allow.has(c))
      .map((c) => ({ class: c, findings: findings.filter((f) => f.class === c).length }))
      .filter((a) => a.findings > 0);
    const count = (s: Severity) =>
      findings.filter((f) => f.severity === s && !f.acknowledged).length;
    return {
      resourceKind: head.source.kind,
      resource: head.source.name,
      base: base.rev,
      head: head.rev,
      notes: [noteOf("base", base), noteOf("head", head)].filter((n) => n !== undefined),
      findings,
      acknowledgements,
      breaking: count("breaking"),
      review: count("review"),
      safe: count("safe"),
    };
  },
  output: {
    formats: { table: compatTable, json: toJson, markdown: compatMarkdown },
    default: "table",
  },
  exitCode: (r) => r.breaking > 0 ? 1 : 0,
});
