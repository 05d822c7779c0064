/**
 * The `node:http(s)` server core shared by every listener of the roles: the HTTP limits enforced
 * per socket, listen, graceful shutdown, and shutting several servers down under one deadline.
 *
 * Why `node:http(s)` and not `Deno.serve`, and which limit guards what:
 * docs/design/webhook.md#why-nodehttps-and-not-denoserve and
 * docs/design/webhook.md#limits-and-their-reasons. In short: under Deno, `node:http(s)` enforces
 * `maxHeaderSize` (431), `keepAliveTimeout` and the TLS `handshakeTimeout`, but not
 * `headersTimeout` or `requestTimeout`, so per-socket timers do it: connection (after the
 * handshake for TLS) → request headers (header timeout), headers → response finished (read/write
 * timeout), response → next request (idle timeout + header timeout). Each socket has a deadline,
 * and one sweep per server (every tenth of the shortest limit, at most 1 s) destroys the sockets
 * past theirs: a request moves a number instead of clearing one timer and creating another twice.
 * A deadline is enforced up to one sweep late.
 *
 * Re-measured on Deno 2.9.6 (`hack/bench_side_by_side.ts --alloc`, 1 × 2 KB reviews, server on one
 * core of a 2-core machine shared with other work, ranges over interleaved runs): `Deno.serve` over
 * TLS with one-chunk bodies allocated about as much per review as this core (~28 KiB against
 * 25–31 KiB) and had no steady tail advantage (p99 20–58 ms against 50–150 ms in the same minutes, both
 * dominated by the machine's other load), and it still offers no hook for the connection cap, the
 * per-socket timers or an in-place certificate swap — so the listeners stay on `node:http(s)`.
 * HTTP/2 is not offered: `Deno.serve` still stalls ~42 ms per HTTP/2 response, and a `node:http2`
 * server aborted the process (an nghttp2 assertion) when a client closed its session.
 */
import http, { type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { type BindAddress, parseBindAddress } from "./bind_address.ts";

/** Server limits (docs/design/webhook.md#limits-and-their-reasons). */
export interface HttpLimits {
  /** Accept → end of the request headers (slow-loris defence). */
  headerTimeoutMs: number;
  /** End of headers → response finished (longer than the apiserver's fixed 30 s). */
  requestTimeoutMs: number;
  /** Between requests on a keep-alive connection (keeps the apiserver's connections). */
  idleTimeoutMs: number;
  maxHeaderBytes: number;
  /** Open connections accepted at once; 0 = no cap. One over it is closed at once. */
  maxConnections: number;
}

export const DEFAULT_HTTP_LIMITS: Readonly<HttpLimits> = Object.freeze({
  headerTimeoutMs: 10_000,
  requestTimeoutMs: 35_000,
  idleTimeoutMs: 120_000,
  maxHeaderBytes: 1 << 20,
  maxConnections: 0,
});

export type NodeListener = (req: IncomingMessage, res: ServerResponse) => void;

/** A started listener. */
export interface ServerHandle {
  readonly addr: Deno.NetAddr;
  /** Graceful: stop accepting, close idle connections, let in-flight requests finish. */
  shutdown(): Promise<void>;
  /** Drops every connection at once (a shutdown deadline passed). */
  forceClose(): void;
}

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

/** Limits, listen, graceful shutdown: what both listeners share. */
export class NodeServer implements ServerHandle {
  readonly #server: http.Server;
  /** Each open socket's deadline (ms since the epoch). */
  readonly #deadlines = new Map<Socket, number>();
  readonly #sweepMs: number;
  #sweep: ReturnType<typeof setInterval> | undefined;
  #connections = 0;
  #addr: Deno.NetAddr | undefined;
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
    this.#server = server;
    const shortest = Math.min(l.headerTimeoutMs, l.requestTimeoutMs, l.idleTimeoutMs);
    this.#sweepMs = Math.min(1000, Math.max(5, Math.floor(shortest / 10)));
    // The cap counts TCP connections (before any TLS handshake). Not `server.maxConnections`:
    // Deno's node:http honours it but emits no "drop" event, so refusals could not be counted.
    server.on("connection", (raw: Socket) => {
      if (l.maxConnections > 0 && this.#connections >= l.maxConnections) {
        raw.destroy();
        onConnectionRefused?.();
        return;
      }
      this.#connections++;
      raw.once("close", () => this.#connections--);
    });
    server.on(connectionEvent, (socket: Socket) => {
      this.#arm(socket, l.headerTimeoutMs);
      socket.once("close", () => this.#disarm(socket));
    });
    server.on("request", (req: IncomingMessage, res: ServerResponse) => {
      const socket = req.socket;
      this.#arm(socket, l.requestTimeoutMs);
      res.once("finish", () => {
        if (this.#closing) socket.end(); // draining: no further request on this connection
        else this.#arm(socket, l.idleTimeoutMs + l.headerTimeoutMs);
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

  /** Throws on a bind error. An empty host binds `::` (dual stack, like Go), else `0.0.0.0`. */
  async listen(bind: BindAddress): Promise<void> {
    const listenOn = (host: string) =>
      new Promise<void>((resolve, reject) => {
        const onError = (e: Error) => reject(e);
        this.#server.once("error", onError);
        this.#server.listen({ port: bind.port, host }, () => {
          this.#server.off("error", onError);
          resolve();
        });
      });
    if (bind.hostname !== "") {
      await listenOn(bind.hostname);
    } else {
      try {
        await listenOn("::");
      } catch (e) {
        if ((e as { code?: string }).code === "EADDRINUSE") throw e;
        await listenOn("0.0.0.0"); // a kernel without IPv6
      }
    }
    const a = this.#server.address() as AddressInfo;
    this.#addr = { transport: "tcp", hostname: a.address, port: a.port };
  }

  /** Open connections (the ones counted against `maxConnections`). */
  get connections(): number {
    return this.#connections;
  }

  get addr(): Deno.NetAddr {
    if (this.#addr === undefined) throw new Error("the listener is not listening");
    return this.#addr;
  }

  #arm(socket: Socket, ms: number): void {
    this.#deadlines.set(socket, Date.now() + ms);
    this.#sweep ??= setInterval(() => this.#destroyLate(), this.#sweepMs);
  }

  #disarm(socket: Socket): void {
    this.#deadlines.delete(socket);
    if (this.#deadlines.size === 0 && this.#sweep !== undefined) {
      clearInterval(this.#sweep); // no socket, no sweep: nothing keeps a closed server alive
      this.#sweep = undefined;
    }
  }

  #destroyLate(): void {
    const now = Date.now();
    for (const [socket, deadline] of this.#deadlines) {
      if (now >= deadline) socket.destroy(); // its "close" disarms it
    }
  }

  shutdown(): Promise<void> {
    this.#closing = true;
    const closed = new Promise<void>((resolve) => this.#server.close(() => resolve()));
    this.#server.closeIdleConnections();
    return closed;
  }

  forceClose(): void {
    this.#server.closeAllConnections();
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
