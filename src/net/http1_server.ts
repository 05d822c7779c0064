/**
 * The lean HTTP/1.1 server core of the conversion listener: HTTP/1.1 framed by hand
 * (src/net/http1.ts) on the sockets of a `node:tls` server, with the same limits, connection cap
 * and graceful shutdown as the `node:http(s)` core. Why, and what it measured against
 * `node:https` and `Deno.serve`: docs/design/webhook.md#the-lean-http11-server.
 *
 * One request per connection is in flight at a time: bytes a client pipelines behind it wait
 * (the socket paused) until its answer is written, so answers leave in request order. A body is
 * handed to the handler as views of the received chunks, paused above {@link BODY_HIGH_WATER}
 * bytes not yet taken. An answer is one socket write of one buffer, head and body together, at
 * any size: writing a large body after its head cost 10 × 10 KB and 100 × 2 KB reviews a third
 * of their throughput and doubled their p99 under 8 connections, far more than the copy costs.
 * A body the handler did not read is discarded on a keep-alive connection; an answer that says `close`, a rejected head, a broken chunked body or a draining
 * server end the connection after the answer is written, and the rest of the input is dropped.
 */
import type { Server, Socket } from "node:net";
import {
  ChunkedDecoder,
  CONTINUE,
  headEnd,
  headerValue,
  parseHead,
  type RequestHead,
  responseHead,
} from "./http1.ts";
import { type HttpLimits, ListeningCore, type PortShare } from "./socket_limits.ts";

/** One request as the handler sees it. */
export interface Http1Request {
  readonly method: string;
  /** The request-target as sent, e.g. `/convert/x?timeout=30s`. */
  readonly target: string;
  /** The declared body length; 0 without a body; undefined for a chunked body. */
  readonly contentLength: number | undefined;
  /** The first value of a header (name in lower case), or undefined. */
  header(name: string): string | undefined;
  /** The body as it arrives; throws when the connection breaks off before its end. */
  readonly body: AsyncIterable<Uint8Array>;
}

/** One answer. Header names lower case, values ASCII, set by the product (never from a request). */
export interface Http1Response {
  status: number;
  contentType: string;
  body: Uint8Array;
  headers?: Readonly<Record<string, string>>;
  /** The connection closes after this answer (the rest of the request is not read). */
  close?: boolean;
  /**
   * The bytes of `body.buffer` before `body.byteOffset` are free: the head is written there when
   * it fits, and the answer goes out without a copy of its body (`HEAD_ROOM` in src/net/http1.ts).
   */
  headRoom?: boolean;
}

export type Http1Handler = (req: Http1Request) => Promise<Http1Response>;

/**
 * Body bytes received and not yet taken by the handler above which the socket is paused. High,
 * because Deno's `node:tls` delivers a burst of records in one task and resuming a paused socket
 * stalls it for milliseconds: at 64 KiB, 10 × 10 KB and 100 × 2 KB reviews paused on every
 * request and their p99 tripled. The governor bounds the bytes all requests hold together.
 */
export const BODY_HIGH_WATER = 1024 * 1024;
/** Trailer bytes of a chunked body accepted (they are read and dropped). */
const MAX_TRAILER_BYTES = 16 * 1024;

const encoder = new TextEncoder();

let dateText = "";
let dateSecond = -1;

/** The `Date` header value, formatted once a second. */
function httpDate(): string {
  const now = Date.now();
  const second = Math.floor(now / 1000);
  if (second !== dateSecond) {
    dateSecond = second;
    dateText = new Date(second * 1000).toUTCString();
  }
  return dateText;
}

/** What a connection is waiting for. */
const enum Phase {
  /** A request head. */
  Head,
  /** The current request's body (the answer may have been written: then it is discarded). */
  Body,
  /** The current request's answer; pipelined bytes wait, the socket paused. */
  Answer,
  /** Nothing more is read: the answer closes the connection, or it was closed. */
  Closed,
}

/** A request in flight: what the handler reads, fed by its connection. */
class Exchange implements Http1Request, AsyncIterator<Uint8Array> {
  readonly method: string;
  readonly target: string;
  readonly contentLength: number | undefined;
  readonly head: RequestHead;
  readonly #conn: Connection;
  #queue: Uint8Array[] = [];
  #queued = 0;
  #ended = false;
  #failure: Error | undefined;
  #wake: (() => void) | undefined;
  /** The handler answered: body bytes still arriving are dropped. */
  discarding = false;
  /** `Expect: 100-continue` was answered (or not asked for). */
  continued: boolean;

  constructor(head: RequestHead, conn: Connection) {
    this.method = head.method;
    this.target = head.target;
    this.contentLength = head.contentLength;
    this.head = head;
    this.#conn = conn;
    this.continued = !head.expectContinue;
  }

  header(name: string): string | undefined {
    return headerValue(this.head, name);
  }

  get body(): AsyncIterable<Uint8Array> {
    return this;
  }

  [Symbol.asyncIterator](): AsyncIterator<Uint8Array> {
    return this;
  }

  get ended(): boolean {
    return this.#ended;
  }

  /** Queues body bytes; returns the bytes waiting to be taken. */
  push(chunk: Uint8Array): number {
    if (this.discarding) return 0;
    this.#queue.push(chunk);
    this.#queued += chunk.byteLength;
    this.#notify();
    return this.#queued;
  }

  end(): void {
    this.#ended = true;
    this.#notify();
  }

  fail(e: Error): void {
    if (this.#ended) return;
    this.#failure ??= e;
    this.#notify();
  }

  discard(): void {
    this.discarding = true;
    this.#queue = [];
    this.#queued = 0;
  }

  #notify(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }

  next(): Promise<IteratorResult<Uint8Array>> {
    if (this.#queue.length > 0) {
      const value = this.#queue.shift()!;
      this.#queued -= value.byteLength;
      this.#conn.bodyTaken(this.#queued);
      return Promise.resolve({ done: false, value });
    }
    if (this.#failure !== undefined) return Promise.reject(this.#failure);
    if (this.#ended) return Promise.resolve({ done: true, value: undefined });
    this.#conn.bodyWanted(this);
    return new Promise((resolve) => this.#wake = () => resolve(this.next()));
  }
}

/** One client connection's reading, framing and writing. */
class Connection {
  readonly #socket: Socket;
  readonly #server: Http1Server;
  #phase = Phase.Head;
  /** Received bytes not yet consumed: a head in parts, or requests pipelined behind one. */
  #pending: Uint8Array | undefined;
  /** Where the search for the head's end resumes in `#pending`. */
  #scanned = 0;
  #exchange: Exchange | undefined;
  #bodyLeft = 0;
  #chunked: ChunkedDecoder | undefined;
  #answered = false;
  #paused = false;
  readonly #deliver = (chunk: Uint8Array) => this.#bodyBytes(chunk);

  constructor(socket: Socket, server: Http1Server) {
    this.#socket = socket;
    this.#server = server;
    socket.on("data", (chunk: Uint8Array) => this.#onData(chunk));
    socket.on("error", () => {}); // "close" follows
    socket.once("close", () => this.#onClose());
  }

  /** Between requests with nothing received: shutting it down loses nothing. */
  get idle(): boolean {
    return this.#phase === Phase.Head && this.#pending === undefined;
  }

  destroy(): void {
    this.#socket.destroy();
  }

  #onData(chunk: Uint8Array): void {
    if (this.#phase === Phase.Closed) return;
    const pending = this.#pending;
    if (pending !== undefined) {
      this.#pending = undefined;
      const joined = new Uint8Array(pending.byteLength + chunk.byteLength);
      joined.set(pending);
      joined.set(chunk, pending.byteLength);
      chunk = joined;
    }
    this.#consume(chunk, 0);
  }

  #consume(buf: Uint8Array, at: number): void {
    try {
      while (at < buf.byteLength) {
        switch (this.#phase) {
          case Phase.Head:
            at = this.#readHead(buf, at);
            break;
          case Phase.Body:
            at = this.#readBody(buf, at);
            break;
          case Phase.Answer:
            this.#pending = at === 0 ? buf : buf.subarray(at);
            this.#pause();
            return;
          case Phase.Closed:
            return;
        }
      }
    } catch (e) {
      // Malformed chunked framing: the request's end is unknown, so the connection ends.
      this.#brokenBody(e instanceof Error ? e : new Error(String(e)));
    }
  }

  /** Parses a head at `at`; returns the offset after what it consumed. */
  #readHead(buf: Uint8Array, at: number): number {
    const limits = this.#server.limits;
    const end = headEnd(buf, at, buf.byteLength, at + this.#scanned);
    if (end < 0) {
      if (buf.byteLength - at > limits.maxHeaderBytes) {
        this.#reject(431, "request header fields too large");
        return buf.byteLength;
      }
      this.#pending = at === 0 ? buf : buf.subarray(at);
      this.#scanned = this.#pending.byteLength;
      return buf.byteLength;
    }
    this.#scanned = 0;
    if (end - at > limits.maxHeaderBytes) {
      this.#reject(431, "request header fields too large");
      return buf.byteLength;
    }
    const parsed = parseHead(buf, at, end);
    if (parsed.kind === "reject") {
      this.#reject(parsed.status, parsed.message);
      return buf.byteLength;
    }
    const head = parsed.head;
    const exchange = this.#exchange = new Exchange(head, this);
    this.#answered = false;
    this.#server.deadlines.arm(this.#socket, limits.requestTimeoutMs);
    if (head.contentLength === 0) {
      exchange.end();
      this.#phase = Phase.Answer;
      this.#dispatch(exchange);
      return end;
    }
    this.#phase = Phase.Body;
    this.#bodyLeft = head.contentLength ?? 0;
    this.#chunked = head.contentLength === undefined
      ? new ChunkedDecoder(MAX_TRAILER_BYTES)
      : undefined;
    // The handler first: body bytes in this buffer that break the framing fail its read.
    this.#dispatch(exchange);
    return this.#readBody(buf, end);
  }

  #readBody(buf: Uint8Array, at: number): number {
    const chunked = this.#chunked;
    if (chunked !== undefined) {
      at = chunked.feed(buf, at, this.#deliver);
      if (chunked.done) this.#bodyEnded();
      return at;
    }
    const take = Math.min(this.#bodyLeft, buf.byteLength - at);
    if (take > 0) {
      this.#bodyBytes(at === 0 && take === buf.byteLength ? buf : buf.subarray(at, at + take));
      this.#bodyLeft -= take;
    }
    if (this.#bodyLeft === 0) this.#bodyEnded();
    return at + take;
  }

  #bodyBytes(chunk: Uint8Array): void {
    if (this.#exchange!.push(chunk) > BODY_HIGH_WATER) this.#pause();
  }

  #bodyEnded(): void {
    this.#chunked = undefined;
    this.#exchange!.end();
    if (this.#answered) this.#nextRequest();
    else this.#phase = Phase.Answer;
  }

  /** The handler took body bytes: resume reading once few enough wait. */
  bodyTaken(queued: number): void {
    if (queued <= BODY_HIGH_WATER && this.#phase === Phase.Body) this.#resume();
  }

  /** The handler waits for body bytes: a client that expects it gets its 100 Continue now. */
  bodyWanted(exchange: Exchange): void {
    if (!exchange.continued && exchange === this.#exchange && this.#phase === Phase.Body) {
      exchange.continued = true;
      this.#socket.write(CONTINUE);
    }
  }

  #dispatch(exchange: Exchange): void {
    let answer: Promise<Http1Response>;
    try {
      answer = this.#server.handler(exchange);
    } catch (e) {
      answer = Promise.reject(e);
    }
    answer.then(
      (res) => this.#answer(exchange, res),
      () => this.#socket.destroy(), // the handler failed: no answer can be trusted
    );
  }

  #answer(exchange: Exchange, res: Http1Response): void {
    if (this.#exchange !== exchange || this.#socket.destroyed) return;
    const bodyPending = this.#phase === Phase.Body;
    const close = res.close === true || exchange.head.close || this.#server.closing ||
      this.#phase === Phase.Closed || (bodyPending && !exchange.continued);
    this.#write(res, exchange.method === "HEAD", close);
    this.#answered = true;
    if (close) {
      this.#closeAfterAnswer();
    } else if (bodyPending) {
      exchange.discard(); // the rest of the body is read and dropped, then the next request
      this.#resume();
    } else {
      this.#nextRequest();
    }
  }

  #write(res: Http1Response, headOnly: boolean, close: boolean): void {
    const body = res.body;
    const head = responseHead(
      res.status,
      res.contentType,
      body.byteLength,
      httpDate(),
      res.headers,
      close,
    );
    if (headOnly || body.byteLength === 0) {
      this.#socket.write(head);
      return;
    }
    // The head is ASCII: one byte per character. In the body's head room, the answer is written
    // as it is: a copy of a large body is as much again in buffers V8 counts against its limit.
    let out: Uint8Array;
    if (res.headRoom === true && body.byteOffset >= head.length) {
      out = new Uint8Array(
        body.buffer,
        body.byteOffset - head.length,
        head.length + body.byteLength,
      );
      encoder.encodeInto(head, out);
    } else {
      out = new Uint8Array(head.length + body.byteLength);
      encoder.encodeInto(head, out);
      out.set(body, head.length);
    }
    this.#socket.write(out);
  }

  #nextRequest(): void {
    this.#exchange = undefined;
    this.#phase = Phase.Head;
    const l = this.#server.limits;
    this.#server.deadlines.arm(this.#socket, l.idleTimeoutMs + l.headerTimeoutMs);
    const pending = this.#pending;
    this.#resume();
    if (pending !== undefined) {
      this.#pending = undefined;
      this.#scanned = 0;
      this.#consume(pending, 0);
    }
  }

  /** Writes `status` with a one-line reason and ends the connection. */
  #reject(status: number, message: string): void {
    this.#write(
      { status, contentType: "text/plain; charset=utf-8", body: encoder.encode(message + "\n") },
      false,
      true,
    );
    this.#closeAfterAnswer();
  }

  #brokenBody(e: Error): void {
    const exchange = this.#exchange;
    this.#phase = Phase.Closed;
    this.#pending = undefined;
    if (exchange !== undefined && !this.#answered) {
      exchange.fail(e); // its answer is written, then the connection ends
    } else {
      this.#socket.end();
    }
  }

  /** Nothing more is read; the written answer is flushed, then the connection ends. */
  #closeAfterAnswer(): void {
    this.#phase = Phase.Closed;
    this.#pending = undefined;
    this.#resume(); // drain what the client still sends instead of a reset that could lose the answer
    this.#socket.end();
    this.#server.deadlines.arm(this.#socket, this.#server.limits.headerTimeoutMs);
  }

  #pause(): void {
    if (this.#paused) return;
    this.#paused = true;
    this.#socket.pause();
  }

  #resume(): void {
    if (!this.#paused) return;
    this.#paused = false;
    this.#socket.resume();
  }

  #onClose(): void {
    this.#phase = Phase.Closed;
    this.#pending = undefined;
    this.#exchange?.fail(new Error("the request body broke off"));
    this.#server.closed(this, this.#socket);
  }
}

/**
 * The lean core over a `node:tls` (or `node:net`) server created without a connection listener.
 * `connectionEvent` names the event whose socket carries the requests: `secureConnection` for TLS.
 */
export class Http1Server extends ListeningCore {
  readonly handler: Http1Handler;
  readonly limits: HttpLimits;
  readonly #open = new Set<Connection>();
  closing = false;

  constructor(
    server: Server,
    handler: Http1Handler,
    limits: HttpLimits,
    connectionEvent: "connection" | "secureConnection",
    onConnectionRefused?: () => void,
    share?: PortShare,
  ) {
    super(server, limits, onConnectionRefused, share);
    this.handler = handler;
    this.limits = limits;
    server.on(connectionEvent, (socket: Socket) => {
      socket.setNoDelay(true);
      this.deadlines.arm(socket, limits.headerTimeoutMs);
      this.#open.add(new Connection(socket, this));
    });
  }

  /** A connection closed (called by the connection). */
  closed(conn: Connection, socket: Socket): void {
    this.#open.delete(conn);
    this.deadlines.disarm(socket);
  }

  shutdown(): Promise<void> {
    this.closing = true;
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const conn of this.#open) {
      if (conn.idle) conn.destroy();
    }
    return closed;
  }

  forceClose(): void {
    for (const conn of this.#open) conn.destroy();
  }
}
