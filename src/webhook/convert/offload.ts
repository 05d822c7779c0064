/**
 * Where a `/convert` request is converted (docs/design/webhook.md#inline-or-in-the-pool): the thread
 * that serves the connection (a listener Worker) reads the body (the governor's bounds and the body
 * limit apply as before), then converts it there when `inline` says so
 * (src/webhook/convert/inline_policy.ts), else hands it to the conversion pool. The rows that need
 * no parse — a body over the limit, a body that broke off — are answered there by the same answer
 * table, replaying what was read.
 */
import {
  answerConvert,
  answerOf,
  type ConvertAnswer,
  type ConvertRequest,
  convertReviewBytes,
} from "./answer.ts";
import { type BodyRead, readBodyLimited } from "./body.ts";
import type { ConvertContext } from "./context.ts";
import { traceparentOf } from "../../obs/tracing.ts";

/** Converts a body already read (the pool). */
export interface ReviewOffload {
  /**
   * `startedAt` is `performance.timeOrigin + performance.now()` at arrival; `traceparent`, for a
   * traced request, is its review span's.
   */
  convert(
    target: string,
    body: Uint8Array,
    startedAt: number,
    traceparent?: string,
  ): Promise<ConvertAnswer>;
}

export interface OffloadOptions {
  pool: ReviewOffload;
  /** Whether a body of `bytes` for `target` is converted on the thread that read it. */
  inline(target: string, bytes: number): boolean;
}

async function* replay(chunk: Uint8Array): AsyncGenerator<Uint8Array> {
  yield chunk;
}

// deno-lint-ignore require-yield
async function* failing(e: unknown): AsyncGenerator<Uint8Array> {
  throw e;
}

/** {@link answerConvert}, with the conversion itself inline or in the pool. Never rejects. */
export async function answerOffloaded(
  ctx: ConvertContext,
  target: string,
  req: ConvertRequest,
  startedAt: number,
  o: OffloadOptions,
): Promise<ConvertAnswer> {
  if (req.method !== "POST") return answerConvert(ctx, target, req, startedAt);
  const spans = req.spans;
  let read: BodyRead;
  try {
    read = await readBodyLimited(req.body, ctx.maxRequestBytes, req.declaredLength);
  } catch (e) {
    const body = failing(e);
    return answerConvert(
      ctx,
      target,
      { method: "POST", declaredLength: undefined, body, spans },
      startedAt,
    );
  }
  if (!read.ok) {
    // A declared length over the limit makes the table read only the head again: "too large".
    const declaredLength = ctx.maxRequestBytes + 1;
    const body = replay(read.head);
    return answerConvert(ctx, target, { method: "POST", declaredLength, body, spans }, startedAt);
  }
  if (o.inline(target, read.bytes.byteLength)) {
    return answerOf(convertReviewBytes(ctx, target, read.bytes, startedAt, spans), false);
  }
  const arrived = performance.timeOrigin + performance.now() - (ctx.clock() - startedAt);
  return o.pool.convert(
    target,
    read.bytes,
    arrived,
    spans === undefined ? undefined : traceparentOf(spans),
  );
}
