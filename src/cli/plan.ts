/**
 * `convctl plan --to V`: the ordered, gated steps that move a target from its current hub to hub
 * V and retire the versions it replaces — read from the files alone, so the steps only a cluster
 * can answer are UNKNOWN. Read-only: it prints commands, it runs none.
 */
import { CRD_CONFIG_KIND, engineSpecOf, XRD_CONFIG_KIND } from "../api/mod.ts";
import { type AnalysisResult, analyze, type JsonObject } from "../engine/mod.ts";
import { isJsonObject } from "../lib/json.ts";
import { CliError, FLAGS, outputFlag } from "./args.ts";
import { defineCommand } from "./command.ts";
import { loadConfig, type LoadedConfig, type LoadedSchema, loadSchema } from "./load.ts";
import { toJson } from "./output.ts";
import { type DeclaredVersion, declaredVersions, targetCRDs } from "./schema_versions.ts";

export type StepStatus = "DONE" | "READY" | "BLOCKED" | "UNKNOWN";

export interface PlanStep {
  step: number;
  id: string;
  title: string;
  status: StepStatus;
  run: string;
  gate: string;
  verify: string;
  /** The step number this one waits for (BLOCKED only). */
  blockedBy?: number;
}

export interface PlanReport {
  resourceKind: "CRD" | "XRD";
  resource: string;
  from: string;
  to: string;
  declared: boolean;
  packageManaged: boolean;
  steps: PlanStep[];
  /** The READY step's number, or null when none is. */
  next: number | null;
  /** Steps only a cluster can answer. */
  needCluster: number[];
}

interface Draft {
  id: string;
  title: string;
  run: string;
  gate: string;
  verify: string;
  done: boolean;
  clusterOnly?: boolean;
  /** Retiring a version cannot be undone: it waits for the cluster-only gates too. */
  irreversible?: boolean;
}

/** A Crossplane package revision owns the XRD: the package manager re-applies it on upgrade. */
export function ownedByPackage(raw: JsonObject): boolean {
  const metadata = isJsonObject(raw.metadata) ? raw.metadata : {};
  const owners = Array.isArray(metadata.ownerReferences) ? metadata.ownerReferences : [];
  return owners.some((o) =>
    isJsonObject(o) && typeof o.apiVersion === "string" && typeof o.kind === "string" &&
    o.apiVersion.split("/")[0] === "pkg.crossplane.io" && o.kind.endsWith("Revision")
  );
}

function spokeClean(analysis: AnalysisResult | undefined, version: string): boolean {
  if (analysis === undefined || analysis.hardErrors.length > 0) return false;
  const spoke = analysis.spokes.find((s) => s.version === version);
  return spoke !== undefined && spoke.errors.length === 0;
}

/** The steps in order, before statuses are assigned. */
function draftSteps(
  schema: LoadedSchema,
  config: LoadedConfig | undefined,
  versions: DeclaredVersion[],
  to: string,
  packageManaged: boolean,
): Draft[] {
  const source = schema.source;
  const isXRD = source.kind === "XRD";
  const schemaArg = isXRD ? `-x ${schema.file}` : `--crd ${schema.file}`;
  const nameFlag = isXRD ? `--xrd ${source.name}` : `--crd ${source.name}`;
  const configFile = config?.file ?? "CONFIG";
  const spec = config ? engineSpecOf(config.config) : undefined;
  const analysis = spec ? analyze(source, spec) : undefined;
  const target = versions.find((v) => v.name === to)!;
  const currentHub = spec?.hubVersion ?? versions.find((v) => v.storage)?.name ?? "";
  const hubField = isXRD ? "referenceable" : "storage";
  const storedCRD = targetCRDs(schema)[0].name;

  const serve: Draft = {
    id: "serve",
    title: `serve ${to}`,
    run: packageManaged
      ? `upgrade the package to a revision whose ${source.kind} serves ${to}`
      : `set served: true on ${to} in ${schema.file} and apply it`,
    gate: `${to} is declared and served`,
    verify: `convctl versions ${schemaArg}`,
    done: target.served,
  };
  const wire: Draft = {
    id: "wire",
    title: `wire ${to} into the config as a spoke`,
    run: config
      ? `add spoke ${to} to ${configFile} (draft its rules: convctl suggest -c ${configFile} ${schemaArg})`
      : `write a ${source.kind}ConversionConfig for ${source.name} with hub ${currentHub} and spoke ${to}`,
    gate: `the config validates clean with ${to} as a spoke (or hub)`,
    verify: `convctl validate -c ${configFile} ${schemaArg}`,
    done: spec !== undefined && (spec.hubVersion === to || spokeClean(analysis, to)),
  };
  if (packageManaged) {
    wire.gate += "; applied before the package upgrade that changes the XRD";
  }
  const promote: Draft = {
    id: "promote",
    title: `promote ${to} to hub`,
    run:
      `convctl rehub -c ${configFile} ${schemaArg} --to ${to}, then set ${hubField}: true on ${to} ` +
      `(and false on ${currentHub || "the old hub"}) and apply both`,
    gate: isXRD
      ? "conversion verified against live objects and propagated to the generated CRDs"
      : "conversion verified against live objects",
    verify: `convctl test -c ${configFile} ${schemaArg} --live${
      isXRD ? " --verify-propagation" : ""
    }`,
    done: target.storage && spec?.hubVersion === to,
  };
  const steps: Draft[] = packageManaged ? [wire, serve, promote] : [serve, wire, promote];
  if (isXRD) {
    steps.push({
      id: "retarget",
      title: `retarget Compositions to ${to}`,
      run: `convctl retarget --xrd ${source.name} --to ${to}`,
      gate: `every composite selects the Compositions labelled for ${to}`,
      verify: `convctl crossplane status ${source.name}`,
      done: false,
      clusterOnly: true,
    });
  }
  steps.push(
    {
      id: "migrate-storage",
      title: `migrate storage to ${to}`,
      run: `convctl migrate-storage ${nameFlag}`,
      gate: `every object is stored at ${to}`,
      verify: `convctl migrate-storage ${nameFlag} --dry-run`,
      done: false,
      clusterOnly: true,
    },
    {
      id: "prune-stored-versions",
      title: "prune storedVersions",
      run: `convctl migrate-storage ${nameFlag} --prune-stored-versions`,
      gate: `status.storedVersions of ${storedCRD} is [${to}]`,
      verify: `kubectl get crd ${storedCRD} -o jsonpath='{.status.storedVersions}'`,
      done: false,
      clusterOnly: true,
    },
  );
  // Retired: the hub being replaced, and any deprecated or unserved version — never a served,
  // undeprecated spoke.
  const retired = versions.filter((v) =>
    v.name !== to && (v.name === currentHub || v.deprecated || !v.served)
  );
  for (const v of retired) {
    steps.push({
      id: `unserve-${v.name}`,
      title: `stop serving ${v.name}`,
      run: packageManaged
        ? `upgrade the package to a revision with served: false on ${v.name}`
        : `set served: false on ${v.name} in ${schema.file} and apply it`,
      gate: `no client reads or writes ${v.name} any more`,
      verify: `convctl versions ${schemaArg} -s OBJECTS --check-unserve ${v.name}`,
      done: !v.served,
      irreversible: true,
    });
  }
  for (const v of retired) {
    steps.push({
      id: `drop-${v.name}`,
      title: `drop the ${v.name} version block`,
      run: `remove ${v.name} from ${schema.file} and its spoke from ${configFile}, and apply both`,
      gate: `${v.name} is unserved and not in status.storedVersions`,
      verify: `kubectl get crd ${storedCRD} -o jsonpath='{.status.storedVersions}'`,
      done: false,
      irreversible: true,
    });
  }
  return steps;
}

/**
 * DONE steps are done; cluster-only ones are UNKNOWN; the first other step whose predecessors are
 * all DONE (or UNKNOWN, which blocks only irreversible steps unless asserted) is READY; the rest
 * are BLOCKED by their first unfinished predecessor.
 */
function assignStatuses(drafts: Draft[], assumeVerified: boolean): PlanStep[] {
  const steps: PlanStep[] = [];
  for (const [i, d] of drafts.entries()) {
    const step: PlanStep = {
      step: i + 1,
      id: d.id,
      title: d.title,
      status: "DONE",
      run: d.run,
      gate: d.gate,
      verify: d.verify,
    };
    if (!d.done) {
      if (d.clusterOnly) step.status = "UNKNOWN";
      else {
        const blocker = steps.find((s) =>
          s.status !== "DONE" &&
          (s.status !== "UNKNOWN" || (d.irreversible === true && !assumeVerified))
        );
        if (blocker === undefined) step.status = "READY";
        else {
          step.status = "BLOCKED";
          step.blockedBy = blocker.step;
        }
      }
    }
    steps.push(step);
  }
  return steps;
}

const STATUS_TEXT: Record<StepStatus, string> = {
  DONE: "DONE",
  READY: "NEXT",
  BLOCKED: "BLOCKED",
  UNKNOWN: "UNKNOWN",
};

function planTable(r: PlanReport): string {
  const head = `plan: ${r.resourceKind} ${r.resource}, hub ${r.from || "?"} → ${r.to}\n`;
  if (!r.declared) return head + `${r.to} is not declared by ${r.resourceKind} ${r.resource}\n`;
  let text = head;
  if (r.packageManaged) {
    text += "PACKAGE-MANAGED: a Crossplane package owns the XRD and re-applies it on every " +
      "upgrade: apply the config change before the package upgrade that changes the XRD.\n";
  }
  for (const s of r.steps) {
    const mark = s.status === "READY" ? "▶" : " ";
    text += `${mark} ${s.step}. ${s.title}  [${STATUS_TEXT[s.status]}]\n`;
    text += `     run:     ${s.run}\n     gate:    ${s.gate}\n     verify:  ${s.verify}\n`;
    if (s.blockedBy !== undefined) text += `     blocked: by step ${s.blockedBy}\n`;
  }
  if (r.next !== null) text += `NEXT: step ${r.next}\n`;
  else if (r.steps.every((s) => s.status === "DONE")) text += "every step is done\n";
  else {
    text += `no step is ready: ${r.needCluster.length} step(s) need a cluster to check (` +
      `${r.needCluster.join(", ")})\n`;
  }
  return text;
}

export const planCommand = defineCommand({
  name: "plan",
  usage: "convctl plan --to V (-x XRD | --crd CRD) [-c CONFIG] [--assume-verified] " +
    "[--package-managed] [-o table|json]",
  summary: "Print the ordered, gated steps to promote a hub version and retire the old ones.",
  target: "none",
  flags: [
    { name: "to", kind: "string", value: "V", help: "the version to make the hub (required)" },
    FLAGS.xrd,
    FLAGS.crd,
    { ...FLAGS.config, help: `${FLAGS.config.help}; without it the config steps are not done` },
    {
      name: "assume-verified",
      kind: "bool",
      help: "assert the cluster-only gates (retarget, storage migration, prune) are met",
    },
    {
      name: "package-managed",
      kind: "bool",
      help: "the XRD belongs to a Crossplane package (also detected from its owner references)",
    },
    outputFlag("table or json", "table"),
  ],
  required: ["to"],
  groups: [{ exactlyOne: ["xrd", "crd"] }],
  run: async ({ flags }): Promise<PlanReport> => {
    const to = flags.string("to")!;
    const kind = flags.has("xrd") ? XRD_CONFIG_KIND : CRD_CONFIG_KIND;
    const configFile = flags.string("config");
    const config = configFile !== undefined ? await loadConfig(configFile, flags) : undefined;
    if (config !== undefined && config.kind !== kind) {
      throw new CliError(`config ${config.file} is a ${config.kind}, not a ${kind}`);
    }
    const schema = await loadSchema(kind, flags.string(kind === XRD_CONFIG_KIND ? "xrd" : "crd")!);
    const versions = declaredVersions(schema);
    const packageManaged = flags.bool("package-managed") ||
      (schema.source.kind === "XRD" && ownedByPackage(schema.raw));
    const from = config
      ? engineSpecOf(config.config).hubVersion
      : versions.find((v) => v.storage)?.name ?? "";
    const report: PlanReport = {
      resourceKind: schema.source.kind,
      resource: schema.source.name,
      from,
      to,
      declared: versions.some((v) => v.name === to),
      packageManaged,
      steps: [],
      next: null,
      needCluster: [],
    };
    if (!report.declared) return report;
    const drafts = draftSteps(schema, config, versions, to, packageManaged);
    report.steps = assignStatuses(drafts, flags.bool("assume-verified"));
    report.next = report.steps.find((s) => s.status === "READY")?.step ?? null;
    report.needCluster = report.steps.filter((s) => s.status === "UNKNOWN").map((s) => s.step);
    return report;
  },
  output: { formats: { table: planTable, json: toJson }, default: "table" },
  exitCode: (r) => r.declared ? 0 : 1,
});
