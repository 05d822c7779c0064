/**
 * The webhook-server's caches export the informer families and name their watch maps
 * (docs/observability.md#informer-metrics), like the manager's: one last-sync series per cache,
 * one `dco_watch_map_list_errors_total` series per map function, and a failed watch after the
 * first sync counted.
 */
import assert from "node:assert/strict";
import { Registry } from "prom-client";
import { KubeApiError, type KubeClient, type ResourceRef } from "../../src/kube/mod.ts";
import { createLogger } from "../../src/obs/log.ts";
import { createReplicaCaches } from "../../src/webhook/cluster.ts";
import { sample, scrape } from "../kube/_helpers.ts";

Deno.test("webhook caches: informer and watch-map families in the replica's registry", async () => {
  const registry = new Registry();
  const watches = new Map<string, number>();
  const client = {
    list: () => Promise.resolve({ metadata: { resourceVersion: "1" }, items: [] }),
    // deno-lint-ignore require-yield
    watch: async function* (r: ResourceRef, o: { signal: AbortSignal }) {
      const n = (watches.get(r.plural) ?? 0) + 1;
      watches.set(r.plural, n);
      // RBAC lost after the sync: the first server watch is refused.
      if (r.plural === "conversionwebhookservers" && n === 1) {
        throw new KubeApiError(403, "Forbidden", "conversionwebhookservers is forbidden");
      }
      await new Promise<void>((res) => o.signal.addEventListener("abort", () => res()));
    },
  } as unknown as KubeClient;
  const caches = createReplicaCaches({
    client,
    kinds: ["crd", "xrd"],
    labelSelector: "",
    logger: createLogger("test.cache"),
    registry,
  });
  caches.connect({ add: () => {} });
  caches.start();
  await caches.waitForSync();
  for (let i = 0; i < 400 && (watches.get("conversionwebhookservers") ?? 0) < 2; i++) {
    await new Promise((r) => setTimeout(r, 5));
  }
  const text = await scrape(registry);
  for (const i of caches.informers) {
    const ts = sample(text, "dco_informer_last_sync_timestamp_seconds", { resource: i.name });
    assert.ok(ts !== undefined && ts > 0, `${i.name}: ${ts}`);
  }
  const server = caches.informers.find((i) => i.name.startsWith("conversionwebhookservers"))!;
  assert.equal(
    sample(text, "dco_informer_watch_errors_total", { resource: server.name, reason: "Forbidden" }),
    1,
  );
  for (
    const mapFunc of [
      "webhookserver.mapCRDToConfigs",
      "webhookserver.mapXRDToConfigs",
      "webhookserver.mapServerToConfigs",
    ]
  ) {
    assert.equal(sample(text, "dco_watch_map_list_errors_total", { map_func: mapFunc }), 0);
  }
  await caches.stop();
});
