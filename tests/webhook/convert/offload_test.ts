/**
 * Where a request is converted: the rows answered without a parse (method, a broken body, a body
 * over the limit) get the answer table's own answers when the body was read by the offload path;
 * `inline` decides between the main thread and the pool.
 */
import assert from "node:assert/strict";
import { syntheticCompiled, syntheticReview } from "../../../src/webhook/convert/_synthetic.ts";
import {
  answerConvert,
  answerOffloaded,
  type ConvertAnswer,
  convertContext,
  type ConvertRequest,
  type OffloadOptions,
} from "../../../src/webhook/convert/mod.ts";
import { PlanRegistry } from "../../../src/webhook/registry.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const T = syntheticCompiled().target;

function setup(maxRequestBytes = 1 << 20) {
  const registry = new PlanRegistry();
  registry.install(syntheticCompiled());
  const ctx = convertContext({ registry, maxRequestBytes });
  const pooled: number[] = [];
  const offload = (inline: boolean): OffloadOptions => ({
    inline: () => inline,
    pool: {
      convert: (_t, body) => {
        pooled.push(body.byteLength);
        return Promise.resolve({
          status: 299,
          contentType: "text/plain",
          body: encoder.encode("pooled"),
          close: false,
        });
      },
    },
  });
  return { ctx, pooled, offload };
}

async function* chunks(...parts: Uint8Array[]): AsyncGenerator<Uint8Array> {
  for (const p of parts) yield p;
}

// deno-lint-ignore require-yield
async function* broken(): AsyncGenerator<Uint8Array> {
  throw new Error("connection reset");
}

const text = (a: ConvertAnswer) => decoder.decode(a.body);

Deno.test("offload: rows without a parse answer as the table does", async () => {
  const { ctx, offload, pooled } = setup(4096);
  const same = async (make: () => ConvertRequest) => {
    const viaTable = await answerConvert(ctx, T, make());
    const viaOffload = await answerOffloaded(ctx, T, make(), ctx.clock(), offload(false));
    assert.deepEqual(
      { ...viaOffload, body: text(viaOffload) },
      { ...viaTable, body: text(viaTable) },
    );
    return viaOffload;
  };
  const get = await same(() => ({ method: "GET", declaredLength: undefined, body: null }));
  assert.equal(get.status, 405);
  const reset = await same(() => ({ method: "POST", declaredLength: 10, body: broken() }));
  assert.equal(reset.status, 400);
  assert.equal(reset.close, true);
  const big = encoder.encode(JSON.stringify(syntheticReview(3, { uid: "too-big" })));
  assert.ok(big.byteLength > 4096);
  // Declared over the limit, and chunked (no length) over the limit.
  for (const declaredLength of [big.byteLength, undefined]) {
    const over = await same(() => ({
      method: "POST",
      declaredLength,
      body: chunks(big.subarray(0, 3000), big.subarray(3000)),
    }));
    assert.equal(over.status, 200);
    assert.equal(over.close, true);
    assert.match(text(over), /"uid":"too-big".*exceeds the 4096-byte limit/);
  }
  assert.deepEqual(pooled, [], "nothing was sent to the pool");
});

Deno.test("offload: `inline` picks the main thread or the pool", async () => {
  const { ctx, offload, pooled } = setup();
  const body = encoder.encode(JSON.stringify(syntheticReview(1)));
  const req = (): ConvertRequest => ({
    method: "POST",
    declaredLength: body.byteLength,
    body: chunks(body.slice()),
  });
  const inline = await answerOffloaded(ctx, T, req(), ctx.clock(), offload(true));
  assert.match(text(inline), /"status":"Success"/);
  assert.deepEqual(pooled, []);
  const inPool = await answerOffloaded(ctx, T, req(), ctx.clock(), offload(false));
  assert.equal(inPool.status, 299);
  assert.deepEqual(pooled, [body.byteLength]);
});
