/**
 * The phases of a scale run against a cluster that runs dco: apply the generated fleet (CRDs
 * Established, configs `Applied` with the CRDs' conversion `strategy: Webhook`), create the
 * instances at v1 in parallel with the create retry rules, and benchmark List (per CRD × repeats)
 * and Get (per instance × repeats) at v1 and v2 — both spokes, so every read is converted by the
 * webhook Pods.
 */
import type { JsonObject } from "../../src/lib/json.ts";
import { waitFor } from "../../tests/support/wait.ts";
import { type Api, ApiError, classifyFailure } from "./api.ts";
import { SCALE_GROUP } from "./catalog.ts";
import type { Fleet, Target } from "./generate.ts";
import { ErrorSamples, measure, type Measurement } from "./measure.ts";
import { withRetry } from "./retry.ts";

const FIELD_MANAGER = "dco-scale";
const CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
const CONFIGS = "/apis/terasky.com/v1alpha1/crdconversionconfigs";
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export interface BenchOptions {
  namespace: string;
  parallel: number;
  listRepeats: number;
  getRepeats: number;
}

export type Log = (msg: string) => void;

/** Server-side apply of `obj` at `path` (dco-scale's field manager, forced). */
function apply(api: Api, path: string, obj: JsonObject): Promise<unknown> {
  return api.call(
    "PATCH",
    `${path}?fieldManager=${FIELD_MANAGER}&force=true`,
    obj,
    "application/apply-patch+yaml",
  );
}

/** Runs `fn` on every item with `parallel` workers. */
async function each<T>(items: readonly T[], parallel: number, fn: (t: T) => Promise<unknown>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.max(1, Math.min(parallel, items.length)) }, async () => {
      while (next < items.length) await fn(items[next++]);
    }),
  );
}

type Conditions = { status?: { conditions?: { type: string; status: string }[] } };
const established = (crd: Conditions) =>
  (crd.status?.conditions ?? []).some((c) => c.type === "Established" && c.status === "True");

/** What {@link applyFleet} took, in seconds; `configSeconds` only when it waited for `Applied`. */
export interface FleetSetup {
  crdSeconds: number;
  configSeconds?: number;
}

/**
 * The namespace, the CRDs (waited Established), then the configs — waited until each is `Applied`
 * and its CRD converts through the webhook, unless `waitApplied` is false (a run that measures
 * only the replicas' registries, which load a config whatever its phase).
 */
export async function applyFleet(
  api: Api,
  fleet: Fleet,
  opts: { namespace: string; parallel: number; timeoutMs: number; waitApplied?: boolean },
  log: Log,
): Promise<FleetSetup> {
  await apply(api, `/api/v1/namespaces/${opts.namespace}`, {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name: opts.namespace },
  });
  const t0 = performance.now();
  // Everything applied first, then waited: the apiserver and the manager work on all at once.
  await each(fleet.targets, opts.parallel, (t) => apply(api, `${CRDS}/${t.crdName}`, t.crd));
  await each(fleet.targets, opts.parallel, async (t) => {
    await waitFor(
      `${t.crdName} Established`,
      async () => established(await api.get<Conditions>(`${CRDS}/${t.crdName}`)),
      { timeoutMs: opts.timeoutMs, intervalMs: 250 },
    );
  });
  const crdSeconds = (performance.now() - t0) / 1000;
  log(`${fleet.targets.length} CRDs Established in ${crdSeconds.toFixed(1)} s`);
  const t1 = performance.now();
  const configName = (t: Target) => (t.config.metadata as JsonObject).name as string;
  await each(
    fleet.targets,
    opts.parallel,
    (t) => apply(api, `${CONFIGS}/${configName(t)}`, t.config),
  );
  if (opts.waitApplied === false) {
    log(`${fleet.targets.length} configs created (not waited for Applied)`);
    return { crdSeconds };
  }
  await each(fleet.targets, opts.parallel, async (t) => {
    const name = configName(t);
    await waitFor(`${name} Applied`, async () => {
      const c = await api.get<{ status?: { phase?: string } }>(`${CONFIGS}/${name}`);
      if (c.status?.phase !== "Applied") return false;
      const crd = await api.get<{ spec: { conversion?: { strategy?: string } } }>(
        `${CRDS}/${t.crdName}`,
      );
      return crd.spec.conversion?.strategy === "Webhook";
    }, { timeoutMs: opts.timeoutMs, intervalMs: 250 });
  });
  const configSeconds = (performance.now() - t1) / 1000;
  log(`${fleet.targets.length} configs Applied in ${configSeconds.toFixed(1)} s`);
  return { crdSeconds, configSeconds };
}

const collection = (t: Target, version: string, namespace: string) =>
  `/apis/${SCALE_GROUP}/${version}/namespaces/${namespace}/${t.plural}`;

/**
 * Creates every instance at v1 with `parallel` workers; NoMatch/404, 429 and timeouts are retried
 * (up to 30 attempts, 200 ms → 5 s), an existing object counts as created. Resolves to the
 * milliseconds it took; rejects with the first final failure.
 */
export async function createInstances(
  api: Api,
  fleet: Fleet,
  opts: { namespace: string; parallel: number },
): Promise<{ createMs: number; retries: number }> {
  const jobs = fleet.targets.flatMap((t) => t.instances.map((obj) => ({ t, obj })));
  let retries = 0;
  const t0 = performance.now();
  await each(jobs, opts.parallel, async ({ t, obj }) => {
    const attempts = await withRetry(
      async () => {
        try {
          await api.call("POST", collection(t, "v1", opts.namespace), obj);
        } catch (e) {
          if (e instanceof ApiError && e.status === 409) return;
          throw e;
        }
      },
      classifyFailure,
      sleep,
    );
    retries += attempts - 1;
  });
  return { createMs: performance.now() - t0, retries };
}

export interface Benchmark {
  listV1: Measurement;
  listV2: Measurement;
  getV1: Measurement;
  getV2: Measurement;
  /** Up to 5 distinct error messages per phase. */
  errorSamples: Record<string, string[]>;
}

/** List and Get at v1 and v2, each phase with `parallel` workers; errors are counted. */
export async function benchmark(api: Api, fleet: Fleet, opts: BenchOptions): Promise<Benchmark> {
  const repeat = <T>(items: readonly T[], n: number) =>
    Array.from({ length: n }, () => items).flat();
  const objects = fleet.targets.flatMap((t) =>
    t.instances.map((o) => ({ t, name: (o.metadata as JsonObject).name as string }))
  );
  const errorSamples: Record<string, string[]> = {};
  const phase = async (
    key: string,
    items: readonly { t: Target; name?: string }[],
    version: string,
  ) => {
    const samples = new ErrorSamples();
    const m = await measure(items, opts.parallel, async ({ t, name }, sent) => {
      const path = collection(t, version, opts.namespace) + (name ? `/${name}` : "");
      const body = await api.get<{ apiVersion?: string; items?: unknown[] }>(path, sent);
      const want = `${SCALE_GROUP}/${version}`;
      if (name === undefined) {
        if (body.items?.length !== t.instances.length) {
          throw new Error(
            `LIST ${t.plural} at ${version}: ${body.items?.length} items, want ${t.instances.length}`,
          );
        }
      } else if (body.apiVersion !== want) {
        throw new Error(`GET ${t.plural}/${name} at ${version}: apiVersion ${body.apiVersion}`);
      }
    }, samples);
    errorSamples[key] = samples.samples;
    return m;
  };
  const lists = repeat(fleet.targets.map((t) => ({ t })), opts.listRepeats);
  const gets = repeat(objects, opts.getRepeats);
  return {
    listV1: await phase("listV1", lists, "v1"),
    listV2: await phase("listV2", lists, "v2"),
    getV1: await phase("getV1", gets, "v1"),
    getV2: await phase("getV2", gets, "v2"),
    errorSamples,
  };
}
