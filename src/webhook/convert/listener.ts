/**
 * The conversion listener's handler on the lean HTTP/1.1 core (src/net/http1_server.ts,
 * docs/design/webhook.md#the-lean-http11-server): `/convert/<target>` only — health and metrics
 * live on the plain listener — and 404 for anything else.
 */
import type { Http1Handler } from "../../net/http1_server.ts";
import { answerConvert, type ConvertAnswer, TEXT_TYPE } from "./answer.ts";
import { UID_SCAN_BYTES } from "./body.ts";
import { convertContext, type ConvertHandlerOptions } from "./context.ts";
import { RETRY_AFTER_SECONDS } from "./governor.ts";
import { answerOffloaded, type OffloadOptions } from "./offload.ts";
import { endReviewSpan, startReviewSpan } from "./spans.ts";

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

/** A Content-Length header as a number; undefined when absent or not a length. */
export function declaredLengthOf(value: string | null | undefined): number | undefined {
  if (value === null || value === undefined || value === "") return undefined;
  const n = Number(value);
  return Number.isFinite(n) && n >= 0 ? n : undefined;
}

const NOT_FOUND = new TextEncoder().encode("not found\n");

/**
 * The bytes a request holds against the budget: its declared length; a declared length over the
 * body limit only ever reads the 8 KiB uid scan; without a declared length (chunked) the most the
 * reader may read.
 */
export function heldBytes(declaredLength: number | undefined, maxRequestBytes: number): number {
  if (declaredLength === undefined) return maxRequestBytes;
  return declaredLength > maxRequestBytes ? UID_SCAN_BYTES : declaredLength;
}

/**
 * A bound is full: a plain 429 (no ConversionReview — nothing was read) with `Retry-After`, and
 * the connection closes since the body is not read.
 */
export function tooManyRequests(message: string): ConvertAnswer {
  return {
    status: 429,
    contentType: TEXT_TYPE,
    body: new TextEncoder().encode(message + "\n"),
    headers: { "retry-after": String(RETRY_AFTER_SECONDS) },
    close: true,
  };
}

const NOT_FOUND_ANSWER: Promise<ConvertAnswer> = Promise.resolve({
  status: 404,
  contentType: TEXT_TYPE,
  body: NOT_FOUND,
  close: false,
});

/**
 * The conversion exchange: the answer goes out with Content-Length in one write. A too-large body
 * is not read further: the answer carries `Connection: close` and the server drops the rest of
 * the body while the connection closes. With a governor, a request beyond its bounds is answered
 * 429 before its body is read, and an admitted one holds its bytes until its answer is ready. With
 * `offload`, the body is read here and converted inline or in the Worker pool
 * (src/webhook/convert/offload.ts).
 */
export function createConvertExchange(
  opts: ConvertHandlerOptions,
  offload?: OffloadOptions,
): Http1Handler {
  const ctx = convertContext(opts);
  return (req) => {
    const startedAt = ctx.clock();
    const target = targetOfPath(req.target);
    if (target === undefined) return NOT_FOUND_ANSWER;
    const review = ctx.sampler === undefined
      ? undefined
      : startReviewSpan(ctx.sampler, target, req.header("traceparent"));
    const declaredLength = req.contentLength;
    let release: (() => void) | undefined;
    if (ctx.governor !== undefined && req.method === "POST") {
      const admission = ctx.governor.admit(heldBytes(declaredLength, ctx.maxRequestBytes));
      if (!admission.ok) {
        ctx.metrics?.countRejected(admission.reason);
        const answer = tooManyRequests(admission.message); // closes: the body is never held
        if (review !== undefined) endReviewSpan(review.span, answer);
        return Promise.resolve(answer);
      }
      release = admission.ticket.release;
    }
    const request = { method: req.method, declaredLength, body: req.body, spans: review?.spans };
    return (offload === undefined
      ? answerConvert(ctx, target, request, startedAt)
      : answerOffloaded(ctx, target, request, startedAt, offload)).then((answer) => {
        release?.();
        if (review !== undefined) endReviewSpan(review.span, answer);
        return answer;
      }, (e: unknown) => {
        release?.();
        review?.span.end();
        throw e;
      });
  };
}
