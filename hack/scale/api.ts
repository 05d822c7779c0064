/**
 * The scale run's HTTP client of the Kubernetes API: JSON over one `Deno.HttpClient`, every request
 * through the run's {@link TokenBucket} and bounded by the run's deadline. A non-2xx answer or a
 * transport failure rejects with an {@link ApiError} that says whether it may be retried.
 */
import type { TokenBucket } from "./limiter.ts";
import type { RequestFailure } from "./retry.ts";

export class ApiError extends Error implements RequestFailure {
  override name = "ApiError";
  constructor(
    message: string,
    readonly status?: number,
    readonly timeout?: boolean,
  ) {
    super(message);
  }
}

/** What a create retry reads from a failure (anything but an {@link ApiError} is final). */
export function classifyFailure(e: unknown): RequestFailure {
  return e instanceof ApiError ? { status: e.status, timeout: e.timeout } : {};
}

export interface ApiOptions {
  /** The apiserver URL, e.g. https://127.0.0.1:6443. */
  server: string;
  client: Deno.HttpClient;
  limiter?: TokenBucket;
  /** Aborts every request of the run (its `--timeout`). */
  deadline?: AbortSignal;
}

export class Api {
  constructor(readonly opts: ApiOptions) {}

  /**
   * One request; resolves to the parsed body (undefined when empty). `onSent` is called when the
   * rate limiter lets it go.
   */
  async call<T = unknown>(
    method: string,
    path: string,
    body?: unknown,
    contentType = "application/json",
    onSent?: () => void,
  ): Promise<T> {
    await this.opts.limiter?.take();
    onSent?.();
    let res: Response;
    try {
      res = await fetch(`${this.opts.server}${path}`, {
        method,
        client: this.opts.client,
        signal: this.opts.deadline,
        headers: body === undefined ? {} : { "content-type": contentType },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (e) {
      const aborted = this.opts.deadline?.aborted === true;
      throw new ApiError(
        `${method} ${path}: ${aborted ? "the run's --timeout passed" : (e as Error).message}`,
        undefined,
        !aborted,
      );
    }
    const text = await res.text();
    if (!res.ok) {
      let message = text.slice(0, 300);
      try {
        message = JSON.parse(text).message ?? message;
      } catch { /* not a Status */ }
      throw new ApiError(`${method} ${path}: ${res.status} ${message}`, res.status, false);
    }
    return (text === "" ? undefined : JSON.parse(text)) as T;
  }

  get<T = unknown>(path: string, onSent?: () => void): Promise<T> {
    return this.call<T>("GET", path, undefined, undefined, onSent);
  }

  /** GET returning the body as text (e.g. Prometheus metrics). */
  async text(path: string): Promise<string> {
    await this.opts.limiter?.take();
    const res = await fetch(`${this.opts.server}${path}`, {
      client: this.opts.client,
      signal: this.opts.deadline,
    });
    const text = await res.text();
    if (!res.ok) throw new ApiError(`GET ${path}: ${res.status} ${text.slice(0, 200)}`, res.status);
    return text;
  }
}
