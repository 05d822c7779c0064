/**
 * A TLS listener that reloads its certificate pair in place (the webhook server's conversion
 * listener, the manager's admission listener): a `node:tls` server with `noDelay`, HTTP/1.1 only,
 * and `setSecureContext` to swap pairs — no second listener, no refused connections. HTTP on it is
 * either the lean core (src/net/http1_server.ts, given an `exchange` handler: the conversion
 * listener) or `node:https` (given a `listener`: admission, metrics).
 *
 * Certificates (src/net/certificate_watch.ts): a pair that fails to parse, whose key does not
 * match, or that is outside its validity keeps the last good one serving; before the first good
 * pair the port listens but every handshake fails, and polling continues. Every attempt reports
 * the certificate state (`onState`): the roles gate readiness on it and count failed reloads.
 */
import https from "node:https";
import tls from "node:tls";
import { formatAddr, parseBindAddress } from "./bind_address.ts";
import {
  CertificateWatch,
  type KeyPairPem,
  type ReloadResult,
  type TlsLogger,
  type TlsReloadStats,
  type TlsState,
} from "./certificate_watch.ts";
import { type Http1Handler, Http1Server } from "./http1_server.ts";
import { type NodeListener, NodeServer, serverOptions } from "./node_server.ts";
import {
  DEFAULT_HTTP_LIMITS,
  type HttpLimits,
  type PortShare,
  type ServerCore,
  type ServerHandle,
} from "./socket_limits.ts";

export interface TlsServerOptions {
  /** Go-style address, e.g. `:9443`. */
  address: string;
  /** Directory with `tls.crt` and `tls.key` (read on every poll) — or give `loadPair`. */
  certDir?: string;
  /**
   * Reads the current pair instead of `certDir` (e.g. from a Secret through the API, or the pair
   * the main thread handed a listener Worker); a throw keeps the last good pair serving, like an
   * unreadable file.
   */
  loadPair?: () => Promise<KeyPairPem>;
  /** What `loadPair` reads, for logs (e.g. `Secret ns/name`). */
  source?: string;
  /** `--cert-reload-interval` in ms; 0 disables polling (tests call `reloadNow`). */
  reloadIntervalMs: number;
  /**
   * One of several servers on one port (the conversion listener Workers): bound with
   * `SO_REUSEPORT`, the connection cap counted over all of them.
   */
  share?: PortShare;
  /** HTTP on the lean core: the conversion listener's `createConvertExchange(...)`. */
  exchange?: Http1Handler;
  /** HTTP on `node:https` instead: a request listener (admission, metrics). */
  listener?: NodeListener;
  logger?: TlsLogger;
  limits?: Partial<HttpLimits>;
  /** Runs after every load attempt with the result and the state it left (see {@link TlsState}). */
  onState?: (state: TlsState, result: ReloadResult) => void;
  /** The clock the validity check reads (default: the system clock). */
  now?: () => Date;
  /** A connection over `limits.maxConnections` was closed (e.g. a rejection counter). */
  onConnectionRefused?: () => void;
}

/** A TLS listener with certificate reload (the conversion listener, the manager's admission). */
export class TlsServer implements ServerHandle {
  readonly #core: ServerCore;
  readonly #tls: tls.Server;
  readonly #watch: CertificateWatch;

  private constructor(opts: TlsServerOptions) {
    if ((opts.exchange === undefined) === (opts.listener === undefined)) {
      throw new Error("a TLS server needs exactly one of exchange and listener");
    }
    const limits = { ...DEFAULT_HTTP_LIMITS, ...opts.limits };
    // No certificate yet: handshakes fail until the first good pair is installed. The handshake
    // timeout covers accept → handshake done; Deno reports it as a client error and leaves the
    // socket open, so the client-error handler below closes it.
    const secure = { minVersion: "TLSv1.2", handshakeTimeout: limits.headerTimeoutMs } as const;
    if (opts.exchange !== undefined) {
      const server = tls.createServer({ ...secure, ALPNProtocols: ["http/1.1"] });
      this.#tls = server;
      this.#core = new Http1Server(
        server,
        opts.exchange,
        limits,
        "secureConnection",
        opts.onConnectionRefused,
        opts.share,
      );
    } else {
      if (opts.share !== undefined) throw new Error("only the lean core shares a port");
      const server = https.createServer({ ...serverOptions(limits), ...secure });
      this.#tls = server;
      this.#core = new NodeServer(
        server,
        opts.listener!,
        limits,
        "secureConnection",
        opts.onConnectionRefused,
      );
    }
    // Failed or timed-out handshakes (no pair yet, a client that rejects the certificate, a client
    // that never starts) are not our error, but their sockets must not stay open.
    this.#tls.on("tlsClientError", (_e: Error, socket: tls.TLSSocket) => socket.destroy());
    const server = this.#tls;
    this.#watch = new CertificateWatch({
      certDir: opts.certDir,
      loadPair: opts.loadPair,
      source: opts.source,
      reloadIntervalMs: opts.reloadIntervalMs,
      install: (pair) =>
        server.setSecureContext({ cert: pair.cert, key: pair.key, minVersion: "TLSv1.2" }),
      address: () => formatAddr(this.addr),
      logger: opts.logger,
      onState: opts.onState,
      now: opts.now,
    });
  }

  /**
   * Listens, then loads the pair. Throws on a bind error (address in use, permission); a missing
   * or bad pair is logged, handshakes fail, and the poll keeps trying.
   */
  static async start(opts: TlsServerOptions): Promise<TlsServer> {
    const s = new TlsServer(opts);
    await s.#core.listen(parseBindAddress(opts.address));
    await s.#watch.start();
    return s;
  }

  get addr(): Deno.NetAddr {
    return this.#core.addr;
  }

  /** Open connections on this server. */
  get connections(): number {
    return this.#core.connections;
  }

  /** Whether a certificate pair is loaded (handshakes can succeed). */
  get hasCertificate(): boolean {
    return this.#watch.pair !== undefined;
  }

  /** The state after the last attempt, re-checked against the clock now. */
  get state(): TlsState {
    return this.#watch.state;
  }

  /** Reload bookkeeping (for logs, debugging and tests). */
  get stats(): TlsReloadStats {
    return this.#watch.stats;
  }

  /** One poll: re-read the pair and install it when it changed and loads. Serialized. */
  reloadNow(): Promise<ReloadResult> {
    return this.#watch.reloadNow();
  }

  /** Stops polling, then shuts down gracefully (in-flight requests finish). */
  async shutdown(): Promise<void> {
    await this.#watch.stop();
    await this.#core.shutdown();
  }

  forceClose(): void {
    this.#core.forceClose();
  }
}
