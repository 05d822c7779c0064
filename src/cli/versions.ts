/**
 * `convctl versions`: every declared version of a target with what decides whether it can stop
 * being served — served, hub, deprecated, whether the config has rules for it, and, from objects
 * exported from the cluster (`-s DIR`), how many objects there are, whether the version is in
 * `status.storedVersions` and who last wrote at it. `--check-unserve V` turns that into a verdict.
 */
import { CRD_CONFIG_KIND, engineSpecOf, XRD_CONFIG_KIND } from "../api/mod.ts";
import { isJsonObject } from "../lib/json.ts";
import { CliError, FLAGS, outputFlag } from "./args.ts";
import { defineCommand } from "./command.ts";
import { type Inventory, loadInventory } from "./inventory.ts";
import { loadConfig, loadSchema } from "./load.ts";
import { renderTable, toJson } from "./output.ts";
import { declaredVersions } from "./schema_versions.ts";

export interface Writer {
  manager: string;
  /** The latest `managedFields[].time` of this manager at this version. */
  time: string;
  objects: number;
}

export interface VersionRow {
  version: string;
  served: boolean;
  hub: boolean;
  deprecated: boolean;
  deprecationWarning?: string;
  /** Whether the config has rules for it ("hub" when it is the config's hub); null without -c. */
  spokeRules: boolean | "hub" | null;
  /** Objects readable at this version (every served row; reads convert); null without -s. */
  liveObjects: number | null;
  /** In status.storedVersions; null when no CRD status was read. */
  stored: boolean | null;
  /** Who wrote objects at this version, latest first; null without -s. */
  writers: Writer[] | null;
}

export interface VersionsReport {
  resourceKind: "CRD" | "XRD";
  resource: string;
  versions: VersionRow[];
  checkUnserve?: { version: string; safe: boolean; reasons: string[] };
}

/** Per version, the managers whose managedFields entries name it, with their latest time. */
function writersByVersion(inventory: Inventory, group: string): Map<string, Writer[]> {
  const byVersion = new Map<string, Map<string, Writer>>();
  for (const { object } of inventory.objects) {
    const metadata = isJsonObject(object.metadata) ? object.metadata : {};
    const entries = Array.isArray(metadata.managedFields) ? metadata.managedFields : [];
    const seen = new Set<string>();
    for (const e of entries) {
      if (!isJsonObject(e) || typeof e.apiVersion !== "string") continue;
      if (!e.apiVersion.startsWith(`${group}/`)) continue;
      const version = e.apiVersion.slice(group.length + 1);
      const manager = typeof e.manager === "string" ? e.manager : "(unnamed)";
      const time = typeof e.time === "string" ? e.time : "";
      const writers = byVersion.get(version) ?? new Map<string, Writer>();
      byVersion.set(version, writers);
      const w = writers.get(manager) ?? { manager, time, objects: 0 };
      if (time > w.time) w.time = time;
      if (!seen.has(`${version}|${manager}`)) w.objects++;
      seen.add(`${version}|${manager}`);
      writers.set(manager, w);
    }
  }
  const out = new Map<string, Writer[]>();
  for (const [v, ws] of byVersion) {
    out.set(
      v,
      [...ws.values()].sort((a, b) =>
        a.time < b.time ? 1 : a.time > b.time ? -1 : a.manager < b.manager ? -1 : 1
      ),
    );
  }
  return out;
}

/** Why `version` cannot stop being served yet (empty: it can). */
function unserveReasons(
  row: VersionRow,
  objectsRead: boolean,
  storedKnown: boolean,
): string[] {
  const reasons: string[] = [];
  if (row.hub) reasons.push(`${row.version} is the hub (storage) version`);
  if (row.stored === true) reasons.push(`${row.version} is in status.storedVersions`);
  if (!storedKnown) {
    reasons.push(
      "status.storedVersions was not read: put the target's CRD (kubectl get crd NAME -o yaml) " +
        "in the -s directory",
    );
  }
  if (!objectsRead) {
    reasons.push("no objects were read: give -s DIR with the objects exported from the cluster");
  }
  for (const w of row.writers ?? []) {
    reasons.push(`${row.version} is still written by ${w.manager} (last at ${w.time || "?"})`);
  }
  return reasons;
}

const yesNo = (b: boolean | null) => b === null ? "?" : b ? "yes" : "no";

function versionsTable(r: VersionsReport): string {
  const rows = r.versions.map((v) => [
    v.version,
    yesNo(v.served),
    yesNo(v.hub),
    yesNo(v.deprecated),
    v.spokeRules === "hub" ? "hub" : yesNo(v.spokeRules),
    !v.served ? "-" : v.liveObjects === null ? "?" : String(v.liveObjects),
    yesNo(v.stored),
    v.writers === null
      ? "?"
      : v.writers.length === 0
      ? "-"
      : `${v.writers[0].manager} @ ${v.writers[0].time || "?"}`,
  ]);
  let text = `${r.resourceKind} ${r.resource}\n` + renderTable(
    [
      "VERSION",
      "SERVED",
      "HUB",
      "DEPRECATED",
      "SPOKE RULES",
      "LIVE OBJECTS",
      "STORED",
      "LAST WRITTEN AT",
    ],
    rows,
  );
  for (const v of r.versions) {
    if (v.deprecationWarning !== undefined) text += `${v.version}: ${v.deprecationWarning}\n`;
  }
  if (r.versions.some((v) => v.liveObjects === null)) {
    text +=
      "LIVE OBJECTS, LAST WRITTEN AT ?: no objects read (-s DIR: objects exported from the cluster)\n";
  }
  if (r.versions.some((v) => v.stored === null)) {
    text +=
      "STORED ?: status.storedVersions not read (the target's CRD with its status, in -s DIR)\n";
  }
  const check = r.checkUnserve;
  if (check !== undefined) {
    if (check.safe) text += `safe to stop serving ${check.version}\n`;
    else {
      text += `NOT safe to stop serving ${check.version}:\n` +
        check.reasons.map((m) => `  - ${m}\n`).join("");
    }
  }
  return text;
}

export const versionsCommand = defineCommand({
  name: "versions",
  usage: "convctl versions (-x XRD | --crd CRD) [-c CONFIG] [-s DIR] [--check-unserve V] " +
    "[-o table|json]",
  summary: "List a target's versions and whether each one can stop being served.",
  target: "none",
  flags: [
    FLAGS.xrd,
    FLAGS.crd,
    { ...FLAGS.config, help: `${FLAGS.config.help}; fills the SPOKE RULES column` },
    {
      name: "samples",
      short: "s",
      kind: "string",
      value: "DIR",
      help: "objects exported from the cluster, and the target's CRD(s) with their status",
    },
    {
      name: "check-unserve",
      kind: "string",
      value: "V",
      help: "exit 1 with the reasons unless V can stop being served",
    },
    outputFlag("table or json", "table"),
  ],
  groups: [{ exactlyOne: ["xrd", "crd"] }],
  run: async ({ flags }): Promise<VersionsReport> => {
    const kind = flags.has("xrd") ? XRD_CONFIG_KIND : CRD_CONFIG_KIND;
    const configFile = flags.string("config");
    const config = configFile !== undefined ? await loadConfig(configFile, flags) : undefined;
    if (config !== undefined && config.kind !== kind) {
      throw new CliError(`config ${config.file} is a ${config.kind}, not a ${kind}`);
    }
    const schema = await loadSchema(kind, flags.string(kind === XRD_CONFIG_KIND ? "xrd" : "crd")!);
    const declared = declaredVersions(schema);
    const check = flags.string("check-unserve");
    if (check !== undefined && !declared.some((v) => v.name === check)) {
      throw new CliError(
        `--check-unserve ${check}: not a version of ${schema.source.kind} ${schema.source.name} ` +
          `(versions: ${declared.map((v) => v.name).join(", ")})`,
      );
    }
    const dir = flags.string("samples");
    const inventory = dir !== undefined ? await loadInventory(dir, schema) : undefined;
    const writers = inventory ? writersByVersion(inventory, schema.source.group) : undefined;
    const stored = inventory?.storedVersions.size
      ? new Set([...inventory.storedVersions.values()].flat())
      : undefined;
    const spec = config ? engineSpecOf(config.config) : undefined;
    const rows: VersionRow[] = declared.map((v) => {
      const row: VersionRow = {
        version: v.name,
        served: v.served,
        hub: v.storage,
        deprecated: v.deprecated,
        spokeRules: spec === undefined
          ? null
          : spec.hubVersion === v.name
          ? "hub"
          : spec.spokes.some((s) => s.version === v.name),
        liveObjects: inventory ? (v.served ? inventory.objects.length : 0) : null,
        stored: stored ? stored.has(v.name) : null,
        writers: writers ? writers.get(v.name) ?? [] : null,
      };
      if (v.deprecationWarning !== undefined) row.deprecationWarning = v.deprecationWarning;
      return row;
    });
    const report: VersionsReport = {
      resourceKind: schema.source.kind,
      resource: schema.source.name,
      versions: rows,
    };
    if (check !== undefined) {
      const row = rows.find((r) => r.version === check)!;
      const reasons = unserveReasons(row, inventory !== undefined, stored !== undefined);
      report.checkUnserve = { version: check, safe: reasons.length === 0, reasons };
    }
    return report;
  },
  output: { formats: { table: versionsTable, json: toJson }, default: "table" },
  exitCode: (r) => r.checkUnserve !== undefined && !r.checkUnserve.safe ? 1 : 0,
});
