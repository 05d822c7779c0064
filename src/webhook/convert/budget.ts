/**
 * The conversion port's request bounds, derived once at startup (after the initial sync, so the
 * caches and plans are in the heap already) from the V8 heap limit the manager sets
 * (`DENO_V8_FLAGS=--max-old-space-size=…`, docs/design/server-children.md#heap-limit). The
 * formulas and the measured factor: docs/design/webhook.md#request-governance.
 */
import v8 from "node:v8";
import { UID_SCAN_BYTES } from "./body.ts";
import { MAX_GOVERNED_BYTES } from "./governor.ts";

/**
 * Old-space bytes one request byte may cost while its review is read, parsed, converted and
 * encoded. Measured with hack/review_heap.ts (the smallest `--max-old-space-size` that converts a
 * review of 4, 8, 16 and 32 MiB of ~2 KB objects, the most heap per byte of the shapes benched):
 * about 3.3 bytes of old space per body byte on top of the process; rounded up.
 */
export const HEAP_PER_REQUEST_BYTE = 4;
/** Share of the free old space (limit − used at startup) the requests in flight may use. */
export const REQUEST_HEAP_SHARE = 0.75;
/** Heap charged to every request in flight, whatever its size (buffers, sockets, small parses). */
export const HEAP_PER_REQUEST = 1024 * 1024;
/** Clamp of the derived requests-in-flight bound. */
export const MIN_REQUESTS_IN_FLIGHT = 4;
export const MAX_REQUESTS_IN_FLIGHT = 256;
/** Connections allowed per request in flight (the apiservers keep idle keep-alive pools). */
export const CONNECTIONS_PER_REQUEST = 4;
/** The smallest derived byte budget (what the uid scan of a too-large body holds, times 8). */
export const MIN_REQUEST_BYTES_IN_FLIGHT = 8 * UID_SCAN_BYTES;

/** The heap the bounds are derived from. */
export interface HeapReading {
  /** The old-space limit in bytes. */
  limitBytes: number;
  /** Heap in use when the bounds are derived (modules, caches, plans). */
  usedBytes: number;
  /** Where the limit came from. */
  source: "max-old-space-size" | "heap_size_limit";
}

/** The bounds one conversion listener runs with. */
export interface RequestBounds {
  /** The old-space limit the bounds were derived from. */
  heapLimitBytes: number;
  /** Heap in use at startup (subtracted before the share is taken). */
  heapUsedBytes: number;
  /** Requests being read, converted or answered at once. */
  maxRequestsInFlight: number;
  /** Sum of the bodies (declared lengths) of the requests in flight. */
  maxRequestBytesInFlight: number;
  /** Largest body read: `min(--max-request-bytes, maxRequestBytesInFlight)`. */
  maxRequestBytes: number;
  /** Open connections on the conversion port. */
  maxConnections: number;
}

/** Explicit values; 0 (or absent) = derived. `maxRequestBytes` is the body cap (the flag). */
export interface BoundOverrides {
  maxRequestBytes: number;
  maxRequestsInFlight?: number;
  maxRequestBytesInFlight?: number;
  maxConnections?: number;
}

const OLD_SPACE_FLAG = /(?:^|\s)--max[-_]old[-_]space[-_]size[= ](\d+)(?=\s|$)/;

/**
 * The running isolate's heap. The limit is `--max-old-space-size` from `DENO_V8_FLAGS` (what the
 * manager derives from the memory limit) when set, else `v8.getHeapStatistics().heap_size_limit`.
 * Not `heap_size_limit` alone: under Deno it adds the young generation (96 MiB here:
 * `--max-old-space-size=192` reads 288 MiB), which can never hold a parsed review, so at small
 * limits it would promise room the old space does not have.
 */
export function readHeap(v8Flags: string | undefined = Deno.env.get("DENO_V8_FLAGS")): HeapReading {
  const stats = v8.getHeapStatistics();
  const m = OLD_SPACE_FLAG.exec(v8Flags ?? "");
  if (m !== null && Number(m[1]) > 0) {
    return {
      limitBytes: Number(m[1]) * 1024 * 1024,
      usedBytes: stats.used_heap_size,
      source: "max-old-space-size",
    };
  }
  return {
    limitBytes: stats.heap_size_limit,
    usedBytes: stats.used_heap_size,
    source: "heap_size_limit",
  };
}

/**
 * - request heap `R = (limit − used) × 0.75`
 * - bytes in flight `B = min(2 GiB − 1, max(64 KiB, floor(R / 4)))`
 * - requests in flight `clamp(floor(R / 1 MiB), 4, 256)`
 * - body limit `min(--max-request-bytes, B)`
 * - connections `4 × requests in flight`
 */
export function deriveRequestBounds(heap: HeapReading, o: BoundOverrides): RequestBounds {
  if (!(heap.limitBytes > 0)) throw new RangeError("the heap limit must be > 0");
  if (!(o.maxRequestBytes > 0)) throw new RangeError("maxRequestBytes must be > 0");
  const requestHeap = Math.max(0, heap.limitBytes - heap.usedBytes) * REQUEST_HEAP_SHARE;
  // The governor counts bytes in 32 bits (shared across the listener Workers): at most 2 GiB.
  const derivedBytes = Math.min(
    MAX_GOVERNED_BYTES,
    Math.max(MIN_REQUEST_BYTES_IN_FLIGHT, Math.floor(requestHeap / HEAP_PER_REQUEST_BYTE)),
  );
  const derivedCount = Math.min(
    MAX_REQUESTS_IN_FLIGHT,
    Math.max(MIN_REQUESTS_IN_FLIGHT, Math.floor(requestHeap / HEAP_PER_REQUEST)),
  );
  const maxRequestBytesInFlight = o.maxRequestBytesInFlight || derivedBytes;
  const maxRequestsInFlight = o.maxRequestsInFlight || derivedCount;
  return {
    heapLimitBytes: heap.limitBytes,
    heapUsedBytes: heap.usedBytes,
    maxRequestsInFlight,
    maxRequestBytesInFlight,
    maxRequestBytes: Math.min(o.maxRequestBytes, maxRequestBytesInFlight),
    maxConnections: o.maxConnections || CONNECTIONS_PER_REQUEST * maxRequestsInFlight,
  };
}
