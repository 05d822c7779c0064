/**
 * The conversion port, served by listener Workers (docs/design/webhook.md#the-listener-workers):
 * `count` Workers (src/webhook/convert/listener_worker.ts), each with its own socket bound to the
 * port with `SO_REUSEPORT`, so the kernel spreads connections over them and TLS, HTTP and
 * conversion use every CPU. The main thread answers the probes and runs the controllers; for the
 * port it keeps:
 *
 * - **the address**: bound once without `SO_REUSEPORT` first, which resolves port 0 and refuses a
 *   port another process holds, then released for the Workers;
 * - **the certificate**: one watch (src/net/certificate_watch.ts) reads and checks the pair and
 *   hands each good one to every Worker; its state gates readiness as before;
 * - **the plan sets**: the Workers take part in the swaps of the fanout (a version commits when
 *   every live Worker holds it) and read the committed version from a shared cell;
 * - **the pool**: reviews a Worker does not convert itself are converted in the conversion pool
 *   and the answer goes back to the Worker that read them;
 * - **the metrics**: each Worker's ledger is drained once a second and before every scrape;
 * - **the bounds**: the request governor's counts and the connection cap live in cells every
 *   Worker updates, so the bounds hold for the port as a whole;
 * - **failures**: a Worker that dies is replaced on the same port — its connections closed with it,
 *   and what it held of the bounds is given back. One that does not answer a ping within the
 *   request budget plus {@link WATCHDOG_GRACE_MS} is running JavaScript that never yields, and
 *   `Worker.terminate()` does not stop such a Worker under Deno 2.9 (measured: it keeps running and
 *   keeps its socket in the port's group, where new connections would wait forever). So it is left
 *   out of every swap and counted, the port reports a problem (readiness), and `onHung` asks the
 *   role to restart the replica.
 */
import { createServer } from "node:net";
import { formatAddr, parseBindAddress } from "../../net/bind_address.ts";
import {
  CertificateWatch,
  type KeyPairPem,
  type ReloadResult,
  type TlsLogger,
  type TlsState,
} from "../../net/certificate_watch.ts";
import { DEFAULT_HTTP_LIMITS, type HttpLimits, listenOn } from "../../net/socket_limits.ts";
import type { ServerHandle } from "../../net/socket_limits.ts";
import { giveBack } from "../../lib/shared_counts.ts";
import type { WebhookLogger } from "../_log.ts";
import type { WebhookMetrics } from "../metrics.ts";
import type { ConvertContext } from "./context.ts";
import type { GovernorBounds } from "./governor.ts";
import {
  type FromListener,
  type ListenerCells,
  type PooledAnswer,
  type ToListener,
} from "./listener_protocol.ts";
import type { ReviewOffload } from "./offload.ts";
import type { PlanSetFanout, PlanSetGroup, PlanSetHolder } from "./plan_fanout.ts";
import type { PlanSetDelta } from "./plan_sets.ts";
import { WATCHDOG_GRACE_MS, type WorkerLoss } from "./pool.ts";
import {
  contextSettings,
  replaceSoon,
  superviseWorker,
  transferableAnswer,
} from "./worker_protocol.ts";
import { siblingWorkerURL } from "../../lib/worker_url.ts";

/** How long a scrape waits for the Workers' metrics before it renders what it has. */
export const METRICS_DRAIN_TIMEOUT_MS = 1_000;
/** How often each Worker is pinged (the watchdog's clock). */
const PING_EVERY_MS = 1_000;

/** The listener Worker's script (src/lib/worker_url.ts). */
export function listenerWorkerURL(): URL {
  return siblingWorkerURL("listener_worker", import.meta.url);
}

export interface ConversionListenersOptions {
  /** Listener Workers; at least 1. */
  count: number;
  /** Go-style address of the port, e.g. `:9443` (port 0: any free port). */
  address: string;
  /** Directory with `tls.crt` and `tls.key`, re-read every `reloadIntervalMs`. */
  certDir: string;
  /** `--cert-reload-interval` in ms; 0 disables polling (tests call `reloadNow`). */
  reloadIntervalMs: number;
  /** After every certificate load attempt (readiness, metrics, the served serial). */
  onTlsState?: (state: TlsState, result: ReloadResult) => void;
  /** Where the counts live; made for `count` Workers, and its `version` the fanout's. */
  cells: ListenerCells;
  fanout: PlanSetFanout;
  /** The main thread's conversion context: its settings cross to every Worker. */
  context: ConvertContext;
  bounds: GovernorBounds & { maxConnections: number };
  limits?: Partial<HttpLimits>;
  /** `--conversion-inline-max-bytes`, resolved. */
  inlineMaxBytes: number;
  /** Where the reviews the Workers hand over are converted (the conversion pool). */
  pool: ReviewOffload;
  /** Where the Workers' metrics are merged; omit for none. */
  metrics?: WebhookMetrics;
  /** Sample ratio of review spans; omit for no tracing. */
  traceSampleRatio?: number;
  /** A Worker was replaced. */
  onWorkerLost?: (reason: WorkerLoss) => void;
  /** Whether the port is served: "" while every Worker listens or is being replaced, else why not. */
  onProblem?: (problem: string) => void;
  /**
   * A Worker stopped answering and cannot be stopped (see the module doc): the replica must
   * restart to take its share of the port back.
   */
  onHung?: (message: string) => void;
  /** Default: the request budget plus {@link WATCHDOG_GRACE_MS}. */
  watchdogMs?: number;
  logger?: WebhookLogger & TlsLogger;
  url?: URL;
}

/** The listener Workers' state, read at scrape time. */
export interface ListenerStats {
  listeners: number;
  listening: number;
}

class Listener implements PlanSetHolder {
  acked = -1;
  dead = false;
  listening = false;
  lastPong = performance.now();
  readonly spawnedAt = performance.now();
  /** Resolves when the Worker says it listens (or fails to). */
  readonly ready: Promise<void>;
  settle!: (error?: Error) => void;
  closed: (() => void) | undefined;
  drained: { n: number; done: () => void } | undefined;

  constructor(readonly index: number, readonly worker: Worker) {
    this.ready = new Promise((resolve, reject) => {
      this.settle = (error) => error === undefined ? resolve() : reject(error);
    });
    this.ready.catch(() => {});
  }

  get live(): boolean {
    return !this.dead;
  }

  post(m: ToListener, transfer: Transferable[] = []): void {
    if (!this.dead) this.worker.postMessage(m, transfer);
  }

  install(delta: PlanSetDelta): void {
    this.post({ t: "install", delta });
  }
}

export class ConversionListeners implements ServerHandle, PlanSetGroup {
  readonly #o: ConversionListenersOptions;
  readonly #url: URL;
  readonly #slots: Listener[] = [];
  readonly #watch: CertificateWatch;
  readonly #limits: HttpLimits;
  readonly #leave: () => void;
  #addr: Deno.NetAddr | undefined;
  #pair: KeyPairPem | undefined;
  #drains = 0;
  #closing = false;
  #ticker: ReturnType<typeof setInterval> | undefined;
  #problem: string | undefined;
  /** Why the port is no longer whole: a Worker that hung (never cleared). */
  #hung = "";
  /** Whether start() completed: a Worker that cannot listen after it is replaced, not fatal. */
  #started = false;

  private constructor(opts: ConversionListenersOptions) {
    this.#o = opts;
    this.#url = opts.url ?? listenerWorkerURL();
    this.#limits = {
      ...DEFAULT_HTTP_LIMITS,
      ...opts.limits,
      maxConnections: opts.bounds.maxConnections,
    };
    this.#watch = new CertificateWatch({
      certDir: opts.certDir,
      reloadIntervalMs: opts.reloadIntervalMs,
      install: (pair) => {
        this.#pair = pair;
        for (const s of this.#slots) s.post({ t: "pair", pair });
      },
      address: () => this.#addr === undefined ? "" : formatAddr(this.#addr),
      logger: opts.logger,
      onState: opts.onTlsState,
    });
    this.#leave = opts.fanout.join(this);
  }

  /**
   * Binds the port in every Worker and resolves once all of them listen, hold the plan sets and
   * the certificate (when one is loadable). Throws on a bind error (address in use, permission).
   */
  static async start(opts: ConversionListenersOptions): Promise<ConversionListeners> {
    const l = new ConversionListeners(opts);
    try {
      l.#addr = await l.#claimPort();
      await l.#watch.start();
      for (let i = 0; i < Math.max(1, Math.floor(opts.count)); i++) l.#slots.push(l.#spawn(i));
      await Promise.all(l.#slots.map((s) => s.ready));
    } catch (e) {
      l.forceClose();
      throw e;
    }
    l.#started = true;
    l.#ticker = setInterval(() => l.#tick(), PING_EVERY_MS);
    l.#report();
    return l;
  }

  get addr(): Deno.NetAddr {
    if (this.#addr === undefined) throw new Error("the listeners are not listening");
    return this.#addr;
  }

  /** The port's certificate: its state, reload stats, and a poll on demand. */
  get certificates(): CertificateWatch {
    return this.#watch;
  }

  stats(): ListenerStats {
    let listeners = 0;
    let listening = 0;
    for (const s of this.#slots) {
      if (s.dead) continue;
      listeners++;
      if (s.listening) listening++;
    }
    return { listeners, listening };
  }

  /** {@link PlanSetGroup}: every Worker, started or starting. */
  holders(): Iterable<PlanSetHolder> {
    return this.#slots;
  }

  /** {@link PlanSetGroup}: conversions read the shared cell, so older versions can go now. */
  committed(version: number): void {
    for (const s of this.#slots) s.post({ t: "retire", below: version });
  }

  /**
   * Merges every listening Worker's metrics into the metric set (call it before rendering a
   * scrape). A Worker that does not answer within {@link METRICS_DRAIN_TIMEOUT_MS} is left for
   * the next scrape.
   */
  async flushMetrics(): Promise<void> {
    const n = ++this.#drains;
    const waits: Promise<void>[] = [];
    for (const s of this.#slots) {
      if (s.dead || !s.listening) continue;
      waits.push(
        new Promise<void>((done) => {
          s.drained = { n, done };
          s.post({ t: "drain", n });
        }),
      );
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<void>((r) => timer = setTimeout(r, METRICS_DRAIN_TIMEOUT_MS));
    await Promise.race([Promise.all(waits), late]);
    clearTimeout(timer);
  }

  // --- Workers ------------------------------------------------------------------------------------

  /** Binds the port alone once (resolving port 0, refusing one in use), then lets it go. */
  async #claimPort(): Promise<Deno.NetAddr> {
    const bind = parseBindAddress(this.#o.address);
    const probe = createServer();
    const addr = await listenOn(probe, bind);
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    return { ...addr, hostname: bind.hostname === "" ? addr.hostname : bind.hostname };
  }

  #spawn(index: number): Listener {
    const o = this.#o;
    const worker = new Worker(this.#url, { type: "module", name: `dco-listener-${index}` });
    const slot = new Listener(index, worker);
    superviseWorker<FromListener>(
      worker,
      "listener",
      (m) => this.#onMessage(slot, m),
      (message) => this.#lose(slot, "error", message),
    );
    slot.post({
      t: "init",
      index,
      cells: o.cells.buffer,
      settings: contextSettings(o.context),
      bounds: {
        maxRequestsInFlight: o.bounds.maxRequestsInFlight,
        maxRequestBytesInFlight: o.bounds.maxRequestBytesInFlight,
      },
      limits: this.#limits,
      inlineMaxBytes: o.inlineMaxBytes,
      traceSampleRatio: o.traceSampleRatio,
    });
    const { committed, installing } = o.fanout.planSets.startingState();
    slot.post({
      t: "reset",
      sets: installing === undefined ? [committed] : [committed, installing],
    });
    if (this.#pair !== undefined) slot.post({ t: "pair", pair: this.#pair });
    const addr = this.#addr!;
    slot.post({ t: "listen", hostname: addr.hostname, port: addr.port });
    return slot;
  }

  #onMessage(slot: Listener, m: FromListener): void {
    if (slot.dead) return;
    switch (m.t) {
      case "ack":
        slot.acked = Math.max(slot.acked, m.version);
        this.#o.fanout.acknowledged();
        return;
      case "listening":
        slot.listening = true;
        slot.lastPong = performance.now();
        slot.settle();
        this.#report();
        return;
      case "listen-failed":
        slot.settle(new Error(m.message));
        if (this.#started) this.#lose(slot, "error", `listener worker cannot listen: ${m.message}`);
        return;
      case "offload":
        void this.#o.pool.convert(m.target, m.body, m.startedAt, m.traceparent).then((a) => {
          const { body, headRoom } = transferableAnswer(a.body, a.headRoom);
          const answer: PooledAnswer = {
            status: a.status,
            contentType: a.contentType,
            body,
            headRoom,
            result: a.result,
            message: a.message,
          };
          slot.post({ t: "answer", id: m.id, answer }, [body.buffer]);
        });
        return;
      case "metrics":
        this.#o.metrics?.merge(m.delta);
        if (slot.drained !== undefined && slot.drained.n === m.n) {
          slot.drained.done();
          slot.drained = undefined;
        }
        return;
      case "pong":
        slot.lastPong = performance.now();
        return;
      case "closed":
        slot.closed?.();
        return;
    }
  }

  /** Terminates a Worker, gives back what it held, and replaces it (unless closing). */
  #lose(slot: Listener, reason: WorkerLoss, message: string): void {
    if (slot.dead) return;
    this.#terminate(slot);
    slot.settle(new Error(message));
    this.#o.logger?.error("listener worker lost; replacing it", { reason, error: message });
    this.#o.onWorkerLost?.(reason);
    this.#o.fanout.acknowledged(); // it no longer holds a swap up
    this.#report();
    if (this.#closing) return;
    const replace = () => {
      if (this.#closing) return;
      const next = this.#spawn(slot.index);
      this.#slots[this.#slots.indexOf(slot)] = next;
      next.ready.then(() => this.#report(), () => {});
    };
    replaceSoon(slot.spawnedAt, replace);
  }

  #terminate(slot: Listener): void {
    if (slot.dead) return;
    slot.dead = true;
    slot.listening = false;
    slot.worker.terminate();
    // Its sockets closed with it: nothing it held is in flight any more.
    giveBack(this.#o.cells.governor(slot.index).total, this.#o.cells.governor(slot.index).own);
    const c = this.#o.cells.connections(slot.index);
    giveBack(c.total, c.own);
    slot.drained?.done();
    slot.closed?.();
  }

  /** Pings every listening Worker; replaces one that has not answered within the watchdog. */
  #tick(): void {
    const limit = this.#o.watchdogMs ??
      this.#o.context.requestTimeoutMs + WATCHDOG_GRACE_MS;
    const now = performance.now();
    for (const s of this.#slots) {
      if (s.dead || !s.listening) continue;
      if (now - s.lastPong > limit) {
        this.#hang(s, `listener worker ${s.index} did not answer for more than ${limit / 1000}s`);
        continue;
      }
      s.post({ t: "ping", n: 0 });
    }
  }

  /**
   * A Worker that hung: asked to stop (in case it can be), left out of the swaps, not replaced
   * (its socket stays in the port), and reported so that the replica restarts.
   */
  #hang(slot: Listener, message: string): void {
    if (slot.dead) return;
    slot.dead = true;
    slot.listening = false;
    slot.worker.terminate();
    slot.settle(new Error(message));
    slot.drained?.done();
    slot.closed?.();
    this.#hung ||= `${message}; a Worker running JavaScript cannot be stopped, so its share of ` +
      `the port is lost until the replica restarts`;
    this.#o.logger?.error("listener worker hung; the replica must restart", { error: message });
    this.#o.onWorkerLost?.("watchdog");
    this.#o.fanout.acknowledged(); // it no longer holds a swap up
    this.#report();
    this.#o.onHung?.(message);
  }

  /** Tells `onProblem` whether the port is served, when that changed. */
  #report(): void {
    const { listening } = this.stats();
    const problem = this.#closing
      ? ""
      : this.#hung !== ""
      ? this.#hung
      : listening > 0
      ? ""
      : "no conversion listener Worker is listening; replacing them";
    if (problem === this.#problem) return;
    this.#problem = problem;
    this.#o.onProblem?.(problem);
  }

  // --- stopping -----------------------------------------------------------------------------------

  /** Graceful: every Worker stops accepting, closes idle connections and finishes its requests. */
  async shutdown(): Promise<void> {
    this.#closing = true;
    clearInterval(this.#ticker);
    this.#leave();
    await this.#watch.stop();
    await Promise.all(this.#slots.map((s) =>
      s.dead ? undefined : new Promise<void>((resolve) => {
        s.closed = resolve;
        s.post({ t: "shutdown" });
      })
    ));
    for (const s of this.#slots) this.#terminate(s);
  }

  /** Drops every connection at once. */
  forceClose(): void {
    this.#closing = true;
    clearInterval(this.#ticker);
    this.#leave();
    void this.#watch.stop();
    for (const s of this.#slots) this.#terminate(s);
  }
}
