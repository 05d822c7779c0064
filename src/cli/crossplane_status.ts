/**
 * `convctl crossplane status XRD-NAME`: a read-only report of one XRD as the cluster has it — per
 * version (served, referenceable, deprecated, whether a rule set covers it, how many objects were
 * last written at it), per generated CRD (scope, conversion strategy, storage and stored
 * versions, object count; `None` while the XRD says `Webhook` is the propagation gap), per
 * Composition targeting the XRD (its version and how many objects pin it by name, and how many
 * pin none), and the XRDConversionConfig's phase and conditions. It only reads.
 */
import { XRD_CONFIG_KIND, type XRDConversionConfig } from "../api/mod.ts";
import { CONFIG_RESOURCES } from "../api/resources.ts";
import { generatedCRDNames, type JsonObject, resolveXRDScope } from "../engine/mod.ts";
import type { GeneratedCRD } from "../engine/source.ts";
import { isNotFound } from "../kube/errors.ts";
import { CRD_RESOURCE } from "../kube/resources.ts";
import { isJsonObject } from "../lib/json.ts";
import { CliError, outputFlag } from "./args.ts";
import {
  type Cluster,
  CLUSTER_FLAGS,
  clusterError,
  clusterTargetOf,
  openCluster,
} from "./cluster.ts";
import { listObjects, listVersionOf, objectsRef, readObject, XRD_REF } from "./cluster_reads.ts";
import { defineCommand } from "./command.ts";
import { renderTable, toJson } from "./output.ts";
import { pinOf, underCrossplaneOf } from "./retarget_plan.ts";

/** Crossplane's Compositions. */
export const COMPOSITIONS = {
  group: "apiextensions.crossplane.io",
  version: "v1",
  plural: "compositions",
} as const;

export interface VersionStatus {
  name: string;
  served: boolean;
  referenceable: boolean;
  deprecated: boolean;
  deprecationWarning?: string;
  /** `hub`, `spoke` (the config has a rule set for it) or `none`. */
  ruleSet: "hub" | "spoke" | "none";
  /** Objects (composites and claims) last written at this version. */
  objects: number;
  /** Served, but no rule set converts it. */
  servedWithoutRuleSet: boolean;
}

export interface GeneratedCRDStatus {
  name: string;
  role: "composite" | "claim";
  found: boolean;
  scope?: string;
  conversionStrategy?: string;
  storageVersion?: string;
  storedVersions?: string[];
  objects?: number;
  /** The XRD converts through a webhook, this CRD does not (yet). */
  propagationGap: boolean;
}

export interface CompositionStatus {
  name: string;
  /** The version of its `compositeTypeRef`. */
  version: string;
  /** Objects whose `compositionRef` names it. */
  pinnedBy: number;
}

export interface ConfigState {
  name: string;
  phase?: string;
  conditions: Array<{ type: string; status: string; reason?: string; message?: string }>;
}

export interface CrossplaneStatusReport {
  xrd: string;
  cluster: string;
  scope: string;
  xrdConversionStrategy: string;
  versions: VersionStatus[];
  generatedCRDs: GeneratedCRDStatus[];
  compositions: CompositionStatus[];
  /** Objects that pin no Composition by name. */
  unpinned: number;
  /** The XRDConversionConfig targeting the XRD, or null when none does. */
  config: ConfigState | null;
}

const objectOf = (v: unknown): JsonObject => isJsonObject(v) ? v : {};

/** The version an object was last written at: its newest managedFields entry's apiVersion. */
function writtenAt(object: JsonObject): string | undefined {
  const fields = objectOf(object.metadata).managedFields;
  const entries = (Array.isArray(fields) ? fields : []).filter(isJsonObject);
  const newest =
    [...entries].sort((a, b) => String(a.time ?? "") < String(b.time ?? "") ? 1 : -1)[0];
  const apiVersion = newest?.apiVersion ?? object.apiVersion;
  return typeof apiVersion === "string"
    ? apiVersion.slice(apiVersion.lastIndexOf("/") + 1)
    : undefined;
}

async function configFor(cluster: Cluster, xrd: string): Promise<XRDConversionConfig | undefined> {
  const all = await listObjects(cluster, CONFIG_RESOURCES[XRD_CONFIG_KIND], "XRDConversionConfigs");
  const found = all.find((c) => objectOf(objectOf(c.spec).targetXRD).name === xrd);
  return found as unknown as XRDConversionConfig | undefined;
}

async function compositionsFor(
  cluster: Cluster,
  group: string,
  kind: string,
): Promise<JsonObject[]> {
  try {
    const list = await cluster.client.listAll(COMPOSITIONS, { limit: 500 });
    return (list.items as unknown as JsonObject[]).filter((c) => {
      const ref = objectOf(objectOf(c.spec).compositeTypeRef);
      const apiVersion = String(ref.apiVersion ?? "");
      return ref.kind === kind && apiVersion.slice(0, apiVersion.lastIndexOf("/")) === group;
    });
  } catch (e) {
    if (isNotFound(e)) return []; // Crossplane's Composition kind is not installed
    throw clusterError(cluster.name, e, "listing Compositions");
  }
}

async function crdStatus(
  cluster: Cluster,
  generated: GeneratedCRD,
  xrdWebhook: boolean,
): Promise<{ status: GeneratedCRDStatus; objects: JsonObject[] }> {
  const crd = await readObject(cluster, CRD_RESOURCE, generated.name, "CRD");
  if (crd === undefined) {
    return {
      status: {
        name: generated.name,
        role: generated.role,
        found: false,
        propagationGap: xrdWebhook,
      },
      objects: [],
    };
  }
  const spec = objectOf(crd.spec);
  const versions = (Array.isArray(spec.versions) ? spec.versions : []).filter(isJsonObject);
  const strategy = String(objectOf(spec.conversion).strategy ?? "None");
  const stored = objectOf(crd.status).storedVersions;
  const listAt = listVersionOf(crd);
  const objects = listAt === undefined
    ? []
    : await listObjects(cluster, objectsRef(crd, listAt), `objects of ${generated.name}`);
  const storage = versions.find((v) => v.storage === true);
  return {
    status: {
      name: generated.name,
      role: generated.role,
      found: true,
      scope: String(spec.scope ?? ""),
      conversionStrategy: strategy,
      ...(storage !== undefined ? { storageVersion: String(storage.name) } : {}),
      storedVersions: Array.isArray(stored) ? stored.map(String) : [],
      objects: objects.length,
      propagationGap: xrdWebhook && strategy !== "Webhook",
    },
    objects,
  };
}

/** Reads everything the report needs; the XRD must exist. */
export async function crossplaneStatus(
  cluster: Cluster,
  name: string,
): Promise<CrossplaneStatusReport> {
  const xrd = await readObject(cluster, XRD_REF, name, "XRD");
  if (xrd === undefined) throw new CliError(`cluster ${cluster.name}: XRD ${name} not found`);
  const spec = objectOf(xrd.spec);
  const { scope } = resolveXRDScope(xrd);
  let generated: GeneratedCRD[];
  try {
    generated = generatedCRDNames(xrd);
  } catch (e) {
    throw new CliError(`cluster ${cluster.name}: XRD ${name}: ${(e as Error).message}`);
  }
  const xrdStrategy = String(objectOf(spec.conversion).strategy ?? "None");
  const crds = [];
  for (const g of generated) crds.push(await crdStatus(cluster, g, xrdStrategy === "Webhook"));
  const objects = crds.flatMap((c) =>
    c.objects.map((o) => ({
      object: o,
      underCrossplane: underCrossplaneOf(c.status.role, scope),
    }))
  );
  const config = await configFor(cluster, name);
  const spokes = new Set((config?.spec.spokes ?? []).map((s) => s.version));
  const rawVersions = (Array.isArray(spec.versions) ? spec.versions : []).filter(isJsonObject);
  const versions = rawVersions.map((v): VersionStatus => {
    const version = String(v.name);
    const ruleSet = config?.spec.hubVersion === version
      ? "hub"
      : spokes.has(version)
      ? "spoke"
      : "none";
    const served = v.served === true;
    return {
      name: version,
      served,
      referenceable: v.referenceable === true,
      deprecated: v.deprecated === true,
      ...(typeof v.deprecationWarning === "string"
        ? { deprecationWarning: v.deprecationWarning }
        : {}),
      ruleSet,
      objects: objects.filter((o) => writtenAt(o.object) === version).length,
      servedWithoutRuleSet: served && ruleSet === "none",
    };
  });
  const pins = objects.map((o) => pinOf(o.object, o.underCrossplane));
  const compositions = (await compositionsFor(
    cluster,
    String(spec.group ?? ""),
    String(objectOf(spec.names).kind ?? ""),
  ))
    .map((c): CompositionStatus => {
      const compositionName = String(objectOf(c.metadata).name ?? "");
      const apiVersion = String(objectOf(objectOf(c.spec).compositeTypeRef).apiVersion ?? "");
      return {
        name: compositionName,
        version: apiVersion.slice(apiVersion.lastIndexOf("/") + 1),
        pinnedBy: pins.filter((p) => p === compositionName).length,
      };
    })
    .sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
  return {
    xrd: name,
    cluster: cluster.name,
    scope,
    xrdConversionStrategy: xrdStrategy,
    versions,
    generatedCRDs: crds.map((c) => c.status),
    compositions,
    unpinned: pins.filter((p) => p === undefined).length,
    config: config === undefined ? null : {
      name: config.metadata?.name ?? "",
      ...(config.status?.phase !== undefined ? { phase: config.status.phase } : {}),
      conditions: (config.status?.conditions ?? []).map((c) => ({
        type: c.type,
        status: c.status,
        ...(c.reason ? { reason: c.reason } : {}),
        ...(c.message ? { message: c.message } : {}),
      })),
    },
  };
}

const yesNo = (b: boolean) => b ? "yes" : "no";

function statusTable(r: CrossplaneStatusReport): string {
  let text =
    `XRD ${r.xrd} (cluster ${r.cluster}): scope ${r.scope}, conversion ${r.xrdConversionStrategy}\n\n`;
  text += renderTable(
    ["VERSION", "SERVED", "REFERENCEABLE", "DEPRECATED", "RULE SET", "OBJECTS"],
    r.versions.map((v) => [
      v.name,
      yesNo(v.served),
      yesNo(v.referenceable),
      v.deprecated
        ? `yes${v.deprecationWarning !== undefined ? ` (${v.deprecationWarning})` : ""}`
        : "no",
      v.servedWithoutRuleSet ? "none — SERVED WITHOUT A RULE SET" : v.ruleSet,
      String(v.objects),
    ]),
  );
  text += "\n" + renderTable(
    ["GENERATED CRD", "ROLE", "SCOPE", "CONVERSION", "STORAGE", "STORED", "OBJECTS"],
    r.generatedCRDs.map((c) =>
      c.found
        ? [
          c.name,
          c.role,
          c.scope ?? "",
          c.propagationGap
            ? `${c.conversionStrategy} — NOT PROPAGATED`
            : c.conversionStrategy ?? "",
          c.storageVersion ?? "",
          (c.storedVersions ?? []).join(",") || "-",
          String(c.objects ?? 0),
        ]
        : [c.name, c.role, "-", "NOT FOUND", "-", "-", "0"]
    ),
  );
  text += "\n";
  if (r.compositions.length === 0) text += "no Composition targets this XRD\n";
  else {
    text += renderTable(
      ["COMPOSITION", "VERSION", "PINNED BY"],
      r.compositions.map((c) => [c.name, c.version, String(c.pinnedBy)]),
    );
  }
  text += `unpinned objects: ${r.unpinned}\n\n`;
  if (r.config === null) text += "no XRDConversionConfig targets this XRD\n";
  else {
    text += `XRDConversionConfig ${r.config.name}: phase ${r.config.phase ?? "(none yet)"}\n`;
    for (const c of r.config.conditions) {
      const reason = c.reason !== undefined ? ` (${c.reason})` : "";
      const message = c.message !== undefined ? `: ${c.message}` : "";
      text += `  ${c.type}=${c.status}${reason}${message}\n`;
    }
  }
  return text;
}

export const crossplaneCommand = defineCommand({
  name: "crossplane",
  usage: "convctl crossplane status XRD-NAME [--kubeconfig F] [--context C] [-o table|json]",
  summary:
    "Report an XRD's versions, generated CRDs, Compositions and config, read from a cluster.",
  target: "none",
  flags: [...CLUSTER_FLAGS, outputFlag("table or json", "table")],
  positionals: (args) => {
    if (args[0] !== "status") {
      throw new CliError(
        args.length === 0
          ? 'convctl crossplane needs a subcommand: "status XRD-NAME"'
          : `unknown subcommand ${JSON.stringify(args[0])} for "convctl crossplane" (use status)`,
      );
    }
    if (args.length !== 2) {
      throw new CliError("convctl crossplane status takes exactly one XRD name");
    }
  },
  run: async ({ flags }): Promise<CrossplaneStatusReport> => {
    using cluster = await openCluster(clusterTargetOf(flags));
    return await crossplaneStatus(cluster, flags.positionals[1]);
  },
  output: { formats: { table: statusTable, json: toJson }, default: "table" },
});
