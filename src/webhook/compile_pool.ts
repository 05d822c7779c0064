/**
 * A pool of compile Workers (docs/design/webhook.md#the-initial-sync): compilation is CPU-bound,
 * so the initial
 * sync and the watch path spread it over Web Workers. Each job posts (kind, config, target) and
 * gets a structured-cloned `CompileResult` back; jobs queue when every worker is busy. A worker
 * that dies fails its job with an error (an infrastructure error: the caller retries) and is
 * replaced.
 */
import type { JsonObject } from "../engine/mod.ts";
import { compileConfig, type ConfigObject } from "./compile.ts";
import type { CompileResult, ConfigKind } from "./compiled.ts";
import type { CompileRequest, CompileResponse } from "./compile_worker.ts";
import { availableCpus, CGROUP_V2_CPU_MAX } from "./cpu_limit.ts";

/** Compiles one config; implemented by the pool or, for tests and tiny fleets, in-isolate. */
export type Compiler = (
  kind: ConfigKind,
  config: ConfigObject,
  target: JsonObject | undefined,
) => Promise<CompileResult>;

/** The in-isolate compiler (same semantics, no parallelism). */
export const compileInline: Compiler = (kind, config, target) =>
  Promise.resolve(compileConfig(kind, config, target));

/**
 * The worker script. A bundle (`deno bundle` → dist/*.js) carries `compile_worker.js` next to
 * the role's entry, a source checkout `compile_worker.ts`; loading it needs read access to it.
 */
export function compileWorkerURL(): URL {
  const ext = import.meta.url.endsWith(".ts") ? "ts" : "js";
  return new URL(`./compile_worker.${ext}`, import.meta.url);
}

interface Job {
  request: CompileRequest;
  resolve: (r: CompileResult) => void;
  reject: (e: Error) => void;
}

interface Slot {
  worker: Worker;
  job: Job | undefined;
}

export class CompilePool {
  readonly size: number;
  private readonly slots: Slot[] = [];
  private readonly queue: Job[] = [];
  private nextId = 1;
  private closed = false;

  constructor(size: number, private readonly url: URL = compileWorkerURL()) {
    this.size = Math.max(1, Math.floor(size));
    for (let i = 0; i < this.size; i++) this.slots.push(this.spawn());
  }

  private spawn(): Slot {
    const worker = new Worker(this.url, { type: "module", name: "dco-compile" });
    const slot: Slot = { worker, job: undefined };
    worker.onmessage = (event: MessageEvent<CompileResponse>) => {
      const job = slot.job;
      slot.job = undefined;
      if (job !== undefined && job.request.id === event.data.id) {
        if ("result" in event.data) job.resolve(event.data.result);
        else job.reject(new Error(`compile worker: ${event.data.error}`));
      }
      this.dispatch();
    };
    worker.onerror = (event: ErrorEvent) => {
      event.preventDefault();
      const job = slot.job;
      slot.job = undefined;
      job?.reject(new Error(`compile worker died: ${event.message}`));
      worker.terminate();
      if (this.closed) return;
      const index = this.slots.indexOf(slot);
      if (index >= 0) this.slots[index] = this.spawn();
      this.dispatch();
    };
    return slot;
  }

  private dispatch(): void {
    for (const slot of this.slots) {
      if (this.queue.length === 0) return;
      if (slot.job !== undefined) continue;
      const job = this.queue.shift()!;
      slot.job = job;
      slot.worker.postMessage(job.request);
    }
  }

  compile: Compiler = (kind, config, target) => {
    if (this.closed) return Promise.reject(new Error("compile pool is closed"));
    return new Promise<CompileResult>((resolve, reject) => {
      this.queue.push({ request: { id: this.nextId++, kind, config, target }, resolve, reject });
      this.dispatch();
    });
  };

  close(): void {
    this.closed = true;
    for (const slot of this.slots) {
      slot.worker.terminate();
      slot.job?.reject(new Error("compile pool closed"));
    }
    for (const job of this.queue.splice(0)) job.reject(new Error("compile pool closed"));
  }

  [Symbol.dispose](): void {
    this.close();
  }
}

/**
 * `--initial-sync-workers 0`: the CPUs this process may use (src/webhook/cpu_limit.ts). A given
 * `readQuota` stands for `/sys/fs/cgroup/cpu.max` (cgroup v2) alone.
 */
export function defaultPoolSize(readQuota?: () => Promise<string>): Promise<number> {
  if (readQuota === undefined) return availableCpus();
  return availableCpus((path) =>
    path === CGROUP_V2_CPU_MAX ? readQuota() : Promise.reject(new Error("not read"))
  );
}
