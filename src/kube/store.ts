/**
 * The informer's in-memory store: objects by key (`namespace/name`, or `name` for cluster-scoped
 * objects) plus secondary indexes kept in step with every write. It knows nothing of watches or
 * handlers; the informer (./informer.ts) decides what goes in and tells its handlers.
 */
import type { Logger } from "../obs/log.ts";
import type { KubeObject } from "./objects.ts";

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

/** Maps an object to the index values it is found under. */
export type IndexFunction<T> = (obj: T) => readonly string[] | string | undefined;

interface Index<T> {
  fn: IndexFunction<T>;
  values: Map<string, Set<string>>;
}

/** Objects by key with secondary indexes. */
export class ObjectStore<T extends KubeObject> {
  #objects = new Map<string, T>();
  #indexes = new Map<string, Index<T>>();

  /** `owner` names the store in errors (`informer configmaps`); `log` gets index failures. */
  constructor(private readonly owner: string, private readonly log: Logger) {}

  get(key: string): T | undefined {
    return this.#objects.get(key);
  }

  /** All stored objects (a fresh array of the stored objects themselves). */
  list(): T[] {
    return [...this.#objects.values()];
  }

  keys(): string[] {
    return [...this.#objects.keys()];
  }

  values(): IterableIterator<T> {
    return this.#objects.values();
  }

  get size(): number {
    return this.#objects.size;
  }

  /** Adds an index and fills it from what is stored. */
  addIndex(name: string, fn: IndexFunction<T>): void {
    if (this.#indexes.has(name)) throw new Error(`${this.owner}: index ${name} exists`);
    const idx: Index<T> = { fn, values: new Map() };
    this.#indexes.set(name, idx);
    for (const [key, obj] of this.#objects) this.#indexOne(idx, key, obj, true);
  }

  /** Objects whose index `name` contains `value`. */
  byIndex(name: string, value: string): T[] {
    const out: T[] = [];
    for (const key of this.indexKeys(name, value)) {
      const o = this.#objects.get(key);
      if (o) out.push(o);
    }
    return out;
  }

  /** Store keys whose index `name` contains `value`. */
  indexKeys(name: string, value: string): string[] {
    const idx = this.#indexes.get(name);
    if (!idx) throw new Error(`${this.owner}: no index ${name}`);
    return [...(idx.values.get(value) ?? [])];
  }

  /** Stores `obj` under `key`; returns the object it replaced. */
  put(key: string, obj: T): T | undefined {
    const prev = this.#objects.get(key);
    this.#objects.set(key, obj);
    for (const idx of this.#indexes.values()) {
      if (prev) this.#indexOne(idx, key, prev, false);
      this.#indexOne(idx, key, obj, true);
    }
    return prev;
  }

  /** Removes `key`; returns the object it held. */
  remove(key: string): T | undefined {
    const prev = this.#objects.get(key);
    this.#objects.delete(key);
    if (prev) { for (const idx of this.#indexes.values()) this.#indexOne(idx, key, prev, false); }
    return prev;
  }

  /** Replaces the whole content (and rebuilds the indexes); returns the previous content. */
  replaceAll(fresh: Map<string, T>): Map<string, T> {
    const old = this.#objects;
    this.#objects = fresh;
    for (const idx of this.#indexes.values()) {
      idx.values.clear();
      for (const [key, obj] of fresh) this.#indexOne(idx, key, obj, true);
    }
    return old;
  }

  #indexOne(idx: Index<T>, key: string, obj: T, add: boolean): void {
    let vals: readonly string[] | string | undefined;
    try {
      vals = idx.fn(obj);
    } catch (e) {
      this.log.error("index function threw", { error: e, key });
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
}
