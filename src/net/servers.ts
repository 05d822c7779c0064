/**
 * The TLS and plain HTTP server core shared by the roles (the webhook-server's conversion and
 * health/metrics listeners, the manager's admission listener): `node:http(s)` with the HTTP
 * limits enforced per socket, and a TLS listener that reloads its certificate pair in place.
 *
 * Why `node:http(s)` and not `Deno.serve`: measured with hack/load.ts and curl on loopback, with a
 * TCP_NODELAY client like the apiserver's Go client, Deno.serve leaves Nagle on for accepted TLS
 * sockets and writes a response in several TLS writes, so the last one waits for the client's
 * delayed ACK — a ~44 ms stall; its HTTP/2 (always offered over TLS) stalls on every response.
 * `node:https` with `noDelay: true` answers every size without a stall, offers only HTTP/1.1, and
 * swaps certificates in place with `setSecureContext` (no second listener, no refused
 * connections). See src/webhook/servers.ts for the numbers.
 *
 * Certificates: a pair that fails to parse, or whose key does not match, keeps the last good one
 * serving; before the first good pair the port listens but every handshake fails, and polling
 * continues.
 *
 * HTTP limits (runtime §8.6 [P14]): under Deno, `node:http(s)` enforces `maxHeaderSize` (431),
 * `keepAliveTimeout` and the TLS `handshakeTimeout`, but not `headersTimeout` or
 * `requestTimeout`, so per-socket timers do it: connection (after the handshake for TLS) →
 * request headers (header timeout), headers → response finished (read/write timeout), response
 * → next request (idle timeout + header timeout). A timer that fires destroys the socket.
 */
import { createPrivateKey, X509Certificate } from "node:crypto";
import http, { type IncomingMessage, type ServerResponse } from "node:http";
import https from "node:https";
import type { AddressInfo, Socket } from "node:net";
import { join } from "node:path";
import { createLogger, type Logger } from "../obs/log.ts";

/** The part of the logger the servers use. */
export type TlsLogger = Pick<Logger, "info" | "warn" | "error">;

// --- addresses ------------------------------------------------------------------------------------

export interface BindAddress {
  /** "" = every interface (Go's `:port`). */
  hostname: string;
  port: number;
}

/**
 * Parses a Go-style listen address: `:9443`, `0.0.0.0:9443`, `127.0.0.1:9443`, `[::1]:9443`,
 * `localhost:9443`. Port 0 asks for an ephemeral port (tests).
 */
export function parseBindAddress(address: string): BindAddress {
  const m = /^(?:\[([^\]]*)\]|([^:[\]]*)):(\d{1,5})$/.exec(address.trim());
  if (m === null) {
    throw new Error(`invalid bind address ${JSON.stringify(address)}: want [host]:port`);
  }
  const port = Number(m[3]);
  if (port > 65535) throw new Error(`invalid bind address ${JSON.stringify(address)}: port`);
  return { hostname: m[1] ?? m[2] ?? "", port };
}

/** `host:port` for logs, brackets around IPv6. */
export function formatAddr(addr: Deno.NetAddr): string {
  return addr.hostname.includes(":")
    ? `[${addr.hostname}]:${addr.port}`
    : `${addr.hostname}:${addr.port}`;
}

// --- readiness ------------------------------------------------------------------------------------

/**
 * The replica's readiness: false until the initial sync completed (runtime §8.2/§8.3). There is
 * deliberately no "ready after a timeout" escape (§8.1 `--registry-ready-timeout`): a replica out
 * of the endpoints only costs capacity, one in them with a partial registry answers real traffic
 * with wrong failures.
 */
export class Readiness {
  #ready = false;
  readonly #onChange: ((ready: boolean) => void) | undefined;

  /** `onChange` runs now (with false) and on every transition (e.g. `metrics.setReady`). */
  constructor(onChange?: (ready: boolean) => void) {
    this.#onChange = onChange;
    onChange?.(false);
  }

  get ready(): boolean {
    return this.#ready;
  }

  set(ready: boolean): void {
    if (ready === this.#ready) return;
    this.#ready = ready;
    this.#onChange?.(ready);
  }
}

// --- limits and the shared server core ------------------------------------------------------------

/** Server limits (§8.6 [P14]). */
export interface HttpLimits {
  /** Accept → end of the request headers (slow-loris defence). */
  headerTimeoutMs: number;
  /** End of headers → response finished (longer than the apiserver's fixed 30 s). */
  requestTimeoutMs: number;
  /** Between requests on a keep-alive connection (keeps the apiserver's connections). */
  idleTimeoutMs: number;
  maxHeaderBytes: number;
}

export const DEFAULT_HTTP_LIMITS: Readonly<HttpLimits> = Object.freeze({
  headerTimeoutMs: 10_000,
  requestTimeoutMs: 35_000,
  idleTimeoutMs: 120_000,
  maxHeaderBytes: 1 << 20,
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
  readonly #timers = new Map<Socket, ReturnType<typeof setTimeout>>();
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
  ) {
    this.#server = server;
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

  get addr(): Deno.NetAddr {
    if (this.#addr === undefined) throw new Error("the listener is not listening");
    return this.#addr;
  }

  #arm(socket: Socket, ms: number): void {
    const old = this.#timers.get(socket);
    if (old !== undefined) clearTimeout(old);
    this.#timers.set(socket, setTimeout(() => socket.destroy(), ms));
  }

  #disarm(socket: Socket): void {
    const t = this.#timers.get(socket);
    if (t !== undefined) clearTimeout(t);
    this.#timers.delete(socket);
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

// --- the TLS listener with certificate reload -----------------------------------------------------

export interface KeyPairPem {
  cert: string;
  key: string;
}

export const CERT_FILE = "tls.crt";
export const KEY_FILE = "tls.key";

/** Reads `tls.crt` and `tls.key` from a directory. */
export async function readKeyPair(dir: string): Promise<KeyPairPem> {
  const [cert, key] = await Promise.all([
    Deno.readTextFile(join(dir, CERT_FILE)),
    Deno.readTextFile(join(dir, KEY_FILE)),
  ]);
  return { cert, key };
}

/** What a certificate pair is, for logs; throws when the pair does not parse or match. */
export function describeKeyPair(pair: KeyPairPem): { serial: string; notAfter: string } {
  const x509 = new X509Certificate(pair.cert);
  if (!x509.checkPrivateKey(createPrivateKey(pair.key))) {
    throw new Error("tls.key does not match the certificate in tls.crt");
  }
  return { serial: x509.serialNumber, notAfter: x509.validTo };
}

export interface TlsServerOptions {
  /** Go-style address, e.g. `:9443`. */
  address: string;
  /** Directory with `tls.crt` and `tls.key` (read on every poll) — or give `loadPair`. */
  certDir?: string;
  /**
   * Reads the current pair instead of `certDir` (e.g. from a Secret through the API); a throw
   * keeps the last good pair serving, like an unreadable file.
   */
  loadPair?: () => Promise<KeyPairPem>;
  /** What `loadPair` reads, for logs (e.g. `Secret ns/name`). */
  source?: string;
  /** `--cert-reload-interval` in ms; 0 disables polling (tests call `reloadNow`). */
  reloadIntervalMs: number;
  /** The request listener, e.g. `createNodeConvertListener(...)`. */
  listener: NodeListener;
  logger?: TlsLogger;
  limits?: Partial<HttpLimits>;
}

export type ReloadResult = "loaded" | "unchanged" | "reloaded" | "failed";

/** Reload bookkeeping (for logs, debugging and tests). */
export interface TlsReloadStats {
  /** Successful swaps after the first load. */
  reloads: number;
  /** Attempts that kept the previous pair (or none). */
  failures: number;
  lastError: string;
  lastErrorAt: Date | null;
  /** Serial of the certificate being served, "" before the first good pair. */
  serial: string;
}

/** A TLS listener with certificate reload (the conversion listener, the manager's admission). */
export class TlsServer implements ServerHandle {
  readonly #opts: TlsServerOptions;
  readonly #log: TlsLogger;
  readonly #core: NodeServer;
  readonly #tls: https.Server;
  #pair: KeyPairPem | undefined;
  #poll: ReturnType<typeof setInterval> | undefined;
  #busy: Promise<ReloadResult> = Promise.resolve("unchanged");
  #closing = false;
  readonly stats: TlsReloadStats = {
    reloads: 0,
    failures: 0,
    lastError: "",
    lastErrorAt: null,
    serial: "",
  };

  private constructor(opts: TlsServerOptions) {
    this.#opts = opts;
    this.#log = opts.logger ?? createLogger("tls");
    if ((opts.certDir === undefined) === (opts.loadPair === undefined)) {
      throw new Error("a TLS server needs exactly one of certDir and loadPair");
    }
    const limits = { ...DEFAULT_HTTP_LIMITS, ...opts.limits };
    // No certificate yet: handshakes fail until the first good pair is installed.
    this.#tls = https.createServer({
      ...serverOptions(limits),
      minVersion: "TLSv1.2",
      handshakeTimeout: limits.headerTimeoutMs, // enforced by Deno: covers accept → handshake
    });
    this.#core = new NodeServer(this.#tls, opts.listener, limits, "secureConnection");
    // Failed handshakes (no pair yet, a client that rejects the certificate) are not our error.
    this.#tls.on("tlsClientError", () => {});
  }

  /**
   * Listens, then loads the pair. Throws on a bind error (address in use, permission); a missing
   * or bad pair is logged, handshakes fail, and the poll keeps trying.
   */
  static async start(opts: TlsServerOptions): Promise<TlsServer> {
    const s = new TlsServer(opts);
    await s.#core.listen(parseBindAddress(opts.address));
    await s.reloadNow();
    if (opts.reloadIntervalMs > 0) {
      s.#poll = setInterval(() => void s.reloadNow(), opts.reloadIntervalMs);
    }
    return s;
  }

  get addr(): Deno.NetAddr {
    return this.#core.addr;
  }

  /** Whether a certificate pair is loaded (handshakes can succeed). */
  get hasCertificate(): boolean {
    return this.#pair !== undefined;
  }

  /** One poll: re-read the pair and install it when it changed and loads. Serialized. */
  reloadNow(): Promise<ReloadResult> {
    this.#busy = this.#busy.then(() => this.#reload());
    return this.#busy;
  }

  async #reload(): Promise<ReloadResult> {
    if (this.#closing) return "unchanged";
    let pair: KeyPairPem;
    let info: { serial: string; notAfter: string };
    try {
      pair = this.#opts.loadPair !== undefined
        ? await this.#opts.loadPair()
        : await readKeyPair(this.#opts.certDir!);
      if (this.#pair?.cert === pair.cert && this.#pair.key === pair.key) return "unchanged";
      // setSecureContext accepts garbage silently and then fails every handshake: check first.
      info = describeKeyPair(pair);
      this.#tls.setSecureContext({ cert: pair.cert, key: pair.key, minVersion: "TLSv1.2" });
    } catch (e) {
      return this.#failed(e);
    }
    const first = this.#pair === undefined;
    this.#pair = pair;
    this.stats.serial = info.serial;
    if (!first) this.stats.reloads++;
    this.#log.info(first ? "TLS certificate loaded" : "TLS certificate reloaded", {
      address: formatAddr(this.addr),
      source: this.#source(),
      serial: info.serial,
      notAfter: info.notAfter,
    });
    return first ? "loaded" : "reloaded";
  }

  #failed(e: unknown): ReloadResult {
    const message = e instanceof Error ? e.message : String(e);
    this.stats.failures++;
    this.stats.lastError = message;
    this.stats.lastErrorAt = new Date();
    this.#log.error(
      this.#pair === undefined
        ? "loading the TLS certificate failed; TLS handshakes fail until a good pair is readable"
        : "reloading the TLS certificate failed; keeping the current one",
      { source: this.#source(), error: message },
    );
    return "failed";
  }

  #source(): string {
    return this.#opts.source ?? this.#opts.certDir ?? "";
  }

  /** Stops polling, then shuts down gracefully (in-flight requests finish). */
  async shutdown(): Promise<void> {
    this.#closing = true;
    if (this.#poll !== undefined) clearInterval(this.#poll);
    this.#poll = undefined;
    await this.#busy.catch(() => {});
    await this.#core.shutdown();
  }

  forceClose(): void {
    this.#core.forceClose();
  }
}

// --- shutdown -------------------------------------------------------------------------------------

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
