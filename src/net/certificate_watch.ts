/**
 * A serving certificate pair, watched: read from a directory (or a loader), checked before it is
 * used — it must parse, the key must match and the clock must be inside its validity, because
 * `setSecureContext` accepts garbage silently and then fails every handshake — and installed
 * wherever it serves (one `node:tls` server, or every conversion listener Worker). A pair that
 * fails keeps the last good one serving; every attempt reports the state the roles gate readiness
 * on and count failed reloads with.
 */
import { createPrivateKey, X509Certificate } from "node:crypto";
import { join } from "node:path";
import { createLogger, type Logger } from "../obs/log.ts";

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

/** Where a watch reads its pair, and what it does with a good one. */
export interface CertificateWatchOptions {
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
  /** Puts a checked pair into service; a throw counts as a failed attempt. */
  install: (pair: KeyPairPem) => void;
  /** Where the pair serves, for logs (e.g. `:9443`). */
  address?: () => string;
  logger?: TlsLogger;
  /** Runs after every load attempt with the result and the state it left (see {@link TlsState}). */
  onState?: (state: TlsState, result: ReloadResult) => void;
  /** The clock the validity check reads (default: the system clock). */
  now?: () => Date;
}

/** Polls a pair and installs each good change; see the module doc. */
export class CertificateWatch {
  readonly #opts: CertificateWatchOptions;
  readonly #log: TlsLogger;
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

  constructor(opts: CertificateWatchOptions) {
    if ((opts.certDir === undefined) === (opts.loadPair === undefined)) {
      throw new Error("a certificate watch needs exactly one of certDir and loadPair");
    }
    this.#opts = opts;
    this.#log = opts.logger ?? createLogger("tls");
  }

  /** Loads the pair once, then polls every `reloadIntervalMs`. */
  async start(): Promise<void> {
    await this.reloadNow();
    if (this.#opts.reloadIntervalMs > 0 && !this.#closing) {
      this.#poll = setInterval(() => void this.reloadNow(), this.#opts.reloadIntervalMs);
    }
  }

  /** The pair in service, if any. */
  get pair(): KeyPairPem | undefined {
    return this.#pair;
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

  /** Stops polling and waits for an attempt in progress. */
  async stop(): Promise<void> {
    this.#closing = true;
    if (this.#poll !== undefined) clearInterval(this.#poll);
    this.#poll = undefined;
    await this.#busy.catch(() => {});
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
      info = validateKeyPair(pair, this.#now());
      this.#opts.install(pair);
    } catch (e) {
      return this.#failed(e);
    }
    const first = this.#pair === undefined;
    this.#pair = pair;
    this.#info = info;
    this.stats.serial = info.serial;
    if (!first) this.stats.reloads++;
    this.#log.info(first ? "TLS certificate loaded" : "TLS certificate reloaded", {
      address: this.#opts.address?.(),
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
}
