/**
 * The manager's admission endpoints: AdmissionReview (`admission.k8s.io/v1`) in, AdmissionReview
 * out, decided by ./config.ts, ./server.ts and ./xrd_guard.ts.
 *
 * Layers, as for the conversion endpoint: `answerAdmission` is the transport-neutral core (path,
 * method and body bytes or decoded JSON in, HTTP status and response object out);
 * `createNodeAdmissionListener` adapts it to a `node:http`-style request listener, which the
 * manager serves on the shared `TlsServer` (src/net/tls_server.ts: TLS with certificate reload),
 * the pair read from the cert dir or, for the self-issued admission certificate, from its Secret
 * through the API (src/manager/admission_certs.ts).
 *
 * Paths (the apiserver may append a query string such as `?timeout=10s`):
 *
 *   /validate-terasky-com-v1alpha1-xrdconversionconfig     XRDConversionConfig
 *   /validate-terasky-com-v1alpha1-crdconversionconfig     CRDConversionConfig
 *   /validate-terasky-com-v1alpha1-conversionwebhookserver ConversionWebhookServer
 *
 * Mutating, only when {@link AdmissionHandlerOptions.xrdGuard} is set (XRD support only):
 *
 *   /guard-xrd-conversion                                  CompositeResourceDefinition (the XRD
 *                                                          conversion guard, ./xrd_guard.ts)
 *
 * The guard always allows; its answer carries a JSONPatch when it restores the conversion stanza,
 * and a guard decision never turns into a denial (it fails open).
 *
 * HTTP answers: 404 unknown path, 405 not POST, 413 body over the cap, 400 a body that is not an
 * AdmissionReview v1 with a `request.uid`. Everything else is a 200 AdmissionReview carrying the
 * request uid: a denial has `status.code` 403 (reason `Forbidden`); a failure of the decision
 * itself (a cluster read threw) is a denial with code 500 — never a silent allow.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { CRD_CONFIG_KIND, WEBHOOK_SERVER_KIND, XRD_CONFIG_KIND } from "../../api/mod.ts";
import { isRecord } from "../../lib/json.ts";
import { validateConfigAdmission } from "./config.ts";
import type { AdmissionContext, AdmissionDecision, AdmissionOperation } from "./context.ts";
import { validateServerAdmission } from "./server.ts";
import {
  decideXrdGuard,
  XRD_GUARD_PATH,
  type XrdConfigLookup,
  type XrdGuardDecision,
  xrdGuardResponse,
} from "./xrd_guard.ts";

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
  /** The XRD conversion guard's restore (base64 of the JSONPatch). */
  patchType?: "JSONPatch";
  patch?: string;
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
  /** Per-request accounting of the served webhooks (controller-runtime's webhook metrics). */
  metrics?: AdmissionRequestMetrics;
  /**
   * Called for every denied UPDATE or DELETE of a stored object (e.g. to record a Warning Event
   * on it); never for a CREATE, whose object does not exist yet.
   */
  onDenied?: (denial: AdmissionDenial) => void;
  /**
   * Serve the XRD conversion guard at {@link XRD_GUARD_PATH}; absent ⇒ that
   * path is unknown (404).
   */
  xrdGuard?: {
    /** The XRDConversionConfigs targeting an XRD (the config cache's `target` index). */
    lookup: XrdConfigLookup;
    /**
     * Before a restore: the configs `lookup` found, read again live (those still targeting the
     * XRD). A cache that has not yet seen a config's latest status would restore a stanza the
     * config no longer wants (a `FailClosed` revert marks `Applied=False` just before it writes the
     * XRD). Absent ⇒ the cached decision stands; a failed read ⇒ allow (the guard fails open).
     */
    confirm?: (xrdName: string, cached: readonly unknown[]) => Promise<readonly unknown[]>;
    /** Called with every decision (e.g. to log restores). */
    onDecision?: (decision: XrdGuardDecision, xrd: string, operation: string) => void;
  };
}

/** A refused change to an existing object. */
export interface AdmissionDenial {
  operation: "UPDATE" | "DELETE";
  /** The stored object (the review's `oldObject`). */
  object: { apiVersion?: string; kind?: string; metadata: Record<string, unknown> };
  /** The denial's status reason (`Forbidden`). */
  reason: string;
  message: string;
}

/**
 * Where the listener reports each request to a served path (the path, without query, is the
 * `webhook`): `started` when it arrives; the function it returns is called once with the HTTP
 * status of the answer.
 */
export interface AdmissionRequestMetrics {
  started(webhook: string): (code: number) => void;
}

const OPERATIONS: readonly AdmissionOperation[] = ["CREATE", "UPDATE", "DELETE", "CONNECT"];

/** The path without its query string, if it is one of {@link ADMISSION_PATHS}. */
export function admissionPathOf(url: string): AdmissionPath | undefined {
  const q = url.indexOf("?");
  const path = q < 0 ? url : url.slice(0, q);
  return Object.hasOwn(ADMISSION_PATHS, path) ? path as AdmissionPath : undefined;
}

/** The path without its query string. */
function barePath(url: string): string {
  const q = url.indexOf("?");
  return q < 0 ? url : url.slice(0, q);
}

/** Whether `url` is served by these options (a validating path, or the enabled guard's). */
function isServedPath(opts: AdmissionHandlerOptions, url: string): boolean {
  return admissionPathOf(url) !== undefined ||
    (opts.xrdGuard !== undefined && barePath(url) === XRD_GUARD_PATH);
}

interface ParsedRequest {
  uid: string;
  operation: AdmissionOperation;
  kind: string;
  group: string;
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
  const group = isRecord(req.kind) && typeof req.kind.group === "string" ? req.kind.group : "";
  return {
    uid: req.uid,
    operation,
    kind,
    group,
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

/** The XRD conversion guard's answer: always allowed, a JSONPatch when it restores. */
async function guardReview(
  opts: AdmissionHandlerOptions,
  req: ParsedRequest,
): Promise<AdmissionReviewResponse> {
  const guard = opts.xrdGuard!;
  const input = {
    operation: req.operation,
    name: req.name,
    kind: req.kind === "" && req.group === "" ? undefined : {
      ...(req.group !== "" ? { group: req.group } : {}),
      ...(req.kind !== "" ? { kind: req.kind } : {}),
    },
    object: req.object,
  };
  let looked: { xrdName: string; configs: readonly unknown[] } | undefined;
  let decision = decideXrdGuard(input, (xrdName) => {
    const configs = guard.lookup(xrdName);
    looked = { xrdName, configs };
    return configs;
  });
  if (decision.patch.length > 0 && guard.confirm !== undefined && looked !== undefined) {
    try {
      const live = await guard.confirm(looked.xrdName, looked.configs);
      decision = decideXrdGuard(input, () => live);
    } catch (e) {
      decision = {
        patch: [],
        reason: `cannot confirm the config live: ${e instanceof Error ? e.message : String(e)}`,
      };
    }
  }
  try {
    guard.onDecision?.(decision, req.name, req.operation);
  } catch {
    // a logging failure never changes the answer
  }
  return {
    apiVersion: ADMISSION_REVIEW_API_VERSION,
    kind: ADMISSION_REVIEW_KIND,
    response: xrdGuardResponse(req.uid, decision),
  };
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
  if (!isServedPath(opts, url)) return { status: 404, error: "not found" };
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
  const path = admissionPathOf(url);
  if (path === undefined) return { status: 200, review: await guardReview(opts, req) };
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
    const decision = await decide(kind, req, opts.ctx);
    if (!decision.allowed) reportDenial(opts, req, decision.message);
    return { status: 200, review: review(req.uid, decision) };
  } catch (e) {
    opts.onError?.(e, path);
    const message = `internal error while validating ${kind}: ${
      e instanceof Error ? e.message : String(e)
    }`;
    return { status: 200, review: review(req.uid, { allowed: false, message }, 500) };
  }
}

/** Hands a denied UPDATE/DELETE of a stored object to `onDenied` (a throw there is ignored). */
function reportDenial(opts: AdmissionHandlerOptions, req: ParsedRequest, message: string): void {
  if (opts.onDenied === undefined) return;
  if (req.operation !== "UPDATE" && req.operation !== "DELETE") return;
  const old = req.oldObject;
  if (!isRecord(old) || !isRecord(old.metadata) || typeof old.metadata.name !== "string") return;
  try {
    opts.onDenied({
      operation: req.operation,
      object: {
        ...(typeof old.apiVersion === "string" ? { apiVersion: old.apiVersion } : {}),
        ...(typeof old.kind === "string" ? { kind: old.kind } : {}),
        metadata: old.metadata,
      },
      reason: "Forbidden",
      message,
    });
  } catch {
    // Reporting a denial must never change the answer.
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
    const served = isServedPath(opts, url);
    const report = served ? opts.metrics?.started(barePath(url)) : undefined;
    let reported = false;
    const done = (code: number) => {
      if (reported) return;
      reported = true;
      report?.(code);
    };
    // An answer that never got written (a dropped connection) still leaves the in-flight count.
    res.once("close", () => done(res.headersSent ? res.statusCode : 500));
    const write = (a: AdmissionAnswer, close = false) => {
      const out = encodeAdmissionAnswer(a);
      done(out.status);
      res.writeHead(out.status, {
        "content-type": out.contentType,
        "content-length": String(out.body.byteLength),
        ...(close ? { connection: "close" } : {}),
      });
      res.end(out.body);
    };
    if (!served || method !== "POST") {
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
