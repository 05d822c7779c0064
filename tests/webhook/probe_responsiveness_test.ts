/**
 * Probes tell busy from dead: while a deliberately slow conversion (a `ForEach` × `CEL` object that
 * takes seconds) runs, `/healthz` and `/readyz` on the plain listener answer — each within the
 * kubelet's 1 s probe timeout — and their answers arrive before the conversion's. The control:
 * the same conversion on the main thread (no Worker pool) holds the probes until it ends, which
 * is what the pool exists to prevent (the probe client shares that event loop here, so the
 * control can only show the order, not a timeout).
 */
import assert from "node:assert/strict";
import {
  createPlainListener,
  Readiness,
  type ServerHandle,
  startPlainServer,
} from "../../src/net/mod.ts";
import {
  ConversionPool,
  convertContext,
  type ConvertHandlerOptions,
  createConvertExchange,
  InlinePolicy,
  PlanSets,
} from "../../src/webhook/convert/mod.ts";
import { PlanRegistry } from "../../src/webhook/registry.ts";
import { startConversion } from "./_helpers.ts";
import { SLOW_TARGET, slowCompiled, slowReview } from "./convert/_slow_target.ts";

/** Elements of the slow object: several seconds of CEL on this machine, contended or not. */
const SLOW_ELEMENTS = 8;
/** What the kubelet waits for a probe answer (the generated Deployment's `timeoutSeconds`). */
const PROBE_TIMEOUT_MS = 1_000;

interface Arrival {
  what: string;
  status: number;
}

async function scenario(pooled: boolean): Promise<Arrival[]> {
  const registry = new PlanRegistry();
  const sets = new PlanSets();
  sets.follow(registry);
  const policy = new InlinePolicy(1 << 20);
  registry.install(slowCompiled());
  const handler: ConvertHandlerOptions = { registry: sets };
  const pool = new ConversionPool({ size: 1, planSets: sets, context: convertContext(handler) });
  // Conversions read the committed set: the pool commits it once its Worker holds it.
  await pool.settled();
  const exchange = createConvertExchange(
    handler,
    pooled
      ? { pool, inline: (t, n) => policy.inline(sets.get(t), n) }
      : { pool, inline: () => true },
  );
  const readiness = new Readiness();
  readiness.set(true);
  const plain: ServerHandle = await startPlainServer({
    address: "127.0.0.1:0",
    listener: createPlainListener({ readiness, registry }),
  });
  await using conversion = await startConversion({ exchange });
  const arrivals: Arrival[] = [];
  try {
    const slow = conversion.post(slowReview("slow-1", SLOW_ELEMENTS), SLOW_TARGET).then(
      async (res) => {
        const review = await res.json();
        assert.equal(review.response.result.status, "Success", JSON.stringify(review.response));
        arrivals.push({ what: "conversion", status: res.status });
      },
    );
    // The conversion has started when the server holds it; give it a moment to reach the CEL.
    await new Promise((r) => setTimeout(r, 300));
    const probe = async (path: string) => {
      try {
        const res = await fetch(`http://127.0.0.1:${plain.addr.port}${path}`, {
          signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
        });
        await res.body?.cancel();
        arrivals.push({ what: path, status: res.status });
      } catch (e) {
        arrivals.push({ what: `${path} timed out (${(e as Error).name})`, status: 0 });
      }
    };
    await Promise.all([probe("/healthz"), probe("/readyz")]);
    await slow;
  } finally {
    pool.close();
    await plain.shutdown();
  }
  return arrivals;
}

Deno.test({
  name: "while a slow conversion runs in a Worker, /healthz and /readyz answer first",
  sanitizeResources: false,
  fn: async () => {
    const arrivals = await scenario(true);
    assert.deepEqual(arrivals.slice(0, 2).map((a) => a.what).sort(), ["/healthz", "/readyz"]);
    assert.deepEqual(arrivals.slice(0, 2).map((a) => a.status), [200, 200]);
    assert.equal(arrivals[2].what, "conversion", JSON.stringify(arrivals));
  },
});

Deno.test({
  name: "control: the same conversion on the main thread answers before the probes",
  sanitizeResources: false,
  fn: async () => {
    const arrivals = await scenario(false);
    assert.equal(arrivals[0].what, "conversion", JSON.stringify(arrivals));
  },
});
