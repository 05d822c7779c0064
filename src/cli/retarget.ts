/**
 * `convctl retarget`: the patches that point every object of an XRD (composites, and claims) at
 * the Compositions labelled for version `--to`. Each patch is one JSON merge patch that removes
 * the Composition pins (`compositionRef`, `compositionRevisionRef`) with explicit nulls and sets
 * `compositionSelector.matchLabels` to `{<label-key>: <to>}` — under `spec.crossplane` for
 * Namespaced and Cluster composites, directly under `spec` for LegacyCluster composites and every
 * claim. With `-s DIR --dry-run` they are planned offline from exported objects (this file);
 * without `-s` they are sent to the cluster (./retarget_live.ts).
 */
import { XRD_CONFIG_KIND } from "../api/mod.ts";
import { jsonEqual, type JsonObject, type JsonValue, resolveXRDScope } from "../engine/mod.ts";
import { isJsonObject } from "../lib/json.ts";
import { CliError, FLAGS, outputFlag } from "./args.ts";
import { CLUSTER_FLAGS } from "./cluster.ts";
import { defineCommand } from "./command.ts";
import { type InventoryObject, loadInventory } from "./inventory.ts";
import { parseInteger } from "./int_flag.ts";
import { type LoadedSchema, loadSchema } from "./load.ts";
import { renderTable, toJson } from "./output.ts";
import { declaredVersions } from "./schema_versions.ts";
import { retargetLive } from "./retarget_live.ts";

export type RetargetAction = "patch" | "already-on-target";

export interface RetargetObject {
  namespace?: string;
  name: string;
  kind: string;
  crdRole: "composite" | "claim";
  action: RetargetAction;
  /** The merge patch (absent when already on target). */
  patch?: JsonObject;
  /** Live only: whether the apiserver took the patch (absent when nothing was sent). */
  result?: "patched" | "failed";
  /** Live only: the apiserver's refusal of a failed patch. */
  error?: string;
}

export interface RetargetReport {
  xrd: string;
  to: string;
  scope: string;
  labelKey: string;
  fieldManager: string;
  dryRun: boolean;
  /** Live only: the cluster the patches went to. */
  cluster?: string;
  /** Objects found, and how many the canary selected. */
  total: number;
  selected: number;
  objects: RetargetObject[];
}

/** `N` or `N%`: how many of `total` objects, as a prefix of the list order. */
export function canaryCount(value: string | undefined, total: number): number {
  if (value === undefined) return total;
  const m = /^(\d+)(%?)$/.exec(value);
  if (m === null) {
    throw new CliError(`invalid value ${JSON.stringify(value)} for --canary: must be N or N%`);
  }
  const n = Number(m[1]);
  if (m[2] === "") return Math.min(n, total);
  if (n > 100) {
    throw new CliError(`invalid value ${JSON.stringify(value)} for --canary: above 100%`);
  }
  if (n === 0 || total === 0) return 0;
  // A non-zero share of a non-empty set selects at least one object.
  return Math.max(1, Math.floor((total * n) / 100));
}

const metadataOf = (o: JsonObject) => isJsonObject(o.metadata) ? o.metadata : {};

/**
 * Where an object keeps its Composition fields: `spec.crossplane` (`underCrossplane`: a
 * Namespaced or Cluster composite) or `spec` (a LegacyCluster composite, any claim).
 */
function machineryOf(object: JsonObject, underCrossplane: boolean): JsonObject {
  const spec = isJsonObject(object.spec) ? object.spec : {};
  return underCrossplane ? (isJsonObject(spec.crossplane) ? spec.crossplane : {}) : spec;
}

/** Whether an object's Composition fields sit under `spec.crossplane` (see {@link machineryOf}). */
export function underCrossplaneOf(role: "composite" | "claim", scope: string): boolean {
  return role === "composite" && scope !== "LegacyCluster";
}

/** The name of the Composition an object pins (`compositionRef.name`), if any. */
export function pinOf(object: JsonObject, underCrossplane: boolean): string | undefined {
  const ref = machineryOf(object, underCrossplane).compositionRef;
  return isJsonObject(ref) && typeof ref.name === "string" ? ref.name : undefined;
}

/** The patch for one object, or undefined when it already selects `to` with no pin. */
export function retargetPatch(
  object: JsonObject,
  underCrossplane: boolean,
  labelKey: string,
  to: string,
): JsonObject | undefined {
  const machinery = machineryOf(object, underCrossplane);
  const selector = isJsonObject(machinery.compositionSelector) ? machinery.compositionSelector : {};
  const labels = isJsonObject(selector.matchLabels) ? selector.matchLabels : {};
  const wanted: JsonObject = { [labelKey]: to };
  const pinned = machinery.compositionRef !== undefined ||
    machinery.compositionRevisionRef !== undefined;
  if (!pinned && jsonEqual(labels, wanted)) return undefined;
  // A merge patch merges maps: other selector labels must be removed explicitly.
  const matchLabels: Record<string, JsonValue> = {};
  for (const key of Object.keys(labels)) if (key !== labelKey) matchLabels[key] = null;
  matchLabels[labelKey] = to;
  const fields: JsonObject = {
    compositionRef: null,
    compositionRevisionRef: null,
    compositionSelector: { matchLabels },
  };
  return { spec: underCrossplane ? { crossplane: fields } : fields };
}

/** Composites first, then claims; each by namespace and name (a stable, re-runnable order). */
export const order = (a: Pick<InventoryObject, "crd" | "object">, b: typeof a) => {
  const key = (o: typeof a) =>
    [
      o.crd.role === "composite" ? "0" : "1",
      metadataOf(o.object).namespace ?? "",
      metadataOf(o.object).name ?? "",
    ]
      .join("\u0000");
  return key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0;
};

/** One object's line of the report, its patch planned (nothing sent yet). */
export function plannedObject(
  { crd, object }: Pick<InventoryObject, "crd" | "object">,
  scope: string,
  labelKey: string,
  to: string,
): RetargetObject {
  const metadata = metadataOf(object);
  const patch = retargetPatch(object, underCrossplaneOf(crd.role, scope), labelKey, to);
  const out: RetargetObject = {
    ...(typeof metadata.namespace === "string" ? { namespace: metadata.namespace } : {}),
    name: String(metadata.name ?? ""),
    kind: String(object.kind),
    crdRole: crd.role,
    action: patch === undefined ? "already-on-target" : "patch",
  };
  if (patch !== undefined) out.patch = patch;
  return out;
}

/** `--to` must be a version of the XRD, and the XRD's scope must say where the fields are. */
export function checkRetarget(schema: LoadedSchema, to: string): string {
  const versions = declaredVersions(schema).map((v) => v.name);
  if (!versions.includes(to)) {
    throw new CliError(
      `--to ${to}: not a version of XRD ${schema.source.name} (versions: ${versions.join(", ")})`,
    );
  }
  const { scope, reason } = resolveXRDScope(schema.raw);
  if (scope === "Indeterminate") {
    throw new CliError(
      `cannot tell where XRD ${schema.source.name} keeps its Composition fields: ${reason}`,
    );
  }
  return scope;
}

const shownObject = (o: RetargetObject) =>
  o.namespace !== undefined ? `${o.namespace}/${o.name}` : o.name;

function actionText(o: RetargetObject, dryRun: boolean): string {
  if (o.action === "already-on-target") return "already on target";
  if (o.result === "failed") return `FAILED: ${o.error ?? ""}`;
  if (o.result === "patched") return dryRun ? "patched (dry run)" : "patched";
  return "patch";
}

function retargetTable(r: RetargetReport): string {
  const where = r.cluster === undefined
    ? "dry run, offline"
    : `cluster ${r.cluster}${r.dryRun ? ", server-side dry run" : ""}`;
  let text = `retarget (${where}): XRD ${r.xrd} → Compositions labelled ${r.labelKey}=${r.to}\n`;
  if (r.selected !== r.total) text += `CANARY: ${r.selected} of ${r.total} object(s) selected\n`;
  if (r.objects.length > 0) {
    text += renderTable(
      ["OBJECT", "KIND", "ROLE", "ACTION"],
      r.objects.map((o) => [shownObject(o), o.kind, o.crdRole, actionText(o, r.dryRun)]),
    );
  }
  const toPatch = r.objects.filter((o) => o.action === "patch").length;
  const already = r.objects.length - toPatch;
  if (r.cluster === undefined) {
    text += `SUMMARY: ${toPatch} object(s) to patch, ${already} already on target; ` +
      "nothing was sent\n";
  } else {
    const failed = r.objects.filter((o) => o.result === "failed").length;
    text += `SUMMARY: ${toPatch - failed} object(s) patched${r.dryRun ? " (dry run)" : ""}, ` +
      `${failed} failed, ${already} already on target\n`;
  }
  text += "NOTE: once the pin is gone, Crossplane picks among all Compositions matching the " +
    "labels — make sure exactly one does\n";
  return text;
}

export const retargetCommand = defineCommand({
  name: "retarget",
  usage: "convctl retarget -x XRD --to V [--dry-run] [--canary N|N%] [--concurrency N] " +
    "[--label-key K] [--field-manager M] [--kubeconfig F] [--context C] [-o table|json] " +
    "[--quiet]\n  convctl retarget -x XRD-FILE --to V --dry-run -s DIR [--canary N|N%] " +
    "[--label-key K] [-o table|json]",
  summary: "Point an XRD's objects at the Compositions of one version (live, or planned offline).",
  target: "none",
  flags: [
    {
      ...FLAGS.xrd,
      value: "NAME",
      help: "the XRD's name in the cluster (with -s: an XRD file) (required)",
    },
    {
      name: "to",
      kind: "string",
      value: "V",
      help: "the version whose Compositions to select (required)",
    },
    {
      name: "dry-run",
      kind: "bool",
      help: "send the patches as a server-side dry run (with -s: plan them offline)",
    },
    {
      name: "samples",
      short: "s",
      kind: "string",
      value: "DIR",
      help: "plan offline from the XRD's composites and claims exported from the cluster",
    },
    {
      name: "canary",
      kind: "string",
      value: "N|N%",
      help: "only the first N (or N%) objects, in list order",
    },
    {
      name: "concurrency",
      kind: "string",
      value: "N",
      help: "patches in flight at once (live)",
      default: "1",
    },
    {
      name: "label-key",
      kind: "string",
      value: "K",
      help: "the Composition label naming the version",
      default: "xrd-api-version",
    },
    {
      name: "field-manager",
      kind: "string",
      value: "M",
      help: "the field manager of the patches",
      default: "convctl-retarget",
    },
    ...CLUSTER_FLAGS,
    outputFlag("table or json", "table"),
    { ...FLAGS.quiet, help: "no plan or progress lines on stderr" },
  ],
  required: ["xrd", "to"],
  options: (flags) => {
    const concurrency = parseInteger("concurrency", flags.string("concurrency"), 1, [1, 256]);
    if (flags.has("samples")) {
      if (!flags.bool("dry-run")) {
        throw new CliError(
          "-s DIR plans the patches offline and needs --dry-run; without -s, retarget patches " +
            "the cluster's objects",
        );
      }
      for (const flag of ["kubeconfig", "context"]) {
        if (flags.has(flag)) throw new CliError(`--${flag} cannot be used with -s (offline)`);
      }
    }
    return { concurrency };
  },
  run: async ({ flags, io, options }): Promise<RetargetReport> => {
    if (!flags.has("samples")) return await retargetLive(flags, io, options.concurrency);
    const schema = await loadSchema(XRD_CONFIG_KIND, flags.string("xrd")!);
    const to = flags.string("to")!;
    const scope = checkRetarget(schema, to);
    const inventory = await loadInventory(flags.string("samples")!, schema);
    const all = [...inventory.objects].sort(order);
    const selected = all.slice(0, canaryCount(flags.string("canary"), all.length));
    const labelKey = flags.string("label-key") ?? "xrd-api-version";
    const objects = selected.map((o) => plannedObject(o, scope, labelKey, to));
    return {
      xrd: schema.source.name,
      to,
      scope,
      labelKey,
      fieldManager: flags.string("field-manager") ?? "convctl-retarget",
      dryRun: true,
      total: all.length,
      selected: selected.length,
      objects,
    };
  },
  output: { formats: { table: retargetTable, json: toJson }, default: "table" },
  exitCode: (r) => r.objects.some((o) => o.result === "failed") ? 1 : 0,
});
