/**
 * The WATCH stream: one long GET whose body is newline-delimited JSON events, read as an async
 * iterator.
 *
 * One trap, measured and avoided: Deno's fetch asks for gzip by default, the apiserver then gzips
 * watch streams, and Deno ends such a body after the first flushed chunk (a 4 s watch "ended"
 * after 9 ms) — a watch that silently ends at once. Watches therefore send
 * `accept-encoding: identity` (their events are small and incremental); other requests keep gzip.
 */
import { KubeApiError, KubeNetworkError } from "./errors.ts";
import { type KubeObject, resourcePath, type ResourceRef, type WatchEvent } from "./objects.ts";
import type { RequestOptions } from "./client.ts";

/** Options of {@link KubeClient.watch}. */
export interface WatchOptions {
  resourceVersion?: string;
  /** Default true. */
  allowWatchBookmarks?: boolean;
  labelSelector?: string;
  fieldSelector?: string;
  /** Server-side end of the watch (the stream then ends normally). */
  timeoutSeconds?: number;
  /**
   * Abort the stream with a {@link KubeNetworkError} when nothing arrives for this long (a dead
   * connection). Default: timeoutSeconds + 60 s when timeoutSeconds is set, else none.
   */
  idleTimeoutMs?: number;
  signal?: AbortSignal;
}

/** What a watch needs of the client: one credentialed request whose body it reads itself. */
export interface StreamRequester {
  request(method: string, path: string, opts?: RequestOptions): Promise<Response>;
}

/**
 * WATCH `ref` as an async iterator of events. Ends when the server ends the stream
 * (timeoutSeconds); throws {@link KubeApiError} for an error answer, {@link KubeNetworkError} for
 * a broken or idle stream, or the abort reason. ERROR events are yielded, not thrown (410 lives
 * there). Breaking out of the loop closes the connection.
 */
export async function* watchEvents<T extends KubeObject = KubeObject>(
  client: StreamRequester,
  ref: ResourceRef,
  opts: WatchOptions = {},
): AsyncGenerator<WatchEvent<T>, void, undefined> {
  const path = resourcePath(ref);
  const ac = new AbortController();
  const outer = opts.signal;
  const onAbort = () => ac.abort(outer?.reason);
  if (outer?.aborted) throw outer.reason;
  outer?.addEventListener("abort", onAbort, { once: true });
  const idleMs = opts.idleTimeoutMs ??
    (opts.timeoutSeconds ? (opts.timeoutSeconds + 60) * 1000 : 0);
  let idle: ReturnType<typeof setTimeout> | undefined;
  const arm = () => {
    if (idleMs <= 0) return;
    if (idle !== undefined) clearTimeout(idle);
    idle = setTimeout(
      () => ac.abort(new KubeNetworkError(`watch ${path}: nothing received for ${idleMs} ms`)),
      idleMs,
    );
  };
  let reader: ReadableStreamDefaultReader<string> | undefined;
  try {
    arm();
    const res = await client.request("GET", path, {
      signal: ac.signal,
      // No compression: see the module doc.
      headers: { "accept-encoding": "identity" },
      query: {
        watch: true,
        allowWatchBookmarks: opts.allowWatchBookmarks ?? true,
        resourceVersion: opts.resourceVersion || undefined,
        labelSelector: opts.labelSelector || undefined,
        fieldSelector: opts.fieldSelector || undefined,
        timeoutSeconds: opts.timeoutSeconds,
      },
    });
    if (!res.body) return;
    reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let buf = "";
    let scanned = 0;
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      arm();
      buf += value;
      let nl: number;
      while ((nl = buf.indexOf("\n", scanned)) >= 0) {
        const line = buf.slice(0, nl).trim();
        buf = buf.slice(nl + 1);
        scanned = 0;
        if (line) yield JSON.parse(line) as WatchEvent<T>;
      }
      scanned = buf.length;
    }
    // An aborted body may simply end instead of erroring: an abort (the caller's, or the idle
    // watchdog's) must never look like the server's normal end of stream.
    if (ac.signal.aborted) throw ac.signal.reason;
    if (buf.trim()) yield JSON.parse(buf) as WatchEvent<T>;
  } catch (e) {
    if (ac.signal.aborted) throw ac.signal.reason;
    if (e instanceof KubeApiError || e instanceof KubeNetworkError) throw e;
    throw new KubeNetworkError(`watch ${path}: ${(e as Error).message}`, { cause: e });
  } finally {
    if (idle !== undefined) clearTimeout(idle);
    outer?.removeEventListener("abort", onAbort);
    if (reader) await reader.cancel().catch(() => {});
    ac.abort(); // releases the request if it is still open
  }
}
