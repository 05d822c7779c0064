/**
 * The manager's validating admission endpoints (api.md §4): AdmissionReview
 * (`admission.k8s.io/v1`) in, AdmissionReview out, decided by admission.ts.
 *
 * Layers, as for the conversion endpoint: `answerAdmission` is the transport-neutral core (path,
 * method and body bytes or decoded JSON in, HTTP status and response object out);
 * `createNodeAdmissionListener` adapts it to a `node:http`-style request listener, which is what
 * the manager hands to the webhook's `ConversionServer` (TLS with certificate reload, the pair
 * from the cert dir) or to {@link SecretTlsServer} (the same, the pair read from the self-issued
 * admission Secret through the API; src/manager/admission_certs.ts).
 *
 * Paths (api.md §4 table; the apiserver may append a query string such as `?timeout=10s`):
 *
 *   /validate-terasky-com-v1alpha1-xrdconversionconfig     XRDConversionConfig
 *   /validate-terasky-com-v1alpha1-crdconversionconfig     CRDConversionConfig
 *   /validate-terasky-com-v1alpha1-conversionwebhookserver ConversionWebhookServer
 *
 * HTTP answers: 404 unknown path, 405 not POST, 413 body over the cap, 400 a body that is not an
 * AdmissionReview v1 with a `request.uid`. Everything else is a 200 AdmissionReview carrying the
 * request uid: a denial has `status.code` 403 (reason `Forbidden`); a failure of the decision
 * itself (a cluster read threw) is a denial with code 500 — never a silent allow.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import https from "node:https";
import type { AddressInfo, Socket } from "node:net";
import { CRD_CONFIG_KIND, WEBHOOK_SERVER_KIND, XRD_CONFIG_KIND } from "../api/mod.ts";
import {
  type AdmissionContext,
  type AdmissionDecision,
  type AdmissionOperation,
  validateConfigAdmission,
  validateServerAdmission,
} from "./admission.ts";
import { createPrivateKey, X509Certificate } from "node:crypto";
import { createLogger, type Logger } from "../obs/log.ts";

export const ADMISSION_REVIEW_API_VERSION = "admission.k8s.io/v1";
export const ADMISSION_REVIEW_KIND = "AdmissionReview";

/** Path → the kind it validates. */
export const ADMISSION_PATHS = {
  "/validate-terasky-com-v1alpha1-xrdconversionconfig": XRD_CONFIG_KIND,
  "/validate-terasky-com-v1alpha1-crdconversionconfig": CRD_CONFIG_KIND,
  "/validate-terasky-com-v1alpha1-conversionwebhookserver": WEBHOOK_SERVER_KIND,
} as const;

export type AdmissionPath = keyof typeof ADMISSION_PATHS;
type ValidatedKind = typeof ADMISSION_PATHS[AdmissionPath];

/** Default request body cap: an object and its old copy, each up to etcd's 1.5 MiB, and slack. */
export const DEFAULT_MAX_ADMISSION_BYTES = 8 * 1024 * 1024;

export interface AdmissionResponseStatus {
  code: number;
  reason?: string;
  message: string;
}

/** `response` of an AdmissionReview as written by this handler. */
export interface AdmissionResponse {
  uid: string;
  allowed: boolean;
  status?: AdmissionResponseStatus;
  warnings?: string[];
}

export interface AdmissionReviewResponse {
  apiVersion: typeof ADMISSION_REVIEW_API_VERSION;
  kind: typeof ADMISSION_REVIEW_KIND;
  response: AdmissionResponse;
}

/** What the core decided: an HTTP status and either a review (200) or a plain-text error. */
export type AdmissionAnswer =
  | { status: 200; review: AdmissionReviewResponse }
  | { status: 400 | 404 | 405 | 413; error: string };

export interface AdmissionHandlerOptions {
  ctx: AdmissionContext;
  /** Body cap in bytes; default {@link DEFAULT_MAX_ADMISSION_BYTES}. */
  maxRequestBytes?: number;
  /** Called with a decision that threw (the review is answered as a 500 denial). */
  onError?: (error: unknown, path: AdmissionPath) => void;
}

const OPERATIONS: readonly AdmissionOperation[] = ["CREATE", "UPDATE", "DELETE", "CONNECT"];

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** The path without its query string, if it is one of {@link ADMISSION_PATHS}. */
export function admissionPathOf(url: string): AdmissionPath | undefined {
  const q = url.indexOf("?");
  const path = q < 0 ? url : url.slice(0, q);
  return Object.hasOwn(ADMISSION_PATHS, path) ? path as AdmissionPath : undefined;
}

interface ParsedRequest {
  uid: string;
  operation: AdmissionOperation;
  kind: string;
  name: string;
  object: unknown;
  oldObject: unknown;
}

function parseReview(body: unknown): ParsedRequest | string {
  if (!isRecord(body)) return "body is not a JSON object";
  if (body.apiVersion !== ADMISSION_REVIEW_API_VERSION || body.kind !== ADMISSION_REVIEW_KIND) {
    return `expected ${ADMISSION_REVIEW_API_VERSION} ${ADMISSION_REVIEW_KIND}, got ${
      JSON.stringify(body.apiVersion)
    } ${JSON.stringify(body.kind)}`;
  }
  const req = body.request;
  if (!isRecord(req)) return "request: missing";
  if (typeof req.uid !== "string" || req.uid === "") return "request.uid: missing";
  const operation = OPERATIONS.find((o) => o === req.operation);
  if (operation === undefined) {
    return `request.operation: unknown operation ${JSON.stringify(req.operation)}`;
  }
  const kind = isRecord(req.kind) && typeof req.kind.kind === "string" ? req.kind.kind : "";
  return {
    uid: req.uid,
    operation,
    kind,
    name: typeof req.name === "string" ? req.name : "",
    object: req.object ?? undefined,
    oldObject: req.oldObject ?? undefined,
  };
}

function review(uid: string, decision: AdmissionDecision, code = 403): AdmissionReviewResponse {
  const response: AdmissionResponse = decision.allowed
    ? { uid, allowed: true, ...(decision.warnings?.length ? { warnings: decision.warnings } : {}) }
    : {
      uid,
      allowed: false,
      status: {
        code,
        reason: code === 403 ? "Forbidden" : "InternalError",
        message: decision.message,
      },
    };
  return { apiVersion: ADMISSION_REVIEW_API_VERSION, kind: ADMISSION_REVIEW_KIND, response };
}

async function decide(
  kind: ValidatedKind,
  req: ParsedRequest,
  ctx: AdmissionContext,
): Promise<AdmissionDecision> {
  if (kind === WEBHOOK_SERVER_KIND) {
    // DELETE carries the stored object as oldObject; fall back to the request's name.
    const stored = req.oldObject ??
      (req.operation === "DELETE" && req.name !== ""
        ? { metadata: { name: req.name } }
        : undefined);
    return await validateServerAdmission(req.operation, req.object, stored, ctx);
  }
  return await validateConfigAdmission(kind, req.operation, req.object, req.oldObject, ctx);
}

const decoder = new TextDecoder("utf-8", { fatal: true });

/**
 * The transport-neutral core. `body` is the raw request body (bytes or text) or an already
 * decoded JSON value.
 */
export async function answerAdmission(
  opts: AdmissionHandlerOptions,
  url: string,
  method: string,
  body: Uint8Array | string | unknown,
): Promise<AdmissionAnswer> {
  const path = admissionPathOf(url);
  if (path === undefined) return { status: 404, error: "not found" };
  if (method !== "POST") return { status: 405, error: "method not allowed (POST only)" };
  let decoded: unknown = body;
  if (body instanceof Uint8Array || typeof body === "string") {
    const max = opts.maxRequestBytes ?? DEFAULT_MAX_ADMISSION_BYTES;
    const size = typeof body === "string" ? body.length : body.byteLength;
    if (size > max) return { status: 413, error: `request body exceeds ${max} bytes` };
    try {
      decoded = JSON.parse(typeof body === "string" ? body : decoder.decode(body));
    } catch (e) {
      return { status: 400, error: `malformed AdmissionReview: ${(e as Error).message}` };
    }
  }
  const req = parseReview(decoded);
  if (typeof req === "string") return { status: 400, error: `malformed AdmissionReview: ${req}` };
  const kind = ADMISSION_PATHS[path];
  if (req.kind !== "" && req.kind !== kind) {
    return {
      status: 200,
      review: review(req.uid, {
        allowed: false,
        message: `${path} validates ${kind}, not ${req.kind} (check the webhook registration)`,
      }, 400),
    };
  }
  try {
    return { status: 200, review: review(req.uid, await decide(kind, req, opts.ctx)) };
  } catch (e) {
    opts.onError?.(e, path);
    const message = `internal error while validating ${kind}: ${
      e instanceof Error ? e.message : String(e)
    }`;
    return { status: 200, review: review(req.uid, { allowed: false, message }, 500) };
  }
}

/** The bytes and content type of an answer. */
export function encodeAdmissionAnswer(
  a: AdmissionAnswer,
): { status: number; contentType: string; body: Uint8Array } {
  const encoder = new TextEncoder();
  return a.status === 200
    ? {
      status: 200,
      contentType: "application/json",
      body: encoder.encode(JSON.stringify(a.review)),
    }
    : {
      status: a.status,
      contentType: "text/plain; charset=utf-8",
      body: encoder.encode(`${a.error}\n`),
    };
}

/**
 * A `node:http`-style request listener for `ConversionServer` (TLS with reload): unknown paths
 * get 404 without reading the body; a body over the cap stops being buffered and gets 413 with
 * `Connection: close`.
 */
export function createNodeAdmissionListener(
  opts: AdmissionHandlerOptions,
): (req: IncomingMessage, res: ServerResponse) => void {
  const max = opts.maxRequestBytes ?? DEFAULT_MAX_ADMISSION_BYTES;
  return (req, res) => {
    const url = req.url ?? "";
    const method = req.method ?? "";
    const write = (a: AdmissionAnswer, close = false) => {
      const out = encodeAdmissionAnswer(a);
      res.writeHead(out.status, {
        "content-type": out.contentType,
        "content-length": String(out.body.byteLength),
        ...(close ? { connection: "close" } : {}),
      });
      res.end(out.body);
    };
    if (admissionPathOf(url) === undefined || method !== "POST") {
      answerAdmission(opts, url, method, new Uint8Array()).then((a) => {
        req.resume();
        write(a);
      }, () => res.destroy());
      return;
    }
    const chunks: Uint8Array[] = [];
    let size = 0;
    let over = false;
    req.on("data", (chunk: Uint8Array | string) => {
      if (over) return;
      const bytes = typeof chunk === "string" ? new TextEncoder().encode(chunk) : chunk;
      size += bytes.byteLength;
      if (size > max) {
        over = true;
        chunks.length = 0;
        write({ status: 413, error: `request body exceeds ${max} bytes` }, true);
        return;
      }
      chunks.push(bytes);
    });
    req.on("error", () => res.destroy());
    req.on("end", () => {
      if (over) return;
      const body = new Uint8Array(size);
      let at = 0;
      for (const c of chunks) {
        body.set(c, at);
        at += c.byteLength;
      }
      answerAdmission(opts, url, method, body).then((a) => write(a), () => res.destroy());
    });
  };
}

// ---------------------------------------------------------------------------------------------
// The admission TLS listener with a pluggable key-pair source
//
// The manager layer may not import the webhook layer (docs/architecture.md, enforced by
// tests/repo/layering_test.ts), so the few helpers of src/webhook/servers.ts this needs are
// restated here, structurally compatible with it: `SecretTlsServer` is a `ServerHandle` for
// `shutdownAll`, and the limits are `DEFAULT_HTTP_LIMITS`.

/** PEM certificate chain and private key. */
export interface KeyPairPem {
  cert: string;
  key: string;
}

type TlsLogger = Pick<Logger, "info" | "warn" | "error">;
type NodeListener = (req: IncomingMessage, res: ServerResponse) => void;

/** Server limits, as src/webhook/servers.ts `HttpLimits` (runtime §8.6 [P14]). */
export interface AdmissionHttpLimits {
  headerTimeoutMs: number;
  requestTimeoutMs: number;
  idleTimeoutMs: number;
  maxHeaderBytes: number;
}

/** The values of src/webhook/servers.ts `DEFAULT_HTTP_LIMITS`. */
export const DEFAULT_ADMISSION_HTTP_LIMITS: Readonly<AdmissionHttpLimits> = Object.freeze({
  headerTimeoutMs: 10_000,
  requestTimeoutMs: 35_000,
  idleTimeoutMs: 120_000,
  maxHeaderBytes: 1 << 20,
});

export type ReloadResult = "loaded" | "unchanged" | "reloaded" | "failed";

/** Reload bookkeeping (for logs, debugging and tests). */
export interface TlsReloadStats {
  reloads: number;
  failures: number;
  lastError: string;
  lastErrorAt: Date | null;
  /** Serial of the certificate being served, "" before the first good pair. */
  serial: string;
}

/** Go-style `[host]:port` (`:9443`, `127.0.0.1:0`, `[::1]:9443`); "" host = every interface. */
function parseBindAddress(address: string): { hostname: string; port: number } {
  const m = /^(?:\[([^\]]*)\]|([^:[\]]*)):(\d{1,5})$/.exec(address.trim());
  if (m === null || Number(m[3]) > 65535) {
    throw new Error(`invalid bind address ${JSON.stringify(address)}: want [host]:port`);
  }
  return { hostname: m[1] ?? m[2] ?? "", port: Number(m[3]) };
}

function formatAddr(addr: Deno.NetAddr): string {
  return addr.hostname.includes(":")
    ? `[${addr.hostname}]:${addr.port}`
    : `${addr.hostname}:${addr.port}`;
}

/** What a pair is, for logs; throws when it does not parse or the key does not match. */
function describeKeyPair(pair: KeyPairPem): { serial: string; notAfter: string } {
  const cert = new X509Certificate(pair.cert);
  if (!cert.checkPrivateKey(createPrivateKey(pair.key))) {
    throw new Error("tls.key does not match the certificate in tls.crt");
  }
  return { serial: cert.serialNumber, notAfter: cert.validTo };
}

/**
 * Where the admission listener's pair comes from: the cert dir (files mounted from a Secret by
 * cert-manager or the user; the webhook's `ConversionServer` reads those itself) or, for the self-issued
 * admission certificate (src/manager/admission_certs.ts), the Secret read through the API.
 */
export type KeyPairSource = () => Promise<KeyPairPem>;

export interface SecretTlsServerOptions {
  /** Go-style address, e.g. `:9443`. */
  address: string;
  /** Reads the current pair; a throw keeps the last good pair (or none) serving. */
  loadPair: KeyPairSource;
  /** What {@link SecretTlsServerOptions.loadPair} reads, for logs (e.g. `Secret ns/name`). */
  source: string;
  /** Poll interval in ms; 0 disables polling (call `reloadNow`). */
  reloadIntervalMs: number;
  listener: NodeListener;
  logger?: TlsLogger;
  limits?: Partial<AdmissionHttpLimits>;
}

/**
 * The admission listener when the pair is not in files: `node:https` with `setSecureContext`
 * reload, mirroring src/webhook/servers.ts `ConversionServer` (same TLS floor, HTTP limits, per-socket
 * timers, same "keep the last good pair" rule) with the pair read by a function instead of from
 * a directory. Before the first good pair the port listens and every handshake fails. It is a
 * `ServerHandle` of src/webhook/servers.ts (structurally) for `shutdownAll`.
 */
export class SecretTlsServer {
  readonly #opts: SecretTlsServerOptions;
  readonly #log: TlsLogger;
  readonly #tls: https.Server;
  readonly #timers = new Map<Socket, ReturnType<typeof setTimeout>>();
  #addr: Deno.NetAddr | undefined;
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

  private constructor(opts: SecretTlsServerOptions) {
    this.#opts = opts;
    this.#log = opts.logger ?? createLogger("manager.admission.tls");
    const l = { ...DEFAULT_ADMISSION_HTTP_LIMITS, ...opts.limits };
    this.#tls = https.createServer({
      noDelay: true,
      keepAliveTimeout: l.idleTimeoutMs,
      headersTimeout: l.headerTimeoutMs,
      requestTimeout: l.requestTimeoutMs,
      maxHeaderSize: l.maxHeaderBytes,
      minVersion: "TLSv1.2",
      handshakeTimeout: l.headerTimeoutMs,
    });
    this.#tls.on("tlsClientError", () => {});
    this.#tls.on("secureConnection", (socket: Socket) => {
      this.#arm(socket, l.headerTimeoutMs);
      socket.once("close", () => this.#disarm(socket));
    });
    this.#tls.on("request", (req: IncomingMessage, res: ServerResponse) => {
      const socket = req.socket;
      this.#arm(socket, l.requestTimeoutMs);
      res.once("finish", () => {
        if (this.#closing) socket.end();
        else this.#arm(socket, l.idleTimeoutMs + l.headerTimeoutMs);
      });
      opts.listener(req, res);
    });
  }

  /** Listens, then loads the pair. Throws on a bind error; a bad pair is logged and retried. */
  static async start(opts: SecretTlsServerOptions): Promise<SecretTlsServer> {
    const s = new SecretTlsServer(opts);
    await s.#listen(parseBindAddress(opts.address));
    await s.reloadNow();
    if (opts.reloadIntervalMs > 0) {
      s.#poll = setInterval(() => void s.reloadNow(), opts.reloadIntervalMs);
    }
    return s;
  }

  async #listen(bind: { hostname: string; port: number }): Promise<void> {
    const listenOn = (host: string) =>
      new Promise<void>((resolve, reject) => {
        const onError = (e: Error) => reject(e);
        this.#tls.once("error", onError);
        this.#tls.listen({ port: bind.port, host }, () => {
          this.#tls.off("error", onError);
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
    const a = this.#tls.address() as AddressInfo;
    this.#addr = { transport: "tcp", hostname: a.address, port: a.port };
  }

  get addr(): Deno.NetAddr {
    if (this.#addr === undefined) throw new Error("the listener is not listening");
    return this.#addr;
  }

  /** Whether a certificate pair is loaded (handshakes can succeed). */
  get hasCertificate(): boolean {
    return this.#pair !== undefined;
  }

  /** Re-read the pair and install it when it changed and loads. Serialized. */
  reloadNow(): Promise<ReloadResult> {
    this.#busy = this.#busy.then(() => this.#reload());
    return this.#busy;
  }

  async #reload(): Promise<ReloadResult> {
    if (this.#closing) return "unchanged";
    let pair: KeyPairPem;
    let info: { serial: string; notAfter: string };
    try {
      pair = await this.#opts.loadPair();
      if (this.#pair?.cert === pair.cert && this.#pair.key === pair.key) return "unchanged";
      // setSecureContext accepts garbage silently and then fails every handshake: check first.
      info = describeKeyPair(pair);
      this.#tls.setSecureContext({ cert: pair.cert, key: pair.key, minVersion: "TLSv1.2" });
    } catch (e) {
      const message = e instanceof Error ? e.message : String(e);
      this.stats.failures++;
      this.stats.lastError = message;
      this.stats.lastErrorAt = new Date();
      this.#log.error(
        this.#pair === undefined
          ? "loading the TLS certificate failed; TLS handshakes fail until a good pair is readable"
          : "reloading the TLS certificate failed; keeping the current one",
        { source: this.#opts.source, error: message },
      );
      return "failed";
    }
    const first = this.#pair === undefined;
    this.#pair = pair;
    this.stats.serial = info.serial;
    if (!first) this.stats.reloads++;
    this.#log.info(first ? "TLS certificate loaded" : "TLS certificate reloaded", {
      address: formatAddr(this.addr),
      source: this.#opts.source,
      serial: info.serial,
      notAfter: info.notAfter,
    });
    return first ? "loaded" : "reloaded";
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

  /** Stops polling, then shuts down gracefully (in-flight requests finish). */
  async shutdown(): Promise<void> {
    this.#closing = true;
    if (this.#poll !== undefined) clearInterval(this.#poll);
    this.#poll = undefined;
    await this.#busy.catch(() => {});
    const closed = new Promise<void>((resolve) => this.#tls.close(() => resolve()));
    this.#tls.closeIdleConnections();
    await closed;
  }

  forceClose(): void {
    this.#tls.closeAllConnections();
  }
}
