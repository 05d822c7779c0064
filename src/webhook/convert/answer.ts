/**
 * The `/convert/<target>` answer table: which request gets which status and which Failure
 * message (docs/design/webhook.md#the-convert-answer-table). Read the body with a byte cap →
 * parse → check nesting and numbers on the parsed value → one registry lookup → convert each
 * object (input never mutated) → stringify → one write. No logging per object and no schema work per request: plans were
 * linked when they were installed.
 *
 * Every answer except 405 and 400 is a 200 ConversionReview at the request's apiVersion
 * (`apiextensions.k8s.io/v1`, or `v1beta1` for a config that lists it) carrying the request uid, because the apiserver turns any other status into an opaque "invalid
 * response" for the user. Every Failure is built by {@link failure}; anything not anticipated is
 * a bug ("panic") and takes the one panic path of {@link reviewOutcome}.
 */
import {
  ConversionError,
  convertObject,
  type JsonObject,
  type Router,
  versionOf,
} from "../../engine/mod.ts";
import { type BudgetBound, RequestBudget } from "../../engine/request_budget.ts";
import { isJsonObject } from "../../lib/json.ts";
import { parseJson, stringifyJson } from "../../lib/json_exact.ts";
import { encodeUtf8 } from "../../lib/utf8.ts";
import { HEAD_ROOM } from "../../net/http1.ts";
import type { LossyDirection, Observer, ReviewResult } from "../metrics.ts";
import { isServable, type RegistryEntry } from "../registry.ts";
import {
  type BodyRead,
  inspectParsed,
  nestingExceeds,
  readBodyLimited,
  recoverUid,
  UID_SCAN_BYTES,
} from "./body.ts";
import type { SpanParent } from "../../obs/tracing.ts";
import type { ConvertContext } from "./context.ts";
import { objectProblem } from "./object_check.ts";
import { endConvertSpan, startConvertSpan } from "./spans.ts";

export const REVIEW_API_VERSION = "apiextensions.k8s.io/v1";
/** What the apiserver sends when a target lists `v1beta1` before `v1`; same shape as v1. */
export const REVIEW_API_VERSION_V1BETA1 = "apiextensions.k8s.io/v1beta1";
const REVIEW_API_VERSIONS: ReadonlySet<unknown> = new Set([
  REVIEW_API_VERSION,
  REVIEW_API_VERSION_V1BETA1,
]);
/** A v1beta1 review's apiVersion in a body that was not parsed (too large, too deep). */
const V1BETA1_IN_HEAD = /"apiVersion"\s*:\s*"apiextensions\.k8s\.io\/v1beta1"/;
export const REVIEW_KIND = "ConversionReview";

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const JSON_TYPE = "application/json";
export const TEXT_TYPE = "text/plain; charset=utf-8";

/** What the table decided for a body; `body` is the exact bytes to write. */
export interface ReviewOutcome {
  status: 200 | 400;
  body: Uint8Array;
  /** `body` has free bytes before it for the transport's head (`Http1Response.headRoom`). */
  headRoom?: boolean;
  contentType: string;
  /** Metric `result`. */
  result: ReviewResult;
  /** Request-level direction label: `<from>-><to>`, `unknown` or `mixed`. */
  direction: string;
  uid: string;
  /** A Failure's message, or a 400's text. */
  message?: string;
}

/** A transport-neutral answer. */
export interface ConvertAnswer {
  status: number;
  contentType: string;
  body: Uint8Array;
  /** `body` has free bytes before it for the transport's head (`Http1Response.headRoom`). */
  headRoom?: boolean;
  /** Extra headers (e.g. `allow` on 405). */
  headers?: Record<string, string>;
  /** The request body was not read to its end: the connection cannot be reused. */
  close: boolean;
  /** For a review the table answered: its metric `result`, and a failure's message (spans). */
  result?: ReviewResult;
  message?: string;
}

/** One request in transport-neutral terms. */
export interface ConvertRequest {
  method: string;
  /** Content-Length, when declared. */
  declaredLength: number | undefined;
  body: AsyncIterable<Uint8Array> | null;
  /** The traced request's review span, as the parent of its `Convert` spans; undefined: untraced. */
  spans?: SpanParent;
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

/** What one request has learnt so far: the Failure it may still get carries these. */
interface ReviewState {
  /** The request's ConversionReview apiVersion: the answer's must equal it. */
  apiVersion: string;
  uid: string;
  direction: string;
  tallies: Map<string, DirectionTally> | undefined;
  /** The parent of the `Convert` spans; undefined when the request is not traced. */
  spans: SpanParent | undefined;
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

// --- the builders ---------------------------------------------------------------------------------

/** The one Failure builder: a 200 ConversionReview with the uid known so far. */
function failure(state: ReviewState, result: ReviewResult, message: string): ReviewOutcome {
  return {
    status: 200,
    body: encoder.encode(JSON.stringify({
      apiVersion: state.apiVersion,
      kind: REVIEW_KIND,
      response: { uid: state.uid, result: { status: "Failure", message } },
    })),
    contentType: JSON_TYPE,
    result,
    direction: state.direction,
    uid: state.uid,
    message,
  };
}

/** A 400: the body is not a ConversionReview, so there is no uid to answer. */
function badRequest(message: string): ReviewOutcome {
  return {
    status: 400,
    body: encoder.encode(message + "\n"),
    contentType: TEXT_TYPE,
    result: "bad_request",
    direction: "unknown",
    uid: "",
    message,
  };
}

function registryMissMessage(target: string, entry: RegistryEntry | undefined): string {
  const kind = entry === undefined ? "XRD/CRD" : entry.kind === "xrd" ? "XRD" : "CRD";
  const last = entry !== undefined && entry.lastError !== ""
    ? ` (last compile error: ${entry.lastError})`
    : "";
  return `no conversion plan registered for ${kind} ${JSON.stringify(target)} on this replica` +
    `${last}; check the conversion config's status and /debug/registry, or retry shortly`;
}

// --- the table ------------------------------------------------------------------------------------

/**
 * Answers one `/convert/<target>` request: the method and body rows of the table, then the
 * review. Never throws: anything unexpected is a `panic` Failure review, never a 500.
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
    const outcome = badRequest(`reading request body: ${(e as Error).message}`);
    record(ctx, target, outcome, startedAt);
    return answerOf(outcome, true);
  }
  // A body not read to its end (too large) leaves the connection unusable.
  return answerOf(reviewOutcome(ctx, target, read, startedAt, req.spans), !read.ok);
}

/** The answer of a review outcome. */
export function answerOf(o: ReviewOutcome, close: boolean): ConvertAnswer {
  return {
    status: o.status,
    contentType: o.contentType,
    body: o.body,
    headRoom: o.headRoom,
    close,
    result: o.result,
    message: o.message,
  };
}

/**
 * The synchronous part for a body already read within the limit: decides the answer and records
 * every metric of the request (review, batch, objects, lossy, panics). `startedAt` is the
 * `clock()` reading when the request arrived (the review-duration origin); `spans`, for a traced
 * request, is where its `Convert` spans hang.
 */
export function convertReviewBytes(
  ctx: ConvertContext,
  target: string,
  bytes: Uint8Array,
  startedAt: number = ctx.clock(),
  spans?: SpanParent,
): ReviewOutcome {
  return reviewOutcome(ctx, target, { ok: true, bytes }, startedAt, spans);
}

/** The review rows, with the one panic path around them. */
function reviewOutcome(
  ctx: ConvertContext,
  target: string,
  read: BodyRead,
  startedAt: number,
  spans: SpanParent | undefined,
): ReviewOutcome {
  const state: ReviewState = {
    apiVersion: REVIEW_API_VERSION,
    uid: "",
    direction: "unknown",
    tallies: undefined,
    spans,
  };
  let outcome: ReviewOutcome;
  try {
    outcome = read.ok ? review(ctx, target, read.bytes, state) : tooLarge(ctx, read.head, state);
  } catch (e) {
    // Anything not anticipated is a bug ("panic"): answer it as a Failure and keep serving.
    ctx.metrics?.countPanic(target);
    ctx.logger.error("panic while serving a ConversionReview", {
      target,
      uid: state.uid,
      error: e,
    });
    outcome = failure(
      state,
      "panic",
      `internal error: ${e instanceof Error ? e.message : String(e)}`,
    );
  } finally {
    flushTallies(ctx, target, state);
  }
  record(ctx, target, outcome, startedAt);
  return outcome;
}

/**
 * The `target` label: the path's target only when the registry knows it. Anyone who can reach the
 * port chooses the path, so unknown targets share one series instead of creating new ones.
 */
export const UNREGISTERED_TARGET_LABEL = "(unregistered)";

/** The request's one `observeReview`. */
function record(ctx: ConvertContext, target: string, o: ReviewOutcome, startedAt: number): void {
  ctx.metrics?.observeReview(
    ctx.registry.get(target) === undefined ? UNREGISTERED_TARGET_LABEL : target,
    o.direction,
    o.result,
    (ctx.clock() - startedAt) / 1000,
  );
}

/** The uid and the review apiVersion of a body that is not parsed, from its head. */
function recoverHead(head: Uint8Array, state: ReviewState): void {
  state.uid = recoverUid(head);
  if (V1BETA1_IN_HEAD.test(decoder.decode(head))) state.apiVersion = REVIEW_API_VERSION_V1BETA1;
}

function tooLarge(ctx: ConvertContext, head: Uint8Array, state: ReviewState): ReviewOutcome {
  recoverHead(head, state);
  ctx.metrics?.countRejected("body_too_large");
  return failure(
    state,
    "too_large",
    `request body exceeds the ${ctx.maxRequestBytes}-byte limit; ` +
      `raise --max-request-bytes (at most the request byte budget, which grows with the ` +
      `memory limit) if such requests are expected`,
  );
}

function review(
  ctx: ConvertContext,
  target: string,
  bytes: Uint8Array,
  state: ReviewState,
): ReviewOutcome {
  // The budget starts once the body is read, so parsing a large body counts against it.
  const budget = new RequestBudget({ clock: ctx.clock, timeoutMs: ctx.requestTimeoutMs });
  const text = decoder.decode(bytes);
  // Parse first, then check what the parse made: V8's parser takes any nesting, and a walk over
  // the values costs a fraction of a scan over the text. Only a body the walk flags is parsed again,
  // exactly. A body that does not parse is scanned, so a deep one still gets the nesting answer.
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    return nestingExceeds(text, ctx.maxJsonDepth) ? tooDeep(ctx, bytes, state) : notJson(e);
  }
  const scan = inspectParsed(parsed, ctx.maxJsonDepth);
  if (scan.tooDeep) return tooDeep(ctx, bytes, state);
  if (scan.longNumbers) {
    try {
      parsed = parseJson(text, true);
    } catch (e) {
      return notJson(e);
    }
  }
  if (
    !isJsonObject(parsed) || parsed.kind !== REVIEW_KIND ||
    !REVIEW_API_VERSIONS.has(parsed.apiVersion)
  ) {
    return badRequest(
      `request body is not a ${REVIEW_API_VERSION} (or v1beta1) ${REVIEW_KIND}`,
    );
  }
  state.apiVersion = parsed.apiVersion as string;
  const request = parsed.request;
  if (!isJsonObject(request)) return badRequest("ConversionReview has no request");
  if (typeof request.uid !== "string") return badRequest("ConversionReview request has no uid");
  state.uid = request.uid;

  const entry = ctx.registry.get(target);
  if (!isServable(entry)) {
    return failure(state, "not_registered", registryMissMessage(target, entry));
  }
  const desired = request.desiredAPIVersion;
  const objects = request.objects ?? [];
  if (typeof desired !== "string" || desired === "") {
    return failure(state, "bad_request", "decoding request: desiredAPIVersion is missing");
  }
  if (!Array.isArray(objects)) {
    return failure(state, "bad_request", "decoding request: objects is not a list");
  }
  // The budget runs around the whole batch: the engine charges every object's work to it.
  return budget.run(() =>
    convertBatch(ctx, target, entry, desired, objects, budget, state, scan.longNumbers)
  );
}

function tooDeep(ctx: ConvertContext, bytes: Uint8Array, state: ReviewState): ReviewOutcome {
  recoverHead(bytes.subarray(0, UID_SCAN_BYTES), state);
  return failure(
    state,
    "bad_request",
    `decoding request: JSON nesting exceeds the ${ctx.maxJsonDepth}-level limit`,
  );
}

function notJson(e: unknown): ReviewOutcome {
  return badRequest(`request body is not JSON: ${(e as Error).message}`);
}

/** What to do about a spent request budget, by the bound that tripped. */
const BUDGET_HINT: Record<BudgetBound, string> = {
  time: "raise --request-timeout or send smaller batches",
  celCost: "simplify the CEL expressions, bound their input or send smaller batches",
};

/**
 * Converts every object in order; the first failure answers the whole review. The request budget
 * is checked before each object here and inside each object by the engine (`forEach` elements,
 * array passes, every CEL cost unit).
 */
function convertBatch(
  ctx: ConvertContext,
  target: string,
  entry: RegistryEntry & { readonly router: Router },
  desired: string,
  objects: unknown[],
  budget: RequestBudget,
  state: ReviewState,
  longNumbers: boolean,
): ReviewOutcome {
  const router = entry.router;
  const n = objects.length;
  ctx.metrics?.observeBatchSize(target, n);
  const to = versionOf(desired);
  const converted: JsonObject[] = new Array(n);
  const tallies = new Map<string, DirectionTally>();
  state.tallies = tallies;
  const metrics = ctx.metrics;
  const spans = state.spans;

  // One clock reading per object: the end of one object is the start of the next.
  let now = ctx.clock();
  // Batches are nearly always one direction: skip the tally lookup while apiVersion repeats.
  let lastApiVersion = "";
  let tally: DirectionTally | undefined;
  for (let i = 0; i < n; i++) {
    const start = now;
    if (start >= budget.deadline) {
      return failure(
        state,
        "timeout",
        `request time budget of ${ctx.requestTimeoutMs / 1000}s exceeded after ${i} of ${n} ` +
          `objects; ${BUDGET_HINT.time}`,
      );
    }
    const problem = objectProblem(objects[i], i);
    if (problem !== undefined) return failure(state, "bad_request", problem);
    const obj = objects[i] as JsonObject; // checked by objectProblem
    const apiVersion = obj.apiVersion as string;
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
    const span = spans === undefined ? undefined : startConvertSpan(spans, target, tally.from, to);
    try {
      converted[i] = convertObject(router, obj, desired);
    } catch (e) {
      if (span !== undefined) endConvertSpan(span, e);
      tally.error++;
      metrics?.objectDuration(target, tally.direction, "error").observe(
        (ctx.clock() - start) / 1000,
      );
      if (e instanceof ConversionError && budget.tripped !== undefined) {
        return failure(
          state,
          "timeout",
          `converting ${tally.from} -> ${to}: ${e.message} in object ${i + 1} of ${n}; ` +
            BUDGET_HINT[budget.tripped],
        );
      }
      if (e instanceof ConversionError) {
        return failure(state, "error", `converting ${tally.from} -> ${to}: ${e.message}`);
      }
      throw e;
    }
    span?.end();
    now = ctx.clock();
    tally.success++;
    tally.okTimer?.observe((now - start) / 1000);
  }

  let body: Uint8Array;
  try {
    body = encodeUtf8(
      stringifyJson({
        apiVersion: state.apiVersion,
        kind: REVIEW_KIND,
        response: { uid: state.uid, result: { status: "Success" }, convertedObjects: converted },
      }, { mayHoldBigints: longNumbers }),
      HEAD_ROOM,
    );
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
    headRoom: body.byteOffset === HEAD_ROOM,
    contentType: JSON_TYPE,
    result: "success",
    direction: state.direction,
    uid: state.uid,
  };
}

function lossyDirection(entry: RegistryEntry, from: string, to: string): LossyDirection | null {
  const hub = entry.hubVersion;
  if (from === hub && to !== hub) {
    return entry.lossless[to]?.hubToSpoke === false ? "hub_to_spoke" : null;
  }
  if (to === hub && from !== hub) {
    return entry.lossless[from]?.spokeToHub === false ? "spoke_to_hub" : null;
  }
  return null; // same version, or spoke→spoke: not counted (no single lossy direction to name)
}

function flushTallies(ctx: ConvertContext, target: string, state: ReviewState): void {
  const m = ctx.metrics;
  if (m === undefined || state.tallies === undefined) return;
  for (const t of state.tallies.values()) {
    if (t.success > 0) m.countObjects(target, t.from, t.to, "success", t.success);
    if (t.error > 0) m.countObjects(target, t.from, t.to, "error", t.error);
    if (t.lossy !== null) m.countLossy(target, t.lossy, t.success + t.error);
  }
}
