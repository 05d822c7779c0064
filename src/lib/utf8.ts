/**
 * UTF-8 encoding of answer text. `TextEncoder.encode` copies its result out of the runtime and
 * slows down sharply past a few tens of KB (a 200 KB answer: ~40 µs, 1 MB: ~520 µs), while
 * `encodeInto` a fresh buffer of the string's length costs about half and is never slower at
 * any size measured (docs/design/webhook.md#writing-the-answer). A string of ASCII alone — every
 * JSON answer the apiserver's objects produce, nearly always — fits that buffer exactly; anything
 * else is encoded again the ordinary way.
 */
const encoder = new TextEncoder();

/** `text` as UTF-8 bytes in a buffer of their own (safe to transfer). */
export function encodeUtf8(text: string): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(text.length);
  // Every unit read wrote at least one byte: all read means all were ASCII and `out` is full.
  if (encoder.encodeInto(text, out).read === text.length) return out;
  return encoder.encode(text);
}
