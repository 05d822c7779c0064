/**
 * Shared fixtures of the webhook serving tests: throwaway certificates, a running TLS conversion
 * server over the synthetic plan, a fetch client that trusts it, and metric sample lookups.
 */
import assert from "node:assert/strict";
import { Registry } from "prom-client";
import type { JsonObject } from "../../src/engine/mod.ts";
import type { WebhookLogger } from "../../src/webhook/_log.ts";
import {
  SYNTHETIC_GROUP,
  SYNTHETIC_TARGET,
  syntheticCompiled,
} from "../../src/webhook/convert/_synthetic.ts";
import {
  type ConversionReviewResponse,
  type ConvertHandlerOptions,
  createConvertExchange,
  type PlanLookup,
} from "../../src/webhook/convert/mod.ts";
import { WebhookMetrics } from "../../src/webhook/metrics.ts";
import { PlanRegistry } from "../../src/webhook/registry.ts";
import {
  type Http1Handler,
  type HttpLimits,
  TlsServer,
  type TlsServerOptions,
} from "../../src/net/mod.ts";
import { createCA, type KeyPair } from "../support/certs.ts";

export { SYNTHETIC_GROUP, SYNTHETIC_TARGET };

export const apiVersion = (v: string): string => `${SYNTHETIC_GROUP}/${v}`;

/** A CA and two distinct server certificates for 127.0.0.1, made once per test module. */
export interface TestCerts {
  ca: string;
  first: KeyPair;
  second: KeyPair;
  /** A key that matches neither certificate. */
  strayKey: string;
}

let certs: Promise<TestCerts> | undefined;

export function testCerts(): Promise<TestCerts> {
  certs ??= (async () => {
    const dir = await Deno.makeTempDir({ prefix: "dco-webhook-certs-" });
    globalThis.addEventListener("unload", () => Deno.removeSync(dir, { recursive: true }));
    const ca = await createCA(dir, "dco-webhook-test-ca");
    const first = await ca.issue({ commonName: "webhook-a", hosts: ["127.0.0.1", "localhost"] });
    const second = await ca.issue({ commonName: "webhook-b", hosts: ["127.0.0.1", "localhost"] });
    const stray = await ca.issue({ commonName: "stray", hosts: ["127.0.0.1"] });
    return { ca: ca.cert, first, second, strayKey: stray.key };
  })();
  return certs;
}

/** Writes a pair as `tls.crt`/`tls.key` into `dir`. */
export async function writePair(dir: string, pair: KeyPair): Promise<void> {
  await Deno.writeTextFile(`${dir}/tls.crt`, pair.cert);
  await Deno.writeTextFile(`${dir}/tls.key`, pair.key);
}

/** Log lines a test can inspect. */
export interface CapturedLog extends WebhookLogger {
  lines: { level: string; msg: string; fields: Record<string, unknown> }[];
}

export function captureLog(): CapturedLog {
  const lines: CapturedLog["lines"] = [];
  const at = (level: string) => (msg: string, fields?: Record<string, unknown>) =>
    lines.push({ level, msg, fields: { ...fields } });
  return { lines, info: at("info"), warn: at("warn"), error: at("error") };
}

export interface ConversionFixture extends AsyncDisposable {
  server: TlsServer;
  certs: TestCerts;
  /** The certificate directory the server polls. */
  dir: string;
  registry: PlanRegistry;
  metrics: WebhookMetrics;
  promRegistry: Registry;
  log: CapturedLog;
  ca: string;
  client: Deno.HttpClient;
  /** https://127.0.0.1:<port> */
  base: string;
  /** POSTs a body (object → JSON) to `/convert/<target>`. */
  post(body: unknown, target?: string, init?: RequestInit): Promise<Response>;
  /** POSTs a review and decodes the ConversionReview answer (asserting HTTP 200). */
  convert(body: unknown, target?: string): Promise<ConversionReviewResponse>;
  /** A good v1 → v2 request succeeds (the server is still serving). */
  assertServing(): Promise<void>;
}

export interface FixtureOptions
  extends Omit<ConvertHandlerOptions, "registry" | "metrics" | "logger"> {
  /** Replace the registry the handler reads (panic tests). */
  lookup?: PlanLookup;
  limits?: Partial<HttpLimits>;
  /** Write `certs.first` into the directory before starting (default true). */
  pair?: boolean;
  /** `--cert-reload-interval` in ms; default 0 (tests call `reloadNow`). */
  reloadIntervalMs?: number;
  /** Replaces the conversion handler (shutdown tests hold requests). */
  exchange?: Http1Handler;
  /** The TLS server's certificate-state callback and clock (the certificate-gate tests). */
  onState?: TlsServerOptions["onState"];
  now?: () => Date;
}

/** Starts a TLS conversion server with the synthetic plan installed. */
export async function startConversion(opts: FixtureOptions = {}): Promise<ConversionFixture> {
  const c = await testCerts();
  const dir = await Deno.makeTempDir({ prefix: "dco-webhook-tls-" });
  if (opts.pair ?? true) await writePair(dir, c.first);
  const registry = new PlanRegistry();
  registry.install(syntheticCompiled(), new Date());
  const promRegistry = new Registry();
  const metrics = new WebhookMetrics(promRegistry);
  metrics.refreshRegistryGauges(registry.snapshot());
  const log = captureLog();
  const {
    lookup,
    limits,
    pair: _,
    reloadIntervalMs = 0,
    exchange,
    onState,
    now,
    ...handlerOpts
  } = opts;
  const server = await TlsServer.start({
    address: "127.0.0.1:0",
    certDir: dir,
    reloadIntervalMs,
    exchange: exchange ?? createConvertExchange({
      ...handlerOpts,
      registry: lookup ?? registry,
      metrics,
      logger: log,
    }),
    logger: log,
    limits,
    onState,
    now,
    onConnectionRefused: () => metrics.countRejected("connections"),
  });
  const client = Deno.createHttpClient({ caCerts: [c.ca] });
  const base = `https://127.0.0.1:${server.addr.port}`;
  const post = (body: unknown, target = SYNTHETIC_TARGET, init: RequestInit = {}) =>
    fetch(`${base}/convert/${target}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: typeof body === "string" || body instanceof Uint8Array ||
          body instanceof ReadableStream
        ? body as BodyInit
        : JSON.stringify(body),
      ...init,
      client,
    });
  const convert = async (body: unknown, target?: string) => {
    const res = await post(body, target);
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-type") ?? "", /application\/json/);
    return await res.json() as ConversionReviewResponse;
  };
  const fixture: ConversionFixture = {
    server,
    certs: c,
    dir,
    registry,
    metrics,
    promRegistry,
    log,
    ca: c.ca,
    client,
    base,
    post,
    convert,
    async assertServing() {
      const out = await convert(review("good-after", "v2", [widget("v1", 0)]));
      assert.equal(out.response.result.status, "Success");
      assert.equal(out.response.uid, "good-after");
      assert.equal(out.response.convertedObjects?.length, 1);
    },
    async [Symbol.asyncDispose]() {
      client.close();
      await server.shutdown();
      await Deno.remove(dir, { recursive: true });
    },
  };
  return fixture;
}

/** A minimal Widget at `version`. */
export function widget(version: string, i: number, extra: JsonObject = {}): JsonObject {
  const spec: JsonObject = { region: "eu", field0: i };
  if (version === "v2") spec.storageGB = i;
  else spec.storageSize = i;
  if (version === "v1alpha1") spec.legacyNote = `note ${i}`;
  return {
    apiVersion: apiVersion(version),
    kind: "Widget",
    metadata: { name: `w-${i}`, namespace: "default", labels: { i: String(i) } },
    spec,
    ...extra,
  };
}

/** A ConversionReview request. */
export function review(uid: string, to: string, objects: unknown[]): JsonObject {
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "ConversionReview",
    request: { uid, desiredAPIVersion: apiVersion(to), objects: objects as JsonObject[] },
  };
}

/** The value of one sample in an exposition (`name{labels} value`), or undefined. */
export function sampleValue(
  exposition: string,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  for (const line of exposition.split("\n")) {
    if (line.startsWith("#")) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (m === null || m[1] !== name) continue;
    const got: Record<string, string> = {};
    for (const [, k, v] of (m[2] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      got[k] = v;
    }
    if (Object.entries(labels).every(([k, v]) => got[k] === v)) return Number(m[3]);
  }
  return undefined;
}
