/**
 * The node listener's body reader (`incomingChunks`): every chunk in order and then the end, a
 * stream error or a connection that closes before the end as a rejection, and a reader that stops
 * early leaving the stream paused with at most one chunk taken.
 */
import assert from "node:assert/strict";
import type { IncomingMessage } from "node:http";
import { PassThrough } from "node:stream";
import { incomingChunks, readBodyLimited } from "../../../src/webhook/convert/mod.ts";

const bytes = (s: string) => new TextEncoder().encode(s);
const text = async (it: AsyncIterator<Uint8Array>) =>
  new TextDecoder().decode((await it.next()).value);
const asRequest = (s: PassThrough) => s as unknown as IncomingMessage;

Deno.test("incomingChunks yields every chunk in order, then ends", async () => {
  const s = new PassThrough();
  const read = readBodyLimited(incomingChunks(asRequest(s)), 1024, undefined);
  s.write(bytes('{"a":'));
  s.write(bytes("1,"));
  s.end(bytes('"b":2}'));
  const out = await read;
  assert.equal(out.ok, true);
  assert.equal(new TextDecoder().decode(out.ok ? out.bytes : undefined), '{"a":1,"b":2}');
});

Deno.test("incomingChunks rejects on a stream error and on a close before the end", async () => {
  const failing = new PassThrough();
  const read = readBodyLimited(incomingChunks(asRequest(failing)), 1024, undefined);
  failing.write(bytes("{"));
  failing.destroy(new Error("reset by peer"));
  await assert.rejects(read, /reset by peer/);

  const cut = new PassThrough();
  const it = incomingChunks(asRequest(cut))[Symbol.asyncIterator]();
  cut.write(bytes("{"));
  assert.equal(await text(it), "{");
  cut.destroy();
  await assert.rejects(it.next(), /broke off/);
});

Deno.test("incomingChunks: a reader that stops early leaves the stream paused", async () => {
  const s = new PassThrough();
  const it = incomingChunks(asRequest(s))[Symbol.asyncIterator]();
  s.write(bytes("first"));
  assert.equal(await text(it), "first");
  s.write(bytes("second"));
  s.write(bytes("third"));
  await new Promise((r) => setTimeout(r, 10));
  // The reader took one chunk and stopped: the stream holds the rest, paused.
  assert.equal(s.isPaused(), true);
  assert.equal(await text(it), "second");
  s.end();
  assert.equal(await text(it), "third");
  assert.equal((await it.next()).done, true);
});
