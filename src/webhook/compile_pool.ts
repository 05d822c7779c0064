/**
 * A pool of compile Workers (docs/design/webhook.md#the-initial-sync): compilation is CPU-bound,
 * so the initial sync and the watch path spread it over Web Workers. Jobs queue; the jobs queued
 * in one turn of the event loop go out in batches (one message carries up to
 * {@link MAX_BATCH} jobs, and each Worker holds up to two batches so it never waits for the main
 * thread between them), and each result comes back with its plans as a transferred buffer. A
 * worker that dies fails its jobs with an error (an infrastructure error: the caller retries) and
 * is replaced.
 */
import type { JsonObject } from "../engine/mod.ts";
import { compileConfig, type ConfigObject } from "./compile.ts";
import type { CompileResult, ConfigKind } from "./compiled.ts";
import type { CompileJob, CompileRequest, CompileResponse } from "./compile_worker.ts";
import { availableCpus, CGROUP_V2_CPU_MAX } from "./cpu_limit.ts";
import { siblingWorkerURL } from "../lib/worker_url.ts";

/** Compiles one config; implemented by the pool or, for tests and tiny fleets, in-isolate. */
export type Compiler = (
  kind: ConfigKind,
  config: ConfigObject,
  target: JsonObject | undefined,
) => Promise<CompileResult>;

/** The in-isolate compiler (same semantics, no parallelism). */
export const compileInline: Compiler = (kind, config, target) =>
  Promise.resolve(compileConfig(kind, config, target));

/** How long an inline pass compiles before it lets the event loop run (probes, watches). */
export const INLINE_SLICE_MS = 20;

/**
 * The in-isolate compiler for a whole pass: the same as {@link compileInline}, but once
 * `sliceMs` of compiling has passed it waits for one macrotask first, so a long inline sync
 * does not hold the event loop that answers `/healthz` and the informers. One per pass.
 */
export function slicedInline(sliceMs: number = INLINE_SLICE_MS): Compiler {
  let sliceStart = performance.now();
  return async (kind, config, target) => {
    if (performance.now() - sliceStart >= sliceMs) {
      await new Promise((resolve) => setTimeout(resolve, 0));
      sliceStart = performance.now();
    }
    return compileConfig(kind, config, target);
  };
}

/** The compile Worker's script (src/lib/worker_url.ts). */
export function compileWorkerURL(): URL {
  return siblingWorkerURL("compile_worker", import.meta.url);
}

/** The most jobs one message carries (bounds a batch's latency and a crash's blast radius). */
export const MAX_BATCH = 64;
/** Batches a Worker holds at once: one it compiles, one waiting behind it. */
const BATCHES_PER_WORKER = 2;

interface Job {
  job: CompileJob;
  resolve: (r: CompileResult) => void;
  reject: (e: Error) => void;
}

interface Batch {
  id: number;
  jobs: Job[];
}

interface Slot {
  worker: Worker;
  /** Sent and not answered yet, oldest first (a Worker answers in order). */
  batches: Batch[];
  ready: boolean;
}

/**
 * The batch size for `queued` jobs over `workers`: about four batches per Worker, so the last
 * ones balance the load, and at most {@link MAX_BATCH}.
 */
export function batchSize(queued: number, workers: number): number {
  return Math.max(1, Math.min(MAX_BATCH, Math.ceil(queued / (workers * 4))));
}

export class CompilePool {
  readonly size: number;
  private readonly slots: Slot[] = [];
  private readonly queue: Job[] = [];
  private nextId = 1;
  private closed = false;
  private scheduled = false;
  private readonly readyWaiters: (() => void)[] = [];

  constructor(size: number, private readonly url: URL = compileWorkerURL()) {
    this.size = Math.max(1, Math.floor(size));
    for (let i = 0; i < this.size; i++) this.slots.push(this.spawn());
  }

  private spawn(): Slot {
    const worker = new Worker(this.url, { type: "module", name: "dco-compile" });
    const slot: Slot = { worker, batches: [], ready: false };
    worker.onmessage = (event: MessageEvent<CompileResponse>) => {
      const m = event.data;
      if ("ready" in m) {
        slot.ready = true;
        this.wakeReadyWaiters();
        return;
      }
      const batch = slot.batches[0]?.id === m.id ? slot.batches.shift() : undefined;
      if (batch !== undefined) {
        batch.jobs.forEach((job, i) => {
          const outcome = m.outcomes[i];
          if (outcome !== undefined && "result" in outcome) job.resolve(outcome.result);
          else job.reject(new Error(`compile worker: ${outcome?.error ?? "no answer"}`));
        });
      }
      this.dispatch();
    };
    worker.onerror = (event: ErrorEvent) => {
      event.preventDefault();
      const lost = slot.batches.splice(0);
      for (const batch of lost) {
        for (const job of batch.jobs) {
          job.reject(new Error(`compile worker died: ${event.message}`));
        }
      }
      worker.terminate();
      if (this.closed) return;
      const index = this.slots.indexOf(slot);
      if (index >= 0) this.slots[index] = this.spawn();
      this.dispatch();
    };
    return slot;
  }

  private wakeReadyWaiters(): void {
    if (!this.slots.every((s) => s.ready)) return;
    for (const wake of this.readyWaiters.splice(0)) wake();
  }

  /** Resolves once every Worker has loaded its module (the pool starts them at construction). */
  ready(): Promise<void> {
    if (this.slots.every((s) => s.ready)) return Promise.resolve();
    return new Promise((resolve) => this.readyWaiters.push(resolve));
  }

  /** Dispatches at the end of this turn, so the jobs queued in it share batches. */
  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    queueMicrotask(() => {
      this.scheduled = false;
      this.dispatch();
    });
  }

  private dispatch(): void {
    for (let round = 0; round < BATCHES_PER_WORKER; round++) {
      for (const slot of this.slots) {
        if (this.queue.length === 0) return;
        if (slot.batches.length > round) continue;
        const jobs = this.queue.splice(0, batchSize(this.queue.length, this.size));
        const batch: Batch = { id: this.nextId++, jobs };
        slot.batches.push(batch);
        const request: CompileRequest = { id: batch.id, jobs: jobs.map((j) => j.job) };
        slot.worker.postMessage(request);
      }
    }
  }

  compile: Compiler = (kind, config, target) => {
    if (this.closed) return Promise.reject(new Error("compile pool is closed"));
    return new Promise<CompileResult>((resolve, reject) => {
      this.queue.push({ job: { kind, config, target }, resolve, reject });
      this.schedule();
    });
  };

  close(): void {
    this.closed = true;
    for (const slot of this.slots) {
      slot.worker.terminate();
      for (const batch of slot.batches.splice(0)) {
        for (const job of batch.jobs) job.reject(new Error("compile pool closed"));
      }
    }
    for (const job of this.queue.splice(0)) job.reject(new Error("compile pool closed"));
    for (const wake of this.readyWaiters.splice(0)) wake();
  }

  [Symbol.dispose](): void {
    this.close();
  }
}

/**
 * When an initial sync compiles on the pool rather than inline, one config at a time
 * (`hack/cold_start.ts`; docs/operations.md#initial-sync-serial-or-on-the-pool). Sending a config
 * and its target to a Worker and the Workers' own compiles cost the process 1.5–1.9× the CPU of
 * compiling inline, so the pool can only be faster with more Workers than that ratio on idle
 * cores: with 2 it was slower at every fleet size measured (25 to 1,000 targets).
 */
export const SYNC_BREAK_EVEN = {
  /** Fewer configs than this compile inline (per-batch latency dominates below it). */
  configs: 50,
  /** A pool smaller than this compiles inline (the CPU ratio above). */
  workers: 3,
} as const;

/** How one initial-sync pass compiles: which compiler, and how many reconciles run at once. */
export interface SyncPlan {
  compile: Compiler;
  /**
   * Reconciles in flight: every config on the pool (so it can batch), one at a time inline (in
   * slices of {@link INLINE_SLICE_MS}).
   */
  lanes: number;
  mode: "serial" | "pool";
}

/** The plan for a pass over `configs` configs, given the pool (if any). */
export function syncPlan(
  pool: CompilePool | undefined,
  configs: number,
  breakEven: { configs: number; workers: number } = SYNC_BREAK_EVEN,
): SyncPlan {
  if (pool === undefined || configs < breakEven.configs || pool.size < breakEven.workers) {
    return { compile: slicedInline(), lanes: 1, mode: "serial" };
  }
  return { compile: pool.compile, lanes: Math.max(1, configs), mode: "pool" };
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
