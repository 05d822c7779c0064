/**
 * The manager's watch-map functions are named in `dco_watch_map_list_errors_total{map_func}`
 * (docs/observability.md#manager-metrics-plain-port-8080-metrics): every one is exported at 0
 * once wired, and one that cannot read the cache it maps through counts instead of waking nothing
 * silently.
 */
import assert from "node:assert/strict";
import { Registry } from "prom-client";
import { type ConfigKind, CRD_CONFIG_KIND, XRD_CONFIG_KIND } from "../../src/api/mod.ts";
import { CONFIG_RESOURCES, SERVER_RESOURCE, XRD_RESOURCE } from "../../src/api/resources.ts";
import { Informer, type KubeClient, type ResourceRef } from "../../src/kube/mod.ts";
import {
  CRD_RESOURCE,
  DEPLOYMENTS,
  HPAS,
  LEASES,
  PDBS,
  SERVICES,
} from "../../src/kube/resources.ts";
import { createLogger } from "../../src/obs/log.ts";
import type { ManagerCaches } from "../../src/manager/caches.ts";
import { TARGET_INDEX } from "../../src/manager/caches.ts";
import { setupConfigControllers } from "../../src/manager/config_controller.ts";
import { ManagerMetrics } from "../../src/manager/metrics.ts";
import { setupServerController } from "../../src/manager/server_controller.ts";
import type { ServerChildSettings } from "../../src/manager/server/mod.ts";
import { sample, scrape } from "../kube/_helpers.ts";

const MAP_FUNCS = [
  "xrdconversionconfig.mapXRDToConfigs",
  "xrdconversionconfig.mapGeneratedCRDToConfigs",
  "xrdconversionconfig.mapServerToAssignedConfigs",
  "crdconversionconfig.mapCRDToConfigs",
  "crdconversionconfig.mapServerToAssignedConfigs",
  "conversionwebhookserver.enqueueAllServers",
  "conversionwebhookserver.mapDefaultServers",
];

/** Informers over a client that lists `items` for XRDs and nothing for anything else. */
function caches(opts: { indexConfigs: boolean }): ManagerCaches {
  const client = {
    list: (r: ResourceRef) =>
      Promise.resolve({
        metadata: { resourceVersion: "1" },
        items: r === XRD_RESOURCE
          ? [{
            apiVersion: "apiextensions.crossplane.io/v1",
            metadata: { name: "xthings.example.com" },
          }]
          : [],
      }),
    // deno-lint-ignore require-yield
    watch: async function* (_r: unknown, o: { signal: AbortSignal }) {
      await new Promise<void>((r) => o.signal.addEventListener("abort", () => r()));
    },
  } as unknown as KubeClient;
  const logger = createLogger("test.cache");
  const informer = (resource: ResourceRef) => new Informer({ client, resource, logger });
  const configs = new Map<ConfigKind, Informer>([
    [XRD_CONFIG_KIND, informer(CONFIG_RESOURCES[XRD_CONFIG_KIND])],
    [CRD_CONFIG_KIND, informer(CONFIG_RESOURCES[CRD_CONFIG_KIND])],
  ]);
  if (opts.indexConfigs) {
    for (const c of configs.values()) c.addIndex(TARGET_INDEX, () => undefined);
  }
  const crds = informer(CRD_RESOURCE);
  const targets = new Map<ConfigKind, Informer>([[XRD_CONFIG_KIND, informer(XRD_RESOURCE)], [
    CRD_CONFIG_KIND,
    crds,
  ]]);
  const servers = informer(SERVER_RESOURCE);
  const deployments = informer(DEPLOYMENTS());
  const services = informer(SERVICES());
  const children = [informer(HPAS()), informer(PDBS()), informer(LEASES())];
  const informers = [
    ...configs.values(),
    ...targets.values(),
    servers,
    deployments,
    services,
    ...children,
  ];
  return {
    configs,
    targets,
    crds,
    servers,
    deployments: [deployments],
    services: [services],
    hpas: [children[0]],
    pdbs: [children[1]],
    leases: [children[2]],
    informers,
    description: "test",
    start: () => informers.forEach((i) => i.start()),
    waitForSync: async (signal) => {
      await Promise.all(informers.map((i) => i.waitForSync(signal)));
    },
    stop: async () => {
      await Promise.all(informers.map((i) => i.stop()));
    },
  };
}

function wire(c: ManagerCaches, registry: Registry) {
  const deps = {
    client: {} as KubeClient,
    caches: c,
    operatorNamespace: "dco-system",
    metrics: new ManagerMetrics(registry),
  };
  const settings = { registry, workers: 1 };
  const cfg = setupConfigControllers(c, deps, settings);
  setupServerController(c, deps, {} as ServerChildSettings, settings);
  return cfg;
}

Deno.test("manager watch maps: every map function is exported at 0 once wired", async () => {
  const registry = new Registry();
  const c = caches({ indexConfigs: true });
  const cfg = wire(c, registry);
  c.start();
  await c.waitForSync();
  const text = await scrape(registry);
  for (const mapFunc of MAP_FUNCS) {
    assert.equal(
      sample(text, "dco_watch_map_list_errors_total", { map_func: mapFunc }),
      0,
      mapFunc,
    );
  }
  for (const p of cfg.pacers) p.stop();
  await c.stop();
});

Deno.test("manager watch maps: an XRD event the config cache cannot map is counted", async () => {
  const registry = new Registry();
  const c = caches({ indexConfigs: false }); // the config caches lack the target index
  const cfg = wire(c, registry);
  c.start();
  await c.waitForSync();
  const text = await scrape(registry);
  assert.equal(
    sample(text, "dco_watch_map_list_errors_total", {
      map_func: "xrdconversionconfig.mapXRDToConfigs",
    }),
    1,
  );
  assert.equal(
    sample(text, "dco_watch_map_list_errors_total", {
      map_func: "crdconversionconfig.mapCRDToConfigs",
    }),
    0,
    "no CRD event arrived",
  );
  assert.equal(cfg.controllers[0].queue.len(), 0, "the XRD event woke nothing");
  for (const p of cfg.pacers) p.stop();
  await c.stop();
});
