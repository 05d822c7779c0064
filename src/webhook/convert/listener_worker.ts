/**
 * A listener Worker (docs/design/webhook.md#the-listener-workers): one of the threads that serve
 * the conversion port, each with its own `SO_REUSEPORT` socket on it, so the kernel spreads the
 * connections over them and TLS, HTTP and conversion run on every CPU with nothing handed between
 * threads. A review is converted here when the inline policy allows it (a small body, plans of
 * bounded cost); any other is handed to the main thread, whose conversion pool converts it, and
 * its answer comes back here to be written.
 *
 * What this thread shares with the others: the request governor's and the connection cap's
 * counts, and the committed plan-set version, all in the cells of `ListenerCells`. A conversion
 * reads the version there once, when it starts, and converts against that version of its own
 * plan replica, so a swap is seen by every listener at the same instant. Metrics are summed in a
 * ledger and drained by the main thread.
 */
/// <reference lib="deno.worker" />
import { formatBindAddress } from "../../net/bind_address.ts";
import type { KeyPairPem } from "../../net/certificate_watch.ts";
import { TlsServer } from "../../net/tls_server.ts";
import { processTracer, RequestSampler } from "../../obs/tracing.ts";
import { SILENT } from "../_log.ts";
import type { RegistryEntry } from "../registry.ts";
import type { ConvertAnswer } from "./answer.ts";
import { type ConvertContext, convertContext, type PlanLookup } from "./context.ts";
import { RequestGovernor } from "./governor.ts";
import { InlinePolicy } from "./inline_policy.ts";
import { createConvertExchange } from "./listener.ts";
import { type FromListener, ListenerCells, type ToListener } from "./listener_protocol.ts";
import { MetricsLedger } from "./metrics_ledger.ts";
import type { ReviewOffload } from "./offload.ts";
import { PlanReplica, takePlanMessage } from "./plan_replica.ts";
import { transferable } from "./worker_protocol.ts";

/** How often recorded metrics go to the main thread unasked. */
const METRICS_EVERY_MS = 1_000;

type EntryMap = ReadonlyMap<string, RegistryEntry>;
const NO_ENTRIES: EntryMap = new Map();

const replica = new PlanReplica();
const ledger = new MetricsLedger();
const waiting = new Map<number, (a: ConvertAnswer) => void>();
let nextId = 1;
let pair: KeyPairPem | undefined;
let server: TlsServer | undefined;
let started: Promise<void> | undefined;
let cells: ListenerCells | undefined;
let init: Extract<ToListener, { t: "init" }> | undefined;

function post(m: FromListener, transfer: Transferable[] = []): void {
  self.postMessage(m, transfer);
}

/**
 * The plan set conversions read: the committed version in the shared cell. A conversion pins it
 * when the inline decision is taken and keeps it until its synchronous run ends, so the decision
 * and the conversion read one version even if a commit lands in between.
 */
class CommittedPlans implements PlanLookup {
  #pinned: EntryMap | undefined;
  #version = -1;
  #entries: EntryMap = NO_ENTRIES;

  get(target: string): RegistryEntry | undefined {
    return (this.#pinned ?? this.#current()).get(target);
  }

  pin(): EntryMap {
    if (this.#pinned === undefined) {
      this.#pinned = this.#current();
      queueMicrotask(() => this.#pinned = undefined);
    }
    return this.#pinned;
  }

  #current(): EntryMap {
    const version = Atomics.load(cells!.version, 0);
    if (version !== this.#version) {
      // Committed only once every live holder acknowledged it, so this Worker holds it; were it
      // missing (a bug), nothing is cached and the next conversion looks again.
      const entries = replica.lookup(version);
      if (entries === undefined) return NO_ENTRIES;
      this.#entries = entries;
      this.#version = version;
    }
    return this.#entries;
  }
}

const plans = new CommittedPlans();

/** The pool, through the main thread: the body moves there and the answer back. */
const pool: ReviewOffload = {
  convert(target, body, startedAt, traceparent) {
    const id = nextId++;
    const moved = transferable(body);
    return new Promise((resolve) => {
      waiting.set(id, resolve);
      post({ t: "offload", id, target, body: moved, startedAt, traceparent }, [moved.buffer]);
    });
  },
};

async function listen(hostname: string, port: number): Promise<void> {
  const i = init!;
  const c = cells!;
  const context: ConvertContext = {
    ...convertContext({
      registry: plans,
      metrics: ledger,
      governor: new RequestGovernor(i.bounds, undefined, c.governor(i.index)),
      sampler: i.traceSampleRatio === undefined
        ? undefined
        : new RequestSampler(processTracer(), i.traceSampleRatio),
    }),
    ...i.settings,
  } as ConvertContext;
  const policy = new InlinePolicy(i.inlineMaxBytes);
  server = await TlsServer.start({
    address: formatBindAddress({ hostname, port }),
    loadPair: () =>
      pair === undefined ? Promise.reject(new Error("no pair yet")) : Promise.resolve(pair),
    reloadIntervalMs: 0,
    exchange: createConvertExchange(context, {
      pool,
      inline: (target, bytes) => policy.inline(plans.pin().get(target), bytes),
    }),
    limits: i.limits,
    share: { cells: c.connections(i.index) },
    onConnectionRefused: () => ledger.countRejected("connections"),
    logger: SILENT,
  });
}

function sendMetrics(n: number): void {
  if (n === 0 && !ledger.recorded) return;
  post({ t: "metrics", n, delta: ledger.drain() });
}

setInterval(() => sendMetrics(0), METRICS_EVERY_MS);

self.onmessage = (event: MessageEvent<ToListener>) => {
  const m = event.data;
  if (takePlanMessage(replica, m, (version) => post({ t: "ack", version }))) return;
  switch (m.t) {
    case "init":
      init = m;
      cells = new ListenerCells(0, m.cells);
      return;
    case "pair":
      pair = m.pair;
      void server?.reloadNow();
      return;
    case "listen":
      started = listen(m.hostname, m.port).then(
        () => post({ t: "listening" }),
        (e: unknown) =>
          post({ t: "listen-failed", message: e instanceof Error ? e.message : String(e) }),
      );
      return;
    case "answer":
      waiting.get(m.id)?.({ ...m.answer, close: false });
      waiting.delete(m.id);
      return;
    case "drain":
      sendMetrics(m.n);
      return;
    case "ping":
      post({ t: "pong", n: m.n });
      return;
    case "shutdown":
      void (async () => {
        await started?.catch(() => {});
        await server?.shutdown();
        sendMetrics(0);
        post({ t: "closed" });
      })();
      return;
  }
};
