/**
 * The `node:http(s)` server core (the manager's admission listener, the health/metrics listeners),
 * and shutting several servers down under one deadline. The conversion listener runs on the lean
 * HTTP/1.1 core instead (src/net/http1_server.ts, docs/design/webhook.md#the-lean-http11-server).
 *
 * Under Deno, `node:http(s)` enforces `maxHeaderSize` (431), `keepAliveTimeout` and the TLS
 * `handshakeTimeout`, but not `headersTimeout` or `requestTimeout`, so per-socket deadlines
 * (src/net/socket_limits.ts) do it: connection (after the handshake for TLS) → request headers
 * (header timeout), headers → response finished (read/write timeout), response → next request
 * (idle timeout + header timeout). Which limit guards what:
 * docs/design/webhook.md#limits-and-their-reasons.
 */
import http, { type IncomingMessage, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { parseBindAddress } from "./bind_address.ts";
import {
  DEFAULT_HTTP_LIMITS,
  type HttpLimits,
  ListeningCore,
  type ServerHandle,
} from "./socket_limits.ts";

export type NodeListener = (req: IncomingMessage, res: ServerResponse) => void;

/** The `node:http(s)` options that carry the limits the runtime does enforce. */
export function serverOptions(l: HttpLimits): http.ServerOptions {
  return {
    noDelay: true,
    keepAliveTimeout: l.idleTimeoutMs,
    headersTimeout: l.headerTimeoutMs,
    requestTimeout: l.requestTimeoutMs,
    maxHeaderSize: l.maxHeaderBytes,
  };
}

/** Limits, listen, graceful shutdown over a `node:http(s)` server. */
export class NodeServer extends ListeningCore {
  readonly #http: http.Server;
  #closing = false;

  /**
   * `server` was created with {@link serverOptions} and no request listener. `connectionEvent`
   * names the event whose socket later carries the requests: `secureConnection` for TLS (the raw
   * socket of `connection` is a different object there; the handshake has its own timeout).
   */
  constructor(
    server: http.Server,
    listener: NodeListener,
    l: HttpLimits,
    connectionEvent: "connection" | "secureConnection",
    onConnectionRefused?: () => void,
  ) {
    super(server, l, onConnectionRefused);
    this.#http = server;
    const deadlines = this.deadlines;
    server.on(connectionEvent, (socket: Socket) => {
      deadlines.arm(socket, l.headerTimeoutMs);
      socket.once("close", () => deadlines.disarm(socket));
    });
    server.on("request", (req: IncomingMessage, res: ServerResponse) => {
      const socket = req.socket;
      deadlines.arm(socket, l.requestTimeoutMs);
      res.once("finish", () => {
        if (this.#closing) socket.end(); // draining: no further request on this connection
        else deadlines.arm(socket, l.idleTimeoutMs + l.headerTimeoutMs);
      });
      listener(req, res);
    });
  }

  /** A plain `node:http` server with the limits, listening on `address` (throws on bind errors). */
  static async startHttp(
    address: string,
    listener: NodeListener,
    limits?: Partial<HttpLimits>,
  ): Promise<NodeServer> {
    const l = { ...DEFAULT_HTTP_LIMITS, ...limits };
    const s = new NodeServer(http.createServer(serverOptions(l)), listener, l, "connection");
    await s.listen(parseBindAddress(address));
    return s;
  }

  shutdown(): Promise<void> {
    this.#closing = true;
    const closed = new Promise<void>((resolve) => this.#http.close(() => resolve()));
    this.#http.closeIdleConnections();
    return closed;
  }

  forceClose(): void {
    this.#http.closeAllConnections();
  }
}

/**
 * Shuts every server down concurrently under one shared deadline (`--shutdown-timeout`).
 * Resolves true when all drained in time; on the deadline every server is force-closed and it
 * resolves false.
 */
export async function shutdownAll(
  servers: readonly ServerHandle[],
  timeoutMs: number,
): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs);
  });
  const all = Promise.allSettled(servers.map((s) => s.shutdown())).then(() => true as const);
  try {
    const inTime = await Promise.race([all, deadline]);
    if (!inTime) { for (const s of servers) s.forceClose(); }
    return inTime;
  } finally {
    clearTimeout(timer);
  }
}
