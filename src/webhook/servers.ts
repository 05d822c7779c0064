/**
 * The webhook-server's two listeners (runtime.md §8.6, §8.7), kept apart so health and metrics
 * traffic never queues behind conversions and a TLS problem never hides `/healthz`:
 *
 * - the plain HTTP listener (`--metrics-bind-address`): `/healthz`, `/readyz`, `/metrics`,
 *   `/debug/registry`;
 * - the TLS conversion listener (`--conversion-bind-address`): `/convert/<target>`, with the
 *   certificate pair re-read from `--tls-cert-dir` every `--cert-reload-interval`.
 *
 * Both are `node:http(s)` servers, not `Deno.serve`. Measured with hack/load.ts and curl on
 * loopback, with a TCP_NODELAY client like the apiserver's Go client: Deno.serve leaves Nagle on
 * for accepted TLS sockets and writes a response in several TLS writes, so the last one waits for
 * the client's delayed ACK — a ~44 ms stall. The one-chunk-stream workaround removes it only for
 * HTTP/1.1 responses that fit one TLS record (1 object: 0.17 ms p50; 10 objects, 18 KB: 44 ms
 * p50); HTTP/2, which Deno.serve always offers over TLS and the apiserver's client would pick,
 * stalls on every response, and Deno.serve rejects `alpnProtocols` to turn it off. `node:https`
 * with `noDelay: true` answers every size without a stall (10 objects: 0.7 ms p50, 1,300 reviews/s
 * at c=1 instead of 23/s; equal throughput for 1 and 100 objects), offers only HTTP/1.1 (the
 * apiserver keeps a pool of keep-alive connections), and swaps certificates in place with
 * `setSecureContext` — no second listener, no `reusePort`, no `--unstable-net`, no window of
 * refused connections (runtime §8.7 suggests the Deno.serve listener swap; this meets the same
 * contract without its costs). The plain listener uses `node:http` so it gets the same limits.
 *
 * Certificates: a pair that fails to parse, or whose key does not match, keeps the last good one
 * serving; before the first good pair the port listens but every handshake fails, and polling
 * continues.
 *
 * HTTP limits (§8.6 [P14]), both listeners: under Deno, `node:http(s)` enforces `maxHeaderSize`
 * (431), `keepAliveTimeout` and the TLS `handshakeTimeout`, but not `headersTimeout` or
 * `requestTimeout`, so per-socket timers do it: connection (after the handshake for TLS) →
 * request headers (header timeout), headers → response finished (read/write timeout), response
 * → next request (idle timeout + header timeout). A timer that fires destroys the socket.
 */
import http from "node:http";
import type { Registry } from "prom-client";
import {
  DEFAULT_HTTP_LIMITS,
  type HttpLimits,
  type NodeListener,
  NodeServer,
  parseBindAddress,
  type ServerHandle,
  serverOptions,
  TlsServer,
  type TlsServerOptions,
} from "../net/servers.ts";
import { debugRows, type RegistryEntry } from "./registry.ts";

// The shared server core (src/net/servers.ts), under the names this role has always used.
export * from "../net/servers.ts";
/** The TLS conversion listener with certificate reload. */
export const ConversionServer = TlsServer;
export type ConversionServer = TlsServer;
export type ConversionServerOptions = TlsServerOptions;

// --- the plain listener ---------------------------------------------------------------------------

export interface PlainListenerOptions {
  readiness: { readonly ready: boolean };
  registry: { snapshot(): RegistryEntry[] };
  /**
   * The exposition: a prom-client registry holding every family (webhook set, framework,
   * process), or a function producing the response (e.g. src/obs `metricsResponse`). Absent ⇒
   * 503 `metrics gatherer not configured`.
   */
  metrics?: Registry | (() => Promise<Response>);
}

interface PlainAnswer {
  status: number;
  contentType: string;
  body: string | Uint8Array;
  headers?: Record<string, string>;
}

const TEXT_TYPE = "text/plain; charset=utf-8";

function text(status: number, body: string): PlainAnswer {
  return { status, contentType: TEXT_TYPE, body: body + "\n" };
}

/** The plain listener's routes, transport-neutral. */
export async function answerPlain(
  opts: PlainListenerOptions,
  method: string,
  path: string,
): Promise<PlainAnswer> {
  if (method !== "GET" && method !== "HEAD") {
    return { ...text(405, "method not allowed"), headers: { allow: "GET, HEAD" } };
  }
  const q = path.indexOf("?");
  switch (q < 0 ? path : path.slice(0, q)) {
    case "/healthz":
      return text(200, "ok");
    case "/readyz":
      return opts.readiness.ready ? text(200, "ok") : text(503, "registry not yet fully synced");
    case "/metrics": {
      const m = opts.metrics;
      if (m === undefined) return text(503, "metrics gatherer not configured");
      try {
        if (typeof m === "function") {
          const r = await m();
          return {
            status: r.status,
            contentType: r.headers.get("content-type") ?? TEXT_TYPE,
            body: new Uint8Array(await r.arrayBuffer()),
          };
        }
        return { status: 200, contentType: m.contentType, body: await m.metrics() };
      } catch (e) {
        return text(500, `gathering metrics: ${(e as Error).message}`);
      }
    }
    case "/debug/registry":
      return {
        status: 200,
        contentType: "application/json",
        body: JSON.stringify(debugRows(opts.registry.snapshot()), null, 2) + "\n",
      };
    default:
      return text(404, "not found");
  }
}

/** The plain listener's request listener. */
export function createPlainListener(opts: PlainListenerOptions): NodeListener {
  return (req, res) => {
    answerPlain(opts, req.method ?? "", req.url ?? "").then((a) => {
      const body = typeof a.body === "string" ? new TextEncoder().encode(a.body) : a.body;
      res.writeHead(a.status, {
        ...a.headers,
        "content-type": a.contentType,
        "content-length": String(body.byteLength),
      });
      res.end(req.method === "HEAD" ? undefined : body);
    }, () => res.destroy());
  };
}

export interface PlainServerOptions {
  /** Go-style address, e.g. `:8443`. */
  address: string;
  listener: NodeListener;
  limits?: Partial<HttpLimits>;
}

/** Starts the plain HTTP listener (throws on bind errors). */
export async function startPlainServer(opts: PlainServerOptions): Promise<ServerHandle> {
  const limits = { ...DEFAULT_HTTP_LIMITS, ...opts.limits };
  const s = new NodeServer(
    http.createServer(serverOptions(limits)),
    opts.listener,
    limits,
    "connection",
  );
  await s.listen(parseBindAddress(opts.address));
  return s;
}
