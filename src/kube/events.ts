/**
 * An event recorder on the `events.k8s.io/v1` API with the series rules of client-go's events
 * broadcaster (the one controller-runtime's recorder uses), docs/design/kube.md#events:
 *
 * - events are *isomorphic* when they share action, reason, reporting controller, regarding and
 *   related object (the note is not part of the key): the first is created; the second turns it
 *   into a series (`series.count: 2`) with a patch; later ones only count in memory;
 * - every 30 minutes the series in flight are written (count, last observed time), and every
 *   6 minutes a series not observed for 6 minutes gets its final write and leaves the cache (a
 *   single event after 6 minutes just leaves it), so the next occurrence starts a new event;
 * - a series patch that finds its event gone (events expire) creates it again.
 *
 * Recording never blocks or fails the caller: writes run in the background, one at a time, and a
 * failed write is logged and dropped. Generic over kinds: no conversion knowledge lives here.
 */
import type { KubeClient } from "./client.ts";
import { isNotFound } from "./errors.ts";
import type { KubeObject, ResourceRef } from "./objects.ts";

/** `events.k8s.io/v1` events in `namespace`. */
export function eventsResource(namespace: string): ResourceRef {
  return { group: "events.k8s.io", version: "v1", plural: "events", namespace };
}

/** What an event is about (`regarding`, `related`): a `v1.ObjectReference`. */
export interface ObjectReference {
  apiVersion?: string;
  kind?: string;
  name?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
}

export type EventType = "Normal" | "Warning";

/** One occurrence, as a reconciler reports it. */
export interface EventInput {
  regarding: ObjectReference;
  related?: ObjectReference;
  type: EventType;
  /** CamelCase, at most 128 characters: why (a condition reason). */
  reason: string;
  /** CamelCase, at most 128 characters: what was done or failed. */
  action: string;
  /** Human-readable; cut to the API's 1 kB. */
  note: string;
}

/** An occurrence without its object, as a reconciler decides it (the wiring adds `regarding`). */
export type ObjectEvent = Omit<EventInput, "regarding" | "related">;

/**
 * The reference of `obj` for `regarding`. No `resourceVersion`: it changes on every status write,
 * and the series key includes the reference, so every occurrence would start a new series.
 */
export function referenceOf(obj: {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string; uid?: string };
}): ObjectReference {
  const ref: ObjectReference = {
    apiVersion: obj.apiVersion,
    kind: obj.kind,
    name: obj.metadata?.name,
    uid: obj.metadata?.uid,
  };
  if (obj.metadata?.namespace) ref.namespace = obj.metadata.namespace;
  return ref;
}

/** `events.k8s.io/v1` `Event`, the fields this recorder writes. */
export interface EventObject extends KubeObject {
  eventTime: string;
  series?: { count: number; lastObservedTime: string };
  reportingController: string;
  reportingInstance: string;
  action: string;
  reason: string;
  regarding: ObjectReference;
  related?: ObjectReference;
  note: string;
  type: EventType;
}

/** The writes the recorder makes; {@link clientEventSink} is the real one. */
export interface EventSink {
  create(event: EventObject): Promise<EventObject>;
  /** Merge patch of `series` on the event; rejects with a NotFound when it is gone. */
  patchSeries(event: EventObject): Promise<EventObject>;
}

/** {@link EventSink} over the API client. */
export function clientEventSink(client: KubeClient): EventSink {
  return {
    create: (event) =>
      client.create<EventObject>(eventsResource(event.metadata.namespace ?? "default"), event),
    patchSeries: (event) =>
      client.patch<EventObject>(
        eventsResource(event.metadata.namespace ?? "default"),
        event.metadata.name ?? "",
        { series: event.series },
        { type: "merge" },
      ),
  };
}

export interface EventRecorderOptions {
  sink: EventSink;
  /** `reportingController`, e.g. `declarative-conversion-operator`. */
  controller: string;
  /** `reportingInstance`: `<controller>-<hostname>` as client-go names it. */
  instance: string;
  /** Epoch milliseconds. */
  now?: () => number;
  /** Reports a failed write (the event is dropped). */
  onError?: (error: unknown, event: EventObject) => void;
}

/** A series not observed this long is finished. */
export const SERIES_FINISH_MS = 6 * 60_000;
/** Series in flight are written this often. */
export const SERIES_REFRESH_MS = 30 * 60_000;
/** The API's limit on `note`, in bytes. */
export const NOTE_LIMIT_BYTES = 1024;

/** `metav1.MicroTime`: RFC 3339 with microseconds. */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
}

/** `note` cut to at most {@link NOTE_LIMIT_BYTES} UTF-8 bytes, never inside a character. */
export function truncateNote(note: string): string {
  const bytes = new TextEncoder().encode(note);
  if (bytes.length <= NOTE_LIMIT_BYTES) return note;
  let end = NOTE_LIMIT_BYTES;
  while (end > 0 && (bytes[end] & 0xc0) === 0x80) end--; // back to a character boundary
  return new TextDecoder().decode(bytes.subarray(0, end));
}

function refKey(r: ObjectReference | undefined): string {
  return r === undefined
    ? ""
    : [r.apiVersion, r.kind, r.namespace, r.name, r.uid, r.resourceVersion].map((v) => v ?? "")
      .join("\u0000");
}

/** The isomorphism key of client-go's broadcaster. */
function keyOf(e: EventObject): string {
  return [e.action, e.reason, e.reportingController, refKey(e.regarding), refKey(e.related)]
    .join("\u0001");
}

/** Records events with series deduplication; {@link start} runs the series timers. */
export class EventRecorder {
  readonly #opts: EventRecorderOptions;
  readonly #now: () => number;
  readonly #cache = new Map<string, EventObject>();
  /** Writes run one after another, in recording order. */
  #queue: Promise<void> = Promise.resolve();
  #timers = new Set<ReturnType<typeof setTimeout>>();
  #running = false;
  #sequence = 0;

  constructor(opts: EventRecorderOptions) {
    this.#opts = opts;
    this.#now = opts.now ?? Date.now;
  }

  /** Records one occurrence (in the background; see {@link flush}). */
  record(input: EventInput): void {
    const event = this.#makeEvent(input);
    const key = keyOf(event);
    const cached = this.#cache.get(key);
    if (cached === undefined) {
      this.#cache.set(key, event);
      this.#enqueue(key, structuredClone(event));
      return;
    }
    const observed = microTime(this.#now());
    if (cached.series !== undefined) {
      cached.series = { count: cached.series.count + 1, lastObservedTime: observed };
      return;
    }
    cached.series = { count: 2, lastObservedTime: observed };
    this.#enqueue(key, structuredClone(cached));
  }

  /** Resolves once every write queued so far is done. */
  flush(): Promise<void> {
    return this.#queue;
  }

  /** Writes every series in flight (the 30-minute refresh). */
  refreshSeries(): Promise<void> {
    for (const [key, event] of this.#cache) {
      if (event.series !== undefined) this.#enqueue(key, structuredClone(event));
    }
    return this.flush();
  }

  /**
   * The 6-minute sweep: a series not observed for {@link SERIES_FINISH_MS} gets its final write
   * and leaves the cache; so does a single event older than that (without a write).
   */
  finishSeries(): Promise<void> {
    const cutoff = this.#now() - SERIES_FINISH_MS;
    for (const [key, event] of [...this.#cache]) {
      const last = Date.parse(event.series?.lastObservedTime ?? event.eventTime);
      if (last >= cutoff) continue;
      this.#cache.delete(key);
      if (event.series !== undefined) this.#enqueue(undefined, structuredClone(event));
    }
    return this.flush();
  }

  /** Starts the refresh and finish timers (unref'd: they never keep the process alive). */
  start(): void {
    if (this.#running) return;
    this.#running = true;
    const every = (ms: number, fn: () => Promise<void>) => {
      const arm = () => {
        const timer = setTimeout(() => {
          this.#timers.delete(timer);
          if (!this.#running) return;
          void fn().finally(arm);
        }, ms);
        Deno.unrefTimer(timer);
        this.#timers.add(timer);
      };
      arm();
    };
    every(SERIES_FINISH_MS, () => this.finishSeries());
    every(SERIES_REFRESH_MS, () => this.refreshSeries());
  }

  /** Stops the timers; queued writes still complete (await {@link flush}). */
  stop(): void {
    this.#running = false;
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
  }

  #makeEvent(input: EventInput): EventObject {
    const ms = this.#now();
    // client-go names an event `<regarding name>.<unix nanoseconds in hex>`; the sequence fills
    // the sub-millisecond digits so two events of one object in one millisecond differ.
    const nanos = BigInt(ms) * 1_000_000n + BigInt(this.#sequence++ % 1_000_000);
    const event: EventObject = {
      apiVersion: "events.k8s.io/v1",
      kind: "Event",
      metadata: {
        name: `${input.regarding.name ?? ""}.${nanos.toString(16)}`,
        // Events of cluster-scoped objects go to `default`, as client-go puts them.
        namespace: input.regarding.namespace || "default",
      },
      eventTime: microTime(ms),
      reportingController: this.#opts.controller,
      reportingInstance: this.#opts.instance,
      action: input.action,
      reason: input.reason,
      regarding: { ...input.regarding },
      note: truncateNote(input.note),
      type: input.type,
    };
    if (input.related !== undefined) event.related = { ...input.related };
    return event;
  }

  /** Queues the write of `event`; a write that comes back updates the cache entry `key`. */
  #enqueue(key: string | undefined, event: EventObject): void {
    this.#queue = this.#queue.then(async () => {
      try {
        const written = await this.#write(event);
        const cached = key === undefined ? undefined : this.#cache.get(key);
        // Keep the newest count: the cache may have counted on while the write was in flight.
        if (cached !== undefined && cached.metadata.name === written.metadata.name) {
          cached.metadata = { ...written.metadata };
        }
      } catch (e) {
        this.#opts.onError?.(e, event);
      }
    });
  }

  async #write(event: EventObject): Promise<EventObject> {
    if (event.series !== undefined) {
      try {
        return await this.#opts.sink.patchSeries(event);
      } catch (e) {
        if (!isNotFound(e)) throw e;
      }
    }
    const { resourceVersion: _, ...metadata } = event.metadata;
    return await this.#opts.sink.create({ ...event, metadata });
  }
}
