/**
 * The heap of the webhook-server replicas through a cold start: while the Deployment rolls, every
 * new Pod's own `/metrics` is scraped as often as it answers (through the apiserver's pod proxy)
 * and the largest `deno_v8_heap_used_bytes` seen is kept; at the end each new Pod's peak resident
 * memory (`VmHWM` of its process group) is read. A sampled peak is a lower bound of the true one.
 */
import type { Api } from "./api.ts";
import { groupMemory, podProcessGroup, replicaMetrics, sampleValue } from "./observe.ts";
import { WEBHOOK_SERVER_SELECTOR } from "./stack.ts";

export interface ColdStartReplica {
  pod: string;
  samples: number;
  peakHeapUsedBytes?: number;
  peakRssBytes?: number;
}

// deno-lint-ignore no-explicit-any
type Pod = any;

export class ColdStartTrace {
  readonly #api: Api;
  readonly #namespace: string;
  readonly #old: Set<string>;
  readonly #seen = new Map<string, { pod: Pod; samples: number; peak?: number }>();
  #stopped = false;
  #loop?: Promise<void>;

  private constructor(api: Api, namespace: string, old: Set<string>) {
    this.#api = api;
    this.#namespace = namespace;
    this.#old = old;
  }

  /** Starts tracing the Pods that do not exist yet (call it right before the roll). */
  static async start(api: Api, namespace: string): Promise<ColdStartTrace> {
    const old = new Set((await this.#pods(api, namespace)).map((p) => p.metadata.name as string));
    const t = new ColdStartTrace(api, namespace, old);
    t.#loop = t.#run();
    return t;
  }

  static async #pods(api: Api, namespace: string): Promise<Pod[]> {
    const q = encodeURIComponent(WEBHOOK_SERVER_SELECTOR);
    return (await api.get<{ items: Pod[] }>(
      `/api/v1/namespaces/${namespace}/pods?labelSelector=${q}`,
    ))
      .items;
  }

  async #run(): Promise<void> {
    while (!this.#stopped) {
      try {
        for (const p of await ColdStartTrace.#pods(this.#api, this.#namespace)) {
          const name: string = p.metadata.name;
          if (this.#old.has(name)) continue;
          const entry = this.#seen.get(name) ?? { pod: p, samples: 0 };
          entry.pod = p;
          this.#seen.set(name, entry);
          if (p.status?.phase !== "Running" || !p.status?.podIP) continue;
          try {
            const heap = sampleValue(
              await replicaMetrics(this.#api, this.#namespace, name),
              "deno_v8_heap_used_bytes",
            );
            if (heap !== undefined) {
              entry.samples++;
              entry.peak = Math.max(entry.peak ?? 0, heap);
            }
          } catch { /* not listening yet */ }
        }
      } catch { /* the list failed once; try again */ }
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** Stops and reports every new Pod seen. */
  async stop(): Promise<ColdStartReplica[]> {
    this.#stopped = true;
    await this.#loop;
    const out: ColdStartReplica[] = [];
    for (const [pod, e] of this.#seen) {
      const pgid = podProcessGroup(e.pod);
      const mem = pgid === undefined ? undefined : await groupMemory(pgid);
      out.push({
        pod,
        samples: e.samples,
        peakHeapUsedBytes: e.peak,
        peakRssBytes: mem?.peakRssBytes,
      });
    }
    return out;
  }
}
