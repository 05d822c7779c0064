/**
 * A minimal HTTP/1.1 client over TLS with TCP_NODELAY, for the load generator and the review
 * fuzzer: one keep-alive connection, each request written in one write (what the apiserver's Go
 * client does). Deno's `fetch` leaves Nagle on, which adds its own ~44 ms stalls to requests over
 * one TLS record, and it cannot send bytes that are not a well-formed request body on purpose.
 */

const CRLF2 = new Uint8Array([13, 10, 13, 10]);

function indexOfSeq(b: Uint8Array, seq: Uint8Array, from: number, to: number): number {
  outer: for (let i = from; i + seq.length <= to; i++) {
    for (let j = 0; j < seq.length; j++) if (b[i + j] !== seq[j]) continue outer;
    return i;
  }
  return -1;
}

/** An answer: the status, the head (status line and headers) and the whole body. */
export interface RawAnswer {
  status: number;
  head: string;
  body: Uint8Array;
  /** The server said `Connection: close`: open a new connection for the next request. */
  closing: boolean;
}

/** One keep-alive connection; `request` writes a whole request in one write. */
export class RawConnection {
  #buf = new Uint8Array(64 * 1024);
  #start = 0;
  #end = 0;
  readonly #conn: Deno.TlsConn;
  readonly #decoder = new TextDecoder();

  private constructor(conn: Deno.TlsConn) {
    this.#conn = conn;
  }

  static async open(url: URL, caCerts: string[]): Promise<RawConnection> {
    const hostname = url.hostname.replace(/^\[|\]$/g, "");
    const tcp = await Deno.connect({ hostname, port: Number(url.port || 443) });
    tcp.setNoDelay(true);
    const tls = await Deno.startTls(tcp, { hostname, caCerts, alpnProtocols: ["http/1.1"] });
    return new RawConnection(tls);
  }

  async #fill(): Promise<void> {
    if (this.#start > 0 && this.#end === this.#buf.length) {
      this.#buf.copyWithin(0, this.#start, this.#end);
      this.#end -= this.#start;
      this.#start = 0;
    }
    if (this.#end === this.#buf.length) {
      const bigger = new Uint8Array(this.#buf.length * 2);
      bigger.set(this.#buf.subarray(0, this.#end));
      this.#buf = bigger;
    }
    const n = await this.#conn.read(this.#buf.subarray(this.#end));
    if (n === null) throw new Error("connection closed by the server");
    this.#end += n;
  }

  async #need(n: number): Promise<void> {
    while (this.#end - this.#start < n) await this.#fill();
  }

  async #line(): Promise<string> {
    for (;;) {
      const i = indexOfSeq(this.#buf, CRLF2.subarray(0, 2), this.#start, this.#end);
      if (i >= 0) {
        const s = this.#decoder.decode(this.#buf.subarray(this.#start, i));
        this.#start = i + 2;
        return s;
      }
      await this.#fill();
    }
  }

  /** Sends `message` (head + body) and reads the whole answer. */
  async request(message: Uint8Array): Promise<RawAnswer> {
    for (let off = 0; off < message.byteLength;) {
      off += await this.#conn.write(message.subarray(off));
    }
    let headEnd: number;
    while ((headEnd = indexOfSeq(this.#buf, CRLF2, this.#start, this.#end)) < 0) {
      await this.#fill();
    }
    const head = this.#decoder.decode(this.#buf.subarray(this.#start, headEnd));
    this.#start = headEnd + 4;
    const status = Number(head.slice(9, 12));
    const length = /\r\ncontent-length:\s*(\d+)/i.exec(head);
    let body: Uint8Array;
    if (length !== null) {
      const n = Number(length[1]);
      await this.#need(n);
      body = this.#buf.slice(this.#start, this.#start + n);
      this.#start += n;
    } else if (/\r\ntransfer-encoding:\s*chunked/i.test(head)) {
      const parts: Uint8Array[] = [];
      for (;;) {
        const size = parseInt(await this.#line(), 16);
        await this.#need(size + 2);
        parts.push(this.#buf.slice(this.#start, this.#start + size));
        this.#start += size + 2;
        if (size === 0) break;
      }
      body = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
      let off = 0;
      for (const p of parts) {
        body.set(p, off);
        off += p.byteLength;
      }
    } else {
      throw new Error(`response without a length: ${head}`);
    }
    if (this.#start === this.#end) this.#start = this.#end = 0;
    return { status, head, body, closing: /\r\nconnection:\s*close/i.test(head) };
  }

  close(): void {
    try {
      this.#conn.close();
    } catch {
      // already closed
    }
  }
}
