/**
 * The lean HTTP/1.1 server core (src/net/http1_server.ts) over plain TCP sockets: keep-alive,
 * pipelining in order, `Expect: 100-continue`, HEAD, bodies the handler did not read, closing
 * answers, refused heads, a body that breaks off, and graceful shutdown. TLS on the same core is
 * covered by tests/webhook/tls_listener_test.ts.
 */
import assert from "node:assert/strict";
import net from "node:net";
import { HEAD_ROOM } from "../../src/net/http1.ts";
import {
  DEFAULT_HTTP_LIMITS,
  type Http1Handler,
  type Http1Request,
  Http1Server,
  type HttpLimits,
} from "../../src/net/mod.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

interface Started extends AsyncDisposable {
  port: number;
  server: Http1Server;
}

async function start(handler: Http1Handler, limits: Partial<HttpLimits> = {}): Promise<Started> {
  const server = new Http1Server(
    net.createServer(),
    handler,
    { ...DEFAULT_HTTP_LIMITS, ...limits },
    "connection",
  );
  await server.listen({ hostname: "127.0.0.1", port: 0 });
  return {
    port: server.addr.port,
    server,
    async [Symbol.asyncDispose]() {
      server.forceClose();
      await server.shutdown();
    },
  };
}

async function readBody(req: Http1Request): Promise<string> {
  let s = "";
  for await (const chunk of req.body) s += dec.decode(chunk, { stream: true });
  return s;
}

/** Echoes the method, target and body. */
const echo: Http1Handler = async (req) => ({
  status: 200,
  contentType: "text/plain",
  body: enc.encode(`${req.method} ${req.target} ${await readBody(req)}`),
});

/** A raw client reading whole responses (framed by `content-length`) off one connection. */
class Client implements Disposable {
  #buf = "";
  readonly #chunk = new Uint8Array(64 * 1024);
  private constructor(readonly conn: Deno.TcpConn) {}

  static async connect(port: number): Promise<Client> {
    return new Client(await Deno.connect({ hostname: "127.0.0.1", port }));
  }

  send(text: string): Promise<number> {
    return this.conn.write(enc.encode(text));
  }

  /** Reads one response: its head, status and body (empty for HEAD, as `head` says). */
  async response(headOnly = false): Promise<{ status: number; head: string; body: string }> {
    for (;;) {
      const end = this.#buf.indexOf("\r\n\r\n");
      if (end >= 0) {
        const head = this.#buf.slice(0, end);
        const length = headOnly ? 0 : Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
        if (this.#buf.length >= end + 4 + length) {
          const body = this.#buf.slice(end + 4, end + 4 + length);
          this.#buf = this.#buf.slice(end + 4 + length);
          return { status: Number(head.slice(9, 12)), head, body };
        }
      }
      const n = await this.conn.read(this.#chunk);
      if (n === null) throw new Error(`closed with ${JSON.stringify(this.#buf)} unread`);
      this.#buf += dec.decode(this.#chunk.subarray(0, n));
    }
  }

  /** Resolves true once the server closed the connection (after what is still unread). */
  async closed(): Promise<boolean> {
    try {
      while ((await this.conn.read(this.#chunk)) !== null) {
        // bytes after the last expected answer: drop them
      }
    } catch {
      // a reset is a close too
    }
    return true;
  }

  close(): void {
    try {
      this.conn.close();
    } catch {
      // already closed
    }
  }

  [Symbol.dispose](): void {
    this.close();
  }
}

function post(target: string, body: string, extra = ""): string {
  return `POST ${target} HTTP/1.1\r\nhost: x\r\ncontent-length: ${body.length}\r\n${extra}\r\n${body}`;
}

Deno.test("keep-alive: several requests on one connection, each framed by its length", async () => {
  await using s = await start(echo);
  using c = await Client.connect(s.port);
  for (const body of ["one", "", "three"]) {
    await c.send(post("/k", body));
    const r = await c.response();
    assert.equal(r.status, 200);
    assert.equal(r.body, `POST /k ${body}`);
    assert.doesNotMatch(r.head, /connection: close/);
    assert.match(r.head, /\r\ndate: /);
  }
  assert.equal(s.server.connections, 1);
});

Deno.test("pipelined requests are answered in request order, even when the first is slowest", async () => {
  let calls = 0;
  await using s = await start(async (req) => {
    const mine = ++calls;
    const body = await readBody(req);
    if (mine === 1) await new Promise((r) => setTimeout(r, 100));
    return { status: 200, contentType: "text/plain", body: enc.encode(`${mine}:${body}`) };
  });
  using c = await Client.connect(s.port);
  await c.send(post("/a", "first") + post("/b", "second") + "GET /c HTTP/1.1\r\n\r\n");
  assert.equal((await c.response()).body, "1:first");
  assert.equal((await c.response()).body, "2:second");
  assert.equal((await c.response()).body, "3:");
});

Deno.test("a large answer arrives whole, and the connection stays usable", async () => {
  const big = "y".repeat(300_000);
  await using s = await start(async (req) => ({
    status: 200,
    contentType: "text/plain",
    body: enc.encode(req.target === "/big" ? big : await readBody(req)),
  }));
  using c = await Client.connect(s.port);
  await c.send("GET /big HTTP/1.1\r\n\r\n" + post("/small", "after"));
  const r = await c.response();
  assert.match(r.head, /content-length: 300000\r\n/);
  assert.equal(r.body, big);
  assert.equal((await c.response()).body, "after");
});

Deno.test("an answer with head room gets its head written there; too little room, or none declared, is copied", async () => {
  const room = (size: number) => new Uint8Array(size + 5).subarray(size);
  const bodies = { "/room": room(HEAD_ROOM), "/small": room(8), "/undeclared": room(HEAD_ROOM) };
  for (const b of Object.values(bodies)) b.set(enc.encode("hello"));
  await using s = await start((req) => {
    const path = req.target as keyof typeof bodies;
    return Promise.resolve({
      status: 200,
      contentType: "text/plain",
      body: bodies[path],
      headRoom: path !== "/undeclared",
    });
  });
  using c = await Client.connect(s.port);
  for (const path of Object.keys(bodies) as (keyof typeof bodies)[]) {
    await c.send(`GET ${path} HTTP/1.1\r\n\r\n`);
    const r = await c.response();
    assert.equal(r.body, "hello", path);
    const b = bodies[path];
    const before = dec.decode(new Uint8Array(b.buffer, 0, b.byteOffset));
    if (path === "/room") {
      assert.ok(before.endsWith(r.head + "\r\n\r\n"), "the head went out from the room");
    } else {
      assert.equal(before, "\0".repeat(b.byteOffset), `${path}: the room is left alone`);
    }
  }
});

Deno.test("chunked request bodies reach the handler whole", async () => {
  await using s = await start(echo);
  using c = await Client.connect(s.port);
  await c.send("POST /ch HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\n4\r\nabcd\r\n");
  await new Promise((r) => setTimeout(r, 20));
  await c.send("3;ext=1\r\nefg\r\n0\r\ntrailer: x\r\n\r\n" + post("/after", "z"));
  assert.equal((await c.response()).body, "POST /ch abcdefg");
  assert.equal((await c.response()).body, "POST /after z", "the next request follows");
});

Deno.test("Expect: 100-continue gets its interim answer when the handler wants the body", async () => {
  await using s = await start(echo);
  using c = await Client.connect(s.port);
  await c.send("POST /e HTTP/1.1\r\ncontent-length: 4\r\nexpect: 100-continue\r\n\r\n");
  const interim = await c.response();
  assert.equal(interim.status, 100);
  await c.send("body");
  assert.equal((await c.response()).body, "POST /e body");
});

Deno.test("Expect: 100-continue answered without the body: no interim answer, and the connection closes", async () => {
  await using s = await start(() =>
    Promise.resolve({ status: 413, contentType: "text/plain", body: enc.encode("too big") })
  );
  using c = await Client.connect(s.port);
  await c.send("POST /e HTTP/1.1\r\ncontent-length: 999999\r\nexpect: 100-continue\r\n\r\n");
  const r = await c.response();
  assert.equal(r.status, 413, "the final answer comes first, not 100");
  assert.match(r.head, /connection: close/);
  assert.ok(await c.closed());
});

Deno.test("a body the handler did not read is skipped, and the next request is answered", async () => {
  await using s = await start((req) =>
    Promise.resolve({ status: 404, contentType: "text/plain", body: enc.encode(req.target) })
  );
  using c = await Client.connect(s.port);
  const big = "x".repeat(200_000);
  await c.send(`POST /skip HTTP/1.1\r\ncontent-length: ${big.length}\r\n\r\n${big.slice(0, 10)}`);
  const r = await c.response();
  assert.equal(r.body, "/skip");
  assert.doesNotMatch(r.head, /connection: close/, "the body has a length: it can be skipped");
  await c.send(big.slice(10) + post("/next", ""));
  assert.equal((await c.response()).body, "/next");
});

Deno.test("HEAD gets the head with its length and no body", async () => {
  await using s = await start(echo);
  using c = await Client.connect(s.port);
  await c.send("HEAD /h HTTP/1.1\r\n\r\n" + post("/p", "b"));
  const r = await c.response(true);
  assert.match(r.head, /content-length: 8\r\n/);
  assert.equal((await c.response()).body, "POST /p b", "no body bytes came between the two");
});

Deno.test("HTTP/1.0, Connection: close and a handler's close end the connection after the answer", async () => {
  await using s = await start(async (req) => ({
    ...(await echo(req)),
    close: req.target === "/bye",
  }));
  for (
    const request of [
      "GET /old HTTP/1.0\r\n\r\n",
      "GET /c HTTP/1.1\r\nconnection: close\r\n\r\n",
      "GET /bye HTTP/1.1\r\n\r\n",
    ]
  ) {
    using c = await Client.connect(s.port);
    // A request pipelined behind a closing one is not answered.
    await c.send(request + "GET /never HTTP/1.1\r\n\r\n");
    const r = await c.response();
    assert.equal(r.status, 200, request);
    assert.match(r.head, /connection: close/, request);
    assert.ok(await c.closed(), request);
  }
});

Deno.test("refused heads are answered with their status and close the connection", async () => {
  let handled = 0;
  await using s = await start((req) => {
    handled++;
    return echo(req);
  }, { maxHeaderBytes: 1024 });
  const cases: [string, number][] = [
    [`GET / HTTP/1.1\r\nx-big: ${"a".repeat(2000)}\r\n\r\n`, 431],
    [`GET / HTTP/1.1\r\nx-big: ${"a".repeat(2000)}`, 431], // over the cap before its end
    ["POST / HTTP/1.1\r\ncontent-length: 1\r\ntransfer-encoding: chunked\r\n\r\n", 400],
    ["POST / HTTP/1.1\r\ntransfer-encoding: gzip\r\n\r\n", 501],
    ["GET / HTTP/2.0\r\n\r\n", 505],
    ["GET / HTTP/1.1\r\nexpect: later\r\n\r\n", 417],
  ];
  for (const [request, status] of cases) {
    using c = await Client.connect(s.port);
    await c.send(request);
    const r = await c.response();
    assert.equal(r.status, status, request.slice(0, 60));
    assert.match(r.head, /connection: close/);
    assert.ok(await c.closed());
  }
  assert.equal(handled, 0, "no refused head reached the handler");
});

Deno.test("a body that breaks off fails the handler's read; broken chunked framing too", async () => {
  const failures: string[] = [];
  await using s = await start(async (req) => {
    try {
      await readBody(req);
      return { status: 200, contentType: "text/plain", body: enc.encode("read") };
    } catch (e) {
      failures.push((e as Error).message);
      return { status: 400, contentType: "text/plain", body: enc.encode("broken") };
    }
  });
  const gone = await Client.connect(s.port);
  await gone.send("POST /x HTTP/1.1\r\ncontent-length: 100\r\n\r\npartial");
  await new Promise((r) => setTimeout(r, 20));
  gone.close();

  const bad = await Client.connect(s.port);
  try {
    await bad.send("POST /x HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabcZZ");
    const r = await bad.response();
    assert.equal(r.status, 400);
    assert.match(r.head, /connection: close/, "the request's end is unknown");
    assert.ok(await bad.closed());
  } finally {
    bad.close();
  }
  for (let i = 0; i < 50 && failures.length < 2; i++) await new Promise((r) => setTimeout(r, 10));
  assert.deepEqual(failures.sort(), [
    "chunk data does not end in CRLF",
    "the request body broke off",
  ]);
});

Deno.test("shutdown closes idle connections and answers the one in flight with close", async () => {
  let release: () => void = () => {};
  const held = new Promise<void>((r) => release = r);
  await using s = await start(async (req) => {
    if (req.target === "/slow") await held;
    return echo(req);
  });
  const idle = await Client.connect(s.port);
  const busy = await Client.connect(s.port);
  try {
    await idle.send("GET /warm HTTP/1.1\r\n\r\n");
    assert.equal((await idle.response()).status, 200);
    await busy.send("GET /slow HTTP/1.1\r\n\r\n");
    await new Promise((r) => setTimeout(r, 20));
    const down = s.server.shutdown();
    assert.ok(await idle.closed(), "the idle connection is closed at once");
    release();
    const r = await busy.response();
    assert.equal(r.body, "GET /slow ");
    assert.match(r.head, /connection: close/);
    assert.ok(await busy.closed());
    busy.close();
    await down;
  } finally {
    idle.close();
    busy.close();
  }
});
