/**
 * The list-latency question: `objects` objects of about `objectBytes` each in one namespace, of a
 * two-version CRD stored at v1 whose v2 is converted by the webhook Pods (a FieldRename). LIST and
 * GET at the storage version (no webhook) and at v2 (a ConversionReview per request), one request
 * at a time, the two versions interleaved so a drifting machine load hits both alike; p50/p99 by
 * nearest rank. What the converted LIST spends beyond the storage one is split with the
 * apiserver's own conversion-webhook histogram and the replicas' review histogram.
 */
import type { JsonObject } from "../../src/lib/json.ts";
import { fieldRenameConfig, twoVersionCRD } from "../../tests/support/dco_stack.ts";
import { waitFor } from "../../tests/support/wait.ts";
import { type Api, ApiError } from "./api.ts";
import { nearestRank } from "./measure.ts";
import { replicaMetrics, replicaPods, sampleTotal } from "./observe.ts";

export const BENCH_GROUP = "listbench.dco.example.org";
export const BENCH_PLURAL = "payloads";
export const BENCH_CRD = `${BENCH_PLURAL}.${BENCH_GROUP}`;

export interface ListBenchOptions {
  namespace: string;
  objects: number;
  /** Approximate JSON size of one object; default 10 KiB. */
  objectBytes: number;
  /** LISTs per version; default 20. */
  listRepeats: number;
  /** GETs per version; default 300. */
  gets: number;
  parallel: number;
}

/** Versions v1 (`spec.size`, storage) and v2 (`spec.capacity`); both carry `spec.labels`. */
export function benchCRD(): JsonObject {
  return twoVersionCRD({
    group: BENCH_GROUP,
    plural: BENCH_PLURAL,
    kind: "Payload",
    stringFields: ["owner"],
    specFields: { labels: { type: "object", additionalProperties: { type: "string" } } },
  }) as unknown as JsonObject;
}

/** The config converting it: hub v1, spoke v2 renames `size` to `capacity`. */
export function benchConfig(): JsonObject {
  return fieldRenameConfig({
    name: "payloads",
    kind: "CRDConversionConfig",
    target: BENCH_CRD,
    spokePath: "spec.capacity",
  }) as unknown as JsonObject;
}

/** Object `i` at v1: a map of 100-byte strings filling it to about `bytes` of JSON. */
export function benchObject(i: number, bytes: number): JsonObject {
  const labels: Record<string, string> = {};
  // `"key-0000":"<100 bytes>",` is 114 bytes of JSON; the rest of the object about 170.
  const entries = Math.max(1, Math.round((bytes - 170) / 114));
  for (let k = 0; k < entries; k++) {
    labels[`key-${String(k).padStart(4, "0")}`] = `${i}-${k}-`.padEnd(100, "x");
  }
  return {
    apiVersion: `${BENCH_GROUP}/v1`,
    kind: "Payload",
    metadata: { name: `payload-${String(i).padStart(5, "0")}` },
    spec: { size: i, owner: `bench-${i % 16}`, labels },
  };
}

export interface Percentiles {
  n: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

function percentiles(durations: number[]): Percentiles {
  const s = [...durations].sort((a, b) => a - b);
  return {
    n: s.length,
    p50Ms: nearestRank(s, 50),
    p99Ms: nearestRank(s, 99),
    maxMs: s.length ? s[s.length - 1] : 0,
  };
}

export interface ListBenchResult {
  objects: number;
  /** JSON size of one object at v1, and of the whole LIST at each version. */
  objectBytes: number;
  listBytes: { v1: number; v2: number };
  list: { v1: Percentiles; v2: Percentiles; p50Ratio: number; p99Ratio: number };
  get: { v1: Percentiles; v2: Percentiles; p50Ratio: number };
  /**
   * Conversion work during each phase (both versions), from the apiserver's conversion-webhook
   * histogram (`apiserver_crd_conversion_webhook_duration_seconds`: its whole call, request
   * encoding to response decoding) and the replicas' review histogram
   * (`dco_webhook_conversion_review_duration_seconds`).
   */
  conversion: { lists: ConversionWork; gets: ConversionWork };
}

export interface ConversionWork {
  /** Conversion webhook calls the apiserver made, per v2 request of the phase (v1 is stored). */
  callsPerRequest: number;
  /** Mean duration of one such call at the apiserver, ms (0 without calls). */
  apiserverCallMs: number;
  /** Mean duration of one review in the replica, ms (0 without reviews). */
  replicaReviewMs: number;
}

type Totals = Awaited<ReturnType<typeof conversionTotals>>;

function work(before: Totals, after: Totals, requests: number): ConversionWork {
  const calls = after.callCount - before.callCount;
  const reviews = after.reviewCount - before.reviewCount;
  return {
    callsPerRequest: calls / requests,
    apiserverCallMs: calls > 0 ? ((after.callSum - before.callSum) * 1000) / calls : 0,
    replicaReviewMs: reviews > 0 ? ((after.reviewSum - before.reviewSum) * 1000) / reviews : 0,
  };
}

/** Histogram sums and counts of the apiserver's and the replicas' conversion figures. */
async function conversionTotals(api: Api, namespace: string) {
  const apiserver = await api.text("/metrics");
  let reviewSum = 0;
  let reviewCount = 0;
  for (const pod of await replicaPods(api, namespace)) {
    const text = await replicaMetrics(api, namespace, pod.metadata.name);
    reviewSum += sampleTotal(text, "dco_webhook_conversion_review_duration_seconds_sum");
    reviewCount += sampleTotal(text, "dco_webhook_conversion_review_duration_seconds_count");
  }
  return {
    callSum: sampleTotal(apiserver, "apiserver_crd_conversion_webhook_duration_seconds_sum"),
    callCount: sampleTotal(apiserver, "apiserver_crd_conversion_webhook_duration_seconds_count"),
    reviewSum,
    reviewCount,
  };
}

/** Creates the CRD and config (waits until the CRD converts through the webhook). */
export async function setUpListBench(api: Api, opts: ListBenchOptions): Promise<void> {
  const ssa = (path: string, obj: JsonObject) =>
    api.call(
      "PATCH",
      `${path}?fieldManager=dco-scale&force=true`,
      obj,
      "application/apply-patch+yaml",
    );
  const crdPath = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${BENCH_CRD}`;
  await ssa(`/api/v1/namespaces/${opts.namespace}`, {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name: opts.namespace },
  });
  await ssa(crdPath, benchCRD());
  await ssa("/apis/terasky.com/v1alpha1/crdconversionconfigs/payloads", benchConfig());
  await waitFor("the bench CRD converting through the webhook", async () => {
    const crd = await api.get<{ spec: { conversion?: { strategy?: string } } }>(crdPath);
    const cfg = await api.get<{ status?: { phase?: string } }>(
      "/apis/terasky.com/v1alpha1/crdconversionconfigs/payloads",
    );
    return crd.spec.conversion?.strategy === "Webhook" && cfg.status?.phase === "Applied";
  }, { timeoutMs: 180_000, intervalMs: 250 });
}

/** Creates the objects at the storage version (idempotent: existing ones count). */
export async function fillListBench(api: Api, opts: ListBenchOptions): Promise<number> {
  const base = `/apis/${BENCH_GROUP}/v1/namespaces/${opts.namespace}/${BENCH_PLURAL}`;
  let next = 0;
  await Promise.all(Array.from({ length: opts.parallel }, async () => {
    while (next < opts.objects) {
      const obj = benchObject(next++, opts.objectBytes);
      await api.call("POST", base, obj).catch((e) => {
        if (!(e instanceof ApiError && e.status === 409)) throw e;
      });
    }
  }));
  return JSON.stringify(benchObject(0, opts.objectBytes)).length;
}

/** The measurement itself (after {@link setUpListBench} and {@link fillListBench}). */
export async function runListBench(
  api: Api,
  opts: ListBenchOptions,
  serverNamespace: string,
): Promise<ListBenchResult> {
  const base = (v: string) =>
    `/apis/${BENCH_GROUP}/${v}/namespaces/${opts.namespace}/${BENCH_PLURAL}`;
  const timed = async (path: string, check: (body: string) => void) => {
    const t0 = performance.now();
    const body = await api.text(path);
    const ms = performance.now() - t0;
    check(body);
    return { ms, bytes: body.length };
  };
  const listCheck = (v: string) => (body: string) => {
    const items = (JSON.parse(body) as { items: { apiVersion: string }[] }).items;
    if (
      items.length !== opts.objects || items.some((o) => o.apiVersion !== `${BENCH_GROUP}/${v}`)
    ) {
      throw new Error(`LIST at ${v}: ${items.length} items, want ${opts.objects} at ${v}`);
    }
  };
  // Warm-up: both versions, twice (connections, the watch cache, the replicas' Workers).
  for (let i = 0; i < 2; i++) {
    for (const v of ["v1", "v2"]) await timed(base(v), listCheck(v));
  }
  const before = await conversionTotals(api, serverNamespace);
  const lists: Record<string, number[]> = { v1: [], v2: [] };
  const listBytes = { v1: 0, v2: 0 };
  for (let i = 0; i < opts.listRepeats; i++) {
    // Alternate which version goes first, so neither always follows the other.
    for (const v of i % 2 === 0 ? ["v1", "v2"] : ["v2", "v1"]) {
      const r = await timed(base(v), listCheck(v));
      lists[v].push(r.ms);
      listBytes[v as "v1" | "v2"] = r.bytes;
    }
  }
  const after = await conversionTotals(api, serverNamespace);
  const gets: Record<string, number[]> = { v1: [], v2: [] };
  for (let i = 0; i < opts.gets; i++) {
    const name = benchObject((i * 7919) % opts.objects, 0).metadata as JsonObject;
    for (const v of i % 2 === 0 ? ["v1", "v2"] : ["v2", "v1"]) {
      const r = await timed(`${base(v)}/${name.name}`, (body) => {
        if (JSON.parse(body).apiVersion !== `${BENCH_GROUP}/${v}`) throw new Error(`GET at ${v}`);
      });
      gets[v].push(r.ms);
    }
  }
  const end = await conversionTotals(api, serverNamespace);
  const l1 = percentiles(lists.v1);
  const l2 = percentiles(lists.v2);
  const g1 = percentiles(gets.v1);
  const g2 = percentiles(gets.v2);
  return {
    objects: opts.objects,
    objectBytes: JSON.stringify(benchObject(0, opts.objectBytes)).length,
    listBytes,
    list: { v1: l1, v2: l2, p50Ratio: l2.p50Ms / l1.p50Ms, p99Ratio: l2.p99Ms / l1.p99Ms },
    get: { v1: g1, v2: g2, p50Ratio: g2.p50Ms / g1.p50Ms },
    conversion: {
      lists: work(before, after, opts.listRepeats),
      gets: work(after, end, opts.gets),
    },
  };
}
