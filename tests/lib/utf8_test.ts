/** UTF-8 encoding of answers: byte-identical to TextEncoder for every kind of text. */
import assert from "node:assert/strict";
import { encodeUtf8 } from "../../src/lib/utf8.ts";

const reference = new TextEncoder();

Deno.test("encodeUtf8 equals TextEncoder.encode for ASCII, multi-byte, astral and lone-surrogate text", () => {
  const samples = [
    "",
    "{}",
    "x".repeat(300_000),
    "ünïcödé",
    "日本語のラベル",
    "emoji 🚀 and more 🛰️",
    "lone \ud800 high and \udc00 low surrogates",
    "x".repeat(70_000) + "é", // non-ASCII only at the very end of a long answer
    "é" + "x".repeat(70_000),
  ];
  for (const text of samples) {
    const got = encodeUtf8(text);
    assert.deepEqual(got, reference.encode(text), JSON.stringify(text.slice(0, 40)));
    assert.equal(got.byteOffset, 0);
    assert.equal(got.byteLength, got.buffer.byteLength, "the bytes own their buffer");
    const roomy = encodeUtf8(text, 256);
    assert.deepEqual(new Uint8Array(roomy), reference.encode(text));
    const ascii = !/[^\0-\x7f]/.test(text);
    assert.equal(roomy.byteOffset, ascii ? 256 : 0, "head room kept for ASCII text only");
    assert.equal(roomy.byteOffset + roomy.byteLength, roomy.buffer.byteLength, "room, then bytes");
  }
});

Deno.test("encodeUtf8 agrees with TextEncoder on 2,000 random strings over the whole code-unit range", () => {
  let seed = 7;
  const next = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff);
  for (let k = 0; k < 2_000; k++) {
    const units: number[] = [];
    const length = next() % 64;
    for (let i = 0; i < length; i++) {
      // Mostly ASCII, as JSON answers are, with every other range represented.
      const r = next() % 10;
      units.push(r < 6 ? next() % 0x80 : r < 8 ? next() % 0x800 : next() % 0x10000);
    }
    const text = String.fromCharCode(...units);
    assert.deepEqual(encodeUtf8(text), reference.encode(text));
  }
});
