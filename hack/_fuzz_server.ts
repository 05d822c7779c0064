/**
 * The process hack/fuzz_convert.ts fuzzes: the real conversion port (src/webhook/convert/: the
 * listener Workers on src/net/tls_server.ts, and the conversion pool behind them) serving the
 * synthetic target over TLS, with the request bounds the webhook-server role derives from its heap
 * (run it with `DENO_V8_FLAGS=--max-old-space-size=192`, what a pod gets by default), composed as
 * the role composes it, and recording the role's metric set into a registry of its own (never
 * scraped but drained from the Workers each second: what it costs is what the role pays). Prints
 * `{"port":N,…}` on stdout once listening, then serves until killed. hack/bench_side_by_side.ts
 * runs it too, with the number of listener Workers (and of pool Workers) as the optional second
 * argument (default 2) and `--conversion-inline-max-bytes` as the optional third (default `auto`,
 * as the role).
 * `deno run --allow-read=DIR,src --allow-net=127.0.0.1 --allow-env hack/_fuzz_server.ts DIR [N [BYTES]]`.
 */
import { SILENT } from "../src/webhook/_log.ts";
import { syntheticCompiled } from "../src/webhook/convert/_synthetic.ts";
import { deriveRequestBounds, readHeap } from "../src/webhook/convert/budget.ts";
import {
  autoInlineMaxBytes,
  ConversionListeners,
  ConversionPool,
  convertContext,
  DEFAULT_MAX_REQUEST_BYTES,
  ListenerCells,
  PlanSetFanout,
  PlanSets,
} from "../src/webhook/convert/mod.ts";
import { PlanRegistry } from "../src/webhook/registry.ts";
import { availableCpus } from "../src/webhook/cpu_limit.ts";
import { WebhookMetrics } from "../src/webhook/metrics.ts";
import { Registry } from "prom-client";

const certDir = Deno.args[0];
const workers = Number(Deno.args[1] ?? "2");
if (!Number.isInteger(workers) || workers < 1) {
  throw new Error(`worker count "${Deno.args[1]}" is not ≥ 1`);
}
// As the role: `auto` by the CPUs this process may use (it is pinned with taskset).
const inlineArg = Deno.args[2] ?? "auto";
const inlineMaxBytes = inlineArg === "auto"
  ? autoInlineMaxBytes(await availableCpus())
  : Number(inlineArg);
if (!Number.isInteger(inlineMaxBytes) || inlineMaxBytes < 0) {
  throw new Error(`inline bound "${inlineArg}" is not auto or a byte count ≥ 0`);
}
const registry = new PlanRegistry();
const planSets = new PlanSets();
planSets.follow(registry);
const cells = new ListenerCells(workers);
const fanout = new PlanSetFanout(planSets, cells.version);
registry.install(syntheticCompiled(), new Date());
await fanout.settled();
const bounds = deriveRequestBounds(readHeap(), { maxRequestBytes: DEFAULT_MAX_REQUEST_BYTES });
const metrics = new WebhookMetrics(new Registry());
metrics.setLimits(bounds);
metrics.observeInFlight(() => cells.inFlight);
const context = convertContext({
  registry: planSets,
  metrics,
  logger: SILENT,
  maxRequestBytes: bounds.maxRequestBytes,
});
const pool = new ConversionPool({ size: workers, planSets, fanout, context, metrics });
metrics.observePool(() => pool.stats());
const server = await ConversionListeners.start({
  count: workers,
  address: "127.0.0.1:0",
  certDir,
  reloadIntervalMs: 0,
  cells,
  fanout,
  context,
  bounds,
  inlineMaxBytes,
  pool,
  metrics,
  logger: SILENT,
});
console.log(JSON.stringify({ port: server.addr.port, bounds, inlineMaxBytes }));
