/**
 * An informer: list + watch of one resource (optionally label/field-scoped) into an in-memory
 * store with secondary indexes and add/update/delete handlers — the watcher → store stages of
 * kube-rs, kept in one small class because the store's correctness depends on the watcher's
 * resourceVersion bookkeeping.
 *
 * Behaviour (runtime.md §1, §8.2 steps 3/5/7, §8.8; design.md "Informers and queues"):
 * - Initial LIST is paged (`limit`, default 500) and consistent (read from etcd); a continue
 *   token that expires (410) restarts the LIST unpaged. The WATCH starts at the LIST's
 *   resourceVersion with `allowWatchBookmarks`; every event and bookmark advances it, so a
 *   reconnect resumes without a relist.
 * - 410 Gone — as an HTTP answer or as a watch ERROR event with code 410 — relists and
 *   reconciles the store against the fresh list: missing objects are deleted (handlers see
 *   `delete`), new ones added, changed ones (other resourceVersion) updated.
 * - Network errors, 5xx, 429 and dropped streams reconnect with capped exponential backoff
 *   (800 ms doubling to 30 s, ±10 % jitter; reset once a watch delivers anything). The server
 *   ends each watch after a random 5–10 min (`timeoutSeconds`); a stream that receives nothing
 *   for that long plus 60 s is treated as dead and reconnected.
 * - **Never stops silently.** Every failure is logged, counted in {@link InformerStatus} and
 *   passed to {@link Informer.onError} handlers. Before the first sync, a non-retryable answer to
 *   the LIST (400 bad selector, 401, 403 missing RBAC, 404 kind not installed, 405, 406, 415,
 *   422) is terminal: the informer enters phase `failed` and {@link Informer.waitForSync}
 *   rejects at once with that cause, so a process exits non-zero instead of hanging (runtime
 *   §8.2 step 7). After the first sync nothing is terminal: the cache keeps serving its last
 *   state and the informer keeps retrying, loudly (as client-go's reflector does).
 * - `transform(obj)` runs on every object before it is stored (list items and ADDED, MODIFIED
 *   and DELETED objects; never on bookmarks). Contract (runtime §8.8): mutate in place, allocate
 *   nothing you can avoid, be idempotent, pass objects you do not recognise through unchanged.
 *   A transform that throws is a bug: it is logged and the object is stored as it is (an error
 *   must never drop an event).
 * - List items get `kind`/`apiVersion` filled in from the list when the apiserver omits them
 *   (built-in kinds), so handlers and transforms see the same shape as from watch events.
 * - Handlers run synchronously in event order; a throwing handler is logged and does not affect
 *   the others or the store. A handler added after objects are stored is replayed `add` for
 *   each of them (as client-go does), unless `{replay: false}`.
 */
import { createLogger, type Logger } from "../obs/log.ts";
import {
  isGone,
  KubeApiError,
  type KubeClient,
  KubeNetworkError,
  type KubeObject,
  type ObjectList,
  resourcePath,
  type ResourceRef,
  type WatchEvent,
} from "./client.ts";

/** Store key: `namespace/name`, or `name` for cluster-scoped objects. */
export function objectKey(obj: KubeObject): string {
  const m = obj.metadata;
  return m?.namespace ? `${m.namespace}/${m.name}` : `${m?.name}`;
}

/** Splits a store key into namespace (undefined for cluster-scoped) and name. */
export function splitKey(key: string): { namespace?: string; name: string } {
  const i = key.indexOf("/");
  return i < 0 ? { name: key } : { namespace: key.slice(0, i), name: key.slice(i + 1) };
}

/** Where the informer is in its life. */
/**
 * A watch that ends with nothing delivered sooner than this counts as a failed watch (backoff).
 * Real watches last minutes and carry bookmarks; an empty early end means something in the path
 * closes streams.
 */
export const EMPTY_WATCH_MIN_MS = 1_000;

export type InformerPhase = "new" | "listing" | "watching" | "backoff" | "failed" | "stopped";

/** A snapshot of the informer's health, for logs, readiness and tests. */
export interface InformerStatus {
  readonly phase: InformerPhase;
  readonly synced: boolean;
  /** The resourceVersion the next watch resumes from. */
  readonly resourceVersion: string;
  readonly objects: number;
  /** Completed LISTs (1 after the initial sync; more after 410 relists). */
  readonly lists: number;
  /** WATCH requests opened. */
  readonly watches: number;
  readonly bookmarks: number;
  /** 410 Gone answers and ERROR events seen (each one triggers a relist). */
  readonly expired: number;
  /** Failures since the last successful LIST or productive WATCH. */
  readonly consecutiveFailures: number;
  readonly lastError?: Error;
}

/** Event handlers; all optional. */
export interface InformerEventHandler<T extends KubeObject> {
  add?(obj: T): void;
  update?(oldObj: T, newObj: T): void;
  delete?(obj: T): void;
}

/** Context of a failure passed to {@link Informer.onError} handlers. */
export interface InformerErrorInfo {
  readonly operation: "list" | "watch";
  /** True when the informer gave up (only before the first sync). */
  readonly terminal: boolean;
  /** Delay before the next attempt (absent when terminal or relisting at once). */
  readonly retryInMs?: number;
  readonly consecutiveFailures: number;
}

/** Reconnect backoff: `initialMs · 2^(n−1)` capped at `maxMs`, ± `jitter`. */
export interface BackoffOptions {
  initialMs?: number;
  maxMs?: number;
  /** Relative random spread, 0..1; default 0.1. */
  jitter?: number;
}

/** Options of an {@link Informer}. */
export interface InformerOptions<T extends KubeObject> {
  client: KubeClient;
  resource: ResourceRef;
  /** For logs and errors; default the plural (and group). */
  name?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** In-place pre-store hook (see the module doc for its contract). */
  transform?: (obj: T) => void;
  /** LIST page size; default 500; 0 lists in one request. */
  pageSize?: number;
  /** Server-side watch duration; default random in [300, 600) s per watch. */
  watchTimeoutSeconds?: number;
  backoff?: BackoffOptions;
  logger?: Logger;
}

/** Reconnect delay for the n-th consecutive failure (n ≥ 1). */
export function computeBackoff(
  n: number,
  opts: BackoffOptions = {},
  random: () => number = Math.random,
): number {
  const initial = opts.initialMs ?? 800;
  const max = opts.maxMs ?? 30_000;
  const jitter = opts.jitter ?? 0.1;
  const base = Math.min(max, initial * 2 ** Math.min(Math.max(0, n - 1), 52));
  return Math.round(Math.min(max, base * (1 + jitter * (2 * random() - 1))));
}

/** Status codes that end an informer before its first sync (they will not fix themselves). */
const TERMINAL_BEFORE_SYNC = new Set([400, 401, 403, 404, 405, 406, 415, 422]);

/** Whether an error of a first LIST means "give up" rather than "retry". */
export function isNonRetryable(e: unknown): boolean {
  return e instanceof KubeApiError && TERMINAL_BEFORE_SYNC.has(e.status);
}

interface Index<T> {
  fn: (obj: T) => readonly string[] | string | undefined;
  values: Map<string, Set<string>>;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(t);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const t = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}

function toError(e: unknown): Error {
  return e instanceof Error ? e : new Error(String(e));
}

/** List + watch cache of one resource. Create, add indexes/handlers, `start()`, `waitForSync()`. */
export class Informer<T extends KubeObject = KubeObject> implements AsyncDisposable {
  readonly name: string;
  readonly resource: ResourceRef;
  #client: KubeClient;
  #opts: InformerOptions<T>;
  #log: Logger;

  #store = new Map<string, T>();
  #indexes = new Map<string, Index<T>>();
  #handlers = new Set<InformerEventHandler<T>>();
  #errorHandlers = new Set<(e: Error, info: InformerErrorInfo) => void>();

  #phase: InformerPhase = "new";
  #rv = "";
  #synced = false;
  #lists = 0;
  #watches = 0;
  #bookmarks = 0;
  #expired = 0;
  #failures = 0;
  /** 410s since the last successful LIST or productive WATCH (the 2nd one in a row backs off). */
  #gonesInARow = 0;
  #lastError: Error | undefined;

  #abort = new AbortController();
  #loop: Promise<void> | undefined;
  #sync: { promise: Promise<void>; resolve: () => void; reject: (e: Error) => void };

  constructor(opts: InformerOptions<T>) {
    this.#opts = opts;
    this.#client = opts.client;
    this.resource = opts.resource;
    this.name = opts.name ??
      (opts.resource.group
        ? `${opts.resource.plural}.${opts.resource.group}`
        : opts.resource.plural);
    this.#log = (opts.logger ?? createLogger("kube.informer")).with({ informer: this.name });
    let resolve!: () => void;
    let reject!: (e: Error) => void;
    const promise = new Promise<void>((res, rej) => [resolve, reject] = [res, rej]);
    promise.catch(() => {}); // observed through waitForSync; never an unhandled rejection
    this.#sync = { promise, resolve, reject };
  }

  // -- lifecycle --------------------------------------------------------------------------------

  /** Starts listing and watching (idempotent). */
  start(): this {
    if (!this.#loop && !this.#abort.signal.aborted) {
      this.#loop = this.#run().catch((e) => {
        // #run handles everything; reaching this is a bug, and it must not be silent either.
        this.#fail(toError(e), "watch");
      });
    }
    return this;
  }

  /** Stops the informer and waits for its loop to end. The store keeps its last state. */
  async stop(): Promise<void> {
    this.#abort.abort(new Error(`informer ${this.name} stopped`));
    await this.#loop;
    if (!this.#synced) this.#sync.reject(new Error(`informer ${this.name} stopped before sync`));
    if (this.#phase !== "failed") this.#phase = "stopped";
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.stop();
  }

  /** True once the initial LIST is in the store (stays true across relists). */
  hasSynced(): boolean {
    return this.#synced;
  }

  /**
   * Resolves when synced. Rejects with the cause when the informer failed terminally (a
   * non-retryable first LIST), with an error when it was stopped first, or with `signal`'s
   * reason.
   */
  waitForSync(signal?: AbortSignal): Promise<void> {
    if (!signal) return this.#sync.promise;
    if (signal.aborted) return Promise.reject(signal.reason);
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => reject(signal.reason);
      signal.addEventListener("abort", onAbort, { once: true });
      this.#sync.promise.then(resolve, reject).finally(() =>
        signal.removeEventListener("abort", onAbort)
      );
    });
  }

  status(): InformerStatus {
    return {
      phase: this.#phase,
      synced: this.#synced,
      resourceVersion: this.#rv,
      objects: this.#store.size,
      lists: this.#lists,
      watches: this.#watches,
      bookmarks: this.#bookmarks,
      expired: this.#expired,
      consecutiveFailures: this.#failures,
      lastError: this.#lastError,
    };
  }

  // -- store ------------------------------------------------------------------------------------

  /** The stored object for `namespace/name` (or `name`). */
  get(key: string): T | undefined {
    return this.#store.get(key);
  }

  /** All stored objects (a fresh array; the objects are the stored ones — do not mutate). */
  list(): T[] {
    return [...this.#store.values()];
  }

  keys(): string[] {
    return [...this.#store.keys()];
  }

  get size(): number {
    return this.#store.size;
  }

  /**
   * Adds a secondary index: `fn` maps an object to the values it is found under (e.g.
   * `spec.targetCRD.name`). May be added before or after start.
   */
  addIndex(name: string, fn: (obj: T) => readonly string[] | string | undefined): void {
    if (this.#indexes.has(name)) throw new Error(`informer ${this.name}: index ${name} exists`);
    const idx: Index<T> = { fn, values: new Map() };
    this.#indexes.set(name, idx);
    for (const [key, obj] of this.#store) this.#indexOne(idx, key, obj, true);
  }

  /** Objects whose index `name` contains `value`. */
  byIndex(name: string, value: string): T[] {
    const out: T[] = [];
    for (const key of this.indexKeys(name, value)) {
      const o = this.#store.get(key);
      if (o) out.push(o);
    }
    return out;
  }

  /** Store keys whose index `name` contains `value`. */
  indexKeys(name: string, value: string): string[] {
    const idx = this.#indexes.get(name);
    if (!idx) throw new Error(`informer ${this.name}: no index ${name}`);
    return [...(idx.values.get(value) ?? [])];
  }

  // -- handlers ---------------------------------------------------------------------------------

  /** Registers handlers; returns the function that removes them. */
  addEventHandler(h: InformerEventHandler<T>, opts: { replay?: boolean } = {}): () => void {
    this.#handlers.add(h);
    if (opts.replay ?? true) {
      for (const obj of this.#store.values()) this.#call("add", () => h.add?.(obj));
    }
    return () => this.#handlers.delete(h);
  }

  /** Registers a failure observer (every logged failure, terminal or not). */
  onError(fn: (e: Error, info: InformerErrorInfo) => void): () => void {
    this.#errorHandlers.add(fn);
    return () => this.#errorHandlers.delete(fn);
  }

  // -- the loop ---------------------------------------------------------------------------------

  async #run(): Promise<void> {
    const signal = this.#abort.signal;
    let needList = true;
    while (!signal.aborted) {
      let op: "list" | "watch" = needList ? "list" : "watch";
      try {
        if (needList) {
          this.#phase = "listing";
          await this.#listAndReplace(signal);
          needList = false;
          this.#failures = 0;
        }
        op = "watch";
        this.#phase = "watching";
        const started = Date.now();
        const received = await this.#watchOnce(signal); // resets the failure counts on delivery
        // A watch that ends cleanly, early and empty (a proxy answering 200 and closing, a server
        // cutting streams) would otherwise be re-opened in a tight loop: treat it as a failure.
        if (!received && !signal.aborted && Date.now() - started < EMPTY_WATCH_MIN_MS) {
          throw new KubeNetworkError(
            `watch ${this.name} ended after ${Date.now() - started} ms without any event`,
          );
        }
      } catch (e) {
        if (signal.aborted) break;
        const err = toError(e);
        this.#lastError = err;
        if (isGone(err) && this.#gonesInARow++ === 0) {
          this.#expired++;
          needList = true;
          this.#log.info("resourceVersion expired (410); relisting", {
            resourceVersion: this.#rv,
            operation: op,
            error: err.message,
          });
          this.#notify(err, {
            operation: op,
            terminal: false,
            consecutiveFailures: this.#failures,
          });
          continue;
        }
        if (isGone(err)) {
          this.#expired++;
          needList = true; // 410 again right after a relist: relist, but after a backoff
        }
        this.#failures++;
        if (!this.#synced && op === "list" && isNonRetryable(err)) {
          this.#fail(err, op);
          return;
        }
        const delay = computeBackoff(this.#failures, this.#opts.backoff);
        this.#log.warn(`${op} failed; retrying`, {
          error: err,
          retry_in_ms: delay,
          consecutive_failures: this.#failures,
          synced: this.#synced,
        });
        this.#notify(err, {
          operation: op,
          terminal: false,
          retryInMs: delay,
          consecutiveFailures: this.#failures,
        });
        this.#phase = "backoff";
        await sleep(delay, signal);
      }
    }
  }

  #fail(err: Error, op: "list" | "watch"): void {
    this.#phase = "failed";
    this.#lastError = err;
    this.#log.error(`${op} failed permanently; informer stopped`, { error: err });
    this.#notify(err, { operation: op, terminal: true, consecutiveFailures: this.#failures });
    this.#sync.reject(err);
  }

  #notify(err: Error, info: InformerErrorInfo): void {
    for (const fn of this.#errorHandlers) {
      try {
        fn(err, info);
      } catch (e) {
        this.#log.error("error handler threw", { error: e });
      }
    }
  }

  async #listAndReplace(signal: AbortSignal): Promise<void> {
    const fresh = new Map<string, T>();
    let pageSize = this.#opts.pageSize ?? 500;
    let cont: string | undefined;
    let rv = "";
    for (;;) {
      let page: ObjectList<T>;
      try {
        page = await this.#client.list<T>(this.resource, {
          labelSelector: this.#opts.labelSelector,
          fieldSelector: this.#opts.fieldSelector,
          limit: pageSize > 0 ? pageSize : undefined,
          continue: cont,
          signal,
        });
      } catch (e) {
        if (cont && isGone(e)) {
          // The continue token outlived etcd's compaction window: start over, unpaged.
          this.#log.info("list continue token expired; listing again unpaged");
          fresh.clear();
          cont = undefined;
          pageSize = 0;
          continue;
        }
        throw e;
      }
      const itemKind = page.kind?.endsWith("List") ? page.kind.slice(0, -4) : undefined;
      for (const item of page.items ?? []) {
        if (item.kind === undefined && itemKind) item.kind = itemKind;
        if (item.apiVersion === undefined && page.apiVersion) item.apiVersion = page.apiVersion;
        this.#transform(item);
        fresh.set(objectKey(item), item);
      }
      rv = page.metadata?.resourceVersion ?? "";
      cont = page.metadata?.continue || undefined;
      if (!cont) break;
    }
    this.#replace(fresh);
    this.#rv = rv;
    this.#lists++;
    if (!this.#synced) {
      this.#synced = true;
      this.#log.info("informer synced", { objects: fresh.size, resourceVersion: rv });
      this.#sync.resolve();
    } else {
      this.#log.info("relisted", { objects: fresh.size, resourceVersion: rv });
    }
  }

  /** Swaps in a fresh list and emits the differences as events. */
  #replace(fresh: Map<string, T>): void {
    const old = this.#store;
    this.#store = fresh;
    for (const idx of this.#indexes.values()) {
      idx.values.clear();
      for (const [key, obj] of fresh) this.#indexOne(idx, key, obj, true);
    }
    for (const [key, obj] of fresh) {
      const prev = old.get(key);
      if (!prev) this.#dispatch("add", obj);
      else if (prev.metadata?.resourceVersion !== obj.metadata?.resourceVersion) {
        this.#dispatch("update", obj, prev);
      }
    }
    for (const [key, prev] of old) if (!fresh.has(key)) this.#dispatch("delete", prev);
  }

  /**
   * One WATCH. Its first delivery (event or bookmark) proves the connection healthy and resets
   * the failure counts at once: a watch usually runs for minutes, so waiting for its end would
   * leave `consecutiveFailures` (and the next backoff) at the pre-recovery level meanwhile.
   * Returns whether it received anything.
   */
  async #watchOnce(signal: AbortSignal): Promise<boolean> {
    const timeoutSeconds = this.#opts.watchTimeoutSeconds ?? 300 + Math.floor(Math.random() * 300);
    this.#watches++;
    let received = false;
    const events = this.#client.watch<T>(this.resource, {
      resourceVersion: this.#rv,
      allowWatchBookmarks: true,
      labelSelector: this.#opts.labelSelector,
      fieldSelector: this.#opts.fieldSelector,
      timeoutSeconds,
      signal,
    });
    for await (const ev of events as AsyncIterable<WatchEvent<T>>) {
      switch (ev.type) {
        case "ADDED":
        case "MODIFIED":
          this.#upsert(ev.object);
          break;
        case "DELETED":
          this.#remove(ev.object);
          break;
        case "BOOKMARK":
          this.#bookmarks++;
          if (ev.object?.metadata?.resourceVersion) this.#rv = ev.object.metadata.resourceVersion;
          break;
        case "ERROR":
          throw KubeApiError.fromStatus(
            ev.object ?? {},
            undefined,
            `watch ${resourcePath(this.resource)}`,
          );
        default:
          throw new KubeNetworkError(
            `watch ${this.name}: unknown event type ${(ev as { type: unknown }).type}`,
          );
      }
      if (!received) {
        received = true;
        this.#failures = 0;
        this.#gonesInARow = 0;
      }
    }
    return received;
  }

  #transform(obj: T): void {
    const t = this.#opts.transform;
    if (!t) return;
    try {
      t(obj);
    } catch (e) {
      this.#log.error("transform threw; storing the object untransformed", {
        error: e,
        key: objectKey(obj),
      });
    }
  }

  #upsert(obj: T): void {
    this.#transform(obj);
    const key = objectKey(obj);
    const prev = this.#store.get(key);
    this.#store.set(key, obj);
    for (const idx of this.#indexes.values()) {
      if (prev) this.#indexOne(idx, key, prev, false);
      this.#indexOne(idx, key, obj, true);
    }
    if (obj.metadata?.resourceVersion) this.#rv = obj.metadata.resourceVersion;
    if (prev) this.#dispatch("update", obj, prev);
    else this.#dispatch("add", obj);
  }

  #remove(obj: T): void {
    this.#transform(obj);
    const key = objectKey(obj);
    const prev = this.#store.get(key);
    this.#store.delete(key);
    if (prev) { for (const idx of this.#indexes.values()) this.#indexOne(idx, key, prev, false); }
    if (obj.metadata?.resourceVersion) this.#rv = obj.metadata.resourceVersion;
    this.#dispatch("delete", obj);
  }

  #indexOne(idx: Index<T>, key: string, obj: T, add: boolean): void {
    let vals: readonly string[] | string | undefined;
    try {
      vals = idx.fn(obj);
    } catch (e) {
      this.#log.error("index function threw", { error: e, key });
      return;
    }
    if (vals === undefined) return;
    for (const v of typeof vals === "string" ? [vals] : vals) {
      let set = idx.values.get(v);
      if (add) {
        if (!set) idx.values.set(v, set = new Set());
        set.add(key);
      } else if (set) {
        set.delete(key);
        if (set.size === 0) idx.values.delete(v);
      }
    }
  }

  #dispatch(kind: "add" | "update" | "delete", obj: T, prev?: T): void {
    for (const h of this.#handlers) {
      this.#call(kind, () => {
        if (kind === "add") h.add?.(obj);
        else if (kind === "update") h.update?.(prev!, obj);
        else h.delete?.(obj);
      });
    }
  }

  #call(kind: string, fn: () => void): void {
    try {
      fn();
    } catch (e) {
      this.#log.error(`${kind} handler threw`, { error: e });
    }
  }
}
