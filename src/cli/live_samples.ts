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
 * An XRD's objects live in every CRD Crossplane generates from it: the composites, and the claims
 * when the XRD offers claims. Both are listed (composites first) and pass the same webhook and
 * plan; each sample says which CRD it came from. `--namespace` narrows the namespaced ones only.
 *
 * Selection (`--max-samples`, `--sample-strategy`, `--seed`) runs over the objects of every CRD
 * at its first listed version while paging (200 per page; `first` stops paging at N, and only
 * counts the objects of a CRD it needs none of), and the other versions are listed only until
 * every selected object was seen at them, matched by uid.
 */
import type { JsonObject, SchemaSource } from "../engine/mod.ts";
import type { GeneratedCRD } from "../engine/source.ts";
import { isJsonObject } from "../lib/json.ts";
import type { KubeObject } from "../kube/objects.ts";
import { CliError } from "./args.ts";
import { type Cluster, clusterError } from "./cluster.ts";
import type { Sample } from "./load.ts";
import type { LiveCRD, LiveInfo, SampleStrategy, SamplingInfo } from "./test_report.ts";
import { SampleSelector } from "./test_run.ts";

export const LIVE_PAGE_SIZE = 200;

export interface LiveSampleOptions {
  maxSamples?: number;
  strategy: SampleStrategy;
  seed: number;
  /** Only objects of this namespace (namespaced targets only). */
  namespace?: string;
}

/** A sample read from a cluster: which generated CRD it came from. */
export interface LiveSample extends Sample {
  crd: GeneratedCRD;
}

export interface LiveSamples {
  samples: LiveSample[];
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

/** One CRD of the target as listed: what the cluster serves, what was selected of it. */
interface Listed {
  crd: GeneratedCRD;
  target: ServedTarget;
  versions: string[];
  namespace?: string;
  population: number;
}

/** The versions to list a CRD at: every served one through a webhook, else the storage version. */
function versionsToList(target: ServedTarget): string[] {
  if (target.strategy === "Webhook") return target.served;
  if (target.served.length === 0) return [];
  const storageServed = target.storage !== undefined && target.served.includes(target.storage);
  return [storageServed ? target.storage! : target.served[0]];
}

/**
 * Lists the target's objects on `cluster` and turns them into samples (one per object and
 * version). `crds` are the CRDs its objects live in (a CRD target: itself; an XRD: composite,
 * then claim), as {@link targetCRDs} names them.
 */
export async function fetchLiveSamples(
  cluster: Cluster,
  source: SchemaSource,
  crds: readonly GeneratedCRD[],
  opts: LiveSampleOptions,
): Promise<LiveSamples> {
  const listed: Listed[] = [];
  for (const generated of crds) {
    let crd: KubeObject;
    try {
      crd = await cluster.client.get(
        { group: "apiextensions.k8s.io", version: "v1", plural: "customresourcedefinitions" },
        generated.name,
      );
    } catch (e) {
      throw clusterError(cluster.name, e, `reading CustomResourceDefinition ${generated.name}`);
    }
    const target = servedTarget(crd, generated.name);
    const versions = versionsToList(target);
    if (versions.length === 0) {
      throw new CliError(`cluster ${cluster.name}: ${generated.name} serves no version`);
    }
    listed.push({
      crd: generated,
      target,
      versions,
      namespace: target.namespaced ? opts.namespace : undefined,
      population: 0,
    });
  }
  if (opts.namespace !== undefined && !listed.some((l) => l.target.namespaced)) {
    throw new CliError(
      `cluster ${cluster.name}: --namespace: ${listed.map((l) => l.crd.name).join(", ")} ` +
        `${listed.length > 1 ? "are" : "is"} cluster-scoped`,
    );
  }
  const pages = (l: Listed, version: string, limit = LIVE_PAGE_SIZE) =>
    listPages(
      cluster,
      { group: source.group, version, plural: l.target.plural, namespace: l.namespace },
      limit,
      `listing ${l.target.plural}.${source.group}/${version}`,
    );

  // The first version of each CRD decides which objects are tested.
  const max = opts.maxSamples ?? Number.MAX_SAFE_INTEGER;
  const selector = new SampleSelector<{ o: KubeObject; l: Listed }>(
    max,
    opts.strategy,
    opts.seed,
    (x) => x.o as unknown as JsonObject,
  );
  for (const l of listed) {
    // `first` asks for no more than it keeps; the apiserver counts the rest.
    const wanted = opts.strategy === "first"
      ? Math.max(1, Math.min(LIVE_PAGE_SIZE, max - selector.offered))
      : LIVE_PAGE_SIZE;
    for await (const page of pages(l, l.versions[0], wanted)) {
      for (const o of page.items) {
        l.population++;
        if (!selector.full) selector.offer({ o, l });
      }
      if (selector.full) {
        l.population += page.remainingItemCount ?? 0;
        break;
      }
    }
  }
  const population = listed.reduce((n, l) => n + l.population, 0);
  if (population === 0) {
    const where = opts.namespace !== undefined ? ` in namespace ${opts.namespace}` : "";
    throw new CliError(
      `cluster ${cluster.name}: no ${source.targetKind} objects ` +
        `(${listed.map((l) => l.crd.name).join(", ")})${where}`,
    );
  }
  const selected = selector.kept();
  // Per CRD and version, the selected objects by uid.
  const seen = new Map<Listed, Map<string, Map<string, KubeObject>>>();
  for (const l of listed) {
    const mine = selected.filter((x) => x.l === l).map((x) => x.o);
    const byVersion = new Map([[l.versions[0], new Map(mine.map((o) => [uidOf(o), o]))]]);
    seen.set(l, byVersion);
    const wanted = new Set(byVersion.get(l.versions[0])!.keys());
    for (const version of l.versions.slice(1)) {
      const found = new Map<string, KubeObject>();
      if (wanted.size > 0) {
        for await (const page of pages(l, version)) {
          for (const o of page.items) if (wanted.has(uidOf(o))) found.set(uidOf(o), o);
          if (found.size === wanted.size) break;
        }
      }
      byVersion.set(version, found);
    }
  }
  // Object by object (in selection order), each at every listed version of its CRD.
  const samples: LiveSample[] = [];
  for (const { o, l } of selected) {
    const byVersion = seen.get(l)!;
    for (const version of l.versions) {
      const at = byVersion.get(version)!.get(uidOf(o));
      if (at === undefined) continue; // deleted between the listings
      samples.push({
        name: `cluster:${objectName(at)}@${version}`,
        object: at as unknown as JsonObject,
        version,
        crd: l.crd,
      });
    }
  }
  const [first] = listed;
  const live: LiveInfo = {
    cluster: cluster.name,
    crd: first.crd.name,
    conversionStrategy: first.target.strategy,
    versions: first.versions,
  };
  if (opts.namespace !== undefined) live.namespace = opts.namespace;
  if (source.kind === "XRD") {
    live.crds = listed.map((l): LiveCRD => ({
      name: l.crd.name,
      role: l.crd.role,
      conversionStrategy: l.target.strategy,
      versions: l.versions,
      population: l.population,
      objects: selected.filter((x) => x.l === l).length,
      samples: samples.filter((s) => s.crd === l.crd).length,
      ...(l.namespace !== undefined ? { namespace: l.namespace } : {}),
    }));
  }
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

const uidOf = (o: KubeObject) => String(o.metadata?.uid);

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
