/**
 * The scale run's observer: what the webhook-server replicas say about themselves after the run.
 * Replicas are the Ready, non-terminating Pods labelled
 * `app.kubernetes.io/name=declarative-conversion-webhook-server`. From each: its own `/metrics`
 * (plain port 8443, reached through the apiserver's pod proxy) — the initial sync's duration and
 * targets, and the V8 heap in use — and its memory.
 *
 * Memory: a kubelet's Summary API reports a container's working set from its cgroup. The test
 * kubelet runs each Pod as a process group on this host without a cgroup of its own, so the
 * working set here is the resident memory (`VmRSS`, anonymous and file-backed pages) summed over
 * the Pod's process group, read from /proc; `VmHWM` gives its peak. The process group is the
 * Pod's container ID (`dco-test://<pgid>`). Partial collection is tolerated: a figure that could
 * not be read is left out.
 */
import type { Api } from "./api.ts";
import type { Observed } from "./result.ts";
import { WEBHOOK_SERVER_SELECTOR } from "./stack.ts";

export const METRICS_PORT = 8443;

/** The values of every sample of family `name` (exactly that name, any labels), in order. */
export function sampleValues(text: string, name: string): number[] {
  const out: number[] = [];
  for (const line of text.split("\n")) {
    if (!line.startsWith(name)) continue;
    let rest = line.slice(name.length);
    if (rest[0] === "{") rest = rest.slice(rest.indexOf("}") + 1);
    else if (rest[0] !== " ") continue;
    const value = Number(rest.trim().split(" ")[0]);
    if (Number.isFinite(value)) out.push(value);
  }
  return out;
}

/** The first sample of family `name`, if any. */
export function sampleValue(text: string, name: string): number | undefined {
  return sampleValues(text, name)[0];
}

/** The sum of every sample of family `name`: 0 when there is none. */
export function sampleTotal(text: string, name: string): number {
  return sampleValues(text, name).reduce((a, b) => a + b, 0);
}

/** Resident and peak resident bytes of a process group, from /proc/<pid>/status files. */
export interface GroupMemory {
  rssBytes: number;
  peakRssBytes: number;
  processes: number;
}

/** `VmRSS` and `VmHWM` of one /proc/<pid>/status text, in bytes. */
export function statusMemory(status: string): { rss: number; hwm: number } {
  const kb = (key: string) =>
    Number(status.match(new RegExp(`^${key}:\\s+(\\d+) kB`, "m"))?.[1] ?? 0);
  return { rss: kb("VmRSS") * 1024, hwm: kb("VmHWM") * 1024 };
}

/** The memory of every live process in process group `pgid` (undefined when there is none). */
export async function groupMemory(pgid: number): Promise<GroupMemory | undefined> {
  let rssBytes = 0;
  let peakRssBytes = 0;
  let processes = 0;
  for await (const e of Deno.readDir("/proc")) {
    if (!/^\d+$/.test(e.name)) continue;
    try {
      const stat = await Deno.readTextFile(`/proc/${e.name}/stat`);
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[2]) !== pgid || fields[0] === "Z") continue;
      const m = statusMemory(await Deno.readTextFile(`/proc/${e.name}/status`));
      rssBytes += m.rss;
      peakRssBytes += m.hwm;
      processes++;
    } catch {
      continue; // exited meanwhile
    }
  }
  return processes > 0 ? { rssBytes, peakRssBytes, processes } : undefined;
}

/** One replica as observed. */
export interface ReplicaObservation {
  pod: string;
  initialSyncSeconds?: number;
  initialSyncTargets?: number;
  heapUsedBytes?: number;
  /** Working set (see the module doc): resident bytes of the Pod's process group. */
  workingSetBytes?: number;
  peakWorkingSetBytes?: number;
  /** What could not be read, one message each. */
  problems: string[];
}

// deno-lint-ignore no-explicit-any
type Pod = any;

/** Ready, non-terminating webhook-server Pods of `namespace`. */
export async function replicaPods(api: Api, namespace: string): Promise<Pod[]> {
  const list = await api.get<{ items: Pod[] }>(
    `/api/v1/namespaces/${namespace}/pods?labelSelector=${
      encodeURIComponent(WEBHOOK_SERVER_SELECTOR)
    }`,
  );
  return list.items.filter((p) =>
    p.metadata.deletionTimestamp === undefined &&
    (p.status?.conditions ?? []).some((c: Pod) => c.type === "Ready" && c.status === "True")
  );
}

/** A replica's own `/metrics`, through the apiserver's pod proxy. */
export function replicaMetrics(api: Api, namespace: string, pod: string): Promise<string> {
  return api.text(`/api/v1/namespaces/${namespace}/pods/${pod}:${METRICS_PORT}/proxy/metrics`);
}

/** The process group of a Pod on the test kubelet, from its container ID. */
export function podProcessGroup(pod: Pod): number | undefined {
  const id: string | undefined = pod.status?.containerStatuses?.[0]?.containerID;
  const m = id?.match(/^dco-test:\/\/(\d+)$/);
  return m ? Number(m[1]) : undefined;
}

export async function observeReplica(
  api: Api,
  namespace: string,
  pod: Pod,
): Promise<ReplicaObservation> {
  const out: ReplicaObservation = { pod: pod.metadata.name, problems: [] };
  try {
    const text = await replicaMetrics(api, namespace, out.pod);
    out.initialSyncSeconds = sampleValue(text, "dco_webhook_initial_sync_duration_seconds");
    out.initialSyncTargets = sampleValue(text, "dco_webhook_initial_sync_targets");
    out.heapUsedBytes = sampleValue(text, "deno_v8_heap_used_bytes");
  } catch (e) {
    out.problems.push(`${out.pod} /metrics: ${(e as Error).message}`);
  }
  const pgid = podProcessGroup(pod);
  const mem = pgid === undefined ? undefined : await groupMemory(pgid);
  if (mem) {
    out.workingSetBytes = mem.rssBytes;
    out.peakWorkingSetBytes = mem.peakRssBytes;
  } else out.problems.push(`${out.pod}: no process group to read memory from`);
  return out;
}

/**
 * Every Ready replica's registry size (`dco_webhook_registry_size`), by Pod; a replica whose
 * `/metrics` cannot be read counts as 0.
 */
export async function registrySizes(api: Api, namespace: string): Promise<Map<string, number>> {
  const pods = await replicaPods(api, namespace);
  const sizes = await Promise.all(pods.map(async (p) => {
    try {
      const text = await replicaMetrics(api, namespace, p.metadata.name);
      return sampleValue(text, "dco_webhook_registry_size") ?? 0;
    } catch {
      return 0;
    }
  }));
  return new Map(pods.map((p, i) => [p.metadata.name as string, sizes[i]]));
}

/** Every replica of `namespace`, observed. */
export async function observeFleet(api: Api, namespace: string): Promise<ReplicaObservation[]> {
  const pods = await replicaPods(api, namespace);
  return await Promise.all(pods.map((p) => observeReplica(api, namespace, p)));
}

/** The result JSON's `observed`: maxima over the replicas; a figure nobody reported is absent. */
export function observedOf(replicas: readonly ReplicaObservation[]): Observed {
  const max = (pick: (r: ReplicaObservation) => number | undefined) => {
    const values = replicas.map(pick).filter((v): v is number => v !== undefined);
    return values.length ? Math.max(...values) : undefined;
  };
  const observed: Observed = { webhookReplicas: replicas.length };
  const sync = max((r) => r.initialSyncSeconds);
  const targets = max((r) => r.initialSyncTargets);
  const ws = max((r) => r.workingSetBytes);
  if (sync !== undefined) observed.webhookInitialSyncSeconds = sync;
  if (targets !== undefined) observed.webhookInitialSyncTargets = targets;
  if (ws !== undefined) observed.webhookWorkingSetBytes = ws;
  return observed;
}

/** The spec's rule: an observation that got neither the sync figure nor the working set failed. */
export function observationCollectedNothing(o: Observed): boolean {
  return o.webhookInitialSyncSeconds === undefined && o.webhookWorkingSetBytes === undefined;
}
