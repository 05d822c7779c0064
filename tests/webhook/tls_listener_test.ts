/**
 * The TLS listener: certificate reload (new handshakes see the new serial, nothing is refused, a
 * bad pair keeps the old one), protocol versions, the HTTP limits, and graceful shutdown under a
 * shared deadline.
 */
import assert from "node:assert/strict";
import tls from "node:tls";
import {
  createPlainListener,
  type Http1Handler,
  shutdownAll,
  startPlainServer,
} from "../../src/net/mod.ts";
import { PlanRegistry } from "../../src/webhook/registry.ts";
import {
  type ConversionFixture,
  review,
  startConversion,
  SYNTHETIC_TARGET as T,
  widget,
  writePair,
} from "./_helpers.ts";

// --- helpers ---------------------------------------------------------------------------------------

/** Completes a TLS handshake and returns the server certificate's serial (hex, upper case). */
function handshakeSerial(port: number, ca: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: "127.0.0.1", port, ca, servername: "localhost" }, () => {
      const serial = socket.getPeerCertificate().serialNumber;
      socket.end();
      resolve(String(serial).toUpperCase());
    });
    socket.once("error", (e) => {
      socket.destroy();
      reject(e);
    });
  });
}

/** The serial `openssl`-issued test certificates carry, as `X509Certificate` prints it. */
async function serialOf(pem: string): Promise<string> {
  const { X509Certificate } = await import("node:crypto");
  return new X509Certificate(pem).serialNumber.toUpperCase();
}

/** Opens a raw TLS connection (for the limit tests). */
async function rawTls(port: number, ca: string): Promise<Deno.TlsConn> {
  const tcp = await Deno.connect({ hostname: "127.0.0.1", port });
  return await Deno.startTls(tcp, { hostname: "localhost", caCerts: [ca] });
}

/** Reads until the server closes the connection; returns what arrived. */
async function readUntilClosed(conn: Deno.Conn): Promise<string> {
  const buf = new Uint8Array(16 * 1024);
  let out = "";
  try {
    for (;;) {
      const n = await conn.read(buf);
      if (n === null) break;
      out += new TextDecoder().decode(buf.subarray(0, n));
    }
  } catch {
    // a reset or an unclean TLS close also means "closed"
  } finally {
    try {
      conn.close();
    } catch {
      // already closed
    }
  }
  return out;
}

const enc = new TextEncoder();

// --- TLS and certificate reload -------------------------------------------------------------------

Deno.test("reload swaps the certificate for new handshakes without refusing any connection", async () => {
  await using f = await startConversion();
  const { certs, dir, server } = f;
  const port = server.addr.port;
  const firstSerial = await serialOf(certs.first.cert);
  const secondSerial = await serialOf(certs.second.cert);
  assert.notEqual(firstSerial, secondSerial);
  assert.equal(await handshakeSerial(port, certs.ca), firstSerial);
  assert.equal(server.stats.serial, firstSerial);

  // Handshakes keep coming while the files change and the reload runs.
  let stop = false;
  const seen: string[] = [];
  const errors: Error[] = [];
  const hammer = async () => {
    while (!stop) {
      try {
        seen.push(await handshakeSerial(port, certs.ca));
      } catch (e) {
        errors.push(e as Error);
      }
    }
  };
  const loops = [hammer(), hammer(), hammer()];
  while (seen.length < 10) await new Promise((r) => setTimeout(r, 5));
  await writePair(dir, certs.second);
  assert.equal(await server.reloadNow(), "reloaded");
  const after = seen.length;
  while (seen.length < after + 10) await new Promise((r) => setTimeout(r, 5));
  stop = true;
  await Promise.all(loops);

  assert.deepEqual(errors, [], "no handshake failed or was refused");
  assert.equal(await handshakeSerial(port, certs.ca), secondSerial);
  assert.ok(seen.slice(after + 3).every((s) => s === secondSerial), "new handshakes: new cert");
  assert.equal(server.stats.reloads, 1);
  assert.equal(await server.reloadNow(), "unchanged");
});

Deno.test("a bad or half-written pair keeps the last good one", async () => {
  await using f = await startConversion();
  const { certs, dir, server, log } = f;
  const port = server.addr.port;
  const firstSerial = await serialOf(certs.first.cert);
  await Deno.writeTextFile(`${dir}/tls.crt`, "-----BEGIN CERTIFICATE-----\nnot a cert\n");
  assert.equal(await server.reloadNow(), "failed");
  assert.equal(await handshakeSerial(port, certs.ca), firstSerial);

  // cert-manager writes the certificate before the key: a mismatched pair for a moment.
  await Deno.writeTextFile(`${dir}/tls.crt`, certs.second.cert);
  assert.equal(await server.reloadNow(), "failed");
  assert.match(server.stats.lastError, /does not match/);
  assert.equal(await handshakeSerial(port, certs.ca), firstSerial);

  await Deno.remove(`${dir}/tls.key`);
  assert.equal(await server.reloadNow(), "failed");
  assert.equal(await handshakeSerial(port, certs.ca), firstSerial);

  await Deno.writeTextFile(`${dir}/tls.key`, certs.second.key);
  assert.equal(await server.reloadNow(), "reloaded");
  assert.equal(await handshakeSerial(port, certs.ca), await serialOf(certs.second.cert));
  assert.equal(server.stats.failures, 3);
  assert.equal(server.stats.reloads, 1);
  assert.ok(server.stats.lastErrorAt instanceof Date);
  assert.equal(
    log.lines.filter((l) => l.msg.startsWith("reloading the TLS certificate failed")).length,
    3,
  );
});

Deno.test("before the first good pair handshakes fail; the poll then loads it", async () => {
  await using f = await startConversion({ reloadIntervalMs: 20, pair: false });
  const { certs, dir, server } = f;
  const port = server.addr.port;
  assert.equal(server.hasCertificate, false);
  await assert.rejects(handshakeSerial(port, certs.ca));
  await writePair(dir, certs.first);
  // The poll (not a manual reload) picks the pair up.
  for (let i = 0; i < 500 && !server.hasCertificate; i++) {
    await new Promise((r) => setTimeout(r, 10));
  }
  assert.equal(server.hasCertificate, true);
  assert.equal(await handshakeSerial(port, certs.ca), await serialOf(certs.first.cert));
  assert.equal(server.stats.reloads, 0, "the first load is not a reload");
});

Deno.test("TLS offers HTTP/1.1 only and at least TLS 1.2", async () => {
  await using f = await startConversion();
  const { certs, server } = f;
  const tcp = await Deno.connect({ hostname: "127.0.0.1", port: server.addr.port });
  const conn = await Deno.startTls(tcp, {
    hostname: "localhost",
    caCerts: [certs.ca],
    alpnProtocols: ["h2", "http/1.1"],
  });
  const info = await conn.handshake();
  assert.notEqual(info.alpnProtocol, "h2");
  conn.close();
  const attempt = (version: string) =>
    new Deno.Command("openssl", {
      args: ["s_client", "-connect", `127.0.0.1:${server.addr.port}`, version],
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).output();
  assert.equal((await attempt("-tls1_1")).success, false, "TLS 1.1 is refused");
  assert.equal((await attempt("-tls1_2")).success, true);
});

// --- limits ---------------------------------------------------------------------------------------

Deno.test("limits: slow headers, a slow body and an idle connection are closed", async () => {
  await using f = await startConversion({
    limits: { headerTimeoutMs: 200, requestTimeoutMs: 300, idleTimeoutMs: 200 },
  });
  const { certs, server } = f;
  const port = server.addr.port;
  // Slow-loris: headers never finish.
  let conn = await rawTls(port, certs.ca);
  await conn.write(enc.encode(`POST /convert/${T} HTTP/1.1\r\nhost: x\r\n`));
  assert.equal(await readUntilClosed(conn), "", "closed without an answer");

  // Headers complete, body never does.
  conn = await rawTls(port, certs.ca);
  await conn.write(enc.encode(
    `POST /convert/${T} HTTP/1.1\r\nhost: x\r\ncontent-length: 1000\r\n\r\n{"apiVersion"`,
  ));
  assert.equal(await readUntilClosed(conn), "");

  // An answered request, then silence: the keep-alive connection is closed.
  conn = await rawTls(port, certs.ca);
  const body = JSON.stringify(review("idle", "v2", []));
  await conn.write(enc.encode(
    `POST /convert/${T} HTTP/1.1\r\nhost: x\r\ncontent-length: ${body.length}\r\n\r\n${body}`,
  ));
  const answered = await readUntilClosed(conn);
  assert.match(answered, /^HTTP\/1\.1 200 OK/);
  assert.match(answered, /"uid":"idle"/);
});

Deno.test("limits: a busy keep-alive connection outlives the header timeout", async () => {
  await using f = await startConversion({
    limits: { headerTimeoutMs: 150, requestTimeoutMs: 300, idleTimeoutMs: 300 },
  });
  const { certs, server } = f;
  const conn = await rawTls(server.addr.port, certs.ca);
  const body = JSON.stringify(review("ka", "v2", [widget("v1", 0)]));
  const msg = enc.encode(
    `POST /convert/${T} HTTP/1.1\r\nhost: x\r\ncontent-length: ${body.length}\r\n\r\n${body}`,
  );
  const buf = new Uint8Array(64 * 1024);
  // Requests keep coming for several header timeouts on the same connection.
  const until = performance.now() + 800;
  let answered = 0;
  while (performance.now() < until) {
    await conn.write(msg);
    const n = await conn.read(buf);
    assert.ok(n !== null, `connection closed after ${answered} answers`);
    assert.match(new TextDecoder().decode(buf.subarray(0, n)), /^HTTP\/1\.1 200 OK/);
    answered++;
    await new Promise((r) => setTimeout(r, 50));
  }
  conn.close();
  // A client that never starts the handshake is dropped.
  const silent = await Deno.connect({ hostname: "127.0.0.1", port: server.addr.port });
  assert.equal(await readUntilClosed(silent), "");
});

Deno.test("limits: headers over the cap are 431, on both listeners", async () => {
  const limits = { maxHeaderBytes: 4096 };
  await using f = await startConversion({ limits });
  const { certs, server } = f;
  const plain = await startPlainServer({
    address: "127.0.0.1:0",
    listener: createPlainListener({ readiness: { ready: true }, registry: new PlanRegistry() }),
    limits: { ...limits, headerTimeoutMs: 200 },
  });
  try {
    const conn = await rawTls(server.addr.port, certs.ca);
    await conn.write(
      enc.encode(`POST /convert/${T} HTTP/1.1\r\nx-big: ${"a".repeat(8000)}\r\n\r\n`),
    );
    assert.match(await readUntilClosed(conn), /^HTTP\/1\.1 431/);

    const res = await fetch(`http://127.0.0.1:${plain.addr.port}/healthz`, {
      headers: { "x-big": "a".repeat(8000) },
    });
    assert.equal(res.status, 431);
    await res.body?.cancel();
    // The plain listener has the slow-header limit too.
    const tcp = await Deno.connect({ hostname: "127.0.0.1", port: plain.addr.port });
    await tcp.write(enc.encode("GET /healthz HTTP/1.1\r\n"));
    assert.equal(await readUntilClosed(tcp), "");
  } finally {
    await shutdownAll([server, plain], 5000);
  }
});

// --- shutdown -------------------------------------------------------------------------------------

function heldExchange(): { exchange: Http1Handler; release(): void; arrived: Promise<void> } {
  let release!: () => void;
  let arrived!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const seen = new Promise<void>((r) => (arrived = r));
  const done = new TextEncoder().encode("done");
  return {
    exchange: async (req) => {
      for await (const _ of req.body) { /* read the whole body */ }
      arrived();
      await gate;
      return { status: 200, contentType: "text/plain", body: done };
    },
    release,
    arrived: seen,
  };
}

/** A server whose listener holds requests until `release()`, with one request already held. */
async function withHeldRequest(): Promise<
  ConversionFixture & { inflight: Promise<Response>; release(): void }
> {
  const held = heldExchange();
  const f = await startConversion({ exchange: held.exchange });
  const inflight = f.post("{}");
  await held.arrived;
  return {
    ...f,
    inflight,
    release: held.release,
    async [Symbol.asyncDispose]() {
      held.release();
      await f[Symbol.asyncDispose]();
    },
  };
}

Deno.test("graceful shutdown lets the in-flight request finish and stops accepting", async () => {
  await using h = await withHeldRequest();
  const done = shutdownAll([h.server], 10_000);
  await assert.rejects(handshakeSerial(h.server.addr.port, h.certs.ca), "no new connections");
  h.release();
  const res = await h.inflight;
  assert.equal(await res.text(), "done");
  assert.equal(await done, true);
});

Deno.test("the shared shutdown deadline force-closes what is still running", async () => {
  await using h = await withHeldRequest();
  const text = h.inflight.then((r) => r.text());
  assert.equal(await shutdownAll([h.server], 100), false);
  await assert.rejects(text, "the held request was cut off");
});
