/**
 * The soak's traffic: workers that write at the converted version and read every write back
 * exactly, through the real apiserver (so through the webhook-server Pods on every request).
 *
 * The target serves v1 (storage: `spec.size` integer, `spec.ratio` number, `spec.owner` string)
 * and v2 (`spec.capacity` for `size`, the others as they are). Each worker owns its objects (seeded
 * at v1); in a loop it merge-patches a new value at v2 (converted v1→v2 to apply the patch, v2→v1
 * to store it, v1→v2 for the answer), reads the object back at v2 (converted) and at v1 (the
 * stored value), and every fifth round lists at v2. Every integer is beyond 2^53 (an int64 a double
 * cannot hold), and every ratio a double with a full 17-digit expansion, so a value that is not
 * carried digit for digit is caught: integers are compared as the digits of the raw response text,
 * never through `JSON.parse`.
 */
import { nearestRank } from "../scale/measure.ts";
import type { Traffic } from "./result.ts";

/** The integers written start here: 2^53 + 1, the first int64 a double cannot represent. */
export const FIRST_VALUE = 9_007_199_254_740_993n;

/** The value a worker writes in a round: distinct per (worker, object, round). */
export interface Value {
  /** Decimal digits of an int64 beyond 2^53. */
  digits: string;
  /** A double that needs 17 significant digits. */
  ratio: number;
}

/** The value for sequence number `seq` (each write takes the next one). */
export function valueFor(seq: number): Value {
  // An even step keeps every value odd, and no odd integer above 2^53 is a double.
  return { digits: String(FIRST_VALUE + BigInt(seq) * 7918n), ratio: (seq + 1) / 3 };
}

/** `"field":<number>` in a raw JSON text, as written (digits intact); undefined when absent. */
export function rawNumber(text: string, field: string): string | undefined {
  return new RegExp(`"${field}":(-?[0-9][0-9.eE+-]*)`).exec(text)?.[1];
}

/** Whether `text` (one object's JSON at `intField`'s version) holds exactly `want`. */
export function holds(text: string, intField: string, want: Value): boolean {
  const ratio = rawNumber(text, "ratio");
  return rawNumber(text, intField) === want.digits && ratio !== undefined &&
    Number(ratio) === want.ratio;
}

/** Mutable counters behind a {@link Traffic}. */
export class Tally {
  reads = 0;
  writes = 0;
  lists = 0;
  failedReads = 0;
  failedWrites = 0;
  wrongValues = 0;
  conflicts = 0;
  retried429 = 0;
  readonly latenciesMs: number[] = [];
  readonly errorSamples: string[] = [];

  note(message: string): void {
    if (this.errorSamples.length < 10 && !this.errorSamples.includes(message)) {
      this.errorSamples.push(message);
    }
  }

  get failures(): number {
    return this.failedReads + this.failedWrites;
  }

  snapshot(): Traffic {
    const sorted = [...this.latenciesMs].sort((a, b) => a - b);
    return {
      reads: this.reads,
      writes: this.writes,
      lists: this.lists,
      failedReads: this.failedReads,
      failedWrites: this.failedWrites,
      wrongValues: this.wrongValues,
      conflicts: this.conflicts,
      retried429: this.retried429,
      p50Ms: nearestRank(sorted, 50),
      p99Ms: nearestRank(sorted, 99),
      errorSamples: [...this.errorSamples],
    };
  }
}

/** Where the objects live and how to reach the apiserver. */
export interface Target {
  /** The apiserver URL. */
  server: string;
  client: Deno.HttpClient;
  group: string;
  plural: string;
  kind: string;
  namespace: string;
}

/** The sequence counter shared by every worker of a run (values never repeat). */
export interface Sequence {
  next: number;
}

type Kind = "read" | "write";

/**
 * One request; 429 with Retry-After is retried (as client-go does: the apiserver answers it for a
 * moment while a watch cache rebuilds). Resolves to the body text of a 2xx answer, or undefined
 * after counting the failure (a 409 to a write is counted as a conflict instead).
 */
async function call(
  t: Target,
  tally: Tally,
  kind: Kind,
  method: string,
  path: string,
  body?: string,
): Promise<string | undefined> {
  const started = performance.now();
  const what = `${method} ${path.replace(/^\/apis\/[^/]+\//, "")}`;
  try {
    for (let attempt = 0;; attempt++) {
      const res = await fetch(`${t.server}${path}`, {
        method,
        client: t.client,
        headers: body === undefined ? {} : {
          "content-type": method === "PATCH" ? "application/merge-patch+json" : "application/json",
        },
        body,
      });
      const retryAfter = Number(res.headers.get("retry-after") ?? "");
      if (res.status === 429 && retryAfter >= 0 && attempt < 10) {
        await res.body?.cancel();
        tally.retried429++;
        await new Promise((r) => setTimeout(r, retryAfter * 1000));
        continue;
      }
      const text = await res.text();
      if (res.ok) return text;
      if (kind === "write" && res.status === 409) {
        tally.conflicts++;
        return undefined;
      }
      if (kind === "read") tally.failedReads++;
      else tally.failedWrites++;
      tally.note(`${what} → ${res.status} ${text.slice(0, 300)}`);
      return undefined;
    }
  } catch (e) {
    if (kind === "read") tally.failedReads++;
    else tally.failedWrites++;
    tally.note(`${what} → ${(e as Error).message}`);
    return undefined;
  } finally {
    tally.latenciesMs.push(performance.now() - started);
  }
}

const base = (t: Target, version: string) =>
  `/apis/${t.group}/${version}/namespaces/${t.namespace}/${t.plural}`;

/** The object `name` at the storage version, seeded with `value`. */
export function seedObject(t: Target, name: string, owner: string, value: Value): string {
  return `{"apiVersion":"${t.group}/v1","kind":"${t.kind}","metadata":{"name":"${name}"},` +
    `"spec":{"size":${value.digits},"ratio":${value.ratio},"owner":"${owner}"}}`;
}

/** Creates `names` at v1 (the storage version), each with its own value; resolves to them. */
export async function seed(
  t: Target,
  names: readonly string[],
  seq: Sequence,
): Promise<Map<string, Value>> {
  const tally = new Tally();
  const values = new Map<string, Value>();
  for (const name of names) {
    const value = valueFor(seq.next++);
    const text = await call(
      t,
      tally,
      "write",
      "POST",
      base(t, "v1"),
      seedObject(t, name, name, value),
    );
    if (text === undefined) throw new Error(`seeding ${name}: ${tally.errorSamples.join("; ")}`);
    values.set(name, value);
  }
  return values;
}

/**
 * One worker over its objects (name → last value written), until `stop` aborts; counts into
 * `tally`. `last` is updated as writes succeed, so a later phase continues from it.
 */
export async function worker(
  t: Target,
  last: Map<string, Value>,
  seq: Sequence,
  stop: AbortSignal,
  tally: Tally,
): Promise<void> {
  const wrong = (what: string) => {
    tally.wrongValues++;
    tally.note(`WRONG ${what}`);
  };
  for (let round = 1; !stop.aborted; round++) {
    for (const [name, prev] of last) {
      if (stop.aborted) break;
      const value = valueFor(seq.next++);
      const patch = `{"spec":{"capacity":${value.digits},"ratio":${value.ratio}}}`;
      tally.writes++;
      const patched = await call(t, tally, "write", "PATCH", `${base(t, "v2")}/${name}`, patch);
      // A failed write leaves the previous value (merge patches of one writer cannot half-apply).
      const want = patched === undefined ? prev : value;
      if (patched !== undefined) {
        if (!holds(patched, "capacity", value)) wrong(`PATCH ${name}: ${patched.slice(0, 300)}`);
        last.set(name, value);
      }
      tally.reads++;
      const v2 = await call(t, tally, "read", "GET", `${base(t, "v2")}/${name}`);
      if (v2 !== undefined && !holds(v2, "capacity", want)) {
        wrong(`GET v2 ${name}: ${v2.slice(0, 300)} want ${want.digits}/${want.ratio}`);
      }
      tally.reads++;
      const v1 = await call(t, tally, "read", "GET", `${base(t, "v1")}/${name}`);
      if (v1 !== undefined && (!holds(v1, "size", want) || v1.includes('"capacity"'))) {
        wrong(`GET v1 ${name}: ${v1.slice(0, 300)} want size ${want.digits}/${want.ratio}`);
      }
    }
    if (round % 5 === 0 && !stop.aborted) {
      tally.reads++;
      tally.lists++;
      const list = await call(t, tally, "read", "GET", base(t, "v2"));
      if (list !== undefined) checkList(list, last, wrong);
    }
  }
}

/**
 * A v2 list: every item is at v2 with an int64 `capacity` (other workers' objects may move while
 * the list is served), and this worker's own objects hold exactly their last value.
 */
function checkList(text: string, own: Map<string, Value>, wrong: (what: string) => void): void {
  // Split the raw text where each object starts (its keys are sorted: `apiVersion` first, then
  // `kind`, `metadata` with `name` just before `namespace`, `spec`); the list's own head has no
  // name and is skipped.
  const items = text.split(/(?="apiVersion":)/).slice(1);
  let seen = 0;
  for (const item of items) {
    const name = /"name":"([^"]+)","namespace":"/.exec(item)?.[1];
    if (!name || !/^"apiVersion":"[^"]+\/v2"/.test(item)) continue;
    seen++;
    const digits = rawNumber(item, "capacity");
    if (digits === undefined || BigInt(digits) < FIRST_VALUE) {
      wrong(`LIST v2 ${name}: ${item.slice(0, 300)}`);
    }
    const mine = own.get(name);
    if (mine && !holds(item, "capacity", mine)) {
      wrong(`LIST v2 ${name}: ${item.slice(0, 300)} want ${mine.digits}/${mine.ratio}`);
    }
  }
  if (seen === 0) wrong(`LIST v2: no v2 items in ${text.slice(0, 300)}`);
}

/** Reads every object once at v2 and at v1 and checks it against its last value. */
export async function verifyAll(t: Target, last: Map<string, Value>, tally: Tally): Promise<void> {
  for (const [name, want] of last) {
    for (const [version, field] of [["v2", "capacity"], ["v1", "size"]] as const) {
      tally.reads++;
      const text = await call(t, tally, "read", "GET", `${base(t, version)}/${name}`);
      if (text !== undefined && !holds(text, field, want)) {
        tally.wrongValues++;
        tally.note(`WRONG final GET ${version} ${name}: ${text.slice(0, 300)}`);
      }
    }
  }
}
