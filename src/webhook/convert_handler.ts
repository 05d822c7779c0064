/**
 * `POST /convert/<target>`: the conversion hot path (design.md "The conversion hot path",
 * runtime.md §8.6). Read the body with a byte cap → check nesting → parse → one registry lookup
 * → convert each object (input never mutated) → stringify → one write. No logging per object and
 * no schema work per request: plans were linked when they were installed.
 *
 * Layers: `convertReviewBytes` (the synchronous core: bytes in, answer bytes out, metrics
 * recorded) ← `answerConvert` (method and body cases, transport-neutral) ← the adapters:
 * `createNodeConvertListener` for the TLS listener (servers.ts explains why `node:https`) and
 * `createConvertHandler` (fetch-style) for in-process use.
 *
 * The cases of §8.6 are checked in the table's order; every answer except 405 and 400 is a 200
 * `apiextensions.k8s.io/v1` ConversionReview carrying the request uid, because the apiserver turns
 * any other status into an opaque "invalid response" for the user.
 *
 * Nesting limit: {@link DEFAULT_MAX_JSON_DEPTH} levels counted from the ConversionReview root.
 * The envelope takes 4 (review, request, objects, object), so an object's fields can nest 96
 * deep — far beyond real Kubernetes objects. It is checked on the decoded text before
 * `JSON.parse`: V8's parser and stringifier survive any depth, but the engine's copies recurse,
 * so a 10,000-deep object would otherwise end as a stack overflow ("panic"). A body over the
 * limit gets a 200 Failure (`bad_request`) with the uid recovered like a too-large body's, for
 * the same reason as above.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { ConversionError, convertObject, type JsonObject, versionOf } from "../engine/mod.ts";
import { createLogger } from "../obs/log.ts";
import type { WebhookLogger } from "./_log.ts";
import type { ConversionMetrics, LossyDirection, Observer, ReviewResult } from "./metrics.ts";
import type { RegistryEntry } from "./registry.ts";

export const REVIEW_API_VERSION = "apiextensions.k8s.io/v1";
export const REVIEW_KIND = "ConversionReview";
/** Default `--max-request-bytes` (32 MiB). */
export const DEFAULT_MAX_REQUEST_BYTES = 32 * 1024 * 1024;
/** Default `--request-timeout` (30 s). */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
/** Deepest accepted JSON nesting of a request body, envelope included. */
export const DEFAULT_MAX_JSON_DEPTH = 100;
/** How much of a rejected body is kept to recover the request uid. */
export const UID_SCAN_BYTES = 8 * 1024;

/** The registry read the handler needs (one lookup per request). */
export interface PlanLookup {
  get(target: string): RegistryEntry | undefined;
}

export interface ConvertHandlerOptions {
  registry: PlanLookup;
  /** Omit for no metrics (benchmarks of the bare path). */
  metrics?: ConversionMetrics;
  logger?: WebhookLogger;
  /** `--max-request-bytes`; > 0. */
  maxRequestBytes?: number;
  /** `--request-timeout` in ms; > 0. */
  requestTimeoutMs?: number;
  maxJsonDepth?: number;
  /** Monotonic milliseconds (tests inject a clock to exercise the request budget). */
  clock?: () => number;
}

/** What the core decided; `body` is the exact bytes to write. */
export interface ReviewOutcome {
  status: 200 | 400;
  body: Uint8Array;
  contentType: string;
  /** Metric `result`. */
  result: ReviewResult;
  /** Request-level direction label: `<from>-><to>`, `unknown` or `mixed`. */
  direction: string;
  uid: string;
}

/** Resolved options shared by the core and the HTTP wrapper. */
export interface ConvertContext {
  readonly registry: PlanLookup;
  readonly metrics: ConversionMetrics | undefined;
  readonly logger: WebhookLogger;
  readonly maxRequestBytes: number;
  readonly requestTimeoutMs: number;
  readonly maxJsonDepth: number;
  readonly clock: () => number;
}

export function convertContext(opts: ConvertHandlerOptions): ConvertContext {
  const maxRequestBytes = opts.maxRequestBytes ?? DEFAULT_MAX_REQUEST_BYTES;
  const requestTimeoutMs = opts.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  const maxJsonDepth = opts.maxJsonDepth ?? DEFAULT_MAX_JSON_DEPTH;
  if (!(maxRequestBytes > 0)) throw new RangeError("maxRequestBytes must be > 0");
  if (!(requestTimeoutMs > 0)) throw new RangeError("requestTimeoutMs must be > 0");
  if (!(maxJsonDepth >= 4)) throw new RangeError("maxJsonDepth must be >= 4");
  return {
    registry: opts.registry,
    metrics: opts.metrics,
    logger: opts.logger ?? createLogger("webhook.convert"),
    maxRequestBytes,
    requestTimeoutMs,
    maxJsonDepth,
    clock: opts.clock ?? (() => performance.now()),
  };
}

// --- responses ------------------------------------------------------------------------------------

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const JSON_TYPE = "application/json";
const TEXT_TYPE = "text/plain; charset=utf-8";

/**
 * A response whose body is ONE chunk of a `ReadableStream`. On Deno.serve over TLS + HTTP/1.1 a
 * fixed body over ~1 KB stalls ~44 ms (Nagle + delayed ACK); one chunk avoids that for answers
 * up to one TLS record (~16 KB), not beyond and not on HTTP/2 (servers.ts has the numbers).
 */
export function oneChunkResponse(
  status: number,
  body: Uint8Array,
  contentType: string,
  headers: Record<string, string> = {},
): Response {
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(body);
      controller.close();
    },
  });
  return new Response(stream, { status, headers: { ...headers, "content-type": contentType } });
}

function failureBody(uid: string, message: string): Uint8Array {
  return encoder.encode(JSON.stringify({
    apiVersion: REVIEW_API_VERSION,
    kind: REVIEW_KIND,
    response: { uid, result: { status: "Failure", message } },
  }));
}

// --- body limits ----------------------------------------------------------------------------------

export type BodyRead =
  | { ok: true; bytes: Uint8Array }
  /** Over the limit: `head` is (up to) the first 8 KiB, for uid recovery. */
  | { ok: false; head: Uint8Array };

/**
 * Reads a body counting bytes, never holding more than `limit` + one chunk; works on a fetch
 * `ReadableStream` and a node `IncomingMessage` alike (both are async-iterable). A declared
 * Content-Length over the limit stops after the first 8 KiB. On "too large" the iterator is left
 * where it stopped (not returned): the caller decides how to drop the rest of the body.
 */
export async function readBodyLimited(
  body: AsyncIterable<Uint8Array> | null,
  limit: number,
  declaredLength: number | undefined,
): Promise<BodyRead> {
  if (body === null) return { ok: true, bytes: new Uint8Array(0) };
  const it = body[Symbol.asyncIterator]();
  const declaredOver = declaredLength !== undefined && declaredLength > limit;
  const stopAt = declaredOver ? UID_SCAN_BYTES : limit;
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await it.next();
    if (done) break;
    chunks.push(value);
    total += value.byteLength;
    if (total > stopAt) break;
  }
  if (total > limit || declaredOver) {
    return { ok: false, head: concat(chunks, Math.min(total, UID_SCAN_BYTES)) };
  }
  return { ok: true, bytes: concat(chunks, total) };
}

/** The first `length` bytes of `chunks` as one array (no copy for a single chunk). */
function concat(chunks: Uint8Array[], length: number): Uint8Array {
  if (chunks.length === 1 && chunks[0].byteLength === length) return chunks[0];
  const out = new Uint8Array(length);
  let at = 0;
  for (const c of chunks) {
    if (at >= length) break;
    const part = c.byteLength <= length - at ? c : c.subarray(0, length - at);
    out.set(part, at);
    at += part.byteLength;
  }
  return out;
}

/**
 * Whether JSON text nests deeper than `max` (brackets inside strings ignored). Malformed text is
 * left to `JSON.parse`. Runs on the decoded string, where `indexOf` skips string contents with
 * memchr: ~20 % of parse + stringify for ordinary objects, and long annotation values cost
 * almost nothing (a byte-table scan over the `Uint8Array` was 1.5× parse for 10 KB objects).
 */
export function nestingExceeds(s: string, max: number): boolean {
  let depth = 0;
  const n = s.length;
  let i = 0;
  while (i < n) {
    const c = s.charCodeAt(i++);
    if (c === 0x22) {
      for (;;) {
        const q = s.indexOf('"', i);
        if (q < 0) return false;
        i = q + 1;
        if (s.charCodeAt(q - 1) !== 0x5c) break;
        let backslashes = 0;
        for (let j = q - 1; s.charCodeAt(j) === 0x5c; j--) backslashes++;
        if ((backslashes & 1) === 0) break; // an escaped backslash, not an escaped quote
      }
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) return true;
    } else if (c === 0x7d || c === 0x5d) {
      depth--;
    }
  }
  return false;
}

/**
 * Best-effort uid of a body we will not parse: the first complete string value of key `uid`
 * directly inside the top-level `request` object, found by a tolerant tokenizer over the given
 * prefix (truncated input simply yields ""). Never throws.
 */
export function recoverUid(head: Uint8Array | string): string {
  const s = typeof head === "string" ? head : decoder.decode(head);
  // Container stack: "o" object, "a" array; `keys[d]` = last key read at depth d.
  const stack: string[] = [];
  const keys: (string | undefined)[] = [];
  let expectKey = false;
  let i = 0;
  const n = s.length;
  const readString = (): string | undefined => {
    // s[i] is the opening quote.
    let j = i + 1;
    while (j < n) {
      const c = s.charCodeAt(j);
      if (c === 0x5c) j += 2;
      else if (c === 0x22) break;
      else j++;
    }
    if (j >= n) return undefined;
    const raw = s.slice(i, j + 1);
    i = j + 1;
    try {
      return JSON.parse(raw) as string;
    } catch {
      return undefined;
    }
  };
  while (i < n) {
    const c = s[i];
    if (c === '"') {
      const str = readString();
      if (str === undefined) return "";
      const d = stack.length;
      if (expectKey && stack[d - 1] === "o") {
        keys[d] = str;
        expectKey = false;
      } else if (
        d === 2 && stack[1] === "o" && keys[1] === "request" && keys[2] === "uid" &&
        stack[0] === "o"
      ) {
        return str;
      }
      continue;
    }
    if (c === "{") {
      stack.push("o");
      keys[stack.length] = undefined;
      expectKey = true;
    } else if (c === "[") {
      stack.push("a");
      expectKey = false;
    } else if (c === "}" || c === "]") {
      stack.pop();
      expectKey = false;
    } else if (c === ",") {
      expectKey = stack[stack.length - 1] === "o";
    } else if (c === ":") {
      expectKey = false;
    }
    i++;
  }
  return "";
}

// --- the core -------------------------------------------------------------------------------------

function isPlainObject(v: unknown): v is JsonObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function registryMissMessage(target: string, entry: RegistryEntry | undefined): string {
  const kind = entry === undefined ? "XRD/CRD" : entry.kind === "xrd" ? "XRD" : "CRD";
  const last = entry !== undefined && entry.lastError !== ""
    ? ` (last compile error: ${entry.lastError})`
    : "";
  return `no conversion plan registered for ${kind} ${JSON.stringify(target)} on this replica` +
    `${last}; check the conversion config's status and /debug/registry, or retry shortly`;
}

/** Per-direction tallies of one request, flushed to the counters once. */
interface DirectionTally {
  from: string;
  to: string;
  /** `<from>-><to>` */
  direction: string;
  success: number;
  error: number;
  lossy: LossyDirection | null;
  /** Duration series, resolved once per request and direction. */
  okTimer: Observer | undefined;
}

function lossyDirection(entry: RegistryEntry, from: string, to: string): LossyDirection | null {
  const hub = entry.hubVersion;
  if (from === hub && to !== hub) {
    return entry.lossless[to]?.hubToSpoke === false ? "hub_to_spoke" : null;
  }
  if (to === hub && from !== hub) {
    return entry.lossless[from]?.spokeToHub === false ? "spoke_to_hub" : null;
  }
  return null; // same version, or spoke→spoke (not counted: spec gap through phase 15)
}

/**
 * The synchronous core: decides the answer for one body already read within the limit. Records
 * every metric of the request (review, batch, objects, lossy, panics). `startedAt` is the
 * `clock()` reading when the request arrived (the review-duration origin).
 */
export function convertReviewBytes(
  ctx: ConvertContext,
  target: string,
  bytes: Uint8Array,
  startedAt: number = ctx.clock(),
): ReviewOutcome {
  // The budget starts once the body is read (§8.6), so parsing a large body counts against it.
  const state: CoreState = {
    uid: "",
    direction: "unknown",
    tallies: undefined,
    deadline: ctx.clock() + ctx.requestTimeoutMs,
  };
  let outcome: ReviewOutcome;
  try {
    outcome = core(ctx, target, bytes, state);
  } catch (e) {
    // Anything not anticipated is a bug ("panic"): answer it as a Failure and keep serving.
    ctx.metrics?.countPanic(target);
    ctx.logger.error("panic while serving a ConversionReview", {
      target,
      uid: state.uid,
      error: e,
    });
    const message = `internal error: ${e instanceof Error ? e.message : String(e)}`;
    outcome = {
      status: 200,
      body: failureBody(state.uid, message),
      contentType: JSON_TYPE,
      result: "panic",
      direction: state.direction,
      uid: state.uid,
    };
  } finally {
    flushTallies(ctx, target, state);
  }
  ctx.metrics?.observeReview(
    metricTarget(ctx, target),
    outcome.direction,
    outcome.result,
    (ctx.clock() - startedAt) / 1000,
  );
  return outcome;
}

interface CoreState {
  uid: string;
  direction: string;
  tallies: Map<string, DirectionTally> | undefined;
  /** `clock()` value after which no further object is started. */
  deadline: number;
}

function flushTallies(ctx: ConvertContext, target: string, state: CoreState): void {
  const m = ctx.metrics;
  if (m === undefined || state.tallies === undefined) return;
  for (const t of state.tallies.values()) {
    if (t.success > 0) m.countObjects(target, t.from, t.to, "success", t.success);
    if (t.error > 0) m.countObjects(target, t.from, t.to, "error", t.error);
    if (t.lossy !== null) m.countLossy(target, t.lossy, t.success + t.error);
  }
}

function badRequest(message: string): ReviewOutcome {
  return {
    status: 400,
    body: encoder.encode(message + "\n"),
    contentType: TEXT_TYPE,
    result: "bad_request",
    direction: "unknown",
    uid: "",
  };
}

/**
 * The `target` label: the path's target only when the registry knows it. Anyone who can reach the
 * port chooses the path, so unknown targets share one series instead of creating new ones.
 */
export const UNREGISTERED_TARGET_LABEL = "(unregistered)";

function metricTarget(ctx: ConvertContext, target: string): string {
  return ctx.registry.get(target) === undefined ? UNREGISTERED_TARGET_LABEL : target;
}

function failure(state: CoreState, result: ReviewResult, message: string): ReviewOutcome {
  return {
    status: 200,
    body: failureBody(state.uid, message),
    contentType: JSON_TYPE,
    result,
    direction: state.direction,
    uid: state.uid,
  };
}

function core(
  ctx: ConvertContext,
  target: string,
  bytes: Uint8Array,
  state: CoreState,
): ReviewOutcome {
  const text = decoder.decode(bytes);
  if (nestingExceeds(text, ctx.maxJsonDepth)) {
    state.uid = recoverUid(bytes.subarray(0, UID_SCAN_BYTES));
    return failure(
      state,
      "bad_request",
      `decoding request: JSON nesting exceeds the ${ctx.maxJsonDepth}-level limit`,
    );
  }
  let review: unknown;
  try {
    review = JSON.parse(text);
  } catch (e) {
    return badRequest(`request body is not JSON: ${(e as Error).message}`);
  }
  if (
    !isPlainObject(review) || review.kind !== REVIEW_KIND ||
    review.apiVersion !== REVIEW_API_VERSION
  ) {
    return badRequest(`request body is not a ${REVIEW_API_VERSION} ${REVIEW_KIND}`);
  }
  const request = review.request;
  if (!isPlainObject(request)) return badRequest("ConversionReview has no request");
  if (typeof request.uid !== "string") return badRequest("ConversionReview request has no uid");
  state.uid = request.uid;

  const entry = ctx.registry.get(target);
  if (entry === undefined || entry.router === null) {
    return failure(state, "not_registered", registryMissMessage(target, entry));
  }
  const router = entry.router;

  const desired = request.desiredAPIVersion;
  const objects = request.objects ?? [];
  if (typeof desired !== "string" || desired === "" || !Array.isArray(objects)) {
    return failure(
      state,
      "bad_request",
      typeof desired !== "string" || desired === ""
        ? "decoding request: desiredAPIVersion is missing"
        : "decoding request: objects is not a list",
    );
  }
  const n = objects.length;
  ctx.metrics?.observeBatchSize(target, n);
  const to = versionOf(desired);
  const converted: JsonObject[] = new Array(n);
  const tallies = new Map<string, DirectionTally>();
  state.tallies = tallies;
  const metrics = ctx.metrics;

  // One clock reading per object: the end of one object is the start of the next.
  let now = ctx.clock();
  const deadline = state.deadline;
  // Batches are nearly always one direction: skip the tally lookup while apiVersion repeats.
  let lastApiVersion = "";
  let tally: DirectionTally | undefined;
  for (let i = 0; i < n; i++) {
    const start = now;
    if (start >= deadline) {
      return failure(
        state,
        "timeout",
        `conversion budget of ${ctx.requestTimeoutMs / 1000}s exceeded after ${i} of ${n} ` +
          `objects; raise --request-timeout or send smaller batches`,
      );
    }
    const obj = objects[i];
    if (!isPlainObject(obj)) {
      return failure(state, "bad_request", `decoding object ${i}: not a JSON object`);
    }
    const apiVersion = obj.apiVersion;
    if (typeof apiVersion !== "string" || apiVersion === "") {
      return failure(state, "bad_request", `decoding object ${i}: apiVersion is missing`);
    }
    if (tally === undefined || apiVersion !== lastApiVersion) {
      const from = versionOf(apiVersion);
      const direction = `${from}->${to}`;
      tally = tallies.get(direction);
      if (tally === undefined) {
        tally = {
          from,
          to,
          direction,
          success: 0,
          error: 0,
          lossy: lossyDirection(entry, from, to),
          okTimer: metrics?.objectDuration(target, direction, "success"),
        };
        tallies.set(direction, tally);
        state.direction = tallies.size === 1 ? direction : "mixed";
      }
      lastApiVersion = apiVersion;
    }
    try {
      converted[i] = convertObject(router, obj, desired);
    } catch (e) {
      tally.error++;
      metrics?.objectDuration(target, tally.direction, "error").observe(
        (ctx.clock() - start) / 1000,
      );
      if (e instanceof ConversionError) {
        return failure(state, "error", `converting ${tally.from} -> ${to}: ${e.message}`);
      }
      throw e;
    }
    now = ctx.clock();
    tally.success++;
    tally.okTimer?.observe((now - start) / 1000);
  }

  let body: Uint8Array;
  try {
    body = encoder.encode(JSON.stringify({
      apiVersion: REVIEW_API_VERSION,
      kind: REVIEW_KIND,
      response: { uid: state.uid, result: { status: "Success" }, convertedObjects: converted },
    }));
  } catch (e) {
    const label = state.direction.replace("->", " -> ");
    return failure(
      state,
      "error",
      `converting ${label}: encoding the result: ${(e as Error).message}`,
    );
  }
  return {
    status: 200,
    body,
    contentType: JSON_TYPE,
    result: "success",
    direction: state.direction,
    uid: state.uid,
  };
}

// --- HTTP -----------------------------------------------------------------------------------------

/** The path prefix; the rest of the path is the registry key. */
export const CONVERT_PREFIX = "/convert/";

/**
 * The target of a `/convert/<target>` request path (query ignored: the apiserver appends
 * `?timeout=30s`), or undefined for any other path.
 */
export function targetOfPath(path: string): string | undefined {
  const q = path.indexOf("?");
  const pathname = q < 0 ? path : path.slice(0, q);
  if (!pathname.startsWith(CONVERT_PREFIX)) return undefined;
  const t = pathname.slice(CONVERT_PREFIX.length);
  if (t === "" || t.includes("/")) return undefined;
  try {
    return decodeURIComponent(t);
  } catch {
    return undefined; // malformed %-escape: no such target
  }
}

/** A transport-neutral answer. */
export interface ConvertAnswer {
  status: number;
  contentType: string;
  body: Uint8Array;
  /** Extra headers (e.g. `allow` on 405). */
  headers?: Record<string, string>;
  /** The request body was not read to its end: the connection cannot be reused. */
  close: boolean;
}

/** One request in transport-neutral terms. */
export interface ConvertRequest {
  method: string;
  /** Content-Length, when declared. */
  declaredLength: number | undefined;
  body: AsyncIterable<Uint8Array> | null;
}

/**
 * Answers one `/convert/<target>` request: the method and body cases of §8.6, then the core.
 * Never throws: anything unexpected is a `panic` Failure review, never a 500.
 */
export async function answerConvert(
  ctx: ConvertContext,
  target: string,
  req: ConvertRequest,
  startedAt: number = ctx.clock(),
): Promise<ConvertAnswer> {
  if (req.method !== "POST") {
    return {
      status: 405,
      contentType: TEXT_TYPE,
      body: encoder.encode("method not allowed\n"),
      headers: { allow: "POST" },
      close: false,
    };
  }
  let read: BodyRead;
  try {
    read = await readBodyLimited(req.body, ctx.maxRequestBytes, req.declaredLength);
  } catch (e) {
    // The client went away or the stream broke mid-body: nobody reads this answer.
    ctx.metrics?.observeReview(
      metricTarget(ctx, target),
      "unknown",
      "bad_request",
      (ctx.clock() - startedAt) / 1000,
    );
    return {
      status: 400,
      contentType: TEXT_TYPE,
      body: encoder.encode(`reading request body: ${(e as Error).message}\n`),
      close: true,
    };
  }
  try {
    if (!read.ok) {
      const uid = recoverUid(read.head);
      ctx.metrics?.observeReview(
        metricTarget(ctx, target),
        "unknown",
        "too_large",
        (ctx.clock() - startedAt) / 1000,
      );
      return {
        status: 200,
        contentType: JSON_TYPE,
        body: failureBody(
          uid,
          `request body exceeds the ${ctx.maxRequestBytes}-byte limit; ` +
            `raise --max-request-bytes if such requests are expected`,
        ),
        close: true,
      };
    }
    const outcome = convertReviewBytes(ctx, target, read.bytes, startedAt);
    return {
      status: outcome.status,
      contentType: outcome.contentType,
      body: outcome.body,
      close: false,
    };
  } catch (e) {
    // A bug outside the core (uid recovery): still a Failure review.
    ctx.metrics?.countPanic(target);
    ctx.logger.error("panic while serving a ConversionReview", {
      target,
      uid: "",
      error: e,
    });
    ctx.metrics?.observeReview(
      metricTarget(ctx, target),
      "unknown",
      "panic",
      (ctx.clock() - startedAt) / 1000,
    );
    return {
      status: 200,
      contentType: JSON_TYPE,
      body: failureBody("", `internal error: ${e instanceof Error ? e.message : String(e)}`),
      close: !read.ok,
    };
  }
}

function declaredLengthOf(value: string | null | undefined): number | undefined {
  if (value === null || value === undefined || value === "") return undefined;
  const n = Number(value);
  return Number.isFinite(n) && n >= 0 ? n : undefined;
}

const NOT_FOUND = encoder.encode("not found\n");

/**
 * The TLS listener's request listener (`node:https`, see servers.ts for why): `/convert/<target>`
 * only — health and metrics live on the plain listener — and 404 for anything else.
 *
 * The answer is written with Content-Length in one `end()`; with `noDelay` on the server that is
 * one TLS write and no Nagle stall. A too-large body is not read further: the answer carries
 * `Connection: close` and the rest of the body is discarded while the connection closes.
 */
export function createNodeConvertListener(
  opts: ConvertHandlerOptions,
): (req: IncomingMessage, res: ServerResponse) => void {
  const ctx = convertContext(opts);
  return (req, res) => {
    const startedAt = ctx.clock();
    const target = targetOfPath(req.url ?? "");
    if (target === undefined) {
      writeNode(res, { status: 404, contentType: TEXT_TYPE, body: NOT_FOUND, close: false });
      return;
    }
    answerConvert(ctx, target, {
      method: req.method ?? "",
      declaredLength: declaredLengthOf(req.headers["content-length"]),
      body: req,
    }, startedAt).then((answer) => {
      if (answer.close) {
        // Drain instead of destroying: a reset could discard the answer before the client reads it.
        req.resume();
      }
      writeNode(res, answer);
    }).catch(() => res.destroy());
  };
}

function writeNode(res: ServerResponse, a: ConvertAnswer): void {
  res.writeHead(a.status, {
    "content-type": a.contentType,
    "content-length": String(a.body.byteLength),
    ...a.headers,
    ...(a.close ? { connection: "close" } : {}),
  });
  res.end(a.body);
}

/**
 * A fetch-style handler (`Deno.serve`), for in-process use and plain listeners. Not for the TLS
 * listener: Deno.serve stalls ~44 ms per response there (see servers.ts).
 */
export function createConvertHandler(
  opts: ConvertHandlerOptions,
): (req: Request) => Promise<Response> {
  const ctx = convertContext(opts);
  return async (req) => {
    const startedAt = ctx.clock();
    const target = targetOfPath(new URL(req.url).pathname);
    if (target === undefined) return new Response(NOT_FOUND, { status: 404 });
    const answer = await answerConvert(ctx, target, {
      method: req.method,
      declaredLength: declaredLengthOf(req.headers.get("content-length")),
      body: req.body,
    }, startedAt);
    if (answer.close) req.body?.cancel().catch(() => {});
    return oneChunkResponse(answer.status, answer.body, answer.contentType, answer.headers);
  };
}

/** A ConversionReview response as the handler writes it (for tests and tools). */
export interface ConversionReviewResponse {
  apiVersion: string;
  kind: string;
  response: {
    uid: string;
    result: { status: "Success" | "Failure"; message?: string };
    convertedObjects?: JsonObject[];
  };
}
