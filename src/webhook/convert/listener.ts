/**
 * The conversion listener's request listener, the one HTTP adapter the product uses: `node:https`
 * (docs/design/webhook.md#why-nodehttps-and-not-denoserve), `/convert/<target>` only — health and
 * metrics live on the plain listener — and 404 for anything else.
 *
 * Per request it builds as little as the answer needs: the body is read from `data` events (not
 * node's stream async iterator) and the answer's headers are one flat list. What a 1 × 2 KB review
 * allocates, `hack/bench_side_by_side.ts --alloc 20000` (Deno 2.9.6, interleaved runs on a shared
 * 2-core machine): 29.9–30.2 KiB before, 26.9–28.1 KiB after, 24.4–25.9 KiB with the deadline
 * sweep of src/net/node_server.ts; 28.7 KiB with the role's metric set recording. The handler alone
 * (`convertReviewBytes`: decode, parse, convert, stringify, encode, metrics) allocates ~12 KiB of
 * that, the `node:https` request/response, TLS and stream machinery the rest.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
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

/**
 * The answer is written with Content-Length in one `end()`; with `noDelay` on the server that is
 * one TLS write and no Nagle stall. A too-large body is not read further: the answer carries
 * `Connection: close` and the rest of the body is discarded while the connection closes. With a
 * governor, a request beyond its bounds is answered 429 before its body is read, and an admitted
 * one holds its bytes until its response finished or its connection closed. With `offload`, the
 * body is read here and converted inline or in the Worker pool (src/webhook/convert/offload.ts).
 */
export function createNodeConvertListener(
  opts: ConvertHandlerOptions,
  offload?: OffloadOptions,
): (req: IncomingMessage, res: ServerResponse) => void {
  const ctx = convertContext(opts);
  return (req, res) => {
    const startedAt = ctx.clock();
    const target = targetOfPath(req.url ?? "");
    if (target === undefined) {
      writeNode(res, { status: 404, contentType: TEXT_TYPE, body: NOT_FOUND, close: false });
      return;
    }
    const review = ctx.sampler === undefined
      ? undefined
      : startReviewSpan(ctx.sampler, target, singleHeader(req.headers.traceparent));
    const declaredLength = declaredLengthOf(req.headers["content-length"]);
    if (ctx.governor !== undefined && req.method === "POST") {
      const admission = ctx.governor.admit(heldBytes(declaredLength, ctx.maxRequestBytes));
      if (!admission.ok) {
        ctx.metrics?.countRejected(admission.reason);
        req.resume(); // the body is discarded as it arrives, never held
        const answer = tooManyRequests(admission.message);
        if (review !== undefined) endReviewSpan(review.span, answer);
        writeNode(res, answer);
        return;
      }
      // "close" follows "finish", and also comes alone when the client went away.
      res.once("close", admission.ticket.release);
    }
    const request = {
      method: req.method ?? "",
      declaredLength,
      body: incomingChunks(req),
      spans: review?.spans,
    };
    (offload === undefined
      ? answerConvert(ctx, target, request, startedAt)
      : answerOffloaded(ctx, target, request, startedAt, offload)).then((answer) => {
        if (answer.close) {
          // Drain instead of destroying: a reset could discard the answer before the client reads it.
          discardRest(req);
        }
        if (review !== undefined) endReviewSpan(review.span, answer);
        writeNode(res, answer);
      }).catch(() => {
        review?.span.end();
        res.destroy();
      });
  };
}

/**
 * A node request body as an async iterable built on its `data` events: node's own async iterator
 * costs a stream-finished watcher, an async generator and several promises per request. The
 * stream is paused while a chunk waits to be taken, so a reader that stops early (a body over the
 * limit) holds at most one chunk; `req.resume()` then drains the rest without holding it.
 */
export function incomingChunks(req: IncomingMessage): AsyncIterable<Uint8Array> {
  return {
    [Symbol.asyncIterator]() {
      let chunk: Uint8Array | undefined;
      let ended = false;
      let failure: Error | undefined;
      let wake: (() => void) | undefined;
      const notify = () => {
        const w = wake;
        wake = undefined;
        w?.();
      };
      const onData = (c: Uint8Array) => {
        chunk = c;
        req.pause();
        notify();
      };
      req.on("data", onData);
      req.once("end", () => {
        ended = true;
        notify();
      });
      req.once("error", (e: Error) => {
        failure = e;
        notify();
      });
      req.once("close", () => {
        if (!ended) failure ??= new Error("the request body broke off");
        notify();
      });
      return {
        async next(): Promise<IteratorResult<Uint8Array>> {
          for (;;) {
            if (chunk !== undefined) {
              const value = chunk;
              chunk = undefined;
              req.resume();
              return { done: false, value };
            }
            if (failure !== undefined) throw failure;
            if (ended) {
              req.off("data", onData);
              return { done: true, value: undefined };
            }
            await new Promise<void>((resolve) => wake = resolve);
          }
        },
      };
    },
  };
}

/** A header that must appear once: a repeated one is ignored. */
function singleHeader(v: string | string[] | undefined): string | undefined {
  return typeof v === "string" ? v : undefined;
}

/** Drains the rest of a body the answer did not read: no chunk is kept, none pauses it again. */
function discardRest(req: IncomingMessage): void {
  req.removeAllListeners("data");
  req.resume();
}

function writeNode(res: ServerResponse, a: ConvertAnswer): void {
  // A flat header list: no header object to build and copy per answer.
  const headers = ["content-type", a.contentType, "content-length", String(a.body.byteLength)];
  if (a.headers !== undefined) {
    for (const [k, v] of Object.entries(a.headers)) {
      headers.push(k, v);
    }
  }
  if (a.close) headers.push("connection", "close");
  res.writeHead(a.status, headers);
  res.end(a.body);
}
