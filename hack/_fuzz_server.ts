/**
 * The process hack/fuzz_convert.ts fuzzes: the real conversion listener (src/webhook/convert/ on
 * src/net/tls_server.ts, default limits) serving the synthetic target over TLS, with the V8 heap
 * a webhook-server pod gets by default. Prints `{"port":N}` on stdout once listening, then serves
 * until killed. `deno run --allow-read=DIR --allow-net=127.0.0.1 hack/_fuzz_server.ts DIR`.
 */
import { TlsServer } from "../src/net/mod.ts";
import { SILENT } from "../src/webhook/_log.ts";
import { syntheticCompiled } from "../src/webhook/convert/_synthetic.ts";
import { createNodeConvertListener } from "../src/webhook/convert/mod.ts";
import { PlanRegistry } from "../src/webhook/registry.ts";

const certDir = Deno.args[0];
const registry = new PlanRegistry();
registry.install(syntheticCompiled(), new Date());
const server = await TlsServer.start({
  address: "127.0.0.1:0",
  certDir,
  reloadIntervalMs: 0,
  listener: createNodeConvertListener({ registry, logger: SILENT }),
  logger: SILENT,
});
console.log(JSON.stringify({ port: server.addr.port }));
