/**
 * An informer: list + watch of one resource (optionally label/field-scoped) into an in-memory
 * store with secondary indexes and add/update/delete handlers — the watcher → store stages of
 * kube-rs, kept in one small class because the store's correctness depends on the watcher's
 * resourceVersion bookkeeping.
 *
 * Behaviour (docs/design/kube.md#informers):
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
 * - **Never stops silently.** Every failure is logged, counted in {@link InformerStatus} and in
 *   `dco_informer_watch_errors_total` (./informer_metrics.ts, given `registry`) and passed to
 *   {@link Informer.onError} handlers; `dco_informer_last_sync_timestamp_seconds` says when the
 *   cache was last known current. Before the first sync, a non-retryable LIST answer (400, 401,
 *   403, 404, 405, 406, 415, 422) is terminal: phase `failed`, {@link Informer.waitForSync}
 *   rejects at once with the cause (a process exits non-zero instead of hanging). After the first
 *   sync nothing is terminal: the cache serves its last state and retries, loudly (as client-go).
 * - `transform(obj)` runs on every object before it is stored (list items and ADDED, MODIFIED
 *   and DELETED objects; never on bookmarks). Contract: mutate in place, allocate
 *   nothing you can avoid, be idempotent, pass objects you do not recognise through unchanged.
 *   A transform that throws is a bug: it is logged and the object is stored as it is (an error
 *   must never drop an event).
 * - List items get `kind`/`apiVersion` from the list when the apiserver omits them (built-ins).
 * - Handlers run synchronously in event order; a throwing handler is logged and does not affect
 *   the others or the store. A handler added after objects are stored is replayed `add` for
 *   each of them (as client-go does), unless `{replay: false}`.
 */
import { createLogger, type Logger } from "../obs/log.ts";
import { abortableSleep, type BackoffOptions, computeBackoff } from "./backoff.ts";
import type { KubeClient } from "./client.ts";
import { isGone, isNonRetryable, KubeApiError, KubeNetworkError } from "./errors.ts";
import {
  type KubeObject,
  type ObjectList,
  resourcePath,
  type ResourceRef,
  type WatchEvent,
} from "./objects.ts";
import type { InformerErrorInfo, InformerPhase, InformerStatus } from "./informer_status.ts";
import { type InformerRecorder, informerRecorder } from "./informer_metrics.ts";
import type { Clock } from "./clock.ts";
import type { Registry } from "prom-client";
import { type IndexFunction, objectKey, ObjectStore } from "./store.ts";

/**
 * A watch that ends with nothing delivered sooner than this counts as a failed watch (backoff).
 * Real watches last minutes and carry bookmarks; an empty early end means something in the path
 * closes streams.
 */
export const EMPTY_WATCH_MIN_MS = 1_000;

/** Event handlers; all optional. */
export interface InformerEventHandler<T extends KubeObject> {
  add?(obj: T): void;
  update?(oldObj: T, newObj: T): void;
  delete?(obj: T): void;
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
  /** Where the informer families go (none: not exported); `clock` times their timestamp. */
  registry?: Registry;
  clock?: Clock;
}

const toError = (e: unknown): Error => e instanceof Error ? e : new Error(String(e));

/** List + watch cache of one resource. Create, add indexes/handlers, `start()`, `waitForSync()`. */
export class Informer<T extends KubeObject = KubeObject> implements AsyncDisposable {
  readonly name: string;
  readonly resource: ResourceRef;
  #client: KubeClient;
  #opts: InformerOptions<T>;
  #log: Logger;

  #store: ObjectStore<T>;
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
  #rec: InformerRecorder;

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
    this.#store = new ObjectStore<T>(`informer ${this.name}`, this.#log);
    this.#rec = informerRecorder(this.name, opts.registry, opts.clock);
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
   * Resolves when synced. Rejects with the cause of a terminal failure (a non-retryable first
   * LIST), with an error when stopped first, or with `signal`'s reason.
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
    return this.#store.list();
  }

  keys(): string[] {
    return this.#store.keys();
  }

  get size(): number {
    return this.#store.size;
  }

  /** Adds a secondary index: `fn` maps an object to the values it is found under (any time). */
  addIndex(name: string, fn: IndexFunction<T>): void {
    this.#store.addIndex(name, fn);
  }

  /** Objects whose index `name` contains `value`. */
  byIndex(name: string, value: string): T[] {
    return this.#store.byIndex(name, value);
  }

  /** Store keys whose index `name` contains `value`. */
  indexKeys(name: string, value: string): string[] {
    return this.#store.indexKeys(name, value);
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
        if (!signal.aborted) this.#rec.progressed(); // ran to its end: the cache was current
      } catch (e) {
        if (signal.aborted) break;
        const err = toError(e);
        this.#lastError = err;
        this.#rec.failed(err);
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
        await abortableSleep(delay, signal);
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
    this.#rec.progressed();
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
    const old = this.#store.replaceAll(fresh);
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
   * One WATCH; returns whether it received anything. Its first delivery resets the failure counts
   * at once (waiting for the end of a minutes-long watch would keep the pre-recovery backoff).
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
      this.#rec.progressed();
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
    const prev = this.#store.put(objectKey(obj), obj);
    if (obj.metadata?.resourceVersion) this.#rv = obj.metadata.resourceVersion;
    if (prev) this.#dispatch("update", obj, prev);
    else this.#dispatch("add", obj);
  }

  #remove(obj: T): void {
    this.#transform(obj);
    this.#store.remove(objectKey(obj));
    if (obj.metadata?.resourceVersion) this.#rv = obj.metadata.resourceVersion;
    this.#dispatch("delete", obj);
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
