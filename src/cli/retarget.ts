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
import { CliError, FLAGS, outputFlag } from "./args.ts";
import { CLUSTER_FLAGS } from "./cluster.ts";
import { defineCommand } from "./command.ts";
import { parseInteger } from "./int_flag.ts";
import { loadInventory } from "./inventory.ts";
import { loadSchema } from "./load.ts";
import { renderTable, toJson } from "./output.ts";
import { retargetLive } from "./retarget_live.ts";
import {
  canaryCount,
  checkRetarget,
  order,
  plannedObject,
  type RetargetObject,
  type RetargetReport,
} from "./retarget_plan.ts";

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
