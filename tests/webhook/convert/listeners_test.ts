/**
 * The conversion port served by listener Workers (src/webhook/convert/listeners.ts), over real
 * TLS sockets: connections spread over the Workers, answers as the in-process table gives them,
 * reviews the policy keeps off the listeners converted in the pool, swaps seen by every Worker at
 * once, the bounds and the metrics of the port as a whole, certificate reloads reaching every
 * Worker, Workers that die or hang replaced with what they held given back, graceful shutdown,
 * and a port held by another process refused.
 */
import assert from "node:assert/strict";
import { createServer } from "node:net";
import tls from "node:tls";
import { Registry } from "prom-client";
import type { CompiledTarget } from "../../../src/webhook/compiled.ts";
import { syntheticCompiled, syntheticReview } from "../../../src/webhook/convert/_synthetic.ts";
import {
  ConversionListeners,
  ConversionPool,
  convertContext,
  convertReviewBytes,
  ListenerCells,
  PlanSetFanout,
  PlanSets,
  type WorkerLoss,
} from "../../../src/webhook/convert/mod.ts";
import { WebhookMetrics } from "../../../src/webhook/metrics.ts";
import { PlanRegistry } from "../../../src/webhook/registry.ts";
import { waitFor } from "../../support/wait.ts";
import { RawConnection } from "../../../hack/_raw_http.ts";
import {
  sampleValue,
  SYNTHETIC_TARGET,
  type TestCerts,
  testCerts,
  writePair,
} from "../_helpers.ts";
import { SLOW_TARGET, slowCompiled, slowReview } from "./_slow_target.ts";
import { assertSwapsAtomic, type SwapObservation } from "./_swaps.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const encode = (v: unknown): Uint8Array<ArrayBuffer> => encoder.encode(JSON.stringify(v));
const T = { sanitizeResources: false, sanitizeOps: false };

interface Fixture extends AsyncDisposable {
  registry: PlanRegistry;
  sets: PlanSets;
  cells: ListenerCells;
  pool: ConversionPool;
  listeners: ConversionListeners;
  metrics: WebhookMetrics;
  prom: Registry;
  certs: TestCerts;
  dir: string;
  lost: WorkerLoss[];
  port: number;
  /** One request on a connection of its own; the status and the body as text. */
  ask(target: string, body: Uint8Array<ArrayBuffer>): Promise<{ status: number; text: string }>;
}

interface FixtureOptions {
  count?: number;
  onHung?: (message: string) => void;
  onProblem?: (problem: string) => void;
  inlineMaxBytes?: number;
  maxRequestsInFlight?: number;
  url?: URL;
  watchdogMs?: number;
  address?: string;
}

async function fixture(o: FixtureOptions = {}): Promise<Fixture> {
  const count = o.count ?? 2;
  const certs = await testCerts();
  const dir = await Deno.makeTempDir({ prefix: "dco-listeners-" });
  await writePair(dir, certs.first);
  const registry = new PlanRegistry();
  const sets = new PlanSets();
  sets.follow(registry);
  const cells = new ListenerCells(count);
  const fanout = new PlanSetFanout(sets, cells.version);
  registry.install(syntheticCompiled());
  registry.install(slowCompiled());
  await fanout.settled();
  const prom = new Registry();
  const metrics = new WebhookMetrics(prom);
  metrics.observeInFlight(() => cells.inFlight);
  const context = convertContext({ registry: sets, metrics });
  const pool = new ConversionPool({ size: 1, planSets: sets, fanout, context, metrics });
  const lost: WorkerLoss[] = [];
  const listeners = await ConversionListeners.start({
    count,
    address: o.address ?? "127.0.0.1:0",
    certDir: dir,
    reloadIntervalMs: 0,
    cells,
    fanout,
    context,
    bounds: {
      maxRequestsInFlight: o.maxRequestsInFlight ?? 64,
      maxRequestBytesInFlight: 64 << 20,
      maxConnections: 0,
    },
    inlineMaxBytes: o.inlineMaxBytes ?? 256 * 1024,
    pool,
    metrics,
    onWorkerLost: (r) => lost.push(r),
    onHung: o.onHung,
    onProblem: o.onProblem,
    watchdogMs: o.watchdogMs,
    url: o.url,
  });
  const port = listeners.addr.port;
  const ask = async (target: string, body: Uint8Array<ArrayBuffer>) => {
    const client = Deno.createHttpClient({ caCerts: [certs.ca] });
    try {
      const res = await fetch(`https://127.0.0.1:${port}/convert/${target}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
        client,
      });
      return { status: res.status, text: await res.text() };
    } finally {
      client.close();
    }
  };
  return {
    registry,
    sets,
    cells,
    pool,
    listeners,
    metrics,
    prom,
    certs,
    dir,
    lost,
    port,
    ask,
    async [Symbol.asyncDispose]() {
      await listeners.shutdown();
      pool.close();
      fanout.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

/** Opens `n` TLS connections (handshakes done); close them with the returned function. */
async function openConnections(f: Fixture, n: number): Promise<() => void> {
  const conns = await Promise.all(Array.from({ length: n }, async () => {
    const c = await Deno.connectTls({ hostname: "127.0.0.1", port: f.port, caCerts: [f.certs.ca] });
    await c.handshake();
    return c;
  }));
  return () => conns.forEach((c) => c.close());
}

/** How many Workers hold at least one open connection. */
function workersHoldingConnections(f: Fixture, count: number): number {
  let n = 0;
  for (let i = 0; i < count; i++) if (Atomics.load(f.cells.connections(i).own, 0) > 0) n++;
  return n;
}

/** Sends a request's head and part of its body: it stays in flight until the connection closes. */
async function holdRequest(f: Fixture, declared: number): Promise<Deno.TlsConn> {
  const conn = await Deno.connectTls({
    hostname: "127.0.0.1",
    port: f.port,
    caCerts: [f.certs.ca],
  });
  const head = `POST /convert/${SYNTHETIC_TARGET} HTTP/1.1\r\nHost: 127.0.0.1\r\n` +
    `Content-Type: application/json\r\nContent-Length: ${declared}\r\n\r\n{"apiVersion":`;
  await conn.write(encoder.encode(head));
  return conn;
}

const success = (text: string) => /"status":"Success"/.test(text);

Deno.test({
  ...T,
  name:
    "every listener Worker serves the port: connections spread, answers as the table gives them",
  fn: async () => {
    await using f = await fixture({ count: 2 });
    const close = await openConnections(f, 16);
    try {
      await waitFor("16 connections counted", () => f.cells.connectionsOpen === 16);
      assert.equal(workersHoldingConnections(f, 2), 2, "the kernel spread them over both Workers");
    } finally {
      close();
    }
    await waitFor("the connections closed", () => f.cells.connectionsOpen === 0);
    const bytes = encode(syntheticReview(10, { from: ["v1", "v1alpha1"] }));
    const inProcess = convertReviewBytes(
      convertContext({ registry: f.sets }),
      SYNTHETIC_TARGET,
      bytes.slice(),
    );
    const served = await f.ask(SYNTHETIC_TARGET, bytes);
    assert.equal(served.status, 200);
    assert.equal(served.text, decoder.decode(inProcess.body));
    assert.equal(f.pool.started, false, "a small review of bounded cost never reaches the pool");
    assert.deepEqual(f.listeners.stats(), { listeners: 2, listening: 2 });
  },
});

Deno.test({
  ...T,
  name: "reviews over the inline bound or of unbounded cost are converted in the pool",
  fn: async () => {
    await using f = await fixture({ count: 2, inlineMaxBytes: 4096 });
    const small = await f.ask(SYNTHETIC_TARGET, encode(syntheticReview(1)));
    assert.ok(success(small.text));
    assert.equal(f.pool.started, false);
    const large = encode(syntheticReview(1, { annotationBytes: 8192 }));
    assert.ok(large.byteLength > 4096);
    const inPool = await f.ask(SYNTHETIC_TARGET, large);
    assert.equal(inPool.status, 200);
    assert.equal(
      inPool.text,
      decoder.decode(
        convertReviewBytes(convertContext({ registry: f.sets }), SYNTHETIC_TARGET, large).body,
      ),
    );
    assert.equal(f.pool.started, true, "the pool started with the first review handed over");
    const cel = await f.ask(SLOW_TARGET, encode(slowReview("cel", 2)));
    assert.equal(cel.status, 200);
    assert.ok(success(cel.text), cel.text);
    assert.equal(f.pool.stats().busy, 0);
  },
});

/** The synthetic plan under another target name (the path segment). */
function renamed(target: string): CompiledTarget {
  return { ...syntheticCompiled(), target };
}

/** A request message (head and body) for `/convert/<target>`. */
function message(target: string, body: Uint8Array): Uint8Array {
  const head = encoder.encode(
    `POST /convert/${target} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n` +
      `content-length: ${body.byteLength}\r\n\r\n`,
  );
  const m = new Uint8Array(head.byteLength + body.byteLength);
  m.set(head);
  m.set(body, head.byteLength);
  return m;
}

/**
 * Keep-alive connections to given Workers: `want[i]` is the Worker the i-th should land on. They
 * are opened one at a time (each counted before the next), so the Worker whose count rose is the
 * one the kernel gave it to; connections that landed elsewhere are closed at the end.
 */
async function connectionsOn(f: Fixture, count: number, want: number[]): Promise<RawConnection[]> {
  const url = new URL(`https://127.0.0.1:${f.port}/`);
  const owns = () =>
    Array.from({ length: count }, (_, i) => Atomics.load(f.cells.connections(i).own, 0));
  const found: (RawConnection | undefined)[] = want.map(() => undefined);
  const others: RawConnection[] = [];
  try {
    for (let attempt = 0; attempt < 64 && found.includes(undefined); attempt++) {
      const open = f.cells.connectionsOpen;
      const before = owns();
      const conn = await RawConnection.open(url, [f.certs.ca]);
      await waitFor("the connection is counted", () => f.cells.connectionsOpen === open + 1);
      const worker = owns().findIndex((n, i) => n > before[i]);
      const slot = want.findIndex((w, i) => w === worker && found[i] === undefined);
      if (slot >= 0) found[slot] = conn;
      else others.push(conn);
    }
  } finally {
    others.forEach((c) => c.close());
  }
  if (found.includes(undefined)) {
    throw new Error(`no connections on Workers ${want} in 64 attempts`);
  }
  return found as RawConnection[];
}

Deno.test({
  ...T,
  name:
    "swaps reach every listener at once: after any success of version N, no later request sees an older one",
  fn: async () => {
    // Worker 1 converts large reviews back to back, so it installs each version late; Worker 0
    // would serve a new target at once if it did not wait for the commit.
    await using f = await fixture({ count: 2, inlineMaxBytes: 64 << 20 });
    const [busy, ...probes] = await connectionsOn(f, 2, [1, 0, 1]);
    const large = message(
      SYNTHETIC_TARGET,
      encode(syntheticReview(1000, { annotationBytes: 2000 })),
    );
    let running = true;
    const keepBusy = (async () => {
      while (running) assert.equal((await busy.request(large)).status, 200);
    })();
    const seen: (SwapObservation & { worker: number })[] = [];
    const K = 6;
    try {
      for (let k = 1; k <= K; k++) {
        f.registry.install(renamed(`a-${k}`));
        const body = message(`a-${k}`, encode(syntheticReview(1)));
        // Ask on both until each has been answered for a while after the commit (at most 20 s).
        const deadline = performance.now() + 20_000;
        await Promise.all(probes.map(async (conn, worker) => {
          let servedSince: number | undefined;
          while (performance.now() < deadline) {
            const sentAt = performance.now();
            const ok = success(decoder.decode((await conn.request(body)).body));
            seen.push({ k, worker, sentAt, doneAt: performance.now(), ok });
            if (ok) servedSince ??= performance.now();
            if (servedSince !== undefined && performance.now() - servedSince > 50) break;
          }
        }));
      }
    } finally {
      running = false;
      await keepBusy;
      busy.close();
      probes.forEach((p) => p.close());
    }
    assertSwapsAtomic(seen, K);
  },
});

Deno.test({
  ...T,
  name: "the request bounds hold for the port as a whole, over every Worker",
  fn: async () => {
    await using f = await fixture({ count: 2, maxRequestsInFlight: 1 });
    const held = await holdRequest(f, 50_000);
    try {
      await waitFor("the held request is in flight", () => f.cells.inFlight.requests === 1);
      assert.equal(
        sampleValue(await f.prom.metrics(), "dco_webhook_conversion_requests_in_flight"),
        1,
      );
      const answers = await Promise.all(
        Array.from({ length: 8 }, () => f.ask(SYNTHETIC_TARGET, encode(syntheticReview(1)))),
      );
      for (const a of answers) {
        assert.equal(a.status, 429);
        assert.match(a.text, /too many conversion requests in flight \(limit 1\)/);
      }
      await f.listeners.flushMetrics();
      assert.equal(
        sampleValue(await f.prom.metrics(), "dco_webhook_conversion_requests_rejected_total", {
          reason: "in_flight",
        }),
        8,
      );
    } finally {
      held.close();
    }
    await waitFor("the held request is released", () => f.cells.inFlight.requests === 0);
    assert.ok(success((await f.ask(SYNTHETIC_TARGET, encode(syntheticReview(1)))).text));
  },
});

Deno.test({
  ...T,
  name: "every Worker's metrics reach the scrape",
  fn: async () => {
    await using f = await fixture({ count: 2 });
    const close = await openConnections(f, 8);
    close();
    const n = 20;
    for (let i = 0; i < n; i++) await f.ask(SYNTHETIC_TARGET, encode(syntheticReview(2)));
    await f.listeners.flushMetrics();
    const text = await f.prom.metrics();
    assert.equal(
      sampleValue(text, "dco_webhook_conversion_review_requests_total", {
        target: SYNTHETIC_TARGET,
        result: "success",
      }),
      n,
    );
    assert.equal(
      sampleValue(text, "dco_webhook_conversion_batch_size_count", { target: SYNTHETIC_TARGET }),
      n,
    );
    assert.equal(
      sampleValue(text, "dco_webhook_conversion_batch_size_sum", { target: SYNTHETIC_TARGET }),
      2 * n,
    );
    await f.listeners.flushMetrics();
    assert.equal(
      sampleValue(await f.prom.metrics(), "dco_webhook_conversion_review_requests_total", {
        target: SYNTHETIC_TARGET,
        result: "success",
      }),
      n,
      "a second drain adds nothing",
    );
  },
});

/** The serial of the certificate a new connection is served. */
function servedSerial(port: number, ca: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: "127.0.0.1", port, ca, servername: "localhost" }, () => {
      const serial = socket.getPeerCertificate().serialNumber;
      socket.destroy();
      resolve(serial);
    });
    socket.on("error", reject);
  });
}

Deno.test({
  ...T,
  name: "a certificate reload reaches every Worker",
  fn: async () => {
    await using f = await fixture({ count: 2 });
    const first = f.listeners.certificates.state.serial;
    for (let i = 0; i < 8; i++) assert.equal(await servedSerial(f.port, f.certs.ca), first);
    await writePair(f.dir, f.certs.second);
    assert.equal(await f.listeners.certificates.reloadNow(), "reloaded");
    const second = f.listeners.certificates.state.serial;
    assert.notEqual(second, first);
    await waitFor("every Worker serves the new pair", async () => {
      const serials = await Promise.all(
        Array.from({ length: 12 }, () => servedSerial(f.port, f.certs.ca)),
      );
      return serials.every((s) => s === second);
    }, { timeoutMs: 10_000 });
  },
});

Deno.test({
  ...T,
  name: "a Worker that dies is replaced on the port, and what it held is given back",
  fn: async () => {
    await using f = await fixture({
      count: 2,
      url: new URL("./_crashing_listener.ts", import.meta.url),
    });
    const held = await holdRequest(f, 50_000);
    await waitFor("the held request is in flight", () => f.cells.inFlight.requests === 1);
    f.registry.install(renamed("crash")); // every Worker throws on this install
    await waitFor("both Workers were lost", () => f.lost.length === 2);
    assert.deepEqual(f.lost, ["error", "error"]);
    assert.equal(f.cells.inFlight.requests, 0, "the lost Workers' holds were given back");
    held.close();
    await waitFor("replacements listen", () => f.listeners.stats().listening === 2, {
      timeoutMs: 10_000,
    });
    assert.ok(success((await f.ask("crash", encode(syntheticReview(1)))).text));
    assert.equal(f.cells.inFlight.requests, 0);
  },
});

Deno.test({
  ...T,
  name:
    "a Worker that stops answering is reported hung: the port says so and the replica must restart",
  fn: async () => {
    const hung: string[] = [];
    const problems: string[] = [];
    await using f = await fixture({
      count: 2,
      url: new URL("./_crashing_listener.ts", import.meta.url),
      watchdogMs: 1_500,
      onHung: (m) => hung.push(m),
      onProblem: (p) => problems.push(p),
    });
    assert.deepEqual(problems, [""]);
    f.registry.install(renamed("hang")); // every Worker loops on this install
    await waitFor("both Workers were found hung", () => hung.length === 2, { timeoutMs: 15_000 });
    assert.match(hung[0], /listener worker \d did not answer for more than 1.5s/);
    assert.deepEqual(f.lost, ["watchdog", "watchdog"]);
    assert.deepEqual(f.listeners.stats(), { listeners: 0, listening: 0 }, "none replaced");
    assert.match(
      problems.at(-1)!,
      /cannot be stopped, so its share of the port is lost until the replica restarts/,
    );
    // They no longer hold the swap up.
    await f.pool.settled();
    assert.ok(f.sets.get("hang"));
  },
});

Deno.test({
  ...T,
  name: "graceful shutdown finishes the request in flight, then the port is closed",
  fn: async () => {
    const f = await fixture({ count: 2 });
    try {
      const slow = f.ask(SLOW_TARGET, encode(slowReview("drain", 20)));
      await waitFor("the slow review is in flight", () => f.cells.inFlight.requests === 1);
      await f.listeners.shutdown();
      const answered = await slow;
      assert.equal(answered.status, 200);
      assert.ok(success(answered.text), answered.text);
      await assert.rejects(
        Deno.connect({ hostname: "127.0.0.1", port: f.port }),
        "nothing listens after the shutdown",
      );
    } finally {
      f.pool.close();
      await Deno.remove(f.dir, { recursive: true });
    }
  },
});

Deno.test({
  ...T,
  name: "a port another process listens on is refused, not shared",
  fn: async () => {
    const other = createServer();
    await new Promise<void>((r) => other.listen({ port: 0, host: "127.0.0.1" }, r));
    const port = (other.address() as { port: number }).port;
    try {
      await assert.rejects(
        fixture({ count: 2, address: `127.0.0.1:${port}` }),
        /EADDRINUSE|address already in use/i,
      );
    } finally {
      other.close();
    }
  },
});
