/**
 * HTTP/1.1 on the wire for the lean server (src/net/http1_server.ts): a request head parsed from
 * bytes, a chunked body decoded as it arrives, a response head written as one string.
 *
 * Strict wherever leniency would let this server and a proxy in front of it disagree about where a
 * request ends (docs/design/webhook.md#the-lean-http11-server): a bare CR or LF, obsolete line
 * folding, whitespace before a colon, a control character in a value, `Content-Length` next to
 * `Transfer-Encoding`, two different lengths, or a transfer coding other than `chunked` reject the
 * request and close the connection. Nothing here allocates per header: the head is scanned as
 * bytes, and a header the caller did not ask for up front is found again on demand.
 */

/** A request head that parsed. */
export interface RequestHead {
  method: string;
  /** The request-target exactly as sent (origin form for the apiserver: `/convert/x?timeout=30s`). */
  target: string;
  /** HTTP/1.0, or `Connection: close`: the connection closes after the answer. */
  close: boolean;
  /** The body's length when it is length-delimited; 0 without any framing; undefined: chunked. */
  contentLength: number | undefined;
  /** `Expect: 100-continue`: the client waits for an interim answer before it sends the body. */
  expectContinue: boolean;
  /** The head's bytes (request line to the blank line), for {@link headerValue}. Never mutated. */
  bytes: Uint8Array;
}

/** What a parse of a whole head found. */
export type HeadParse =
  | { kind: "head"; head: RequestHead; /** Offset of the first byte after the head. */ end: number }
  | { kind: "reject"; status: 400 | 417 | 431 | 501 | 505; message: string };

const CR = 13;
const LF = 10;
const SP = 32;
const HT = 9;
const COLON = 58;

function reject(status: 400 | 417 | 431 | 501 | 505, message: string): HeadParse {
  return { kind: "reject", status, message };
}

/** RFC 9110 `tchar`: the characters of a method or a header name. */
const TOKEN = new Uint8Array(128);
for (const c of "!#$%&'*+-.^_`|~") TOKEN[c.charCodeAt(0)] = 1;
for (let c = 0x30; c <= 0x39; c++) TOKEN[c] = 1;
for (let c = 0x41; c <= 0x5a; c++) TOKEN[c] = 1;
for (let c = 0x61; c <= 0x7a; c++) TOKEN[c] = 1;

function isToken(c: number): boolean {
  return c < 128 && TOKEN[c] === 1;
}

/** A header value's byte: HTAB, SP, visible ASCII or obs-text; no other control character. */
function isValueByte(c: number): boolean {
  return c === HT || (c >= SP && c !== 0x7f);
}

/**
 * The end of the head in `buf[from, to)` — the offset just past the blank line — or -1 when it
 * has not arrived. `scanFrom` lets a caller resume where an earlier search stopped.
 */
export function headEnd(buf: Uint8Array, from: number, to: number, scanFrom = from): number {
  let i = Math.max(from, scanFrom - 3);
  for (;;) {
    const lf = buf.indexOf(LF, i);
    if (lf < 0 || lf >= to) return -1;
    // "\n\r\n" closes the head (a lone "\n" is rejected by the parse).
    if (lf + 2 < to && buf[lf + 1] === CR && buf[lf + 2] === LF) return lf + 3;
    i = lf + 1;
  }
}

const METHODS = ["POST", "GET", "HEAD", "PUT", "DELETE", "OPTIONS", "PATCH"];

/** Common methods as interned strings: no string per request for them. */
function methodOf(buf: Uint8Array, start: number, end: number): string {
  for (const m of METHODS) {
    if (m.length !== end - start) continue;
    let same = true;
    for (let k = 0; k < m.length; k++) {
      if (buf[start + k] !== m.charCodeAt(k)) {
        same = false;
        break;
      }
    }
    if (same) return m;
  }
  return latin1(buf, start, end);
}

const ascii = new TextDecoder();

/**
 * `buf[start, end)` as a string of one character per byte. ASCII (every request target, nearly
 * every header value) is decoded in one call; character by character makes a string per character.
 */
function latin1(buf: Uint8Array, start: number, end: number): string {
  let high = false;
  for (let i = start; i < end; i++) {
    if (buf[i] >= 0x80) {
      high = true;
      break;
    }
  }
  if (!high) return ascii.decode(buf.subarray(start, end));
  let s = "";
  for (let i = start; i < end; i++) s += String.fromCharCode(buf[i]);
  return s;
}

/** Whether `buf[start, end)` equals the lower-case ASCII `name`, ignoring case. */
function sameName(buf: Uint8Array, start: number, end: number, name: string): boolean {
  if (end - start !== name.length) return false;
  for (let k = 0; k < name.length; k++) {
    if ((buf[start + k] | 0x20) !== name.charCodeAt(k)) return false;
  }
  return true;
}

/** `buf[start, end)` equals the lower-case `word`, ignoring case (a header value). */
const sameWord = sameName;

/** A Content-Length value: 1–15 digits (a safe integer), or -1. */
function lengthOf(buf: Uint8Array, start: number, end: number): number {
  if (end <= start || end - start > 15) return -1;
  let n = 0;
  for (let i = start; i < end; i++) {
    const d = buf[i] - 0x30;
    if (d < 0 || d > 9) return -1;
    n = n * 10 + d;
  }
  return n;
}

/** Whether a comma-separated `Connection` value lists `close`. */
function listsClose(buf: Uint8Array, start: number, end: number): boolean {
  let i = start;
  while (i < end) {
    let j = i;
    while (j < end && buf[j] !== 0x2c) j++;
    let a = i;
    let b = j;
    while (a < b && (buf[a] === SP || buf[a] === HT)) a++;
    while (b > a && (buf[b - 1] === SP || buf[b - 1] === HT)) b--;
    if (sameWord(buf, a, b, "close")) return true;
    i = j + 1;
  }
  return false;
}

/**
 * Parses the head at `buf[from, to)` once {@link headEnd} found its end (`end`). Empty lines before
 * the request line are skipped, as RFC 9112 allows.
 */
export function parseHead(buf: Uint8Array, from: number, end: number): HeadParse {
  let i = from;
  while (i + 1 < end && buf[i] === CR && buf[i + 1] === LF) i += 2;
  const start = i;
  // Request line: method SP request-target SP HTTP-version CRLF.
  const lineEnd = buf.indexOf(LF, i);
  if (lineEnd < 0 || lineEnd >= end || buf[lineEnd - 1] !== CR) {
    return reject(400, "malformed request line");
  }
  let sp1 = i;
  while (sp1 < lineEnd && isToken(buf[sp1])) sp1++;
  if (sp1 === i || buf[sp1] !== SP) return reject(400, "malformed request line");
  const method = methodOf(buf, i, sp1);
  let sp2 = sp1 + 1;
  while (sp2 < lineEnd && buf[sp2] > SP && buf[sp2] < 0x7f) sp2++;
  if (sp2 === sp1 + 1 || buf[sp2] !== SP) return reject(400, "malformed request target");
  const target = latin1(buf, sp1 + 1, sp2);
  const v = sp2 + 1;
  if (lineEnd - 1 - v !== 8 || !sameWordExact(buf, v, "HTTP/1.")) {
    return /^HTTP\/\d\.\d$/.test(latin1(buf, v, lineEnd - 1))
      ? reject(505, "HTTP version not supported")
      : reject(400, "malformed request line");
  }
  const minor = buf[v + 7];
  if (minor !== 0x30 && minor !== 0x31) return reject(505, "HTTP version not supported");
  const http10 = minor === 0x30;

  let close = http10;
  let contentLength: number | undefined;
  let chunked = false;
  let transferEncodings = 0;
  let expectContinue = false;
  i = lineEnd + 1;
  while (i < end - 2) {
    const lf = buf.indexOf(LF, i);
    if (buf[lf - 1] !== CR) return reject(400, "a header line does not end in CRLF");
    const c0 = buf[i];
    if (c0 === SP || c0 === HT) return reject(400, "obsolete line folding");
    let colon = i;
    while (colon < lf && isToken(buf[colon])) colon++;
    if (colon === i || buf[colon] !== COLON) return reject(400, "malformed header name");
    let a = colon + 1;
    let b = lf - 1;
    for (let k = a; k < b; k++) {
      if (!isValueByte(buf[k])) return reject(400, "a control character in a header value");
    }
    while (a < b && (buf[a] === SP || buf[a] === HT)) a++;
    while (b > a && (buf[b - 1] === SP || buf[b - 1] === HT)) b--;
    const nameLength = colon - i;
    if (nameLength === 14 && sameName(buf, i, colon, "content-length")) {
      const n = lengthOf(buf, a, b);
      if (n < 0) return reject(400, "malformed Content-Length");
      if (contentLength !== undefined && contentLength !== n) {
        return reject(400, "two different Content-Length values");
      }
      contentLength = n;
    } else if (nameLength === 17 && sameName(buf, i, colon, "transfer-encoding")) {
      transferEncodings++;
      if (!sameWord(buf, a, b, "chunked")) {
        return reject(501, "a transfer coding other than chunked");
      }
      chunked = true;
    } else if (nameLength === 10 && sameName(buf, i, colon, "connection")) {
      if (listsClose(buf, a, b)) close = true;
    } else if (nameLength === 6 && sameName(buf, i, colon, "expect")) {
      if (!sameWord(buf, a, b, "100-continue")) return reject(417, "unsupported expectation");
      expectContinue = true;
    }
    i = lf + 1;
  }
  if (chunked) {
    if (http10) return reject(400, "Transfer-Encoding in an HTTP/1.0 request");
    if (transferEncodings > 1) return reject(400, "Transfer-Encoding repeated");
    if (contentLength !== undefined) {
      return reject(400, "both Content-Length and Transfer-Encoding");
    }
  }
  return {
    kind: "head",
    head: {
      method,
      target,
      close,
      contentLength: chunked ? undefined : contentLength ?? 0,
      expectContinue,
      bytes: buf.subarray(start, end),
    },
    end,
  };
}

/** `buf` at `at` starts with the ASCII `word` (case-sensitive). */
function sameWordExact(buf: Uint8Array, at: number, word: string): boolean {
  for (let k = 0; k < word.length; k++) {
    if (buf[at + k] !== word.charCodeAt(k)) return false;
  }
  return true;
}

/** The first value of header `name` (lower case) in a parsed head, trimmed; undefined when absent. */
export function headerValue(head: RequestHead, name: string): string | undefined {
  const buf = head.bytes;
  let i = buf.indexOf(LF) + 1;
  while (i < buf.length - 2) {
    const lf = buf.indexOf(LF, i);
    const colon = buf.indexOf(COLON, i);
    if (sameName(buf, i, colon, name)) {
      let a = colon + 1;
      let b = lf - 1;
      while (a < b && (buf[a] === SP || buf[a] === HT)) a++;
      while (b > a && (buf[b - 1] === SP || buf[b - 1] === HT)) b--;
      return latin1(buf, a, b);
    }
    i = lf + 1;
  }
  return undefined;
}

// --- chunked bodies -------------------------------------------------------------------------------

/** The longest chunk-size line (size and extensions) accepted. */
export const MAX_CHUNK_LINE = 4096;

const enum Chunk {
  Size,
  Extension,
  SizeLf,
  Data,
  DataCr,
  DataLf,
  Trailer,
  TrailerLf,
  Done,
}

/**
 * Decodes a chunked body as its bytes arrive. `feed` reads `buf` from `from`, hands every data
 * slice to `onData` (views of the input, not copies) and returns the offset after the last byte
 * that belonged to the body: the end of `buf` while the body continues, earlier once it ended (the
 * rest is the next request). Throws on malformed framing; trailers are read and dropped, counted
 * against `maxTrailerBytes`.
 */
export class ChunkedDecoder {
  #state = Chunk.Size;
  #size = 0;
  #digits = 0;
  #lineBytes = 0;
  #trailerBytes = 0;
  #trailerLineBytes = 0;
  readonly #maxTrailerBytes: number;

  constructor(maxTrailerBytes: number) {
    this.#maxTrailerBytes = maxTrailerBytes;
  }

  get done(): boolean {
    return this.#state === Chunk.Done;
  }

  feed(buf: Uint8Array, from: number, onData: (data: Uint8Array) => void): number {
    let i = from;
    const n = buf.length;
    while (i < n) {
      const c = buf[i];
      switch (this.#state) {
        case Chunk.Size: {
          const d = hexDigit(c);
          if (d >= 0) {
            if (++this.#digits > 12) throw new Error("chunk size too large");
            this.#size = this.#size * 16 + d;
          } else if (this.#digits === 0) {
            throw new Error("malformed chunk size");
          } else if (c === CR) {
            this.#state = Chunk.SizeLf;
          } else if (c === 0x3b || c === SP || c === HT) {
            this.#state = Chunk.Extension;
          } else {
            throw new Error("malformed chunk size");
          }
          this.#countLine();
          i++;
          break;
        }
        case Chunk.Extension:
          if (c === CR) this.#state = Chunk.SizeLf;
          else if (!isValueByte(c)) throw new Error("a control character in a chunk extension");
          this.#countLine();
          i++;
          break;
        case Chunk.SizeLf:
          if (c !== LF) throw new Error("a chunk size line does not end in CRLF");
          i++;
          this.#lineBytes = 0;
          this.#digits = 0;
          this.#state = this.#size === 0 ? Chunk.Trailer : Chunk.Data;
          break;
        case Chunk.Data: {
          const take = Math.min(this.#size, n - i);
          onData(buf.subarray(i, i + take));
          this.#size -= take;
          i += take;
          if (this.#size === 0) this.#state = Chunk.DataCr;
          break;
        }
        case Chunk.DataCr:
          if (c !== CR) throw new Error("chunk data does not end in CRLF");
          this.#state = Chunk.DataLf;
          i++;
          break;
        case Chunk.DataLf:
          if (c !== LF) throw new Error("chunk data does not end in CRLF");
          this.#state = Chunk.Size;
          i++;
          break;
        case Chunk.Trailer:
          if (++this.#trailerBytes > this.#maxTrailerBytes) throw new Error("trailers too large");
          if (c === CR) {
            this.#state = Chunk.TrailerLf;
          } else if (c === LF || !isValueByte(c)) {
            throw new Error("malformed trailer");
          } else {
            this.#trailerLineBytes++;
          }
          i++;
          break;
        case Chunk.TrailerLf:
          if (c !== LF) throw new Error("a trailer line does not end in CRLF");
          i++;
          if (this.#trailerLineBytes === 0) {
            this.#state = Chunk.Done;
            return i;
          }
          this.#trailerLineBytes = 0;
          this.#state = Chunk.Trailer;
          break;
        case Chunk.Done:
          return i;
      }
    }
    return i;
  }

  #countLine(): void {
    if (++this.#lineBytes > MAX_CHUNK_LINE) throw new Error("chunk size line too long");
  }
}

function hexDigit(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  const l = c | 0x20;
  if (l >= 0x61 && l <= 0x66) return l - 0x61 + 10;
  return -1;
}

// --- responses ------------------------------------------------------------------------------------

const REASONS: Readonly<Record<number, string>> = {
  100: "Continue",
  200: "OK",
  400: "Bad Request",
  404: "Not Found",
  405: "Method Not Allowed",
  408: "Request Timeout",
  413: "Content Too Large",
  417: "Expectation Failed",
  429: "Too Many Requests",
  431: "Request Header Fields Too Large",
  500: "Internal Server Error",
  501: "Not Implemented",
  503: "Service Unavailable",
  505: "HTTP Version Not Supported",
};

/**
 * Free bytes a producer leaves in a buffer in front of an answer's body, so the head can be
 * written there and both sent without copying the body: more than any head the product's answers
 * get (~140 bytes).
 */
export const HEAD_ROOM = 256;

/** The interim answer to `Expect: 100-continue`. */
export const CONTINUE = new TextEncoder().encode("HTTP/1.1 100 Continue\r\n\r\n");

/**
 * A response head: status line, `content-type`, `content-length`, `date`, the extra headers,
 * `connection: close` when the connection ends after it, and the blank line. ASCII only — every
 * value comes from the product, none from a request.
 */
export function responseHead(
  status: number,
  contentType: string,
  length: number,
  date: string,
  headers: Readonly<Record<string, string>> | undefined,
  close: boolean,
): string {
  let head = `HTTP/1.1 ${status} ${REASONS[status] ?? ""}\r\ncontent-type: ${contentType}\r\n` +
    `content-length: ${length}\r\ndate: ${date}\r\n`;
  if (headers !== undefined) {
    for (const k in headers) head += `${k}: ${headers[k]}\r\n`;
  }
  return close ? head + "connection: close\r\n\r\n" : head + "\r\n";
}
