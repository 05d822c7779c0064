/**
 * A fetch-style (`Deno.serve`) adapter over the conversion answer table, for hack/load.ts's
 * `deno-stream` / `deno-fixed` servers: the measurements behind serving `/convert` on
 * the lean HTTP/1.1 server instead (docs/design/webhook.md#the-lean-http11-server). The product
 * does not use it.
 */
import {
  answerConvert,
  convertContext,
  type ConvertHandlerOptions,
  declaredLengthOf,
  targetOfPath,
} from "../src/webhook/convert/mod.ts";

/**
 * A response whose body is ONE chunk of a `ReadableStream`. On Deno.serve over TLS + HTTP/1.1 a
 * fixed body over ~1 KB stalls ~44 ms (Nagle + delayed ACK); one chunk avoids that for answers
 * up to one TLS record (~16 KB), not beyond and not on HTTP/2.
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

const NOT_FOUND = new TextEncoder().encode("not found\n");

/** A fetch-style `/convert/<target>` handler answering with one-chunk bodies. */
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
