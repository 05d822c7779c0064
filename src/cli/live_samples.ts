/**
 * `convctl test --live`: the samples are the target's live objects, read through the apiserver.
 *
 * Which versions are read depends on how the cluster converts the target today:
 * - conversion strategy `Webhook`: every version the cluster serves is listed, so each selected
 *   object is tested as the installed webhook hands it out at each version (the apiserver calls
 *   the webhook on the LIST);
 * - strategy `None` (no webhook installed yet): only the storage version is listed. At any other
 *   version the apiserver would only rewrite `apiVersion` and hand out the stored body unchanged,
 *   which is not an object of that version; testing it would grade the apiserver, not the config.
 *
 * Selection (`--max-samples`, `--sample-strategy`, `--seed`) runs on the objects of the first
 * listed version while paging (200 per page; `first` stops paging at N), and the other versions
 * are listed only until every selected object was seen at them, matched by uid.
 */
import type { JsonObject, SchemaSource } from "../engine/mod.ts";
import { isJsonObject } from "../lib/json.ts";
import type { KubeObject } from "../kube/objects.ts";
import { CliError } from "./args.ts";
import { type Cluster, clusterError } from "./cluster.ts";
import type { Sample } from "./load.ts";
import type { LiveInfo, SampleStrategy, SamplingInfo } from "./test_report.ts";
import { SampleSelector } from "./test_run.ts";

export const LIVE_PAGE_SIZE = 200;

export interface LiveSampleOptions {
  maxSamples?: number;
  strategy: SampleStrategy;
  seed: number;
  /** Only objects of this namespace (namespaced targets only). */
  namespace?: string;
}

export interface LiveSamples {
  samples: Sample[];
  /** Set when fewer objects were selected than there are. */
  sampling?: SamplingInfo;
  live: LiveInfo;
}

/** What the test needs of the target's CustomResourceDefinition as the cluster has it. */
interface ServedTarget {
  plural: string;
  namespaced: boolean;
  served: string[];
  storage: string | undefined;
  strategy: string;
}

function servedTarget(crd: KubeObject, name: string): ServedTarget {
  const spec = isJsonObject(crd.spec) ? crd.spec : {};
  const names = isJsonObject(spec.names) ? spec.names : {};
  const versions = Array.isArray(spec.versions) ? spec.versions.filter(isJsonObject) : [];
  const conversion = isJsonObject(spec.conversion) ? spec.conversion : {};
  return {
    plural: typeof names.plural === "string" ? names.plural : name.split(".")[0],
    namespaced: spec.scope !== "Cluster",
    served: versions.filter((v) => v.served === true).map((v) => String(v.name)),
    storage: versions.find((v) => v.storage === true)?.name as string | undefined,
    strategy: typeof conversion.strategy === "string" ? conversion.strategy : "None",
  };
}

function objectName(o: KubeObject): string {
  const ns = o.metadata?.namespace;
  return ns ? `${ns}/${o.metadata?.name}` : `${o.metadata?.name}`;
}

/** Lists the target's objects on `cluster` and turns them into samples (one per object and version). */
export async function fetchLiveSamples(
  cluster: Cluster,
  source: SchemaSource,
  opts: LiveSampleOptions,
): Promise<LiveSamples> {
  const crdName = source.name;
  let crd: KubeObject;
  try {
    crd = await cluster.client.get(
      { group: "apiextensions.k8s.io", version: "v1", plural: "customresourcedefinitions" },
      crdName,
    );
  } catch (e) {
    throw clusterError(cluster.name, e, `reading CustomResourceDefinition ${crdName}`);
  }
  const target = servedTarget(crd, crdName);
  if (opts.namespace !== undefined && !target.namespaced) {
    throw new CliError(
      `cluster ${cluster.name}: --namespace: ${crdName} is cluster-scoped`,
    );
  }
  const viaWebhook = target.strategy === "Webhook";
  const storageServed = target.storage !== undefined && target.served.includes(target.storage);
  const versions = viaWebhook
    ? target.served
    : target.served.length === 0
    ? []
    : [storageServed ? target.storage! : target.served[0]];
  if (versions.length === 0) {
    throw new CliError(`cluster ${cluster.name}: ${crdName} serves no version`);
  }
  const refAt = (version: string) => ({
    group: source.group,
    version,
    plural: target.plural,
    namespace: opts.namespace,
  });
  const pages = (version: string, limit = LIVE_PAGE_SIZE) =>
    listPages(
      cluster,
      refAt(version),
      limit,
      `listing ${target.plural}.${source.group}/${version}`,
    );

  // The first version decides which objects are tested.
  const [first, ...others] = versions;
  const max = opts.maxSamples ?? Number.MAX_SAFE_INTEGER;
  const selector = new SampleSelector<KubeObject>(
    max,
    opts.strategy,
    opts.seed,
    (o) => o as unknown as JsonObject,
  );
  let remaining = 0;
  // `first` asks for no more than it keeps; the apiserver counts the rest.
  const firstLimit = opts.strategy === "first" ? Math.min(LIVE_PAGE_SIZE, max) : LIVE_PAGE_SIZE;
  for await (const page of pages(first, firstLimit)) {
    for (const o of page.items) {
      if (!selector.full) selector.offer(o);
      else remaining++;
    }
    if (selector.full) {
      remaining += page.remainingItemCount ?? 0;
      break;
    }
  }
  const population = selector.offered + remaining;
  if (population === 0) {
    const where = opts.namespace !== undefined ? ` in namespace ${opts.namespace}` : "";
    throw new CliError(
      `cluster ${cluster.name}: no ${source.targetKind} objects (${crdName})${where}`,
    );
  }
  const selected = selector.kept();
  const byVersion = new Map<string, Map<string, KubeObject>>();
  byVersion.set(first, new Map(selected.map((o) => [String(o.metadata?.uid), o])));
  for (const version of others) {
    const wanted = new Set(byVersion.get(first)!.keys());
    const found = new Map<string, KubeObject>();
    for await (const page of pages(version)) {
      for (const o of page.items) {
        const uid = String(o.metadata?.uid);
        if (wanted.has(uid)) found.set(uid, o);
      }
      if (found.size === wanted.size) break;
    }
    byVersion.set(version, found);
  }
  // Object by object (in listing order), each at every listed version.
  const samples: Sample[] = [];
  for (const o of selected) {
    const uid = String(o.metadata?.uid);
    for (const version of versions) {
      const at = byVersion.get(version)!.get(uid);
      if (at === undefined) continue; // deleted between the listings
      samples.push({
        name: `cluster:${objectName(at)}@${version}`,
        object: at as unknown as JsonObject,
        version,
      });
    }
  }
  const live: LiveInfo = {
    cluster: cluster.name,
    crd: crdName,
    conversionStrategy: target.strategy,
    versions,
  };
  if (opts.namespace !== undefined) live.namespace = opts.namespace;
  if (selected.length >= population) return { samples, live };
  const sampling: SamplingInfo = {
    strategy: opts.strategy,
    population,
    tested: selected.length,
    live: true,
  };
  if (opts.strategy === "random") sampling.seed = opts.seed;
  return { samples, sampling, live };
}

interface Page {
  items: KubeObject[];
  /** The apiserver's count of objects after this page, when it gives one. */
  remainingItemCount?: number;
}

/** The pages of a paged LIST; stop iterating to stop listing. */
async function* listPages(
  cluster: Cluster,
  ref: { group: string; version: string; plural: string; namespace?: string },
  limit: number,
  doing: string,
): AsyncGenerator<Page> {
  let cont: string | undefined;
  for (;;) {
    let page;
    try {
      page = await cluster.client.list(ref, { limit, continue: cont });
    } catch (e) {
      throw clusterError(cluster.name, e, doing);
    }
    yield { items: page.items ?? [], remainingItemCount: page.metadata?.remainingItemCount };
    cont = page.metadata?.continue || undefined;
    if (cont === undefined) return;
  }
}
