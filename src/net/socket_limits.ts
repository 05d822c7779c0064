/**
 * What every server core of the roles does with its sockets, whatever parses HTTP on them: the
 * connection cap, one deadline per socket swept by one interval, and listen with the dual-stack
 * fallback (docs/design/webhook.md#limits-and-their-reasons).
 */
import type { AddressInfo, Server, Socket } from "node:net";
import type { BindAddress } from "./bind_address.ts";

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

/** A started listener. */
export interface ServerHandle {
  readonly addr: Deno.NetAddr;
  /** Graceful: stop accepting, close idle connections, let in-flight requests finish. */
  shutdown(): Promise<void>;
  /** Drops every connection at once (a shutdown deadline passed). */
  forceClose(): void;
}

/** A server core a listener wraps: listens, counts its connections, shuts down. */
export interface ServerCore extends ServerHandle {
  listen(bind: BindAddress): Promise<void>;
  /** Open connections (the ones counted against `maxConnections`). */
  readonly connections: number;
}

/**
 * Per-socket deadlines: a request moves a number instead of clearing one timer and creating
 * another. One sweep (every tenth of the shortest limit, at most 1 s) destroys the sockets past
 * theirs, so a deadline is enforced up to one sweep late; with no socket there is no sweep, and
 * nothing keeps a closed server alive.
 */
export class SocketDeadlines {
  readonly #deadlines = new Map<Socket, number>();
  readonly #sweepMs: number;
  #sweep: ReturnType<typeof setInterval> | undefined;

  constructor(l: Pick<HttpLimits, "headerTimeoutMs" | "requestTimeoutMs" | "idleTimeoutMs">) {
    const shortest = Math.min(l.headerTimeoutMs, l.requestTimeoutMs, l.idleTimeoutMs);
    this.#sweepMs = Math.min(1000, Math.max(5, Math.floor(shortest / 10)));
  }

  /** `socket` is destroyed once `ms` pass without another `arm`. */
  arm(socket: Socket, ms: number): void {
    this.#deadlines.set(socket, Date.now() + ms);
    this.#sweep ??= setInterval(() => this.#destroyLate(), this.#sweepMs);
  }

  disarm(socket: Socket): void {
    this.#deadlines.delete(socket);
    if (this.#deadlines.size === 0 && this.#sweep !== undefined) {
      clearInterval(this.#sweep);
      this.#sweep = undefined;
    }
  }

  #destroyLate(): void {
    const now = Date.now();
    for (const [socket, deadline] of this.#deadlines) {
      if (now >= deadline) socket.destroy(); // its "close" disarms it
    }
  }
}

/** Open TCP connections, counted and capped. */
export interface ConnectionCount {
  /** This server's open connections. */
  readonly open: number;
}

/**
 * Where the connection cap counts, when several servers (threads) share one port: `total[0]`
 * over all of them in a `SharedArrayBuffer`, `own[0]` this server's share (so what a stopped
 * thread held can be given back, src/lib/shared_counts.ts).
 */
export interface ConnectionCells {
  total: Int32Array;
  own?: Int32Array;
}

/**
 * Caps the TCP connections of `server` (before any TLS handshake) at `max` (0 = no cap), counted
 * in `cells` when given (every server sharing the port), else by this server alone: one over it
 * is destroyed at once and `onRefused` runs. Not `server.maxConnections`: Deno's node:net honours
 * it but emits no "drop" event, so refusals could not be counted.
 */
export function capConnections(
  server: Server,
  max: number,
  onRefused?: () => void,
  cells: ConnectionCells = { total: new Int32Array(1) },
): ConnectionCount {
  const count = { open: 0 };
  const { total, own } = cells;
  server.on("connection", (raw: Socket) => {
    if (Atomics.add(total, 0, 1) >= max && max > 0) {
      Atomics.sub(total, 0, 1);
      raw.destroy();
      onRefused?.();
      return;
    }
    if (own !== undefined) Atomics.add(own, 0, 1);
    count.open++;
    raw.once("close", () => {
      count.open--;
      if (own !== undefined) Atomics.sub(own, 0, 1);
      Atomics.sub(total, 0, 1);
    });
  });
  return count;
}

/**
 * Listens on `bind` and returns the bound address; throws on a bind error. An empty host binds
 * `::` (dual stack, like Go), falling back to `0.0.0.0` on a kernel without IPv6. With
 * `reusePort`, the socket joins the others bound to the same port with `SO_REUSEPORT` (the kernel
 * spreads new connections over them), so `bind.port` must be a concrete port.
 */
export async function listenOn(
  server: Server,
  bind: BindAddress,
  reusePort = false,
): Promise<Deno.NetAddr> {
  const listen = (host: string) =>
    new Promise<void>((resolve, reject) => {
      const onError = (e: Error) => reject(e);
      server.once("error", onError);
      server.listen({ port: bind.port, host, reusePort }, () => {
        server.off("error", onError);
        resolve();
      });
    });
  if (bind.hostname !== "") {
    await listen(bind.hostname);
  } else {
    try {
      await listen("::");
    } catch (e) {
      if ((e as { code?: string }).code === "EADDRINUSE") throw e;
      await listen("0.0.0.0");
    }
  }
  const a = server.address() as AddressInfo;
  return { transport: "tcp", hostname: a.address, port: a.port };
}

/**
 * One of several servers (threads) on one port: each binds it with `SO_REUSEPORT`, and the
 * connection cap counts in `cells`, over all of them.
 */
export interface PortShare {
  cells: ConnectionCells;
}

/**
 * What every server core shares: the listening `node:net` server, its connection cap, its socket
 * deadlines and its bound address. A core adds the HTTP on the sockets and its shutdown.
 */
export abstract class ListeningCore implements ServerCore {
  protected readonly server: Server;
  readonly deadlines: SocketDeadlines;
  readonly #count: ConnectionCount;
  readonly #reusePort: boolean;
  #addr: Deno.NetAddr | undefined;

  protected constructor(
    server: Server,
    limits: HttpLimits,
    onConnectionRefused?: () => void,
    share?: PortShare,
  ) {
    this.server = server;
    this.deadlines = new SocketDeadlines(limits);
    this.#count = capConnections(server, limits.maxConnections, onConnectionRefused, share?.cells);
    this.#reusePort = share !== undefined;
  }

  /** Throws on a bind error. An empty host binds `::` (dual stack, like Go), else `0.0.0.0`. */
  async listen(bind: BindAddress): Promise<void> {
    this.#addr = await listenOn(this.server, bind, this.#reusePort);
  }

  get connections(): number {
    return this.#count.open;
  }

  get addr(): Deno.NetAddr {
    if (this.#addr === undefined) throw new Error("the listener is not listening");
    return this.#addr;
  }

  abstract shutdown(): Promise<void>;
  abstract forceClose(): void;
}
