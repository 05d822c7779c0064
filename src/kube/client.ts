/**
 * Connection setup and a small typed REST client for what controllers need: get, list (label
 * selector, limit/continue paging), watch (streaming, bookmarks), create, update, patch (merge,
 * JSON, strategic, server-side apply) and delete on any resource path — JSON in, parsed JSON
 * out, failures as {@link KubeApiError} (`status`, `reason`, the apiserver's message).
 *
 * **Transport: Deno's own `fetch` with a `Deno.createHttpClient({caCerts, cert, key})`**, not
 * client-node's request machinery. Measured on this project's machines:
 * - Permissions: in-cluster needs exactly `--allow-net --allow-env
 *   --allow-read=/var/run/secrets/kubernetes.io/serviceaccount` (PEM strings go to
 *   `createHttpClient`, nothing else is read); tests/kube/client_test.ts runs a child process
 *   under exactly those flags with a real ServiceAccount token, and one with a client-cert
 *   kubeconfig under `--allow-read=<that file>`.
 * - Weight: importing `@kubernetes/client-node` costs ~0.6 s and ~80 MB RSS (41 → 120 MB), a
 *   large share of a webhook-server replica's budget (runtime §8.8). The in-cluster path never
 *   imports it; a kubeconfig file (development, tests, `--kubeconfig`) loads it lazily to parse
 *   the file and resolve credentials (token, files, exec/OIDC providers), then hands the PEMs and
 *   the Authorization header to Deno's client.
 * - Robustness: client-node 2.x talks through undici over `node:http2`, and Deno 2.9.6's
 *   `node:http2` can abort the whole process on an apiserver GOAWAY (see
 *   tests/support/control_plane.ts). Deno's native client (hyper) has no such path.
 * - One trap, measured and avoided: Deno's fetch asks for gzip by default, the apiserver then
 *   gzips watch streams, and Deno ends such a body after the first flushed chunk — a watch that
 *   silently "ends" at once. Watches therefore send `accept-encoding: identity`; other requests
 *   keep gzip (large CRD lists; a multi-MB gzip list is checked intact in client_test.ts).
 *
 * Credentials: client certificates (kubeconfig), bearer tokens (kubeconfig, exec plugins), and the
 * in-cluster projected token, which the kubelet rotates: {@link TokenFileAuth} re-reads it at
 * most every 60 s and at once after a 401 (each request retries once after a 401). Not
 * supported: `insecure-skip-tls-verify` (Deno's client cannot turn verification off per client;
 * loading such a kubeconfig fails with that reason) and `tls-server-name` (ignored with a
 * warning). `caCerts` are trusted in addition to the system roots.
 */
import { createLogger } from "../obs/log.ts";

const log = createLogger("kube.client");

/** Default in-cluster credentials directory. */
export const SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount";

// ---------------------------------------------------------------------------------------------
// Object model (only what the framework reads; everything else passes through as unknown)

/** `metadata` of any object. */
export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: Array<Record<string, unknown>>;
  managedFields?: unknown[];
  [key: string]: unknown;
}

/** Any Kubernetes object as JSON. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  [key: string]: unknown;
}

/** A list response. */
export interface ObjectList<T extends KubeObject = KubeObject> {
  apiVersion?: string;
  kind?: string;
  metadata: { resourceVersion?: string; continue?: string; remainingItemCount?: number };
  items: T[];
}

/** `details` of a Status. */
export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: Array<{ type?: string; message?: string; field?: string }>;
  retryAfterSeconds?: number;
}

/** The apiserver's `Status` object (errors, some deletes, watch ERROR events). */
export interface Status {
  apiVersion?: string;
  kind?: string;
  status?: string;
  message?: string;
  reason?: string;
  code?: number;
  details?: StatusDetails;
}

/** One watch event. */
export type WatchEvent<T extends KubeObject = KubeObject> =
  | { type: "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK"; object: T }
  | { type: "ERROR"; object: Status };

/**
 * Where a resource lives: `group` "" is the core group (`/api/v1`). `namespace` undefined means
 * cluster-scoped, or all namespaces for a namespaced resource's collection.
 */
export interface ResourceRef {
  readonly group: string;
  readonly version: string;
  readonly plural: string;
  readonly namespace?: string;
}

/** The URL path of a collection, an object, or an object's subresource. */
export function resourcePath(ref: ResourceRef, name?: string, subresource?: string): string {
  const seg = encodeURIComponent;
  let p = ref.group ? `/apis/${seg(ref.group)}/${seg(ref.version)}` : `/api/${seg(ref.version)}`;
  if (ref.namespace) p += `/namespaces/${seg(ref.namespace)}`;
  p += `/${seg(ref.plural)}`;
  if (name !== undefined) {
    if (!name) throw new Error(`resourcePath: empty name for ${ref.plural}`);
    p += `/${seg(name)}`;
    if (subresource) p += `/${seg(subresource)}`;
  }
  return p;
}

// ---------------------------------------------------------------------------------------------
// Errors

const REASONS: Readonly<Record<number, string>> = {
  400: "BadRequest",
  401: "Unauthorized",
  403: "Forbidden",
  404: "NotFound",
  405: "MethodNotAllowed",
  406: "NotAcceptable",
  409: "Conflict",
  410: "Expired",
  413: "RequestEntityTooLarge",
  415: "UnsupportedMediaType",
  422: "Invalid",
  429: "TooManyRequests",
  500: "InternalError",
  503: "ServiceUnavailable",
  504: "Timeout",
};

/** An error answer of the apiserver (HTTP status ≥ 300, or a watch ERROR event). */
export class KubeApiError extends Error {
  override name = "KubeApiError";
  /** HTTP status code (for a watch ERROR event: the Status `code`). */
  readonly status: number;
  /** The Status `reason` (`NotFound`, `Forbidden`, `Expired`, …), derived from the code if absent. */
  readonly reason: string;
  readonly details: StatusDetails | undefined;
  /** Request that failed, for logs: `GET /api/v1/...`. */
  readonly request: string | undefined;

  constructor(
    status: number,
    reason: string | undefined,
    message: string,
    opts: { details?: StatusDetails; request?: string } = {},
  ) {
    super(message || `${status} ${reason ?? ""}`.trim());
    this.status = status;
    this.reason = reason || REASONS[status] || "Unknown";
    this.details = opts.details;
    this.request = opts.request;
  }

  /** From a `Status` object (body of an error response or of a watch ERROR event). */
  static fromStatus(s: Status, httpStatus?: number, request?: string): KubeApiError {
    return new KubeApiError(s.code ?? httpStatus ?? 500, s.reason, s.message ?? "", {
      details: s.details,
      request,
    });
  }
}

/** The request never got an HTTP answer: connection refused/reset, TLS failure, timeout. */
export class KubeNetworkError extends Error {
  override name = "KubeNetworkError";
  constructor(message: string, opts?: { cause?: unknown }) {
    super(message, opts);
  }
}

const hasStatus = (e: unknown, code: number) => e instanceof KubeApiError && e.status === code;
/** 404. */
export const isNotFound = (e: unknown): boolean => hasStatus(e, 404);
/** 409 (either a write conflict or AlreadyExists). */
export const isConflict = (e: unknown): boolean => hasStatus(e, 409);
/** 409 with reason AlreadyExists. */
export const isAlreadyExists = (e: unknown): boolean =>
  hasStatus(e, 409) && (e as KubeApiError).reason === "AlreadyExists";
/** 410: resourceVersion or continue token too old. */
export const isGone = (e: unknown): boolean => hasStatus(e, 410);
/** 403. */
export const isForbidden = (e: unknown): boolean => hasStatus(e, 403);

// ---------------------------------------------------------------------------------------------
// Credentials and connection

/** Produces the Authorization header value; `refresh` asks to bypass caches (after a 401). */
export interface AuthSource {
  authorization(opts: { refresh: boolean }): Promise<string | undefined>;
}

/** A fixed bearer token. */
export class StaticTokenAuth implements AuthSource {
  constructor(private readonly token: string) {}
  authorization(): Promise<string> {
    return Promise.resolve(`Bearer ${this.token}`);
  }
}

/**
 * A bearer token read from a file that may be rotated (the projected ServiceAccount token):
 * re-read when older than `refreshMs` (default 60 s, as client-go) and on demand after a 401.
 */
export class TokenFileAuth implements AuthSource {
  #token: string | undefined;
  #readAt = 0;
  constructor(readonly path: string, private readonly refreshMs = 60_000) {}

  async authorization({ refresh }: { refresh: boolean }): Promise<string> {
    if (refresh || this.#token === undefined || Date.now() - this.#readAt >= this.refreshMs) {
      const t = (await Deno.readTextFile(this.path)).trim();
      if (!t) throw new Error(`token file ${this.path} is empty`);
      this.#token = t;
      this.#readAt = Date.now();
    }
    return `Bearer ${this.#token}`;
  }
}

/** Everything needed to talk to one apiserver as one identity. */
export interface ClusterConnection {
  /** `https://host:port` (no trailing slash). */
  server: string;
  /** PEM CA certificates trusted for the server, in addition to the system roots. */
  caCerts?: string[];
  /** PEM client certificate and key. */
  clientCert?: { cert: string; key: string };
  auth?: AuthSource;
  /** The identity's default namespace ("default" when unknown). */
  namespace: string;
  /** For logs: where this came from. */
  description: string;
}

/** Options of {@link loadConfig}. */
export interface LoadConfigOptions {
  /** `--kubeconfig`; wins over everything else. */
  kubeconfig?: string;
  /** Context to use instead of the file's current-context. */
  context?: string;
  /** In-cluster credentials directory (tests point it elsewhere). */
  serviceAccountDir?: string;
  /** Environment lookup (default `Deno.env.get`). */
  env?: (name: string) => string | undefined;
}

/**
 * Finds the connection the way controller-runtime does: `--kubeconfig` (opts.kubeconfig), then
 * `$KUBECONFIG` (colon-separated files are merged), then in-cluster
 * (`KUBERNETES_SERVICE_HOST`/`_PORT` + the ServiceAccount dir), then `$HOME/.kube/config`.
 */
export async function loadConfig(opts: LoadConfigOptions = {}): Promise<ClusterConnection> {
  const env = opts.env ?? ((n: string) => Deno.env.get(n));
  if (opts.kubeconfig) return await loadKubeconfig([opts.kubeconfig], opts.context);
  const fromEnv = (env("KUBECONFIG") ?? "").split(":").filter((s) => s);
  if (fromEnv.length) return await loadKubeconfig(fromEnv, opts.context);
  const dir = opts.serviceAccountDir ?? SERVICE_ACCOUNT_DIR;
  if (env("KUBERNETES_SERVICE_HOST") && env("KUBERNETES_SERVICE_PORT")) {
    return await loadInClusterConfig({ dir, env });
  }
  const home = env("HOME");
  if (home) {
    const path = `${home}/.kube/config`;
    let exists = false;
    try {
      exists = (await Deno.stat(path)).isFile;
    } catch {
      // not readable: fall through to the error below
    }
    if (exists) return await loadKubeconfig([path], opts.context);
  }
  throw new Error(
    "no Kubernetes configuration: pass --kubeconfig, set KUBECONFIG, or run in a pod " +
      "(KUBERNETES_SERVICE_HOST/KUBERNETES_SERVICE_PORT and " + `${dir})`,
  );
}

/**
 * In-cluster connection: `https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT`, CA from
 * `<dir>/ca.crt`, the rotating token `<dir>/token`, namespace from `<dir>/namespace`.
 */
export async function loadInClusterConfig(
  opts: { dir?: string; env?: (name: string) => string | undefined } = {},
): Promise<ClusterConnection> {
  const dir = opts.dir ?? SERVICE_ACCOUNT_DIR;
  const env = opts.env ?? ((n: string) => Deno.env.get(n));
  const host = env("KUBERNETES_SERVICE_HOST");
  const port = env("KUBERNETES_SERVICE_PORT");
  if (!host || !port) {
    throw new Error("in-cluster config needs KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT");
  }
  const ca = await Deno.readTextFile(`${dir}/ca.crt`);
  const auth = new TokenFileAuth(`${dir}/token`);
  await auth.authorization({ refresh: true }); // fail now, not on the first request
  let namespace = "default";
  try {
    namespace = (await Deno.readTextFile(`${dir}/namespace`)).trim() || namespace;
  } catch {
    // optional
  }
  const h = host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
  return {
    server: `https://${h}:${port}`,
    caCerts: [ca],
    auth,
    namespace,
    description: `in-cluster (${dir})`,
  };
}

/** Minimal view of client-node's KubeConfig used here (the module is imported lazily). */
interface KubeConfigLike {
  loadFromFile(file: string): void;
  mergeConfig(config: KubeConfigLike, preserveContext?: boolean): void;
  setCurrentContext(name: string): void;
  getCurrentContext(): string;
  getContextObject(name: string): { namespace?: string } | null;
  getCurrentCluster(): { server: string; skipTLSVerify?: boolean; tlsServerName?: string } | null;
  applyToHTTPSOptions(opts: Record<string, unknown>): Promise<void>;
}

function pems(v: unknown): string[] {
  if (v === undefined || v === null) return [];
  if (Array.isArray(v)) return v.flatMap(pems);
  if (typeof v === "string") return [v];
  if (v instanceof Uint8Array) return [new TextDecoder().decode(v)];
  return [String(v)];
}

/** Kubeconfig credentials through client-node (exec plugins, OIDC, token files, static tokens). */
class KubeConfigAuth implements AuthSource {
  #value: string | undefined;
  #at = -Infinity;
  constructor(private readonly kc: KubeConfigLike, initial: string | undefined) {
    this.#value = initial;
    this.#at = Date.now();
  }
  async authorization({ refresh }: { refresh: boolean }): Promise<string | undefined> {
    if (refresh || Date.now() - this.#at >= 60_000) {
      const o: Record<string, unknown> = {};
      await this.kc.applyToHTTPSOptions(o);
      this.#value = authHeader(o);
      this.#at = Date.now();
    }
    return this.#value;
  }
}

function authHeader(o: Record<string, unknown>): string | undefined {
  const headers = (o.headers ?? {}) as Record<string, unknown>;
  const a = headers.Authorization ?? headers.authorization;
  if (typeof a === "string" && a) return a;
  if (typeof o.auth === "string" && o.auth) return `Basic ${btoa(o.auth)}`;
  return undefined;
}

/** Connection from kubeconfig file(s); several files are merged like `$KUBECONFIG`. */
export async function loadKubeconfig(
  paths: readonly string[],
  context?: string,
): Promise<ClusterConnection> {
  if (!paths.length) throw new Error("loadKubeconfig: no file");
  const k8s = await import("@kubernetes/client-node");
  const load = (p: string): KubeConfigLike => {
    const kc = new k8s.KubeConfig() as unknown as KubeConfigLike;
    try {
      kc.loadFromFile(p);
    } catch (e) {
      throw new Error(`cannot load kubeconfig ${p}: ${(e as Error).message}`, { cause: e });
    }
    return kc;
  };
  const kc = load(paths[0]);
  for (const p of paths.slice(1)) kc.mergeConfig(load(p), true);
  if (context) kc.setCurrentContext(context);
  const ctxName = kc.getCurrentContext();
  const cluster = kc.getCurrentCluster();
  if (!cluster?.server) {
    throw new Error(`kubeconfig ${paths.join(":")}: no cluster for context "${ctxName}"`);
  }
  if (cluster.skipTLSVerify) {
    throw new Error(
      `kubeconfig ${paths.join(":")}: insecure-skip-tls-verify is not supported ` +
        "(Deno's HTTP client always verifies); give the cluster's CA instead",
    );
  }
  if (cluster.tlsServerName) {
    log.warn("kubeconfig tls-server-name is not supported; verifying the server URL's host", {
      tlsServerName: cluster.tlsServerName,
    });
  }
  const o: Record<string, unknown> = {};
  await kc.applyToHTTPSOptions(o);
  const cert = pems(o.cert)[0];
  const key = pems(o.key)[0];
  const initial = authHeader(o);
  return {
    server: cluster.server.replace(/\/+$/, ""),
    caCerts: pems(o.ca),
    clientCert: cert && key ? { cert, key } : undefined,
    auth: new KubeConfigAuth(kc, initial),
    namespace: kc.getContextObject(ctxName)?.namespace || "default",
    description: `kubeconfig ${paths.join(":")} context ${ctxName}`,
  };
}

// ---------------------------------------------------------------------------------------------
// The client

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

/** Options of the client itself. */
export interface KubeClientOptions {
  userAgent?: string;
  /** Default deadline of non-watch requests; default 60 s. */
  timeoutMs?: number;
}

/** A REST client bound to one connection. Close it (or `using`) to release its connections. */
export class KubeClient implements Disposable {
  readonly connection: ClusterConnection;
  #http: Deno.HttpClient;
  #userAgent: string;
  #timeoutMs: number;

  constructor(connection: ClusterConnection, opts: KubeClientOptions = {}) {
    this.connection = connection;
    this.#userAgent = opts.userAgent ?? "dco";
    this.#timeoutMs = opts.timeoutMs ?? 60_000;
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

  close(): void {
    this.#http.close();
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
      let res: Response;
      try {
        res = await fetch(url, { method, headers, body, signal: opts.signal, client: this.#http });
      } catch (e) {
        if (opts.signal?.aborted) throw opts.signal.reason;
        throw new KubeNetworkError(`${what}: ${(e as Error).message}`, { cause: e });
      }
      if (res.ok) return res;
      if (res.status === 401 && auth && attempt === 0) {
        await res.body?.cancel();
        continue;
      }
      throw await errorFrom(res, what, opts.signal);
    }
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
  async *watch<T extends KubeObject = KubeObject>(
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
      const res = await this.request("GET", path, {
        signal: ac.signal,
        // Measured: with Deno's default `accept-encoding: gzip, br` the apiserver gzips the watch
        // stream and Deno's fetch ends the body after the first flushed chunk (a 4 s watch
        // "ended" after 9 ms). Watches are small incremental events: ask for no compression.
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
   * (default true, as runtime §1 prescribes).
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

async function errorFrom(res: Response, what: string, signal?: AbortSignal): Promise<Error> {
  let text = "";
  try {
    text = await res.text();
  } catch {
    if (signal?.aborted) return signal.reason;
  }
  try {
    const s = JSON.parse(text) as Status;
    if (s && typeof s === "object" && s.kind === "Status") {
      return KubeApiError.fromStatus(s, res.status, what);
    }
  } catch {
    // not JSON: use the text
  }
  const msg = text.trim().slice(0, 500) || res.statusText;
  return new KubeApiError(res.status, undefined, `${what}: ${msg}`, { request: what });
}
