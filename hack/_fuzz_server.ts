/**
 * The process hack/fuzz_convert.ts fuzzes: the real conversion listener (src/webhook/convert/ on
 * src/net/tls_server.ts) serving the synthetic target over TLS, with the request bounds the
 * webhook-server role derives from its heap (run it with `DENO_V8_FLAGS=--max-old-space-size=192`,
 * what a pod gets by default). Prints `{"port":N}` on stdout once listening, then serves until
 * killed. `deno run --allow-read=DIR --allow-net=127.0.0.1 --allow-env hack/_fuzz_server.ts DIR`.
 */
import { TlsServer } from "../src/net/mod.ts";
import { SILENT } from "../src/webhook/_log.ts";
import { syntheticCompiled } from "../src/webhook/convert/_synthetic.ts";
import { deriveRequestBounds, readHeap } from "../src/webhook/convert/budget.ts";
import { RequestGovernor } from "../src/webhook/convert/governor.ts";
import {
  createNodeConvertListener,
  DEFAULT_MAX_REQUEST_BYTES,
} from "../src/webhook/convert/mod.ts";
import { PlanRegistry } from "../src/webhook/registry.ts";

const certDir = Deno.args[0];
const registry = new PlanRegistry();
registry.install(syntheticCompiled(), new Date());
const bounds = deriveRequestBounds(readHeap(), { maxRequestBytes: DEFAULT_MAX_REQUEST_BYTES });
const server = await TlsServer.start({
  address: "127.0.0.1:0",
  certDir,
  reloadIntervalMs: 0,
  listener: createNodeConvertListener({
    registry,
    logger: SILENT,
    governor: new RequestGovernor(bounds, () => {}),
    maxRequestBytes: bounds.maxRequestBytes,
  }),
  limits: { maxConnections: bounds.maxConnections },
  logger: SILENT,
});
console.log(JSON.stringify({ port: server.addr.port, bounds }));
