/**
 * The plain HTTP listener of both roles: `/healthz`, `/readyz`, `/metrics` and `/debug/registry`
 * (`--metrics-bind-address`, and the manager's `--health-probe-bind-address`). Kept apart from
 * the TLS listener so health and metrics traffic never queues behind conversions and a TLS
 * problem never hides `/healthz`; it is `node:http` so it gets the same limits.
 */
import type { Registry } from "prom-client";
import { type NodeListener, NodeServer } from "./node_server.ts";
import type { HttpLimits, ServerHandle } from "./socket_limits.ts";

/**
 * What `/debug/registry` prints: `debugRows()` when the source has it (the webhook server's plan
 * registry), else `snapshot()` as it is (the manager's empty list).
 */
export interface DebugRegistrySource {
  snapshot(): readonly unknown[];
  debugRows?(): unknown;
}

export interface PlainListenerOptions {
  /** `reason`, when given, is what a 503 `/readyz` says (src/net/readiness.ts). */
  readiness: { readonly ready: boolean; readonly reason?: string };
  registry: DebugRegistrySource;
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
      return opts.readiness.ready
        ? text(200, "ok")
        : text(503, opts.readiness.reason || "registry not yet fully synced");
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
    case "/debug/registry": {
      const source = opts.registry;
      const rows = source.debugRows !== undefined ? source.debugRows() : source.snapshot();
      return {
        status: 200,
        contentType: "application/json",
        body: JSON.stringify(rows, null, 2) + "\n",
      };
    }
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
export function startPlainServer(opts: PlainServerOptions): Promise<ServerHandle> {
  return NodeServer.startHttp(opts.address, opts.listener, opts.limits);
}
