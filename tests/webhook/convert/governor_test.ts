/**
 * Request governance on the conversion port (docs/design/webhook.md#request-governance): the
 * bounds derived from the heap limit, the governor's admission and release, and over the real TLS
 * listener a 429 with `Retry-After` beyond each bound, release on completion, on error and on a
 * client that went away, the connection cap, and the metrics of every rejection reason.
 */
import assert from "node:assert/strict";
import v8 from "node:v8";
import {
  CONNECTIONS_PER_REQUEST,
  deriveRequestBounds,
  HEAP_PER_REQUEST_BYTE,
  heldBytes,
  ListenerCells,
  MAX_GOVERNED_BYTES,
  MAX_REQUESTS_IN_FLIGHT,
  MIN_REQUEST_BYTES_IN_FLIGHT,
  MIN_REQUESTS_IN_FLIGHT,
  readHeap,
  REQUEST_HEAP_SHARE,
  RequestGovernor,
  UID_SCAN_BYTES,
} from "../../../src/webhook/convert/mod.ts";
import type { RegistryEntry } from "../../../src/webhook/registry.ts";
import { giveBack } from "../../../src/lib/shared_counts.ts";
import { waitFor } from "../../support/wait.ts";
import {
  type ConversionFixture,
  review,
  sampleValue,
  startConversion,
  SYNTHETIC_TARGET,
  widget,
} from "../_helpers.ts";

const MiB = 1024 * 1024;
const T = SYNTHETIC_TARGET;

async function rejected(f: ConversionFixture, reason: string): Promise<number | undefined> {
  return sampleValue(
    await f.promRegistry.metrics(),
    "dco_webhook_conversion_requests_rejected_total",
    { reason },
  );
}

async function gauge(f: ConversionFixture, name: string): Promise<number | undefined> {
  return sampleValue(await f.promRegistry.metrics(), name);
}

/**
 * Opens a TLS connection and sends a `/convert` request's headers declaring `declared` bytes and
 * only part of the body: the request stays in flight until the connection is closed.
 */
async function holdRequest(f: ConversionFixture, declared: number): Promise<Deno.TlsConn> {
  const conn = await Deno.connectTls({
    hostname: "127.0.0.1",
    port: f.server.addr.port,
    caCerts: [f.ca],
  });
  const head = `POST /convert/${T} HTTP/1.1\r\nHost: 127.0.0.1\r\n` +
    `Content-Type: application/json\r\nContent-Length: ${declared}\r\n\r\n{"apiVersion":`;
  await conn.write(new TextEncoder().encode(head));
  return conn;
}

// --- the derivation -------------------------------------------------------------------------------

const heap = (limitMiB: number, usedMiB = 0) => ({
  limitBytes: limitMiB * MiB,
  usedBytes: usedMiB * MiB,
  source: "max-old-space-size" as const,
});

Deno.test("bounds: derived from the heap limit by the documented formula", () => {
  // A 256 Mi pod: --max-old-space-size=192, 40 MiB in use after the initial sync.
  const b = deriveRequestBounds(heap(192, 40), { maxRequestBytes: 32 * MiB });
  const requestHeap = (192 - 40) * MiB * REQUEST_HEAP_SHARE; // 114 MiB
  assert.equal(b.maxRequestBytesInFlight, Math.floor(requestHeap / HEAP_PER_REQUEST_BYTE));
  assert.equal(b.maxRequestBytesInFlight, 28.5 * MiB);
  assert.equal(b.maxRequestsInFlight, 114);
  assert.equal(b.maxRequestBytes, 28.5 * MiB, "the body limit is at most the byte budget");
  assert.equal(b.maxConnections, CONNECTIONS_PER_REQUEST * 114);
  assert.equal(b.heapLimitBytes, 192 * MiB);
  assert.equal(b.heapUsedBytes, 40 * MiB);

  // A big heap: the flag caps the body; the count is clamped.
  const big = deriveRequestBounds(heap(4096, 50), { maxRequestBytes: 32 * MiB });
  assert.equal(big.maxRequestBytes, 32 * MiB);
  assert.equal(big.maxRequestsInFlight, MAX_REQUESTS_IN_FLIGHT);
  // A heap already full: floors, never zero.
  const full = deriveRequestBounds(heap(64, 70), { maxRequestBytes: 32 * MiB });
  assert.equal(full.maxRequestsInFlight, MIN_REQUESTS_IN_FLIGHT);
  assert.equal(full.maxRequestBytesInFlight, MIN_REQUEST_BYTES_IN_FLIGHT);
  assert.equal(full.maxRequestBytes, MIN_REQUEST_BYTES_IN_FLIGHT);
});

Deno.test("bounds: explicit flags override the derived values", () => {
  const b = deriveRequestBounds(heap(192), {
    maxRequestBytes: 64 * MiB,
    maxRequestsInFlight: 3,
    maxRequestBytesInFlight: 100 * MiB,
    maxConnections: 7,
  });
  assert.deepEqual(b, {
    heapLimitBytes: 192 * MiB,
    heapUsedBytes: 0,
    maxRequestsInFlight: 3,
    maxRequestBytesInFlight: 100 * MiB,
    maxRequestBytes: 64 * MiB,
    maxConnections: 7,
  });
  assert.throws(() => deriveRequestBounds(heap(0), { maxRequestBytes: 1 }), RangeError);
});

Deno.test("bounds: the heap limit is DENO_V8_FLAGS' old space, else node:v8's heap_size_limit", () => {
  const stats = v8.getHeapStatistics();
  const fromFlag = readHeap("--max-old-space-size=192");
  assert.equal(fromFlag.limitBytes, 192 * MiB);
  assert.equal(fromFlag.source, "max-old-space-size");
  assert.ok(fromFlag.usedBytes > 0 && fromFlag.usedBytes < stats.heap_size_limit);
  assert.equal(readHeap("--expose-gc --max_old_space_size=64 --foo").limitBytes, 64 * MiB);
  const fallback = readHeap("--expose-gc");
  assert.equal(fallback.limitBytes, stats.heap_size_limit);
  assert.equal(fallback.source, "heap_size_limit");
  assert.equal(readHeap(undefined).source, "heap_size_limit");
});

Deno.test("held bytes: the declared length, 8 KiB when over the limit, the limit when chunked", () => {
  assert.equal(heldBytes(1000, 4096), 1000);
  assert.equal(heldBytes(10_000, 4096), UID_SCAN_BYTES);
  assert.equal(heldBytes(undefined, 4096), 4096);
});

// --- the governor ---------------------------------------------------------------------------------

Deno.test("governor: admits within both bounds, refuses beyond each, releases once", () => {
  const seen: [number, number][] = [];
  const g = new RequestGovernor(
    { maxRequestsInFlight: 2, maxRequestBytesInFlight: 100 },
    (n, b) => seen.push([n, b]),
  );
  const a = g.admit(60);
  assert.ok(a.ok);
  const bytes = g.admit(50);
  assert.equal(bytes.ok, false);
  assert.equal(!bytes.ok && bytes.reason, "bytes_in_flight");
  assert.match(!bytes.ok ? bytes.message : "", /100-byte budget; retry after 1s/);
  const b = g.admit(40);
  assert.ok(b.ok);
  const count = g.admit(0);
  assert.equal(!count.ok && count.reason, "in_flight");
  assert.match(!count.ok ? count.message : "", /limit 2\); retry after 1s/);
  a.ticket.release();
  a.ticket.release(); // idempotent
  assert.equal(g.requestsInFlight, 1);
  assert.equal(g.bytesInFlight, 40);
  b.ticket.release();
  assert.equal(g.requestsInFlight, 0);
  assert.equal(g.bytesInFlight, 0);
  assert.deepEqual(seen, [[1, 60], [2, 100], [1, 40], [0, 0]]);
});

Deno.test("governor: a request larger than the whole budget is admitted when nothing holds bytes", () => {
  const g = new RequestGovernor({ maxRequestsInFlight: 4, maxRequestBytesInFlight: 10 });
  const big = g.admit(50);
  assert.ok(big.ok);
  assert.equal(g.admit(1).ok, false);
  big.ticket.release();
  assert.ok(g.admit(1).ok);
});

Deno.test("governor: threads sharing cells admit against one bound; a lost thread's hold is given back", () => {
  const bounds = { maxRequestsInFlight: 3, maxRequestBytesInFlight: 100 };
  const cells = new ListenerCells(2);
  const a = new RequestGovernor(bounds, undefined, cells.governor(0));
  const b = new RequestGovernor(bounds, undefined, cells.governor(1));
  const a1 = a.admit(40);
  const b1 = b.admit(40);
  assert.ok(a1.ok && b1.ok);
  const over = b.admit(30);
  assert.equal(!over.ok && over.reason, "bytes_in_flight", "40 + 40 + 30 > 100 across both");
  const a2 = a.admit(10);
  assert.ok(a2.ok);
  const count = b.admit(0);
  assert.equal(!count.ok && count.reason, "in_flight", "three in flight across both");
  assert.deepEqual(cells.inFlight, { requests: 3, bytes: 90 });
  // Thread a is lost with its two requests: its share goes back, b's stays.
  giveBack(cells.governor(0).total, cells.governor(0).own);
  assert.deepEqual(cells.inFlight, { requests: 1, bytes: 40 });
  b1.ticket.release();
  assert.deepEqual(cells.inFlight, { requests: 0, bytes: 0 });
});

Deno.test("bounds: the byte budget fits the governor's 32-bit counts", () => {
  const huge = deriveRequestBounds(heap(64 * 1024, 0), { maxRequestBytes: 32 * MiB });
  assert.equal(huge.maxRequestBytesInFlight, MAX_GOVERNED_BYTES);
  assert.throws(
    () =>
      new RequestGovernor({
        maxRequestsInFlight: 1,
        maxRequestBytesInFlight: MAX_GOVERNED_BYTES + 1,
      }),
    RangeError,
  );
});

// --- over the TLS listener ------------------------------------------------------------------------

Deno.test("beyond the in-flight bound: a plain 429 with Retry-After; release when the client goes away", async () => {
  let fixture: ConversionFixture | undefined;
  const governor = new RequestGovernor(
    { maxRequestsInFlight: 1, maxRequestBytesInFlight: MiB },
    (n, bytes) => fixture?.metrics.setInFlight(n, bytes),
  );
  await using f = fixture = await startConversion({ governor });
  const held = await holdRequest(f, 50_000);
  await waitFor("the held request is in flight", () => governor.requestsInFlight === 1);
  assert.equal(await gauge(f, "dco_webhook_conversion_requests_in_flight"), 1);
  assert.equal(await gauge(f, "dco_webhook_conversion_request_bytes_in_flight"), 50_000);

  const res = await f.post(review("uid-429", "v2", [widget("v1", 0)]));
  assert.equal(res.status, 429);
  assert.equal(res.headers.get("retry-after"), "1");
  assert.match(res.headers.get("content-type") ?? "", /text\/plain/);
  assert.match(await res.text(), /too many conversion requests in flight \(limit 1\)/);
  assert.equal(await rejected(f, "in_flight"), 1);
  assert.equal(await rejected(f, "bytes_in_flight"), 0);
  // A 429 is not a review.
  assert.equal(
    sampleValue(await f.promRegistry.metrics(), "dco_webhook_conversion_review_requests_total", {
      target: T,
    }),
    undefined,
  );

  held.close(); // the client went away mid-body: its hold is released
  await waitFor("the abandoned request is released", () => governor.requestsInFlight === 0);
  assert.equal(governor.bytesInFlight, 0);
  await f.assertServing();
  assert.equal(governor.requestsInFlight, 0, "released on completion");
  assert.equal(await gauge(f, "dco_webhook_conversion_requests_in_flight"), 0);
  assert.equal(await gauge(f, "dco_webhook_conversion_request_bytes_in_flight"), 0);
});

Deno.test("beyond the byte bound: 429 for the request that does not fit, smaller ones pass", async () => {
  const governor = new RequestGovernor(
    { maxRequestsInFlight: 10, maxRequestBytesInFlight: 100_000 },
    undefined,
  );
  await using f = await startConversion({ governor, maxRequestBytes: 100_000 });
  const held = await holdRequest(f, 80_000);
  await waitFor("80 KB are held", () => governor.bytesInFlight === 80_000);

  const big = review("uid-big", "v2", Array.from({ length: 150 }, (_, i) => widget("v1", i)));
  const bigText = JSON.stringify(big);
  assert.ok(bigText.length > 20_000 && bigText.length < 100_000, String(bigText.length));
  const res = await f.post(bigText);
  assert.equal(res.status, 429);
  assert.equal(res.headers.get("retry-after"), "1");
  assert.match(await res.text(), /would exceed the 100000-byte budget/);
  assert.equal(await rejected(f, "bytes_in_flight"), 1);

  await f.assertServing(); // a small review fits beside the held one
  held.close();
  await waitFor("released", () => governor.requestsInFlight === 0 && governor.bytesInFlight === 0);
  const out = await f.convert(bigText);
  assert.equal(out.response.result.status, "Success");
});

Deno.test("holds are released after too-large bodies, failures and panics", async () => {
  const governor = new RequestGovernor({ maxRequestsInFlight: 1, maxRequestBytesInFlight: MiB });
  await using f = await startConversion({ governor, maxRequestBytes: 4096 });
  // too large (the connection closes), then a failure, then a panic: each releases its hold.
  const tooLarge = await f.convert(
    review("uid-tl", "v2", Array.from({ length: 100 }, (_, i) => widget("v1", i))),
  );
  assert.equal(tooLarge.response.result.status, "Failure");
  assert.equal(await rejected(f, "body_too_large"), 1);
  const failed = await f.convert(review("uid-f", "v9", [widget("v1", 0)]));
  assert.equal(failed.response.result.status, "Failure");
  await f.assertServing();
  const entry = f.registry.get(T);
  assert.ok(entry !== undefined);
  const broken = {
    hubVersion: "v2",
    route(): never {
      throw new TypeError("boom");
    },
  };
  const panicking = { ...entry, router: broken } as unknown as RegistryEntry;
  await using p = await startConversion({ governor, lookup: { get: () => panicking } });
  const panic = await p.convert(review("uid-p", "v2", [widget("v1", 0)]));
  assert.match(panic.response.result.message ?? "", /internal error: boom/);
  assert.equal(governor.requestsInFlight, 0);
  assert.equal(governor.bytesInFlight, 0);
});

Deno.test("in-flight gauges and limits are exposed", async () => {
  await using f = await startConversion();
  f.metrics.setLimits(deriveRequestBounds(heap(192, 40), { maxRequestBytes: 32 * MiB }));
  const text = await f.promRegistry.metrics();
  const limit = (l: string) => sampleValue(text, "dco_webhook_conversion_limit", { limit: l });
  assert.equal(limit("request_bytes_in_flight"), 28.5 * MiB);
  assert.equal(limit("request_bytes"), 28.5 * MiB);
  assert.equal(limit("requests_in_flight"), 114);
  assert.equal(limit("connections"), 456);
  assert.equal(limit("heap_bytes"), 192 * MiB);
  assert.equal(limit("heap_used_bytes"), 40 * MiB);
  f.metrics.setInFlight(2, 1234);
  assert.equal(await gauge(f, "dco_webhook_conversion_requests_in_flight"), 2);
  assert.equal(await gauge(f, "dco_webhook_conversion_request_bytes_in_flight"), 1234);
  for (const reason of ["in_flight", "bytes_in_flight", "body_too_large", "connections"]) {
    assert.equal(await rejected(f, reason), 0, `${reason} pre-created at 0`);
  }
});

Deno.test("--max-connections: a connection over the cap is closed at accept and counted", async () => {
  await using f = await startConversion({ limits: { maxConnections: 2 } });
  // Declared longer than what is sent, so each request stays open (a shorter declaration would
  // complete it and leave the rest of the bytes to be parsed as a broken next request).
  const a = await holdRequest(f, 1_000);
  const b = await holdRequest(f, 1_000);
  await waitFor("two connections open", () => f.server.connections === 2);
  const third = await Deno.connect({ hostname: "127.0.0.1", port: f.server.addr.port });
  const buf = new Uint8Array(16);
  assert.equal(await third.read(buf).catch(() => null), null, "closed without an answer");
  third.close();
  assert.equal(f.server.connections, 2);
  assert.equal(await rejected(f, "connections"), 1);
  a.close();
  b.close();
  await waitFor("connections closed", () => f.server.connections === 0);
  await f.assertServing();
});
