/**
 * UTF-8 encoding of answer text. `TextEncoder.encode` copies its result out of the runtime and
 * slows down sharply past a few tens of KB (a 200 KB answer: ~40 µs, 1 MB: ~520 µs), while
 * `encodeInto` a fresh buffer of the string's length costs about half and is never slower at
 * any size measured (docs/design/webhook.md#writing-the-answer). A string of ASCII alone — every
 * JSON answer the apiserver's objects produce, nearly always — fits that buffer exactly; anything
 * else is encoded again the ordinary way.
 */
const encoder = new TextEncoder();

/**
 * `text` as UTF-8 bytes in a buffer of their own (safe to transfer). With `headRoom`, the buffer
 * starts with that many free bytes before the text's, where a transport can write a message head
 * and send both without copying the body (src/net/http1_server.ts); the view's `byteOffset` says
 * how many there are — 0 when the text is not ASCII, which is encoded the ordinary way.
 */
export function encodeUtf8(text: string, headRoom = 0): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(headRoom + text.length).subarray(headRoom);
  // Every unit read wrote at least one byte: all read means all were ASCII and `out` is full.
  if (encoder.encodeInto(text, out).read === text.length) return out;
  return encoder.encode(text);
}
