/**
 * Inline or in a Worker: what one ConversionReview costs on the main thread's answer table
 * against the round trip through the conversion Worker pool (bytes transferred there and back,
 * metrics replayed), one review at a time, for the synthetic target's review shapes. Also the
 * resident memory a Worker adds, and the throughput of 100 × 2 KB reviews with 8 in flight on the
 * main thread against a pool of 1 and 2 Workers. Prints tables; asserts nothing. The default of
 * `--conversion-inline-max-bytes` (src/webhook/convert/inline_policy.ts) is read off the first.
 *
 *   deno run --allow-read=src --allow-env hack/convert_pool_bench.ts [iterations]
 */
import { Registry } from "prom-client";
import { syntheticCompiled, syntheticReview } from "../src/webhook/convert/_synthetic.ts";
import {
  ConversionPool,
  convertContext,
  convertReviewBytes,
  PlanSets,
} from "../src/webhook/convert/mod.ts";
import { WebhookMetrics } from "../src/webhook/metrics.ts";
import { PlanRegistry } from "../src/webhook/registry.ts";

const iterations = Number(Deno.args[0] ?? 2000);
const registry = new PlanRegistry();
const sets = new PlanSets();
sets.follow(registry);
registry.install(syntheticCompiled());
const metrics = new WebhookMetrics(new Registry());
const ctx = convertContext({ registry: sets, metrics });
const target = syntheticCompiled().target;

const rssBefore = Deno.memoryUsage().rss;
const pool = new ConversionPool({ size: 1, planSets: sets, context: ctx, metrics });
await pool.settled();
// Let the Worker finish loading before reading memory.
await pool.convert(target, encode(1, 0), now());
const rssOneWorker = Deno.memoryUsage().rss;

function encode(n: number, annotationBytes: number): Uint8Array {
  return new TextEncoder().encode(JSON.stringify(syntheticReview(n, { annotationBytes })));
}

function now(): number {
  return performance.timeOrigin + performance.now();
}

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

const shapes: [string, number, number][] = [
  ["1 × 2 KB", 1, 0],
  ["1 × 10 KB", 1, 8192],
  ["10 × 2 KB", 10, 0],
  ["100 × 2 KB", 100, 0],
];

console.log(`iterations per row: ${iterations} (fewer for the large rows); one review at a time`);
console.log("| review | bytes | inline p50 µs | worker p50 µs | inline p99 µs | worker p99 µs |");
console.log("|---|---|---|---|---|---|");
for (const [name, n, annotationBytes] of shapes) {
  const template = encode(n, annotationBytes);
  const count = Math.max(50, Math.floor(iterations / Math.max(1, n / 10)));
  const inline: number[] = [];
  const worker: number[] = [];
  for (let i = 0; i < count; i++) {
    // Alternate so both paths see the same machine load.
    const a = template.slice();
    let t = performance.now();
    convertReviewBytes(ctx, target, a);
    inline.push(performance.now() - t);
    const b = template.slice();
    t = performance.now();
    await pool.convert(target, b, now());
    worker.push(performance.now() - t);
  }
  inline.sort((x, y) => x - y);
  worker.sort((x, y) => x - y);
  const us = (ms: number) => (ms * 1000).toFixed(0);
  console.log(
    `| ${name} | ${template.byteLength} | ${us(quantile(inline, 0.5))} | ` +
      `${us(quantile(worker, 0.5))} | ${us(quantile(inline, 0.99))} | ${
        us(quantile(worker, 0.99))
      } |`,
  );
}
console.log(
  `\nresident memory: ${(rssBefore / 2 ** 20).toFixed(0)} MiB before the pool, ` +
    `${(rssOneWorker / 2 ** 20).toFixed(0)} MiB with one Worker holding the synthetic plan`,
);
pool.close();

// Throughput: 8 reviews in flight, for a fixed wall time per configuration.
const big = encode(100, 0);
const WINDOW_MS = 3_000;
async function throughput(convert: (b: Uint8Array) => Promise<unknown>): Promise<number> {
  let done = 0;
  const end = performance.now() + WINDOW_MS;
  await Promise.all(Array.from({ length: 8 }, async () => {
    while (performance.now() < end) {
      await convert(big.slice());
      done++;
    }
  }));
  return done / (WINDOW_MS / 1000);
}
console.log("\n| 100 × 2 KB, 8 in flight | reviews/s |\n|---|---|");
const inlineRate = await throughput((b) =>
  new Promise((r) => setTimeout(() => r(convertReviewBytes(ctx, target, b)), 0))
);
console.log(`| main thread | ${inlineRate.toFixed(0)} |`);
for (const size of [1, 2]) {
  const p = new ConversionPool({ size, planSets: sets, context: ctx, metrics });
  await p.settled();
  await p.convert(target, encode(1, 0), now());
  const rate = await throughput((b) => p.convert(target, b, now()));
  console.log(`| ${size} Worker${size > 1 ? "s" : ""} | ${rate.toFixed(0)} |`);
  p.close();
}
