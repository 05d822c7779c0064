/**
 * Metrics plumbing shared by every role: a prom-client `Registry` factory with process/runtime
 * collectors that are correct under Deno, and the `/metrics` response.
 *
 * Why not prom-client's `collectDefaultMetrics`: its process metrics read `/proc/self/*`, and
 * Deno 2 demands `--allow-all` for any `/proc` path, so `process_resident_memory_bytes` and
 * friends silently report 0; its event-loop-lag figures are far too small under Deno
 * (measured). The collectors here need no permission at all:
 *
 * | family                              | source                                             |
 * | ----------------------------------- | -------------------------------------------------- |
 * | `process_resident_memory_bytes`     | `Deno.memoryUsage().rss`                           |
 * | `process_cpu_seconds_total`         | `process.cpuUsage()` (user + system; no permission) |
 * | `process_start_time_seconds`        | `performance.timeOrigin`                           |
 * | `deno_v8_heap_used_bytes`           | `Deno.memoryUsage().heapUsed`                      |
 * | `deno_v8_heap_total_bytes`          | `Deno.memoryUsage().heapTotal`                     |
 * | `deno_v8_external_bytes`            | `Deno.memoryUsage().external`                      |
 * | `deno_event_loop_lag_seconds`       | timer-drift sampler: max lag over a short window    |
 *
 * `process_open_fds`/`process_max_fds` are left out: they exist only in `/proc`, which our
 * permissions do not let us read.
 *
 * Every family is registered once per registry; a role exposes ONE registry on `/metrics` (or
 * several merged with {@link metricsResponse}, which refuses duplicates: a duplicate family would
 * fail the whole scrape, so it must fail loudly in tests instead).
 */
import { Counter, Gauge, Registry } from "prom-client";
import process from "node:process";

/** Options of the runtime collectors. */
export interface RuntimeMetricsOptions {
  /** Event-loop sampler period; default 500 ms. */
  lagSampleIntervalMs?: number;
  /** `deno_event_loop_lag_seconds` reports the largest drift seen over this window; default 10 s. */
  lagWindowMs?: number;
}

/** Handle of the runtime collectors: stops the event-loop sampler (its timer). */
export interface RuntimeMetrics extends Disposable {
  stop(): void;
}

/** A registry plus its runtime collectors. */
export interface MetricsRegistry extends Disposable {
  readonly registry: Registry;
  /** Stops the event-loop sampler; the registry stays usable. */
  stop(): void;
}

/**
 * Registers the Deno-safe process/runtime families into `registry`. Throws if any of them is
 * already registered there (register once per registry).
 */
export function registerRuntimeMetrics(
  registry: Registry,
  opts: RuntimeMetricsOptions = {},
): RuntimeMetrics {
  const registers = [registry];
  new Gauge({
    name: "process_resident_memory_bytes",
    help: "Resident memory size in bytes.",
    registers,
    collect() {
      this.set(Deno.memoryUsage().rss);
    },
  });
  let lastCpu = 0;
  new Counter({
    name: "process_cpu_seconds_total",
    help: "Total user and system CPU time spent in seconds.",
    registers,
    collect() {
      const u = process.cpuUsage();
      const total = (u.user + u.system) / 1e6;
      if (total > lastCpu) this.inc(total - lastCpu);
      lastCpu = Math.max(lastCpu, total);
    },
  });
  const start = new Gauge({
    name: "process_start_time_seconds",
    help: "Start time of the process since unix epoch in seconds.",
    registers,
  });
  start.set(Math.round(performance.timeOrigin) / 1000);
  const heap = (
    name: string,
    help: string,
    pick: (m: Deno.MemoryUsage) => number,
  ) =>
    new Gauge({
      name,
      help,
      registers,
      collect() {
        this.set(pick(Deno.memoryUsage()));
      },
    });
  heap("deno_v8_heap_used_bytes", "V8 heap in use, in bytes.", (m) => m.heapUsed);
  heap("deno_v8_heap_total_bytes", "V8 heap allocated, in bytes.", (m) => m.heapTotal);
  heap(
    "deno_v8_external_bytes",
    "Memory of V8-external objects (buffers), in bytes.",
    (m) => m.external,
  );

  const sampler = new LagSampler(opts.lagSampleIntervalMs ?? 500, opts.lagWindowMs ?? 10_000);
  new Gauge({
    name: "deno_event_loop_lag_seconds",
    help: "Largest event-loop delay (timer drift) observed over the last sampling window, seconds.",
    registers,
    collect() {
      this.set(sampler.maxLagMs() / 1000);
    },
  });
  sampler.start();
  const stop = () => sampler.stop();
  return { stop, [Symbol.dispose]: stop };
}

/** Creates a registry with the runtime collectors registered (unless `runtime: false`). */
export function createMetricsRegistry(
  opts: RuntimeMetricsOptions & { runtime?: boolean } = {},
): MetricsRegistry {
  const registry = new Registry();
  const rt = opts.runtime === false ? undefined : registerRuntimeMetrics(registry, opts);
  const stop = () => rt?.stop();
  return { registry, stop, [Symbol.dispose]: stop };
}

/**
 * The `/metrics` response for one registry, or several merged per scrape (a family present in
 * two of them answers 500 with the reason, never a half-valid exposition).
 */
export async function metricsResponse(
  registries: Registry | readonly Registry[],
): Promise<Response> {
  try {
    const reg = registries instanceof Registry
      ? registries
      : registries.length === 1
      ? registries[0]
      : Registry.merge([...registries]);
    const body = await reg.metrics();
    return new Response(body, { status: 200, headers: { "content-type": reg.contentType } });
  } catch (e) {
    return new Response(`metrics collection failed: ${(e as Error).message}\n`, {
      status: 500,
      headers: { "content-type": "text/plain; charset=utf-8" },
    });
  }
}

/**
 * Measures event-loop delay as timer drift: a timer due every `intervalMs` records how late it
 * fired. The timer is unref'd (it never keeps the process alive) and stoppable.
 */
class LagSampler {
  #timer: ReturnType<typeof setTimeout> | undefined;
  #expected = 0;
  /** Ring of [at, lagMs]. */
  #samples: Array<[number, number]> = [];
  #next = 0;
  #running = false;

  constructor(private readonly intervalMs: number, private readonly windowMs: number) {
    const size = Math.max(1, Math.ceil(windowMs / intervalMs) + 1);
    this.#samples = Array.from({ length: size }, () => [0, 0] as [number, number]);
  }

  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#arm();
  }

  stop(): void {
    this.#running = false;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #arm(): void {
    this.#expected = performance.now() + this.intervalMs;
    const timer = setTimeout(() => {
      const now = performance.now();
      const slot = this.#samples[this.#next];
      slot[0] = now;
      slot[1] = Math.max(0, now - this.#expected);
      this.#next = (this.#next + 1) % this.#samples.length;
      if (this.#running) this.#arm();
    }, this.intervalMs);
    Deno.unrefTimer(timer);
    this.#timer = timer;
  }

  maxLagMs(): number {
    const since = performance.now() - this.windowMs;
    let max = 0;
    for (const [at, lag] of this.#samples) if (at >= since && at > 0 && lag > max) max = lag;
    return max;
  }
}
