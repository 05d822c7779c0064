/**
 * What heap one ConversionReview costs: writes a review of about `--mib` MiB of synthetic Widgets
 * (~2 KB objects, many small fields: the most heap per byte of the shapes we bench), then bisects
 * the smallest `--max-old-space-size` under which one process converts it through the handler
 * (`convertReviewBytes`: decode, nesting scan, parse, convert, stringify, encode) and prints that
 * process's `heap_size_limit` and its ratio to the body size — the factor the request governor
 * budgets with (docs/design/webhook.md#request-governance).
 *
 *   bash hack/deno.sh run -A hack/review_heap.ts --mib 8
 */
import v8 from "node:v8";
import { parseArgs } from "node:util";
import { SILENT } from "../src/webhook/_log.ts";
import {
  SYNTHETIC_TARGET,
  syntheticCompiled,
  syntheticReview,
} from "../src/webhook/convert/_synthetic.ts";
import { convertContext, convertReviewBytes } from "../src/webhook/convert/mod.ts";
import { PlanRegistry } from "../src/webhook/registry.ts";

const { values: args } = parseArgs({
  args: Deno.args,
  options: { mib: { type: "string", default: "8" }, child: { type: "string" } },
});

if (args.child !== undefined) {
  // One trial: convert the review in the file; exit 0 on a Success answer.
  const registry = new PlanRegistry();
  registry.install(syntheticCompiled(), new Date());
  const ctx = convertContext({ registry, logger: SILENT, requestTimeoutMs: 600_000 });
  const bytes = await Deno.readFile(args.child);
  const out = convertReviewBytes(ctx, SYNTHETIC_TARGET, bytes);
  const ok = out.status === 200 && new TextDecoder().decode(out.body.subarray(0, 200))
    .includes('"Success"');
  console.log(JSON.stringify({ ok, heapSizeLimit: v8.getHeapStatistics().heap_size_limit }));
  Deno.exit(ok ? 0 : 1);
}

const mib = Number(args.mib);
const perObject = JSON.stringify(syntheticReview(1).request).length;
const n = Math.max(1, Math.round(mib * 1048576 / perObject));
const file = await Deno.makeTempFile({ suffix: ".json" });
await Deno.writeTextFile(file, JSON.stringify(syntheticReview(n)));
const bodyBytes = (await Deno.stat(file)).size;

async function trial(oldSpaceMiB: number): Promise<number | undefined> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", new URL(import.meta.url).pathname, "--child", file],
    env: { DENO_V8_FLAGS: `--max-old-space-size=${oldSpaceMiB}` },
    stdout: "piped",
    stderr: "null",
  }).output();
  if (!out.success) return undefined;
  return JSON.parse(new TextDecoder().decode(out.stdout)).heapSizeLimit;
}

let lo = 8, hi = 4096; // MiB of old space: lo fails, hi passes
if ((await trial(hi)) === undefined) throw new Error(`a ${mib} MiB review fails even at ${hi} MiB`);
while (hi - lo > Math.max(2, lo / 50)) {
  const mid = Math.floor((lo + hi) / 2);
  if ((await trial(mid)) === undefined) lo = mid;
  else hi = mid;
}
const limit = (await trial(hi))!;
await Deno.remove(file);
console.log(JSON.stringify({
  objects: n,
  bodyBytes,
  minOldSpaceMiB: hi,
  heapSizeLimitBytes: limit,
  factor: Math.round(limit / bodyBytes * 10) / 10,
}));
