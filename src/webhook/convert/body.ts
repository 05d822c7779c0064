/**
 * Reading a `/convert` request body before it is parsed: the byte cap, the nesting and number scan
 * and the uid recovery that lets a rejected body still get a Failure review carrying its uid. Why each
 * limit exists: docs/design/webhook.md#limits-and-their-reasons.
 */
import { afterString, digitRunEnd, LONG_DIGIT_RUN, mayBeInexact } from "../../lib/json_exact.ts";

/** Default `--max-request-bytes` (32 MiB). */
export const DEFAULT_MAX_REQUEST_BYTES = 32 * 1024 * 1024;
/** Deepest accepted JSON nesting of a request body, envelope included. */
export const DEFAULT_MAX_JSON_DEPTH = 100;
/** How much of a rejected body is kept to recover the request uid. */
export const UID_SCAN_BYTES = 8 * 1024;

const decoder = new TextDecoder();

export type BodyRead =
  | { ok: true; bytes: Uint8Array }
  /** Over the limit: `head` is (up to) the first 8 KiB, for uid recovery. */
  | { ok: false; head: Uint8Array };

/**
 * Reads a body counting bytes, never holding more than `limit` + one chunk; works on a fetch
 * `ReadableStream` and a node `IncomingMessage` alike (both are async-iterable). A declared
 * Content-Length over the limit stops after the first 8 KiB. On "too large" the iterator is left
 * where it stopped (not returned): the caller decides how to drop the rest of the body.
 */
export async function readBodyLimited(
  body: AsyncIterable<Uint8Array> | null,
  limit: number,
  declaredLength: number | undefined,
): Promise<BodyRead> {
  if (body === null) return { ok: true, bytes: new Uint8Array(0) };
  const it = body[Symbol.asyncIterator]();
  const declaredOver = declaredLength !== undefined && declaredLength > limit;
  const stopAt = declaredOver ? UID_SCAN_BYTES : limit;
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await it.next();
    if (done) break;
    chunks.push(value);
    total += value.byteLength;
    if (total > stopAt) break;
  }
  if (total > limit || declaredOver) {
    return { ok: false, head: concat(chunks, Math.min(total, UID_SCAN_BYTES)) };
  }
  return { ok: true, bytes: concat(chunks, total) };
}

/** The first `length` bytes of `chunks` as one array (no copy for a single chunk). */
function concat(chunks: Uint8Array[], length: number): Uint8Array {
  if (chunks.length === 1 && chunks[0].byteLength === length) return chunks[0];
  const out = new Uint8Array(length);
  let at = 0;
  for (const c of chunks) {
    if (at >= length) break;
    const part = c.byteLength <= length - at ? c : c.subarray(0, length - at);
    out.set(part, at);
    at += part.byteLength;
  }
  return out;
}

/** What one pass over a body's text found, before it is parsed. */
export interface BodyScan {
  /** Nesting deeper than the limit (brackets inside strings ignored): the body is not parsed. */
  tooDeep: boolean;
  /**
   * A number `JSON.parse` may read inexactly or out of range (a run of 16+ digits or an
   * exponent, outside strings): select the exact parse (src/lib/json_exact.ts).
   */
  longNumbers: boolean;
}

/**
 * The one pass over a body before it is parsed: nesting depth and long numbers. Malformed text is
 * left to the parser. Runs on the decoded string, where `indexOf` skips string contents with
 * memchr: ~20 % of parse + stringify for ordinary objects, and long annotation values cost
 * almost nothing (a byte-table scan over the `Uint8Array` was 1.5× parse for 10 KB objects).
 */
export function scanBody(s: string, max: number): BodyScan {
  let depth = 0;
  let longNumbers = false;
  const n = s.length;
  let i = 0;
  while (i < n) {
    const c = s.charCodeAt(i++);
    if (c === 0x22) {
      i = afterString(s, i);
      if (i < 0) break;
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) return { tooDeep: true, longNumbers };
    } else if (c === 0x7d || c === 0x5d) {
      depth--;
    } else if (c <= 0x39 && c >= 0x30 && !longNumbers) {
      const end = digitRunEnd(s, i);
      longNumbers = end - i + 1 >= LONG_DIGIT_RUN || (s.charCodeAt(end) | 0x20) === 0x65; // e/E
      i = end;
    }
  }
  return { tooDeep: false, longNumbers };
}

/**
 * The same two findings as {@link scanBody}, from the value plain `JSON.parse` made of the text
 * (V8's parser does not recurse, so any nesting parses): nesting deeper than `max` (the root is
 * level 1, as a bracket is in the text), and a number the exact parse would read differently
 * (`mayBeInexact`). A walk over the parsed values touches each value once, where the text scan
 * skips every string: ~37 µs against ~250 µs for a 100-object review of 2 KB objects.
 * Iterative, so a deep value cannot exhaust the stack.
 */
export function inspectParsed(value: unknown, max: number): BodyScan {
  let longNumbers = false;
  if (typeof value !== "object" || value === null) {
    return { tooDeep: false, longNumbers: typeof value === "number" && mayBeInexact(value) };
  }
  const containers: object[] = [value];
  const depths: number[] = [1];
  while (containers.length > 0) {
    const container = containers.pop() as Record<string, unknown> | unknown[];
    const depth = depths.pop() as number;
    if (depth > max) return { tooDeep: true, longNumbers };
    // Two loops rather than Object.values: no array per object.
    if (Array.isArray(container)) {
      for (let i = 0; i < container.length; i++) {
        longNumbers = visit(container[i], depth, containers, depths) || longNumbers;
      }
    } else {
      for (const key in container) {
        longNumbers = visit(container[key], depth, containers, depths) || longNumbers;
      }
    }
  }
  return { tooDeep: false, longNumbers };
}

/** One value of a container at `depth`: queues a container, answers whether a number is inexact. */
function visit(v: unknown, depth: number, containers: object[], depths: number[]): boolean {
  if (typeof v === "object") {
    if (v !== null) {
      containers.push(v);
      depths.push(depth + 1);
    }
    return false;
  }
  return typeof v === "number" && mayBeInexact(v);
}

/** Whether JSON text nests deeper than `max` (the depth half of {@link scanBody}). */
export function nestingExceeds(s: string, max: number): boolean {
  return scanBody(s, max).tooDeep;
}

/**
 * Best-effort uid of a body we will not parse: the first complete string value of key `uid`
 * directly inside the top-level `request` object, found by a tolerant tokenizer over the given
 * prefix (truncated input simply yields ""). Never throws.
 */
export function recoverUid(head: Uint8Array | string): string {
  const s = typeof head === "string" ? head : decoder.decode(head);
  // Container stack: "o" object, "a" array; `keys[d]` = last key read at depth d.
  const stack: string[] = [];
  const keys: (string | undefined)[] = [];
  let expectKey = false;
  let i = 0;
  const n = s.length;
  const readString = (): string | undefined => {
    // s[i] is the opening quote.
    let j = i + 1;
    while (j < n) {
      const c = s.charCodeAt(j);
      if (c === 0x5c) j += 2;
      else if (c === 0x22) break;
      else j++;
    }
    if (j >= n) return undefined;
    const raw = s.slice(i, j + 1);
    i = j + 1;
    try {
      return JSON.parse(raw) as string;
    } catch {
      return undefined;
    }
  };
  while (i < n) {
    const c = s[i];
    if (c === '"') {
      const str = readString();
      if (str === undefined) return "";
      const d = stack.length;
      if (expectKey && stack[d - 1] === "o") {
        keys[d] = str;
        expectKey = false;
      } else if (
        d === 2 && stack[1] === "o" && keys[1] === "request" && keys[2] === "uid" &&
        stack[0] === "o"
      ) {
        return str;
      }
      continue;
    }
    if (c === "{") {
      stack.push("o");
      keys[stack.length] = undefined;
      expectKey = true;
    } else if (c === "[") {
      stack.push("a");
      expectKey = false;
    } else if (c === "}" || c === "]") {
      stack.pop();
      expectKey = false;
    } else if (c === ",") {
      expectKey = stack[stack.length - 1] === "o";
    } else if (c === ":") {
      expectKey = false;
    }
    i++;
  }
  return "";
}
