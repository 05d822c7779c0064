/**
 * Samples the webhook-server replicas during a soak: for every Ready, non-terminating Pod of the
 * server, its own `/metrics` (plain HTTP on 8443, the Pod IP: the test kubelet's pod network is
 * routed from the host) and the number of open file descriptors of its process.
 *
 * Open fds come from outside, the way cAdvisor's `container_file_descriptors` does: the server
 * cannot export `process_open_fds` itself, because Deno wants `--allow-all` for any read of
 * `/proc/self`, and the server runs with a narrow `--allow-read`. The test kubelet runs each Pod as
 * a process group whose id is the container id (`dco-test://<pgid>`); the server is the process of
 * that group running `webhook_server.ts`.
 */
import { sample } from "../../tests/kube/_helpers.ts";
import type { Sample } from "./result.ts";

// deno-lint-ignore no-explicit-any
type Obj = any;

/** The metrics of one exposition text the soak keeps; undefined when one is missing. */
export function metricsOf(
  text: string,
): Omit<Sample, "t" | "pod" | "openFds"> | undefined {
  const v = {
    rssBytes: sample(text, "process_resident_memory_bytes"),
    heapUsedBytes: sample(text, "deno_v8_heap_used_bytes"),
    heapTotalBytes: sample(text, "deno_v8_heap_total_bytes"),
    externalBytes: sample(text, "deno_v8_external_bytes"),
    eventLoopLagSeconds: sample(text, "deno_event_loop_lag_seconds"),
  };
  return Object.values(v).every((x) => x !== undefined && Number.isFinite(x))
    ? v as Omit<Sample, "t" | "pod" | "openFds">
    : undefined;
}

/** Whether a Pod is Ready and not terminating (the replicas a soak samples). */
export function sampledPod(p: Obj): boolean {
  return !p.metadata?.deletionTimestamp && !!p.status?.podIP &&
    (p.status?.conditions ?? []).some((c: Obj) => c.type === "Ready" && c.status === "True");
}

/** The pid of the deno process of group `pgid` whose arguments mention `marker`, if any. */
export async function processInGroup(pgid: number, marker: string): Promise<number | undefined> {
  for await (const e of Deno.readDir("/proc")) {
    if (!/^\d+$/.test(e.name)) continue;
    try {
      const stat = await Deno.readTextFile(`/proc/${e.name}/stat`);
      // pid (comm) state ppid pgrp ...: comm may hold spaces and parentheses.
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[2]) !== pgid) continue;
      // The server itself, not the shells and `ip netns exec` that started it (whose command
      // lines hold its arguments too): a deno process running the marker.
      const argv = (await Deno.readTextFile(`/proc/${e.name}/cmdline`)).split("\0");
      if (/(^|\/)deno$/.test(argv[0]) && argv.some((a) => a.includes(marker))) {
        return Number(e.name);
      }
    } catch {
      // the process ended while we looked
    }
  }
  return undefined;
}

/** Entries of /proc/<pid>/fd; undefined when the process is gone. */
export async function openFds(pid: number): Promise<number | undefined> {
  try {
    let n = 0;
    for await (const _ of Deno.readDir(`/proc/${pid}/fd`)) n++;
    return n;
  } catch {
    return undefined;
  }
}

/** How the sampler reaches the cluster. */
export interface SamplerOptions {
  /** Lists the server's Pods (the `items` of a Pod list). */
  listPods: () => Promise<Obj[]>;
  /** Seconds since the soak started. */
  clock: () => number;
  /** The replica's main module, to find its process in the Pod's group. */
  marker?: string;
}

/** Collects {@link Sample}s, one round per {@link ReplicaSampler.round}. */
export class ReplicaSampler {
  readonly samples: Sample[] = [];
  scrapeErrors = 0;
  readonly #pids = new Map<string, number>();
  readonly #opts: SamplerOptions;

  constructor(opts: SamplerOptions) {
    this.#opts = opts;
  }

  /** Scrapes every sampled Pod once, concurrently. */
  async round(): Promise<void> {
    let pods: Obj[];
    try {
      pods = (await this.#opts.listPods()).filter(sampledPod);
    } catch {
      this.scrapeErrors++;
      return;
    }
    await Promise.all(pods.map((p) => this.#scrape(p)));
  }

  async #scrape(pod: Obj): Promise<void> {
    const name: string = pod.metadata.name;
    const t = this.#opts.clock();
    let text: string;
    try {
      const res = await fetch(`http://${pod.status.podIP}:8443/metrics`, {
        signal: AbortSignal.timeout(5_000),
      });
      text = await res.text();
      if (!res.ok) throw new Error(`${res.status}`);
    } catch {
      this.scrapeErrors++;
      return;
    }
    const m = metricsOf(text);
    if (!m) {
      this.scrapeErrors++;
      return;
    }
    this.samples.push({ t, pod: name, ...m, openFds: (await this.#fds(pod)) ?? null });
  }

  async #fds(pod: Obj): Promise<number | undefined> {
    const name: string = pod.metadata.name;
    let pid = this.#pids.get(name);
    if (pid === undefined) {
      const id = pod.status?.containerStatuses?.[0]?.containerID ?? "";
      const pgid = Number(String(id).split("://")[1]);
      if (!(pgid > 0)) return undefined;
      pid = await processInGroup(pgid, this.#opts.marker ?? "webhook_server.ts");
      if (pid === undefined) return undefined;
      this.#pids.set(name, pid);
    }
    return await openFds(pid);
  }
}
