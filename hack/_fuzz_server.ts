/**
 * The process hack/fuzz_convert.ts fuzzes: the real conversion listener (src/webhook/convert/ on
 * src/net/tls_server.ts) serving the synthetic target over TLS, with the request bounds the
 * webhook-server role derives from its heap (run it with `DENO_V8_FLAGS=--max-old-space-size=192`,
 * what a pod gets by default) and, as in the role, conversions in a pool of two Workers with the
 * default inline policy (small reviews inline, the rest in a Worker), recording the role's metric set
 * into a registry of its own (never scraped: what it costs is what the role pays). Prints `{"port":N}` on
 * stdout once listening, then serves until killed. hack/bench_side_by_side.ts runs it too, with the
 * pool size as the optional second argument (default 2) and `--conversion-inline-max-bytes` as
 * the optional third (default `auto`, as the role).
 * `deno run --allow-read=DIR,src --allow-net=127.0.0.1 --allow-env hack/_fuzz_server.ts DIR [N [BYTES]]`.
 */
import { TlsServer } from "../src/net/mod.ts";
import { SILENT } from "../src/webhook/_log.ts";
import { syntheticCompiled } from "../src/webhook/convert/_synthetic.ts";
import { deriveRequestBounds, readHeap } from "../src/webhook/convert/budget.ts";
import { RequestGovernor } from "../src/webhook/convert/governor.ts";
import {
  autoInlineMaxBytes,
  ConversionPool,
  convertContext,
  type ConvertHandlerOptions,
  createConvertExchange,
  DEFAULT_MAX_REQUEST_BYTES,
  InlinePolicy,
  PlanSets,
} from "../src/webhook/convert/mod.ts";
import { PlanRegistry } from "../src/webhook/registry.ts";
import { availableCpus } from "../src/webhook/cpu_limit.ts";
import { WebhookMetrics } from "../src/webhook/metrics.ts";
import { Registry } from "prom-client";

const certDir = Deno.args[0];
const workers = Number(Deno.args[1] ?? "2");
if (!Number.isInteger(workers) || workers < 1) {
  throw new Error(`pool size "${Deno.args[1]}" is not ≥ 1`);
}
const registry = new PlanRegistry();
const planSets = new PlanSets();
planSets.follow(registry);
// As the role: `auto` by the CPUs this process may use (it is pinned with taskset).
const inlineArg = Deno.args[2] ?? "auto";
const inlineMaxBytes = inlineArg === "auto"
  ? autoInlineMaxBytes(await availableCpus())
  : Number(inlineArg);
if (!Number.isInteger(inlineMaxBytes) || inlineMaxBytes < 0) {
  throw new Error(`inline bound "${inlineArg}" is not auto or a byte count ≥ 0`);
}
const policy = new InlinePolicy(inlineMaxBytes);
policy.follow(registry);
registry.install(syntheticCompiled(), new Date());
const bounds = deriveRequestBounds(readHeap(), { maxRequestBytes: DEFAULT_MAX_REQUEST_BYTES });
const metrics = new WebhookMetrics(new Registry());
metrics.setLimits(bounds);
const handler: ConvertHandlerOptions = {
  registry: planSets,
  metrics,
  logger: SILENT,
  governor: new RequestGovernor(bounds, (n, bytes) => metrics.setInFlight(n, bytes)),
  maxRequestBytes: bounds.maxRequestBytes,
};
const pool = new ConversionPool({
  size: workers,
  planSets,
  context: convertContext(handler),
  metrics,
  onWorkerLost: (reason) => metrics.countWorkerLost(reason),
});
metrics.observePool(() => pool.stats());
await pool.settled();
const server = await TlsServer.start({
  address: "127.0.0.1:0",
  certDir,
  reloadIntervalMs: 0,
  exchange: createConvertExchange(handler, {
    pool,
    inline: (target, bytes) => policy.inline(planSets.get(target), bytes),
  }),
  limits: { maxConnections: bounds.maxConnections },
  logger: SILENT,
});
console.log(JSON.stringify({ port: server.addr.port, bounds, inlineMaxBytes }));
