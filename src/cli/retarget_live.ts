/**
 * `convctl retarget` against a cluster: reads the XRD and every object of its generated CRDs
 * (composites, and claims of a LegacyCluster XRD), selects the canary prefix, says on stderr what
 * it is about to patch, then sends each object's merge patch (`--dry-run`: `dryRun=All`, the
 * apiserver validates and answers but stores nothing) with `--concurrency` patches in flight.
 * A refused patch is reported per object (exit 1), not an error of the run.
 */
import { XRD_CONFIG_KIND } from "../api/mod.ts";
import type { JsonObject } from "../engine/mod.ts";
import type { ResourceRef } from "../kube/objects.ts";
import { CRD_RESOURCE } from "../kube/resources.ts";
import { isJsonObject } from "../lib/json.ts";
import { CliError, type ParsedFlags } from "./args.ts";
import { type Cluster, clusterError, clusterTargetOf, openCluster } from "./cluster.ts";
import {
  listObjects,
  listVersionOf,
  objectsRef,
  readClusterSchema,
  readObject,
} from "./cluster_reads.ts";
import type { Io } from "./output.ts";
import {
  canaryCount,
  checkRetarget,
  order,
  plannedObject,
  type RetargetObject,
  type RetargetReport,
} from "./retarget_plan.ts";
import { targetCRDs } from "./schema_versions.ts";
import type { GeneratedCRD } from "../engine/source.ts";

interface LiveObject {
  crd: GeneratedCRD;
  ref: ResourceRef;
  object: JsonObject;
}

/** Every object of each generated CRD, with where to patch it. */
async function inventory(cluster: Cluster, crds: GeneratedCRD[]): Promise<LiveObject[]> {
  const out: LiveObject[] = [];
  for (const crd of crds) {
    const raw = await readObject(cluster, CRD_RESOURCE, crd.name, "CRD");
    if (raw === undefined) {
      throw new CliError(
        `cluster ${cluster.name}: CRD ${crd.name} (the XRD's ${crd.role}) not found — is the XRD ` +
          "established?",
      );
    }
    const version = listVersionOf(raw);
    if (version === undefined) {
      throw new CliError(`cluster ${cluster.name}: CRD ${crd.name} serves no version`);
    }
    const ref = objectsRef(raw, version);
    for (const object of await listObjects(cluster, ref, `objects of ${crd.name}`)) {
      out.push({ crd, ref, object });
    }
  }
  return out;
}

/** Runs `work` over `items` with at most `limit` in flight. */
async function eachLimited<T>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) await work(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
}

export async function retargetLive(
  flags: ParsedFlags,
  io: Io,
  concurrency: number,
): Promise<RetargetReport> {
  const name = flags.string("xrd")!;
  const to = flags.string("to")!;
  const dryRun = flags.bool("dry-run");
  const labelKey = flags.string("label-key") ?? "xrd-api-version";
  const fieldManager = flags.string("field-manager") ?? "convctl-retarget";
  const quiet = flags.bool("quiet");
  using cluster = await openCluster(clusterTargetOf(flags));
  const schema = await readClusterSchema(cluster, XRD_CONFIG_KIND, name);
  const scope = checkRetarget(schema, to);
  const all = (await inventory(cluster, targetCRDs(schema))).sort(order);
  const selected = all.slice(0, canaryCount(flags.string("canary"), all.length));
  const planned = selected.map((o) => ({ live: o, line: plannedObject(o, scope, labelKey, to) }));
  const toSend = planned.filter((p) => p.line.patch !== undefined);
  if (!quiet) {
    io.err(
      `retarget: cluster ${cluster.name}: ${dryRun ? "dry run (server-side) of " : ""}patching ` +
        `${toSend.length} of ${all.length} object(s) of XRD ${name} (${selected.length} selected, ` +
        `${selected.length - toSend.length} already on target) to select Compositions ` +
        `${labelKey}=${to}, field manager ${fieldManager}\n`,
    );
  }
  await eachLimited(toSend, concurrency, async ({ live, line }) => {
    await send(cluster, live, line, { dryRun, fieldManager });
  });
  const objects: RetargetObject[] = planned.map((p) => p.line);
  return {
    xrd: name,
    to,
    scope,
    labelKey,
    fieldManager,
    dryRun,
    cluster: cluster.name,
    total: all.length,
    selected: selected.length,
    objects,
  };
}

/** Sends one object's patch and records the answer on its report line. */
async function send(
  cluster: Cluster,
  live: LiveObject,
  line: RetargetObject,
  opts: { dryRun: boolean; fieldManager: string },
): Promise<void> {
  const metadata = isJsonObject(live.object.metadata) ? live.object.metadata : {};
  const ref = typeof metadata.namespace === "string"
    ? { ...live.ref, namespace: metadata.namespace }
    : live.ref;
  try {
    await cluster.client.patch(ref, line.name, line.patch, {
      type: "merge",
      fieldManager: opts.fieldManager,
      dryRun: opts.dryRun,
    });
    line.result = "patched";
  } catch (e) {
    line.result = "failed";
    line.error = clusterError(cluster.name, e, `patching ${line.name}`).message;
  }
}
