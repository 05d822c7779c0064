/**
 * A small typed REST client for what controllers need: get, list (label selector, limit/continue
 * paging), watch (streaming, bookmarks; ./watch.ts), create, update, patch (merge, JSON,
 * strategic, server-side apply) and delete on any resource path — JSON in, parsed JSON out,
 * failures as {@link KubeApiError} (`status`, `reason`, the apiserver's message). Where the
 * server is and which credentials to send come from ./config.ts.
 *
 * **Transport: Deno's own `fetch` with a `Deno.createHttpClient({caCerts, cert, key})`**, not
 * client-node's request machinery. Measured on this project's machines:
 * - Permissions: in-cluster needs exactly `--allow-net --allow-env
 *   --allow-read=/var/run/secrets/kubernetes.io/serviceaccount` (PEM strings go to
 *   `createHttpClient`, nothing else is read); tests/e2e/kube/client_test.ts runs a child process
 *   under exactly those flags with a real ServiceAccount token, and one with a client-cert
 *   kubeconfig under `--allow-read=<that file>`.
 * - Robustness: client-node 2.x talks through undici over `node:http2`, and Deno 2.9.6's
 *   `node:http2` can abort the whole process on an apiserver GOAWAY (see
 *   tests/support/control_plane.ts). Deno's native client (hyper) has no such path.
 * - Compression: requests ask for gzip (large CRD lists; a multi-MB gzip list is checked intact
 *   in client_test.ts), except watches (./watch.ts says why).
 */
import { type ClusterConnection, loadConfig, type LoadConfigOptions } from "./config.ts";
import { errorOfResponse, isGone, KubeApiError, KubeNetworkError } from "./errors.ts";
import {
  type KubeObject,
  type ObjectList,
  resourcePath,
  type ResourceRef,
  type Status,
  type WatchEvent,
} from "./objects.ts";
import { watchEvents, type WatchOptions } from "./watch.ts";

/** Query parameters; undefined values are left out. */
export type Query = Readonly<Record<string, string | number | boolean | undefined>>;

/** Options of a raw request. */
export interface RequestOptions {
  query?: Query;
  /** JSON-serialized unless a string. */
  body?: unknown;
  contentType?: string;
  /** Extra request headers. */
  headers?: Readonly<Record<string, string>>;
  signal?: AbortSignal;
  /** Whole-request deadline (answer and body) in ms; default the client's; 0 = none. */
  timeoutMs?: number;
}

/** Options shared by reads and writes. */
export interface CallOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
}

/** Options of {@link KubeClient.list}. */
export interface ListOptions extends CallOptions {
  labelSelector?: string;
  fieldSelector?: string;
  /** Page size; the answer's `metadata.continue` fetches the next page. */
  limit?: number;
  continue?: string;
  resourceVersion?: string;
  resourceVersionMatch?: "Exact" | "NotOlderThan";
}

/** Options of create/update. */
export interface WriteOptions extends CallOptions {
  fieldManager?: string;
  dryRun?: boolean;
  subresource?: string;
}

/** Patch flavours and their content types. */
export type PatchType = "merge" | "json" | "strategic" | "apply";

const PATCH_CONTENT_TYPE: Readonly<Record<PatchType, string>> = {
  merge: "application/merge-patch+json",
  json: "application/json-patch+json",
  strategic: "application/strategic-merge-patch+json",
  apply: "application/apply-patch+yaml",
};

/** Options of {@link KubeClient.patch}. */
export interface PatchOptions extends WriteOptions {
  type: PatchType;
  /** Server-side apply only: take ownership of conflicting fields. */
  force?: boolean;
}

/** Options of {@link KubeClient.delete}. */
export interface DeleteOptions extends CallOptions {
  propagationPolicy?: "Orphan" | "Background" | "Foreground";
  gracePeriodSeconds?: number;
  preconditions?: { uid?: string; resourceVersion?: string };
  dryRun?: boolean;
}

/**
 * Where the client reports every request it sends (e.g. src/obs/rest_client_metrics.ts): the HTTP
 * method, the server's `host:port`, the answer's status code (`<error>` when none came) and the
 * seconds until the answer's headers (a watch counts until its stream opened).
 */
export interface RequestMetricsSink {
  observe(method: string, host: string, code: string, seconds: number): void;
}

/** Options of the client itself. */
export interface KubeClientOptions {
  userAgent?: string;
  /** Default deadline of non-watch requests; default 60 s. */
  timeoutMs?: number;
  /** Per-request accounting; views ({@link KubeClient.withSignal}) report to it too. */
  metrics?: RequestMetricsSink;
}

/** A REST client bound to one connection. Close it (or `using`) to release its connections. */
export class KubeClient implements Disposable {
  readonly connection: ClusterConnection;
  #http: Deno.HttpClient;
  #userAgent: string;
  #timeoutMs: number;
  #metrics: RequestMetricsSink | undefined;
  #host: string;
  /** Aborts every request of this client and refuses new ones ({@link withSignal}). */
  #fence: AbortSignal | undefined;
  /** Whether `#http` belongs to another client (a {@link withSignal} view). */
  #sharedHttp = false;

  constructor(connection: ClusterConnection, opts: KubeClientOptions = {}) {
    this.connection = connection;
    this.#userAgent = opts.userAgent ?? "dco";
    this.#timeoutMs = opts.timeoutMs ?? 60_000;
    this.#metrics = opts.metrics;
    this.#host = hostOf(connection.server);
    this.#http = Deno.createHttpClient({
      caCerts: connection.caCerts?.length ? connection.caCerts : undefined,
      ...(connection.clientCert ?? {}),
    });
  }

  /** {@link loadConfig} + constructor. */
  static async fromEnvironment(
    opts: LoadConfigOptions & KubeClientOptions = {},
  ): Promise<KubeClient> {
    return new KubeClient(await loadConfig(opts), opts);
  }

  get server(): string {
    return this.connection.server;
  }

  /** The identity's default namespace. */
  get namespace(): string {
    return this.connection.namespace;
  }

  /**
   * A view of this client (same connection, same HTTP client) whose every request is aborted
   * when `signal` aborts, and which sends no request after that: the fence the manager's
   * leader-only controllers write through, so nothing they send outlives leadership
   * (docs/design/kube.md#leader-election-and-its-lease). Closing the view closes nothing;
   * closing this client closes the view's connections too.
   */
  withSignal(signal: AbortSignal): KubeClient {
    const view = new KubeClient(this.connection, {
      userAgent: this.#userAgent,
      timeoutMs: this.#timeoutMs,
      metrics: this.#metrics,
    });
    view.#http.close();
    view.#http = this.#http;
    view.#sharedHttp = true;
    view.#fence = this.#fence ? AbortSignal.any([this.#fence, signal]) : signal;
    return view;
  }

  close(): void {
    if (!this.#sharedHttp) this.#http.close();
  }

  [Symbol.dispose](): void {
    this.close();
  }

  /**
   * Sends one request with credentials (retrying once after a 401 with refreshed credentials)
   * and returns the response with its body unread. Non-2xx answers throw {@link KubeApiError};
   * transport failures throw {@link KubeNetworkError}; an aborted `signal` throws its reason.
   * No deadline applies here (used for streams); {@link KubeClient.call} adds one.
   */
  async request(method: string, path: string, opts: RequestOptions = {}): Promise<Response> {
    const fence = this.#fence;
    if (fence) {
      if (fence.aborted) throw fence.reason;
      opts = { ...opts, signal: opts.signal ? AbortSignal.any([fence, opts.signal]) : fence };
    }
    const url = this.server + path + queryString(opts.query);
    const what = `${method} ${path}`;
    const body = opts.body === undefined
      ? undefined
      : typeof opts.body === "string"
      ? opts.body
      : JSON.stringify(opts.body);
    const auth = this.connection.auth;
    for (let attempt = 0;; attempt++) {
      const headers = new Headers({
        accept: "application/json",
        "user-agent": this.#userAgent,
        ...opts.headers,
      });
      if (body !== undefined) headers.set("content-type", opts.contentType ?? "application/json");
      const authz = await auth?.authorization({ refresh: attempt > 0 });
      if (authz) headers.set("authorization", authz);
      if (opts.signal?.aborted) throw opts.signal.reason;
      let res: Response;
      const sent = performance.now();
      try {
        res = await fetch(url, { method, headers, body, signal: opts.signal, client: this.#http });
      } catch (e) {
        this.#observe(method, "<error>", sent);
        if (opts.signal?.aborted) throw opts.signal.reason;
        throw new KubeNetworkError(`${what}: ${(e as Error).message}`, { cause: e });
      }
      this.#observe(method, String(res.status), sent);
      if (res.ok) return res;
      if (res.status === 401 && auth && attempt === 0) {
        await res.body?.cancel();
        continue;
      }
      throw await errorOfResponse(res, what, opts.signal);
    }
  }

  #observe(method: string, code: string, sent: number): void {
    this.#metrics?.observe(method, this.#host, code, (performance.now() - sent) / 1000);
  }

  /** A request with a deadline whose JSON answer is parsed (an empty body gives undefined). */
  async call<R>(method: string, path: string, opts: RequestOptions = {}): Promise<R> {
    const timeoutMs = opts.timeoutMs ?? this.#timeoutMs;
    const ac = new AbortController();
    const outer = opts.signal;
    const onAbort = () => ac.abort(outer?.reason);
    if (outer?.aborted) throw outer.reason;
    outer?.addEventListener("abort", onAbort, { once: true });
    const timer = timeoutMs > 0
      ? setTimeout(
        () => ac.abort(new KubeNetworkError(`${method} ${path}: no answer within ${timeoutMs} ms`)),
        timeoutMs,
      )
      : undefined;
    try {
      const res = await this.request(method, path, { ...opts, signal: ac.signal });
      let text: string;
      try {
        text = await res.text();
      } catch (e) {
        if (ac.signal.aborted) throw ac.signal.reason;
        throw new KubeNetworkError(`${method} ${path}: ${(e as Error).message}`, { cause: e });
      }
      return (text ? JSON.parse(text) : undefined) as R;
    } catch (e) {
      // A deadline or outer abort surfaces as its reason, whatever fetch wrapped it in.
      if (ac.signal.aborted && !(e instanceof KubeApiError)) throw ac.signal.reason;
      throw e;
    } finally {
      if (timer !== undefined) clearTimeout(timer);
      outer?.removeEventListener("abort", onAbort);
    }
  }

  /** GET one object (or a subresource of it). */
  get<T extends KubeObject = KubeObject>(
    ref: ResourceRef,
    name: string,
    opts: CallOptions & { subresource?: string } = {},
  ): Promise<T> {
    return this.call<T>("GET", resourcePath(ref, name, opts.subresource), opts);
  }

  /** LIST one page (all of it when `limit` is unset). */
  list<T extends KubeObject = KubeObject>(
    ref: ResourceRef,
    opts: ListOptions = {},
  ): Promise<ObjectList<T>> {
    return this.call<ObjectList<T>>("GET", resourcePath(ref), {
      ...opts,
      query: {
        labelSelector: opts.labelSelector || undefined,
        fieldSelector: opts.fieldSelector || undefined,
        limit: opts.limit,
        continue: opts.continue || undefined,
        resourceVersion: opts.resourceVersion,
        resourceVersionMatch: opts.resourceVersionMatch,
      },
    });
  }

  /**
   * LIST everything, `limit` objects per request; returns one list with the snapshot's
   * resourceVersion. If a continue token expires (410), starts over with one unpaged request.
   */
  async listAll<T extends KubeObject = KubeObject>(
    ref: ResourceRef,
    opts: ListOptions = {},
  ): Promise<ObjectList<T>> {
    const items: T[] = [];
    let cont: string | undefined;
    let first: ObjectList<T> | undefined;
    for (;;) {
      let page: ObjectList<T>;
      try {
        page = await this.list<T>(ref, { ...opts, continue: cont });
      } catch (e) {
        if (cont && isGone(e)) return await this.list<T>(ref, { ...opts, limit: undefined });
        throw e;
      }
      first ??= page;
      for (const it of page.items ?? []) items.push(it);
      cont = page.metadata?.continue || undefined;
      if (!cont) {
        return {
          apiVersion: first.apiVersion,
          kind: first.kind,
          metadata: { resourceVersion: page.metadata?.resourceVersion },
          items,
        };
      }
    }
  }

  /**
   * WATCH as an async iterator of events. Ends when the server ends the stream (timeoutSeconds);
   * throws {@link KubeApiError} for an error answer, {@link KubeNetworkError} for a broken or
   * idle stream, or the abort reason. ERROR events are yielded, not thrown (410 lives there).
   * Breaking out of the loop closes the connection.
   */
  watch<T extends KubeObject = KubeObject>(
    ref: ResourceRef,
    opts: WatchOptions = {},
  ): AsyncGenerator<WatchEvent<T>, void, undefined> {
    return watchEvents<T>(this, ref, opts);
  }

  /** POST a new object into `ref`'s collection (namespace from `ref`). */
  create<T extends KubeObject = KubeObject>(
    ref: ResourceRef,
    obj: NoInfer<T>,
    opts: WriteOptions = {},
  ): Promise<T> {
    return this.call<T>("POST", resourcePath(ref), {
      ...opts,
      body: obj,
      query: writeQuery(opts),
    });
  }

  /** PUT the whole object (optimistic concurrency through `metadata.resourceVersion`). */
  update<T extends KubeObject = KubeObject>(
    ref: ResourceRef,
    obj: NoInfer<T>,
    opts: WriteOptions = {},
  ): Promise<T> {
    return this.call<T>("PUT", resourcePath(ref, nameOf(obj), opts.subresource), {
      ...opts,
      body: obj,
      query: writeQuery(opts),
    });
  }

  /** PATCH by name: merge, JSON, strategic-merge or server-side apply (`type: "apply"`). */
  patch<T extends KubeObject = KubeObject>(
    ref: ResourceRef,
    name: string,
    patch: unknown,
    opts: PatchOptions,
  ): Promise<T> {
    if (opts.type === "apply" && !opts.fieldManager) {
      throw new Error("server-side apply needs a fieldManager");
    }
    return this.call<T>("PATCH", resourcePath(ref, name, opts.subresource), {
      ...opts,
      body: patch,
      contentType: PATCH_CONTENT_TYPE[opts.type],
      query: {
        ...writeQuery(opts),
        force: opts.type === "apply" && opts.force ? true : undefined,
      },
    });
  }

  /**
   * Server-side apply of `obj` (its name from `metadata.name`): `PATCH` with
   * `application/apply-patch+yaml` (a JSON body is valid YAML), `fieldManager`, `force`
   * (default true: dco owns the fields it applies).
   */
  apply<T extends KubeObject = KubeObject>(
    ref: ResourceRef,
    obj: KubeObject,
    opts: WriteOptions & { fieldManager: string; force?: boolean },
  ): Promise<T> {
    return this.patch<T>(ref, nameOf(obj), obj, {
      ...opts,
      type: "apply",
      force: opts.force ?? true,
    });
  }

  /** DELETE by name; answers the object (finalizers pending) or a Status. */
  delete<T extends KubeObject = KubeObject>(
    ref: ResourceRef,
    name: string,
    opts: DeleteOptions = {},
  ): Promise<T | Status> {
    const hasBody = opts.propagationPolicy !== undefined ||
      opts.gracePeriodSeconds !== undefined || opts.preconditions !== undefined;
    return this.call<T | Status>("DELETE", resourcePath(ref, name), {
      ...opts,
      query: { dryRun: opts.dryRun ? "All" : undefined },
      body: hasBody
        ? {
          apiVersion: "v1",
          kind: "DeleteOptions",
          propagationPolicy: opts.propagationPolicy,
          gracePeriodSeconds: opts.gracePeriodSeconds,
          preconditions: opts.preconditions,
        }
        : undefined,
    });
  }
}

/** `host:port` of a server URL (the `host` label of the request metrics). */
function hostOf(server: string): string {
  try {
    return new URL(server).host;
  } catch {
    return server;
  }
}

function nameOf(obj: KubeObject): string {
  const name = obj.metadata?.name;
  if (!name) throw new Error(`object without metadata.name (kind ${obj.kind ?? "?"})`);
  return name;
}

function writeQuery(opts: WriteOptions): Query {
  return { fieldManager: opts.fieldManager, dryRun: opts.dryRun ? "All" : undefined };
}

function queryString(q: Query | undefined): string {
  if (!q) return "";
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(q)) if (v !== undefined) p.set(k, String(v));
  const s = p.toString();
  return s ? `?${s}` : "";
}
