/**
 * A bounded loopback load generator for the conversion endpoint.
 *
 *   deno run -A hack/load.ts --self [--server lean|deno-stream|deno-fixed] [options]
 *   deno run -A hack/load.ts --url https://127.0.0.1:9443/convert/<target> --ca ca.crt [options]
 *
 * Sends the same synthetic ConversionReview (`--objects` Widgets, v1 → v2) from `--concurrency`
 * loops until `--duration` elapses or `--requests` were sent, whichever comes first, and reports
 * p50/p90/p99/max latency, reviews/s and objects/s. Every answer must be HTTP 200 with a
 * `Success` review, otherwise it counts as an error.
 *
 * Clients:
 * - `--client raw` (default): HTTP/1.1 keep-alive over `Deno.connect` + `startTls` with
 *   TCP_NODELAY, one write per request — what the apiserver's Go client does. Deno's `fetch`
 *   leaves Nagle on, which adds its own ~44 ms stalls to requests over one TLS record.
 * - `--client fetch [--http 1.1|2]`: Deno's fetch (h2 only against servers that offer it).
 *
 * `--self` starts a server with the synthetic plan and a throwaway CA (openssl) in a Worker of
 * this process, so client and server run on separate threads: `lean` is the real conversion
 * listener (src/net/tls_server.ts `TlsServer`); `deno-stream` / `deno-fixed` answer through
 * `Deno.serve` with a one-chunk stream or a fixed body (hack/_fetch_convert.ts) — the
 * measurements behind not serving on `Deno.serve` (docs/design/webhook.md#the-lean-http11-server).
 *
 * Bounds (a measuring tool, not a stress tool): loopback targets only, duration ≤ 300 s,
 * requests ≤ 1,000,000, concurrency ≤ 512.
 */
import { parseArgs } from "node:util";
import { writeServingPair } from "../tests/support/certs.ts";
import {
  SYNTHETIC_TARGET,
  syntheticCompiled,
  syntheticReview,
} from "../src/webhook/convert/_synthetic.ts";
import { createConvertExchange } from "../src/webhook/convert/mod.ts";
import { createConvertHandler } from "./_fetch_convert.ts";
import { SILENT } from "../src/webhook/_log.ts";
import { PlanRegistry } from "../src/webhook/registry.ts";
import { TlsServer } from "../src/net/mod.ts";
import { RawConnection } from "./_raw_http.ts";

const MAX_DURATION_S = 300;
const MAX_REQUESTS = 1_000_000;
const MAX_CONCURRENCY = 512;

type ServerKind = "lean" | "deno-stream" | "deno-fixed";

interface ServerConfig {
  certDir: string;
  server: ServerKind;
}

// --- the --self server (runs in a Worker) ---------------------------------------------------------

async function runServer(cfg: ServerConfig): Promise<number> {
  const registry = new PlanRegistry();
  registry.install(syntheticCompiled(), new Date());
  if (cfg.server === "lean") {
    const server = await TlsServer.start({
      address: "127.0.0.1:0",
      certDir: cfg.certDir,
      reloadIntervalMs: 0,
      exchange: createConvertExchange({ registry, logger: SILENT }),
      logger: SILENT,
    });
    return server.addr.port;
  }
  const convert = createConvertHandler({ registry, logger: SILENT });
  const handler = cfg.server === "deno-stream" ? convert : async (req: Request) => {
    const res = await convert(req);
    return new Response(await res.arrayBuffer(), { status: res.status, headers: res.headers });
  };
  const server = Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    cert: await Deno.readTextFile(`${cfg.certDir}/tls.crt`),
    key: await Deno.readTextFile(`${cfg.certDir}/tls.key`),
    onListen: () => {},
  }, handler);
  return server.addr.port;
}

interface WorkerScope {
  onmessage: ((e: MessageEvent<ServerConfig>) => void) | null;
  postMessage(msg: unknown): void;
}

const workerScope = (globalThis as { WorkerGlobalScope?: unknown }).WorkerGlobalScope !== undefined
  ? globalThis as unknown as WorkerScope
  : undefined;

if (workerScope !== undefined) {
  workerScope.onmessage = (e) => {
    runServer(e.data).then(
      (port) => workerScope.postMessage({ port }),
      (err) => workerScope.postMessage({ error: String(err) }),
    );
  };
}

/** Temp dirs of `--self` servers, removed before exiting. */
const selfDirs: string[] = [];

async function startSelf(server: ServerKind): Promise<{ url: string; ca: string }> {
  const dir = await Deno.makeTempDir({ prefix: "dco-load-" });
  selfDirs.push(dir);
  const { ca } = await writeServingPair(dir, {
    caName: "dco-load-ca",
    commonName: "dco-load",
    hosts: ["127.0.0.1", "localhost"],
  });
  const worker = new Worker(import.meta.url, { type: "module" });
  const port = await new Promise<number>((resolve, reject) => {
    worker.onmessage = (e: MessageEvent<{ port?: number; error?: string }>) =>
      e.data.port !== undefined ? resolve(e.data.port) : reject(new Error(e.data.error));
    worker.onerror = (e) => reject(new Error(e.message));
    worker.postMessage({ certDir: dir, server } satisfies ServerConfig);
  });
  return { url: `https://127.0.0.1:${port}/convert/${SYNTHETIC_TARGET}`, ca: ca.cert };
}

// --- the load loop --------------------------------------------------------------------------------

export interface LoadOptions {
  url: string;
  caCerts: string[];
  client: "raw" | "fetch";
  http: "1.1" | "2";
  concurrency: number;
  durationMs: number;
  maxRequests: number;
  body: Uint8Array<ArrayBuffer>;
  objects: number;
}

export interface LoadReport {
  client: string;
  concurrency: number;
  objectsPerReview: number;
  bodyBytes: number;
  seconds: number;
  ok: number;
  errors: number;
  firstError: string;
  reviewsPerSecond: number;
  objectsPerSecond: number;
  latencyMs: { p50: number; p90: number; p99: number; max: number };
}

type Send = () => Promise<{ status: number; head: string }>;

async function makeSender(o: LoadOptions): Promise<{ send: Send; close(): void }> {
  const url = new URL(o.url);
  if (o.client === "raw") {
    const head = new TextEncoder().encode(
      `POST ${url.pathname}${url.search} HTTP/1.1\r\nhost: ${url.host}\r\n` +
        `content-type: application/json\r\ncontent-length: ${o.body.byteLength}\r\n\r\n`,
    );
    const message = new Uint8Array(head.byteLength + o.body.byteLength);
    message.set(head);
    message.set(o.body, head.byteLength);
    let conn = await RawConnection.open(url, o.caCerts);
    const decoder = new TextDecoder();
    return {
      send: async () => {
        try {
          const { status, body } = await conn.request(message);
          return { status, head: decoder.decode(body.subarray(0, 256)) };
        } catch (e) {
          conn.close(); // reconnect on the next request
          conn = await RawConnection.open(url, o.caCerts);
          throw e;
        }
      },
      close: () => conn.close(),
    };
  }
  const client = Deno.createHttpClient({
    caCerts: o.caCerts,
    http1: o.http === "1.1",
    http2: o.http === "2",
  });
  const decoder = new TextDecoder();
  return {
    send: async () => {
      const res = await fetch(o.url, {
        method: "POST",
        body: o.body,
        headers: { "content-type": "application/json" },
        client,
      });
      const buf = new Uint8Array(await res.arrayBuffer());
      return { status: res.status, head: decoder.decode(buf.subarray(0, 256)) };
    },
    close: () => client.close(),
  };
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
}

export async function runLoad(o: LoadOptions): Promise<LoadReport> {
  const latencies = new Float64Array(o.maxRequests);
  let issued = 0;
  let done = 0;
  let errors = 0;
  let firstError = "";
  const senders = await Promise.all(Array.from({ length: o.concurrency }, () => makeSender(o)));
  const start = performance.now();
  const stopAt = start + o.durationMs;
  const loop = async (sender: { send: Send }) => {
    while (issued < o.maxRequests && performance.now() < stopAt) {
      issued++;
      const t0 = performance.now();
      try {
        const { status, head } = await sender.send();
        if (status !== 200 || !head.includes('"status":"Success"')) {
          throw new Error(`HTTP ${status}: ${head}`);
        }
        latencies[done++] = performance.now() - t0;
      } catch (e) {
        errors++;
        if (firstError === "") firstError = (e as Error).message;
      }
    }
  };
  await Promise.all(senders.map(loop));
  const seconds = (performance.now() - start) / 1000;
  for (const s of senders) s.close();
  const sorted = latencies.subarray(0, done).sort();
  const round = (x: number) => Math.round(x * 1000) / 1000;
  return {
    client: o.client === "raw"
      ? "raw HTTP/1.1 (nodelay)"
      : `fetch ${o.http === "2" ? "h2" : "HTTP/1.1"}`,
    concurrency: o.concurrency,
    objectsPerReview: o.objects,
    bodyBytes: o.body.byteLength,
    seconds: round(seconds),
    ok: done,
    errors,
    firstError,
    reviewsPerSecond: Math.round(done / seconds),
    objectsPerSecond: Math.round((done * o.objects) / seconds),
    latencyMs: {
      p50: round(percentile(sorted, 0.5)),
      p90: round(percentile(sorted, 0.9)),
      p99: round(percentile(sorted, 0.99)),
      max: round(sorted.length > 0 ? sorted[sorted.length - 1] : NaN),
    },
  };
}

// --- CLI ------------------------------------------------------------------------------------------

const USAGE =
  `usage: hack/load.ts (--self [--server lean|deno-stream|deno-fixed] | --url URL [--ca FILE])
  [--client raw|fetch] [--http 1.1|2 (fetch only)] [--concurrency N=8] [--duration 10s]
  [--requests N=100000] [--objects N=1] [--annotation-bytes N=0] [--json]`;

function duration(s: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(s);
  if (m === null) throw new Error(`invalid duration ${JSON.stringify(s)}`);
  const n = Number(m[1]);
  return m[2] === "ms" ? n : m[2] === "m" ? n * 60_000 : n * 1000;
}

function intFlag(name: string, v: string, min: number, max: number): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new Error(`--${name} must be an integer in [${min}, ${max}]`);
  }
  return n;
}

function isLoopback(url: URL): boolean {
  const h = url.hostname.replace(/^\[|\]$/g, "");
  return h === "localhost" || h === "::1" || /^127\.\d+\.\d+\.\d+$/.test(h);
}

async function main(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      self: { type: "boolean", default: false },
      server: { type: "string", default: "lean" },
      url: { type: "string" },
      ca: { type: "string" },
      client: { type: "string", default: "raw" },
      http: { type: "string", default: "1.1" },
      concurrency: { type: "string", default: "8" },
      duration: { type: "string", default: "10s" },
      requests: { type: "string", default: "100000" },
      objects: { type: "string", default: "1" },
      "annotation-bytes": { type: "string", default: "0" },
      json: { type: "boolean", default: false },
      help: { type: "boolean", default: false },
    },
  });
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const client = values.client;
  if (client !== "raw" && client !== "fetch") throw new Error("--client must be raw or fetch");
  const httpVersion = values.http;
  if (httpVersion !== "1.1" && httpVersion !== "2") throw new Error("--http must be 1.1 or 2");
  if (httpVersion === "2" && client !== "fetch") throw new Error("--http 2 needs --client fetch");
  const server = values.server;
  if (server !== "lean" && server !== "deno-stream" && server !== "deno-fixed") {
    throw new Error("--server must be lean, deno-stream or deno-fixed");
  }
  const durationMs = duration(values.duration);
  if (!(durationMs > 0 && durationMs <= MAX_DURATION_S * 1000)) {
    throw new Error(`--duration must be in (0, ${MAX_DURATION_S}s]`);
  }
  const objects = intFlag("objects", values.objects, 1, 5000);
  let url: string;
  let caCerts: string[] = [];
  if (values.self) {
    const self = await startSelf(server);
    url = self.url;
    caCerts = [self.ca];
  } else {
    if (values.url === undefined) throw new Error(`--url or --self is required\n${USAGE}`);
    if (!isLoopback(new URL(values.url))) throw new Error("--url must be a loopback address");
    url = values.url;
    if (values.ca !== undefined) caCerts = [await Deno.readTextFile(values.ca)];
  }
  const body = new TextEncoder().encode(JSON.stringify(syntheticReview(objects, {
    annotationBytes: intFlag("annotation-bytes", values["annotation-bytes"], 0, 1 << 20),
  })));
  const report = await runLoad({
    url,
    caCerts,
    client,
    http: httpVersion,
    concurrency: intFlag("concurrency", values.concurrency, 1, MAX_CONCURRENCY),
    durationMs,
    maxRequests: intFlag("requests", values.requests, 1, MAX_REQUESTS),
    body,
    objects,
  });
  if (values.json) {
    console.log(JSON.stringify({ ...report, server: values.self ? server : undefined }));
  } else {
    const l = report.latencyMs;
    console.log(
      `${values.self ? `self ${server}, ` : ""}${report.client} c=${report.concurrency} ` +
        `objects=${report.objectsPerReview} body=${report.bodyBytes}B: ` +
        `${report.ok} ok, ${report.errors} errors in ${report.seconds}s; ` +
        `${report.reviewsPerSecond} reviews/s, ${report.objectsPerSecond} objects/s; ` +
        `latency ms p50 ${l.p50} p90 ${l.p90} p99 ${l.p99} max ${l.max}` +
        (report.firstError !== "" ? `\nfirst error: ${report.firstError}` : ""),
    );
  }
  return report.errors > 0 ? 1 : 0;
}

if (import.meta.main && workerScope === undefined) {
  let code: number;
  try {
    code = await main(Deno.args);
  } catch (e) {
    console.error(`load: ${(e as Error).message}`);
    code = 2;
  }
  for (const dir of selfDirs) Deno.removeSync(dir, { recursive: true });
  Deno.exit(code); // the --self Worker would keep the process alive
}
