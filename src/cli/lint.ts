/**
 * `convctl lint [PATH...]`: finds every conversion config and CRD/XRD under the paths (and the
 * `--schema-dir` trees), pairs each config with the schema it targets by name, and runs the checks
 * of `validate` and `analyze` on every pair — one process, the reading and checking spread over a
 * Worker pool (src/cli/lint_pool.ts). A config without a schema, or two configs for one target,
 * are errors. Offline: no cluster is contacted.
 */
import { XRD_CONFIG_KIND } from "../api/mod.ts";
import { outputFlag } from "./args.ts";
import { defineCommand } from "./command.ts";
import { parseInteger } from "./int_flag.ts";
import { LINT_IDS, type LintFinding, type ScannedDoc, type ScanResult } from "./lint_check.ts";
import type { LintJob } from "./lint_jobs.ts";
import { LintPool } from "./lint_pool.ts";
import {
  LINT_FAIL_ON,
  type LintEntry,
  type LintFailOn,
  type LintReport,
  lintTable,
  statusOf,
  summarize,
} from "./lint_report.ts";
import { globRegExp, walkManifests } from "./lint_walk.ts";
import { choice } from "./args.ts";
import { ciFormats } from "./findings/render.ts";
import { toJson } from "./output.ts";

interface LintOptions {
  concurrency: number;
  failOn: LintFailOn;
}

/** The schema kind a config kind targets. */
function schemaKindOf(configKind: string): string {
  return configKind === XRD_CONFIG_KIND
    ? "CompositeResourceDefinition"
    : "CustomResourceDefinition";
}

const where = (d: { file: string; line: number }) => `${d.file}:${d.line}`;

/** Pairs configs with schemas; returns the entries (walk order) and the checks to run. */
function pair(configs: ScannedDoc[], schemas: ScannedDoc[]) {
  const byName = new Map<string, ScannedDoc[]>();
  for (const s of schemas) {
    const key = `${s.kind}/${s.name}`;
    if (s.name !== "") byName.set(key, [...(byName.get(key) ?? []), s]);
  }
  const byTarget = new Map<string, ScannedDoc[]>();
  for (const c of configs) {
    const key = `${schemaKindOf(c.kind)}/${c.target}`;
    byTarget.set(key, [...(byTarget.get(key) ?? []), c]);
  }
  const checks: { entry: LintEntry; config: ScannedDoc; schema: ScannedDoc }[] = [];
  const entries = configs.map((c): LintEntry => {
    const key = `${schemaKindOf(c.kind)}/${c.target}`;
    // The first schema found wins; more of the same name are a warning on the config.
    const [schema, ...shadowed] = c.target === "" ? [] : byName.get(key) ?? [];
    const entry: LintEntry = {
      file: c.file,
      line: c.line,
      name: c.name,
      kind: c.kind,
      target: c.target,
      ...(schema !== undefined ? { schema: { file: schema.file, line: schema.line } } : {}),
      status: "OK",
      findings: [],
    };
    const at = { file: c.file, line: c.line };
    const others = (byTarget.get(key) ?? []).filter((o) => o !== c);
    if (c.target !== "" && others.length > 0) {
      entry.status = "DUPLICATE";
      entry.findings.push({
        ruleId: LINT_IDS.duplicateConfig,
        level: "error",
        message: `another config targets ${c.target}: ${others.map(where).join(", ")}`,
        ...at,
      });
    } else if (schema === undefined) {
      entry.status = "UNPAIRED";
      entry.findings.push({
        ruleId: LINT_IDS.unpairedConfig,
        level: "error",
        message: c.target === ""
          ? "config names no target"
          : `no ${schemaKindOf(c.kind)} named ${c.target} found`,
        ...at,
      });
    }
    if (shadowed.length > 0) {
      entry.findings.push({
        ruleId: LINT_IDS.duplicateSchema,
        level: "warning",
        message: `${c.target} is also defined at ${shadowed.map(where).join(", ")}; checked ` +
          `against ${where(schema!)}`,
        ...at,
      });
    }
    if (schema !== undefined) checks.push({ entry, config: c, schema });
    return entry;
  });
  return { entries, checks };
}

/** A config file that does not parse: one entry with its error. */
function unreadableEntry(finding: LintFinding): LintEntry {
  return {
    file: finding.file,
    line: finding.line ?? 1,
    name: "",
    kind: "",
    target: "",
    status: "ERROR",
    findings: [finding],
  };
}

async function lint(
  paths: readonly string[],
  schemaDirs: readonly string[],
  excludes: readonly string[],
  options: LintOptions,
): Promise<LintReport> {
  const globs = excludes.map(globRegExp);
  const files = await walkManifests(paths, globs);
  const seen = new Set(files);
  const schemaFiles = (await walkManifests(schemaDirs, globs)).filter((f) => !seen.has(f));
  const pool = new LintPool(options.concurrency);
  try {
    const scanJobs: LintJob[] = [...files, ...schemaFiles].map((file) => ({ type: "scan", file }));
    const scans = (await pool.run(scanJobs)) as ScanResult[];
    const configs: ScannedDoc[] = [];
    const schemas: ScannedDoc[] = [];
    const unreadable = new Map<string, LintFinding>();
    scans.forEach((scan, i) => {
      const fromPaths = i < files.length;
      for (const d of scan.docs) {
        if (d.role === "schema") schemas.push(d);
        else if (fromPaths) configs.push(d);
      }
      if (scan.unreadable !== undefined && fromPaths) {
        unreadable.set(scan.unreadable.file, scan.unreadable);
      }
    });
    const { entries, checks } = pair(configs, schemas);
    const results = (await pool.run(
      checks.map(({ config, schema }) => ({ type: "check", config, schema })),
    )) as LintFinding[][];
    checks.forEach(({ entry }, i) => {
      entry.findings.push(...results[i]);
      if (entry.status === "OK") entry.status = statusOf(entry.findings);
    });
    // Walk order: a file's configs where the file is, an unreadable file where it would be.
    const order = new Map(files.map((f, i) => [f, i]));
    const all = [...entries, ...[...unreadable.values()].map(unreadableEntry)];
    all.sort((a, b) => order.get(a.file)! - order.get(b.file)! || a.line - b.line);
    return summarize(all, schemas.length, options.failOn);
  } finally {
    pool.close();
  }
}

export const lintCommand = defineCommand({
  name: "lint",
  usage: "convctl lint [PATH...] [--schema-dir D]... [--exclude GLOB]... [--concurrency N] " +
    "[--fail-on none|warn|loss] [-o table|json|github|sarif|markdown]",
  summary: "Pair every conversion config under the paths with its CRD/XRD and check each pair.",
  target: "none",
  flags: [
    {
      name: "schema-dir",
      kind: "list",
      value: "D",
      help: "more directories to find CRDs/XRDs in (repeatable)",
    },
    {
      name: "exclude",
      kind: "list",
      value: "GLOB",
      help: "skip paths whose path or base name matches (repeatable; * ? **)",
    },
    {
      name: "concurrency",
      kind: "string",
      value: "N",
      help: "parallel Workers; 1 runs inline, 0 means the default",
      default: "the number of CPUs, at most 8",
    },
    {
      name: "fail-on",
      kind: "string",
      value: "LEVEL",
      help: "none, warn or loss (errors); unpaired and duplicate configs always fail",
      default: "loss",
      choices: LINT_FAIL_ON,
    },
    outputFlag("table, json, github, sarif or markdown", "table"),
  ],
  positionals: () => {}, // paths; a missing one is reported when the walk reaches it
  options: (flags): LintOptions => {
    // Each Worker loads the engine once; past 8 that start-up outweighs what is left to share.
    const cpus = Math.min(8, Math.max(1, navigator.hardwareConcurrency ?? 1));
    const n = parseInteger("concurrency", flags.string("concurrency"), 0, [0, 256]);
    return {
      concurrency: n === 0 ? cpus : n,
      failOn: choice("fail-on", flags.string("fail-on"), LINT_FAIL_ON, "loss"),
    };
  },
  run: ({ flags, options }) => {
    const paths = flags.positionals.length > 0 ? flags.positionals : ["."];
    return lint(paths, flags.list("schema-dir"), flags.list("exclude"), options);
  },
  output: {
    formats: {
      table: lintTable,
      json: toJson,
      ...ciFormats(
        (report: LintReport) => report.configs.flatMap((c) => c.findings),
        (report) => `convctl lint: ${report.configs.length} config(s)`,
      ),
    },
    default: "table",
  },
  exitCode: (report) => (report.passed ? 0 : 1),
});
