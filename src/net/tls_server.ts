/**
 * A TLS listener that reloads its certificate pair in place (the webhook server's conversion
 * listener, the manager's admission listener): a `node:tls` server with `noDelay`, HTTP/1.1 only,
 * and `setSecureContext` to swap pairs — no second listener, no refused connections. HTTP on it is
 * either the lean core (src/net/http1_server.ts, given an `exchange` handler: the conversion
 * listener) or `node:https` (given a `listener`: admission, metrics).
 *
 * Certificates: a pair that fails to parse, whose key does not match, or that is outside its
 * validity keeps the last good one serving; before the first good pair the port listens but every
 * handshake fails, and polling continues. Every attempt reports the certificate state (`onState`):
 * the roles gate readiness on it and count failed reloads.
 */
import { createPrivateKey, X509Certificate } from "node:crypto";
import https from "node:https";
import tls from "node:tls";
import { join } from "node:path";
import { createLogger, type Logger } from "../obs/log.ts";
import { formatAddr, parseBindAddress } from "./bind_address.ts";
import { type Http1Handler, Http1Server } from "./http1_server.ts";
import { type NodeListener, NodeServer, serverOptions } from "./node_server.ts";
import {
  DEFAULT_HTTP_LIMITS,
  type HttpLimits,
  type ServerCore,
  type ServerHandle,
} from "./socket_limits.ts";

/** The part of the logger the servers use. */
export type TlsLogger = Pick<Logger, "info" | "warn" | "error">;

export interface KeyPairPem {
  cert: string;
  key: string;
}

export const CERT_FILE = "tls.crt";
export const KEY_FILE = "tls.key";

/** Reads `tls.crt` and `tls.key` from a directory; an error names the file. */
export async function readKeyPair(dir: string): Promise<KeyPairPem> {
  const read = (file: string) =>
    Deno.readTextFile(join(dir, file)).catch((e: unknown) => {
      throw new Error(`cannot read ${join(dir, file)}: ${e instanceof Error ? e.message : e}`);
    });
  const [cert, key] = await Promise.all([read(CERT_FILE), read(KEY_FILE)]);
  return { cert, key };
}

/** What a usable certificate pair is, for logs, metrics and readiness. */
export interface KeyPairInfo {
  serial: string;
  notBefore: Date;
  notAfter: Date;
}

/** The one-line reason a loaded pair is not usable at `now`, or "" while it is. */
export function validityProblem(
  info: Pick<KeyPairInfo, "notBefore" | "notAfter">,
  now: Date,
): string {
  if (now.getTime() > info.notAfter.getTime()) {
    return `the certificate in ${CERT_FILE} expired at ${info.notAfter.toISOString()}`;
  }
  if (now.getTime() < info.notBefore.getTime()) {
    return `the certificate in ${CERT_FILE} is not valid before ${info.notBefore.toISOString()}`;
  }
  return "";
}

/**
 * Checks that a pair can serve TLS at `now`: `tls.crt` parses as a PEM certificate, `tls.key` as a
 * PEM private key, the key matches the certificate, and `now` is inside its validity. Throws with
 * a one-line reason naming what is wrong.
 */
export function validateKeyPair(pair: KeyPairPem, now: Date = new Date()): KeyPairInfo {
  const reason = (e: unknown) => (e instanceof Error ? e.message : String(e)).replace(/\s+/g, " ");
  let x509: X509Certificate;
  try {
    if (!pair.cert.includes("-----BEGIN CERTIFICATE-----")) throw new Error("no CERTIFICATE block");
    x509 = new X509Certificate(pair.cert);
  } catch (e) {
    throw new Error(`${CERT_FILE} is not a PEM certificate (${reason(e)})`);
  }
  let key: ReturnType<typeof createPrivateKey>;
  try {
    key = createPrivateKey(pair.key);
  } catch (e) {
    throw new Error(`${KEY_FILE} is not a PEM private key (${reason(e)})`);
  }
  if (!x509.checkPrivateKey(key)) {
    throw new Error(`${KEY_FILE} does not match the certificate in ${CERT_FILE}`);
  }
  const info = {
    serial: x509.serialNumber,
    notBefore: x509.validFromDate,
    notAfter: x509.validToDate,
  };
  const problem = validityProblem(info, now);
  if (problem !== "") throw new Error(problem);
  return info;
}

/** Reads and validates the pair in `dir` (the webhook server's startup check). */
export async function loadKeyPair(dir: string, now: Date = new Date()): Promise<KeyPairInfo> {
  return validateKeyPair(await readKeyPair(dir), now);
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

/** What a TLS listener is serving with. */
export interface TlsState {
  /** "" while a usable pair is served, else why not, in one line (`/readyz` says it). */
  problem: string;
  /** The served certificate's notAfter; null before the first good pair. */
  notAfter: Date | null;
  /** The served certificate's serial; "" before the first good pair. */
  serial: string;
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
  readonly #core: ServerCore;
  readonly #tls: tls.Server;
  #pair: KeyPairPem | undefined;
  #info: KeyPairInfo | undefined;
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
    if ((opts.exchange === undefined) === (opts.listener === undefined)) {
      throw new Error("a TLS server needs exactly one of exchange and listener");
    }
    const limits = { ...DEFAULT_HTTP_LIMITS, ...opts.limits };
    // No certificate yet: handshakes fail until the first good pair is installed. The handshake
    // timeout covers accept → handshake done; Deno reports it as a client error and leaves the
    // socket open, so the client-error handler below closes it.
    const secure = { minVersion: "TLSv1.2", handshakeTimeout: limits.headerTimeoutMs } as const;
    if (opts.exchange !== undefined) {
      this.#tls = tls.createServer({ ...secure, ALPNProtocols: ["http/1.1"] });
      this.#core = new Http1Server(
        this.#tls,
        opts.exchange,
        limits,
        "secureConnection",
        opts.onConnectionRefused,
      );
    } else {
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

  /** Open connections on the port. */
  get connections(): number {
    return this.#core.connections;
  }

  /** Whether a certificate pair is loaded (handshakes can succeed). */
  get hasCertificate(): boolean {
    return this.#pair !== undefined;
  }

  /** The state after the last attempt, re-checked against the clock now. */
  get state(): TlsState {
    const info = this.#info;
    let problem = "";
    if (info === undefined) {
      problem = `no usable TLS certificate loaded from ${this.#source()}` +
        (this.stats.lastError !== "" ? `: ${this.stats.lastError}` : "");
    } else {
      const invalid = validityProblem(info, this.#now());
      if (invalid !== "") problem = `the served TLS certificate is unusable: ${invalid}`;
    }
    return { problem, notAfter: info?.notAfter ?? null, serial: info?.serial ?? "" };
  }

  /** One poll: re-read the pair and install it when it changed and loads. Serialized. */
  reloadNow(): Promise<ReloadResult> {
    this.#busy = this.#busy.then(async () => {
      const result = await this.#reload();
      try {
        if (!this.#closing) this.#opts.onState?.(this.state, result);
      } catch (e) {
        this.#log.error("TLS certificate state callback failed", { error: e });
      }
      return result;
    });
    return this.#busy;
  }

  #now(): Date {
    return this.#opts.now?.() ?? new Date();
  }

  async #reload(): Promise<ReloadResult> {
    if (this.#closing) return "unchanged";
    let pair: KeyPairPem;
    let info: KeyPairInfo;
    try {
      pair = this.#opts.loadPair !== undefined
        ? await this.#opts.loadPair()
        : await readKeyPair(this.#opts.certDir!);
      if (this.#pair?.cert === pair.cert && this.#pair.key === pair.key) return "unchanged";
      // setSecureContext accepts garbage silently and then fails every handshake: check first.
      info = validateKeyPair(pair, this.#now());
      this.#tls.setSecureContext({ cert: pair.cert, key: pair.key, minVersion: "TLSv1.2" });
    } catch (e) {
      return this.#failed(e);
    }
    const first = this.#pair === undefined;
    this.#pair = pair;
    this.#info = info;
    this.stats.serial = info.serial;
    if (!first) this.stats.reloads++;
    this.#log.info(first ? "TLS certificate loaded" : "TLS certificate reloaded", {
      address: formatAddr(this.addr),
      source: this.#source(),
      serial: info.serial,
      notAfter: info.notAfter.toISOString(),
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
