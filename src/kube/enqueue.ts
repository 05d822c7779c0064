/**
 * What feeds a controller's queue: informer events mapped to keys ({@link enqueueFor}), and paced
 * fan-out ({@link Pacer}) for the moments one change wakes many keys at once.
 */
import { createLogger, type Logger } from "../obs/log.ts";
import { type Clock, realClock } from "./clock.ts";
import type { Informer } from "./informer.ts";
import type { KubeObject } from "./objects.ts";
import { objectKey } from "./store.ts";
import type { Registry } from "prom-client";
import { watchMapErrors } from "./watch_map_metrics.ts";

/** Anything keys can be added to: a {@link WorkQueue}, a {@link Pacer}. */
export interface KeySink {
  add(key: string): void;
}

/** Maps an object to the keys to enqueue (a string, several, or none). */
export type KeyMapper<T> = (obj: T) => Iterable<string> | string | undefined;

/** Options of {@link enqueueFor}. */
export interface EnqueueForOptions<T> {
  /** Return false to ignore an event (e.g. an update that changed nothing relevant). */
  predicate?: (event: "add" | "update" | "delete", obj: T, oldObj?: T) => boolean;
  logger?: Logger;
  /**
   * The map function's name (`<controller>.<mapFunc>`): the `map_func` label of
   * `dco_watch_map_list_errors_total` on `registry`, and a field of the log line.
   */
  mapFunc?: string;
  registry?: Registry;
}

/**
 * Wires an informer's events to a queue: every add/update/delete enqueues `map(obj)` (default:
 * the object's own key); an update maps both the old and the new object (a changed reference
 * must wake both sides). A mapper that throws (it could not read what it maps through) enqueues
 * nothing for that object, is logged and — given `mapFunc` and `registry` — counted in
 * `dco_watch_map_list_errors_total{map_func}`, never a silent empty result. Returns the function
 * that unwires it.
 */
export function enqueueFor<T extends KubeObject>(
  informer: Informer<T>,
  sink: KeySink,
  map: KeyMapper<T> = objectKey,
  opts: EnqueueForOptions<T> = {},
): () => void {
  const log = opts.logger ?? createLogger("kube.enqueue");
  const mapFunc = opts.mapFunc;
  const errors = mapFunc && opts.registry ? watchMapErrors(opts.registry) : undefined;
  if (mapFunc) errors?.inc({ map_func: mapFunc }, 0);
  const push = (obj: T) => {
    let keys: string[];
    try {
      const mapped = map(obj);
      // Materialised inside the try: a lazy iterable can fail while it is read.
      keys = mapped === undefined ? [] : typeof mapped === "string" ? [mapped] : [...mapped];
    } catch (e) {
      if (mapFunc) errors?.inc({ map_func: mapFunc });
      log.error("key mapper failed; the event wakes nothing", {
        informer: informer.name,
        map_func: mapFunc,
        key: objectKey(obj),
        error: e,
      });
      return;
    }
    for (const k of keys) sink.add(k);
  };
  const ok = (ev: "add" | "update" | "delete", obj: T, old?: T) =>
    !opts.predicate || opts.predicate(ev, obj, old);
  return informer.addEventHandler({
    add: (obj) => ok("add", obj) && push(obj),
    update: (old, obj) => {
      if (!ok("update", obj, old)) return;
      push(old);
      push(obj);
    },
    delete: (obj) => ok("delete", obj) && push(obj),
  });
}

/** Options of a {@link Pacer}. */
export interface PacerOptions {
  /** Keys per second; default 50 (200 configs woken by one server change spread over ~4 s). */
  qps?: number;
  clock?: Clock;
}

/**
 * Paced fan-out: keys added here reach the sink at no more than `qps` per second, in order,
 * each pending key once (adding a key already pending does nothing). Several fan-outs share the
 * pace. `stop()` drops what is pending.
 */
export class Pacer implements KeySink {
  readonly qps: number;
  #sink: KeySink;
  #clock: Clock;
  #interval: number;
  #pending = new Set<string>();
  #nextAt = -Infinity;
  #timer: number | undefined;
  #stopped = false;
  #idle: Array<() => void> = [];

  constructor(sink: KeySink, opts: PacerOptions = {}) {
    this.#sink = sink;
    this.qps = opts.qps ?? 50;
    if (!(this.qps > 0)) throw new Error(`Pacer: qps must be > 0, got ${this.qps}`);
    this.#clock = opts.clock ?? realClock;
    this.#interval = 1000 / this.qps;
  }

  /** Adds one key. */
  add(key: string): void {
    this.addAll([key]);
  }

  /** Adds keys (in order). */
  addAll(keys: Iterable<string>): void {
    if (this.#stopped) return;
    for (const k of keys) this.#pending.add(k);
    this.#pump();
  }

  /** Keys not yet passed on. */
  get pending(): number {
    return this.#pending.size;
  }

  /** Resolves when nothing is pending. */
  idle(): Promise<void> {
    if (this.#pending.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  /** Drops pending keys and the timer. */
  stop(): void {
    this.#stopped = true;
    this.#pending.clear();
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    for (const w of this.#idle.splice(0)) w();
  }

  #pump(): void {
    if (this.#timer !== undefined || this.#stopped) return;
    while (this.#pending.size > 0) {
      const now = this.#clock.now();
      if (now < this.#nextAt) {
        this.#timer = this.#clock.setTimeout(() => {
          this.#timer = undefined;
          this.#pump();
        }, this.#nextAt - now);
        return;
      }
      const key = this.#pending.values().next().value as string;
      this.#pending.delete(key);
      this.#nextAt = now + this.#interval;
      this.#sink.add(key);
    }
    for (const w of this.#idle.splice(0)) w();
  }
}

/** Passes `keys` to `sink` at `qps` (default 50) per second; resolves when all are passed. */
export async function pacedEnqueue(
  sink: KeySink,
  keys: Iterable<string>,
  opts: PacerOptions = {},
): Promise<void> {
  const p = new Pacer(sink, opts);
  p.addAll(keys);
  await p.idle();
  p.stop();
}
