/**
 * `convctl retarget --dry-run`: the patches that point every object of an XRD (composites, and
 * claims) at the Compositions labelled for version `--to`, planned offline from exported objects.
 * Each patch is one JSON merge patch that removes the Composition pins (`compositionRef`,
 * `compositionRevisionRef`) with explicit nulls and sets `compositionSelector.matchLabels` to
 * `{<label-key>: <to>}` — under `spec.crossplane` for Namespaced and Cluster composites, directly
 * under `spec` for LegacyCluster composites and every claim. Sending them needs a cluster, which
 * this build does not talk to.
 */
import { XRD_CONFIG_KIND } from "../api/mod.ts";
import { jsonEqual, type JsonObject, type JsonValue, resolveXRDScope } from "../engine/mod.ts";
import { isJsonObject } from "../lib/json.ts";
import { CliError, FLAGS, outputFlag } from "./args.ts";
import { defineCommand } from "./command.ts";
import { type InventoryObject, loadInventory } from "./inventory.ts";
import { loadSchema } from "./load.ts";
import { renderTable, toJson } from "./output.ts";
import { declaredVersions } from "./schema_versions.ts";

export type RetargetAction = "patch" | "already-on-target";

export interface RetargetObject {
  namespace?: string;
  name: string;
  kind: string;
  crdRole: "composite" | "claim";
  action: RetargetAction;
  /** The merge patch (absent when already on target). */
  patch?: JsonObject;
}

export interface RetargetReport {
  xrd: string;
  to: string;
  scope: string;
  labelKey: string;
  fieldManager: string;
  dryRun: true;
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

/** The patch for one object, or undefined when it already selects `to` with no pin. */
export function retargetPatch(
  object: JsonObject,
  underCrossplane: boolean,
  labelKey: string,
  to: string,
): JsonObject | undefined {
  const spec = isJsonObject(object.spec) ? object.spec : {};
  const machinery = underCrossplane ? (isJsonObject(spec.crossplane) ? spec.crossplane : {}) : spec;
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

const order = (a: InventoryObject, b: InventoryObject) => {
  const key = (o: InventoryObject) =>
    [
      o.crd.role === "composite" ? "0" : "1",
      metadataOf(o.object).namespace ?? "",
      metadataOf(o.object).name ?? "",
    ]
      .join("\u0000");
  return key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0;
};

function retargetTable(r: RetargetReport): string {
  let text =
    `retarget (dry run, offline): XRD ${r.xrd} → Compositions labelled ${r.labelKey}=${r.to}\n`;
  if (r.selected !== r.total) text += `CANARY: ${r.selected} of ${r.total} object(s) selected\n`;
  if (r.objects.length > 0) {
    text += renderTable(
      ["OBJECT", "KIND", "ROLE", "ACTION"],
      r.objects.map((o) => [
        o.namespace !== undefined ? `${o.namespace}/${o.name}` : o.name,
        o.kind,
        o.crdRole,
        o.action === "patch" ? "patch" : "already on target",
      ]),
    );
  }
  const patched = r.objects.filter((o) => o.action === "patch").length;
  text +=
    `SUMMARY: ${patched} object(s) to patch, ${r.objects.length - patched} already on target; ` +
    "nothing was sent\n";
  text += "NOTE: once the pin is gone, Crossplane picks among all Compositions matching the " +
    "labels — make sure exactly one does\n";
  return text;
}

export const retargetCommand = defineCommand({
  name: "retarget",
  usage: "convctl retarget -x XRD --to V --dry-run -s DIR [--canary N|N%] [--label-key K] " +
    "[--field-manager M] [-o table|json]",
  summary: "Plan the patches that point an XRD's objects at the Compositions of one version.",
  target: "none",
  flags: [
    FLAGS.xrd,
    {
      name: "to",
      kind: "string",
      value: "V",
      help: "the version whose Compositions to select (required)",
    },
    {
      name: "samples",
      short: "s",
      kind: "string",
      value: "DIR",
      help: "the XRD's composites and claims, exported from the cluster (required)",
    },
    {
      name: "dry-run",
      kind: "bool",
      help: "plan the patches without sending them (required: this build has no cluster access)",
    },
    {
      name: "canary",
      kind: "string",
      value: "N|N%",
      help: "only the first N (or N%) objects, in list order",
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
    outputFlag("table or json", "table"),
  ],
  required: ["xrd", "to", "samples"],
  options: (flags) => {
    if (!flags.bool("dry-run")) {
      throw new CliError(
        "retarget patches objects in a cluster, which this build cannot do yet; --dry-run plans " +
          "the patches from exported objects (-s DIR)",
      );
    }
  },
  run: async ({ flags }): Promise<RetargetReport> => {
    const schema = await loadSchema(XRD_CONFIG_KIND, flags.string("xrd")!);
    const to = flags.string("to")!;
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
    const inventory = await loadInventory(flags.string("samples")!, schema);
    const all = [...inventory.objects].sort(order);
    const selected = all.slice(0, canaryCount(flags.string("canary"), all.length));
    const labelKey = flags.string("label-key") ?? "xrd-api-version";
    const objects = selected.map(({ crd, object }): RetargetObject => {
      const metadata = metadataOf(object);
      const underCrossplane = crd.role === "composite" && scope !== "LegacyCluster";
      const patch = retargetPatch(object, underCrossplane, labelKey, to);
      const out: RetargetObject = {
        ...(typeof metadata.namespace === "string" ? { namespace: metadata.namespace } : {}),
        name: String(metadata.name ?? ""),
        kind: String(object.kind),
        crdRole: crd.role,
        action: patch === undefined ? "already-on-target" : "patch",
      };
      if (patch !== undefined) out.patch = patch;
      return out;
    });
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
});
