/**
 * HTTP/1.1 on the wire (src/net/http1.ts): what a request head is, which heads are refused and
 * with what status, chunked bodies however their bytes are split, and response heads.
 */
import assert from "node:assert/strict";
import {
  ChunkedDecoder,
  headEnd,
  headerValue,
  type HeadParse,
  parseHead,
  responseHead,
} from "../../src/net/http1.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

function parse(text: string): HeadParse {
  const buf = enc.encode(text);
  const end = headEnd(buf, 0, buf.length);
  assert.ok(end > 0, `no head end in ${JSON.stringify(text)}`);
  return parseHead(buf, 0, end);
}

function head(text: string) {
  const p = parse(text);
  assert.equal(p.kind, "head", p.kind === "reject" ? p.message : "");
  return (p as Extract<HeadParse, { kind: "head" }>).head;
}

Deno.test("a head: method, target as sent, length, keep-alive; empty lines before it skipped", () => {
  const h = head(
    "\r\nPOST /convert/a.b?timeout=30s HTTP/1.1\r\nHost: x\r\nContent-Length: 12\r\n\r\n",
  );
  assert.equal(h.method, "POST");
  assert.equal(h.target, "/convert/a.b?timeout=30s");
  assert.equal(h.contentLength, 12);
  assert.equal(h.close, false);
  assert.equal(h.expectContinue, false);

  assert.equal(head("GET / HTTP/1.1\r\n\r\n").contentLength, 0, "no framing: no body");
  assert.equal(head("BREW /pot HTTP/1.1\r\n\r\n").method, "BREW");
  assert.equal(head("GET / HTTP/1.0\r\n\r\n").close, true, "HTTP/1.0 closes");
  assert.equal(head("GET / HTTP/1.1\r\nConnection: keep-alive, Close\r\n\r\n").close, true);
  assert.equal(head("GET / HTTP/1.1\r\nConnection: keep-alive\r\n\r\n").close, false);
  assert.equal(
    head("POST / HTTP/1.1\r\nTransfer-Encoding: Chunked\r\n\r\n").contentLength,
    undefined,
    "chunked: length unknown",
  );
  assert.equal(head("POST / HTTP/1.1\r\nExpect: 100-continue\r\n\r\n").expectContinue, true);
  assert.equal(
    head("POST / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n").contentLength,
    5,
    "the same length twice is one length",
  );
});

Deno.test("a head that two parsers could read differently is refused with its status", () => {
  const cases: [string, number, RegExp][] = [
    ["GET / HTTP/1.1\nHost: x\r\n\r\n", 400, /request line/],
    ["GET / HTTP/1.1\r\nHost: x\n\r\n", 400, /CRLF/],
    ["GET / HTTP/1.1\r\nA: b\r\n folded\r\n\r\n", 400, /folding/],
    ["GET / HTTP/1.1\r\nHost : x\r\n\r\n", 400, /header name/],
    ["GET / HTTP/1.1\r\n: x\r\n\r\n", 400, /header name/],
    ["GET / HTTP/1.1\r\nA: b\rc\r\n\r\n", 400, /control character/],
    ["GET / HTTP/1.1\r\nA: b\x00c\r\n\r\n", 400, /control character/],
    ["GET  / HTTP/1.1\r\n\r\n", 400, /request target/],
    ["GET /a b HTTP/1.1\r\n\r\n", 400, /request line/],
    ["GET / HTTP/1.1 \r\n\r\n", 400, /request line/],
    ["GET / http/1.1\r\n\r\n", 400, /request line/],
    ["GET / HTTP/2.0\r\n\r\n", 505, /version/],
    ["GET / HTTP/1.2\r\n\r\n", 505, /version/],
    ["POST / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n", 400, /two different/],
    ["POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", 400, /Content-Length/],
    ["POST / HTTP/1.1\r\nContent-Length: 1 2\r\n\r\n", 400, /Content-Length/],
    ["POST / HTTP/1.1\r\nContent-Length: 1234567890123456\r\n\r\n", 400, /Content-Length/],
    [
      "POST / HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n",
      400,
      /both Content-Length and Transfer-Encoding/,
    ],
    ["POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 501, /transfer coding/],
    ["POST / HTTP/1.1\r\nTransfer-Encoding: identity\r\n\r\n", 501, /transfer coding/],
    [
      "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n",
      400,
      /repeated/,
    ],
    ["POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", 400, /HTTP\/1\.0/],
    ["POST / HTTP/1.1\r\nExpect: 200-ok\r\n\r\n", 417, /expectation/],
  ];
  for (const [text, status, message] of cases) {
    const p = parse(text);
    assert.equal(p.kind, "reject", JSON.stringify(text));
    if (p.kind !== "reject") continue;
    assert.equal(p.status, status, JSON.stringify(text));
    assert.match(p.message, message, JSON.stringify(text));
  }
});

Deno.test("the head's end is found however its bytes arrive, resuming where the search stopped", () => {
  const text = "POST /x HTTP/1.1\r\nHost: y\r\n\r\nBODY";
  const buf = enc.encode(text);
  const whole = text.indexOf("BODY");
  let scanned = 0;
  for (let to = 1; to <= buf.length; to++) {
    const end = headEnd(buf, 0, to, scanned);
    if (to < whole) {
      assert.equal(end, -1, `only ${to} bytes`);
      scanned = to;
    } else {
      assert.equal(end, whole, `${to} bytes`);
    }
  }
  assert.equal(headEnd(buf, 0, buf.length), whole);
  // A head that starts later in the buffer (pipelined behind another request).
  const two = enc.encode("GET /a HTTP/1.1\r\n\r\nGET /b HTTP/1.1\r\n\r\n");
  const first = headEnd(two, 0, two.length);
  assert.equal(headEnd(two, first, two.length), two.length);
  assert.equal(head("GET /b HTTP/1.1\r\n\r\n").target, "/b");
});

Deno.test("headerValue: the first value, trimmed, found by any case; undefined when absent", () => {
  const h = head(
    "POST / HTTP/1.1\r\nTraceParent:  00-abc-01 \r\ntraceparent: 00-def-01\r\nX-Empty:\r\n\r\n",
  );
  assert.equal(headerValue(h, "traceparent"), "00-abc-01");
  assert.equal(headerValue(h, "x-empty"), "");
  assert.equal(headerValue(h, "content-type"), undefined);
  assert.equal(headerValue(h, "trace"), undefined, "a prefix is not the name");
});

/** Decodes `wire` fed in pieces of `step` bytes; returns the body and the offset it ended at. */
function decodeChunked(wire: Uint8Array, step: number): { body: string; end: number } {
  const d = new ChunkedDecoder(1024);
  let body = "";
  let end = -1;
  for (let at = 0; at < wire.length && end < 0; at += step) {
    const piece = wire.subarray(at, Math.min(wire.length, at + step));
    const used = d.feed(piece, 0, (data) => body += dec.decode(data));
    if (d.done) end = at + used;
    else assert.equal(used, piece.length, "a body that goes on consumes all it is fed");
  }
  assert.ok(d.done, "the body ended");
  return { body, end };
}

Deno.test("chunked bodies: sizes in any case, extensions and trailers, split at every byte", () => {
  const body = "5;name=value\r\nhello\r\nA ; x\r\n, chunked!\r\n0\r\nX-Trailer: t\r\n\r\n";
  const wire = enc.encode(body + "GET /next HTTP/1.1\r\n\r\n");
  for (const step of [1, 2, 3, 7, wire.length]) {
    const got = decodeChunked(wire, step);
    assert.equal(got.body, "hello, chunked!", `step ${step}`);
    assert.equal(got.end, body.length, `step ${step}: the next request starts after the body`);
  }
  assert.equal(decodeChunked(enc.encode("0\r\n\r\n"), 1).body, "");
  // Starting mid-buffer returns an offset in the same buffer.
  const d = new ChunkedDecoder(1024);
  const prefixed = enc.encode("HEAD3\r\nabc\r\n0\r\n\r\nREST");
  let got = "";
  assert.equal(d.feed(prefixed, 4, (b) => got += dec.decode(b)), prefixed.length - 4);
  assert.equal(got, "abc");
});

Deno.test("chunked bodies: broken framing and oversized parts throw, naming what is wrong", () => {
  const cases: [string, RegExp][] = [
    ["x\r\n", /malformed chunk size/],
    ["5\n", /malformed chunk size/],
    ["3\rx", /CRLF/],
    ["3\r\nabcX", /chunk data does not end in CRLF/],
    ["3\r\nabc\rX", /chunk data does not end in CRLF/],
    ["1000000000000\r\n", /too large/],
    [`1;${"e".repeat(5000)}\r\n`, /line too long/],
    ["1;\x01\r\n", /control character/],
    ["0\r\nX: y\n", /malformed trailer/],
    [`0\r\nX: ${"y".repeat(2000)}\r\n\r\n`, /trailers too large/],
  ];
  for (const [text, message] of cases) {
    const d = new ChunkedDecoder(1024);
    assert.throws(() => d.feed(enc.encode(text), 0, () => {}), message, JSON.stringify(text));
  }
});

Deno.test("response heads: length, date, extra headers, and close only when asked", () => {
  const date = "Fri, 04 Dec 2026 18:00:00 GMT";
  assert.equal(
    responseHead(200, "application/json", 2, date, { "x-a": "1" }, false),
    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n" +
      `date: ${date}\r\nx-a: 1\r\n\r\n`,
  );
  assert.equal(
    responseHead(429, "text/plain", 0, date, undefined, true),
    "HTTP/1.1 429 Too Many Requests\r\ncontent-type: text/plain\r\ncontent-length: 0\r\n" +
      `date: ${date}\r\nconnection: close\r\n\r\n`,
  );
});

Deno.test("header values keep bytes above ASCII one character per byte", () => {
  const bytes = new Uint8Array([
    ...enc.encode("GET /t HTTP/1.1\r\nx-v: a"),
    0xe9,
    0x80,
    ...enc.encode("b\r\n\r\n"),
  ]);
  const p = parseHead(bytes, 0, headEnd(bytes, 0, bytes.length));
  assert.equal(p.kind, "head");
  if (p.kind === "head") assert.equal(headerValue(p.head, "x-v"), "a\u00e9\u0080b");
});
