/**
 * The webhook-server role: answers the apiserver's ConversionReviews for the targets assigned to
 * this ConversionWebhookServer from an in-memory plan registry (runtime.md §8).
 *
 * Startup order (§8.2) — each step is a safety property:
 *  1. flags (invalid ⇒ exit 1); 4. the TLS pair is read once (missing/invalid ⇒ exit 1);
 *  6. the plain server (/healthz 200, /readyz 503, /metrics) starts before any cache sync, so a
 *     slow start is visible and not killed by liveness;
 *  7. cache sync races the caches' own terminal failures (e.g. missing RBAC): exit non-zero;
 *  8. the initial sync, retried every 2 s without an attempt cap (only shutdown aborts it);
 *  9. the served-target Lease (§7) is published once (a failure is only logged) and its
 *     heartbeat/notification loop started — skipped, logged once, without POD_NAME/POD_NAMESPACE/
 *     POD_UID;
 *  11. the TLS listener is bound, then 10. the replica turns ready.
 * There is deliberately no "ready anyway" timeout: a replica outside the Service endpoints only
 * costs capacity, while one inside them with a partial registry fails real requests for targets
 * it has not compiled yet. The startupProbe bounds a sync that never completes.
 *
 * Permissions: `--allow-net --allow-env --allow-read=<cert dir>,<service-account dir>,<worker>`.
 */
import { configureLogging, createLogger } from "../obs/log.ts";
import { createMetricsRegistry, metricsResponse } from "../obs/metrics.ts";
import { KubeClient } from "../kube/client.ts";
import { Controller } from "../kube/controller.ts";
import { CompilePool, defaultPoolSize } from "../webhook/compile_pool.ts";
import { createReplicaCaches } from "../webhook/cluster.ts";
import type { ConfigKind } from "../webhook/compiled.ts";
import { createNodeConvertListener } from "../webhook/convert/mod.ts";
import { FlagError, parseWebhookServerFlags } from "../webhook/flags.ts";
import { WebhookMetrics } from "../webhook/metrics.ts";
import { PlanRegistry } from "../webhook/registry.ts";
import { initialSyncPass, RegistryController } from "../webhook/registry_controller.ts";
import {
  podIdentityFromEnv,
  servableTargets,
  ServedTargetPublisher,
} from "../webhook/served_lease.ts";
import {
  createPlainListener,
  Readiness,
  readKeyPair,
  type ServerHandle,
  shutdownAll,
  startPlainServer,
  TlsServer as ConversionServer,
} from "../net/mod.ts";

const log = createLogger("webhook-server");
const RETRY_INITIAL_SYNC_MS = 2_000;

function exit(code: number, msg: string, fields?: Record<string, unknown>): never {
  log.error(msg, fields);
  Deno.exit(code);
}

async function main(argv: readonly string[]): Promise<void> {
  const { rest } = configureLogging(argv);
  let flags;
  try {
    flags = parseWebhookServerFlags(rest);
  } catch (e) {
    if (e instanceof FlagError) exit(1, `invalid flags: ${e.message}`);
    throw e;
  }
  const shutdown = new AbortController();
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    Deno.addSignalListener(signal, () => shutdown.abort(new Error(`received ${signal}`)));
  }

  const kinds: ConfigKind[] = [];
  if (flags.enableCrdSupport) kinds.push("crd");
  if (flags.enableXrdSupport) kinds.push("xrd");

  // Step 3: caches, registry, metrics, controller.
  let client: KubeClient;
  try {
    client = await KubeClient.fromEnvironment({ kubeconfig: flags.kubeconfig || undefined });
  } catch (e) {
    exit(1, "cannot load Kubernetes client configuration", { error: e });
  }
  const metricsRegistry = createMetricsRegistry();
  const metrics = new WebhookMetrics(metricsRegistry.registry);
  const registry = new PlanRegistry();
  let bulk = false;
  // Served-target Lease (§7): only with the full downward-API identity (the Pod owns the Lease).
  const pod = podIdentityFromEnv((name) => Deno.env.get(name));
  const publisher = pod.ok
    ? new ServedTargetPublisher({
      client,
      namespace: pod.namespace,
      serverName: flags.webhookServerName,
      podName: pod.podName,
      podUID: pod.uid,
      targets: () => servableTargets(registry),
      logger: createLogger("webhook-server.served-lease"),
    })
    : undefined;
  if (!pod.ok) {
    log.info("served-target Lease publishing disabled (conversions are unaffected)", {
      missing: pod.missing,
    });
  }
  registry.onChange((change) => {
    metrics.observeChange(change);
    if (!bulk) {
      metrics.refreshRegistryGauges(registry.snapshot());
      publisher?.notify();
    }
  });
  const readiness = new Readiness((ready) => metrics.setReady(ready));
  const caches = createReplicaCaches({
    client,
    kinds,
    labelSelector: flags.cacheLabelSelector,
    logger: createLogger("webhook-server.cache"),
  });
  const workers = flags.initialSyncWorkers > 0 ? flags.initialSyncWorkers : await defaultPoolSize();
  const poolSize = Math.max(1, workers);
  const pool = new CompilePool(poolSize);
  const registryController = new RegistryController({
    serverName: flags.webhookServerName,
    view: caches,
    registry,
    compile: pool.compile,
    logger: createLogger("webhook-server.registry"),
  });
  // One controller per enabled kind, named as the reference's (dashboards select on them).
  const controllers = new Map<ConfigKind, Controller>(kinds.map((kind) => [
    kind,
    new Controller({
      name: `webhookserver-registry-${kind}`,
      registry: metricsRegistry.registry,
      reconcile: (key) => registryController.reconcile(kind, key.slice(key.indexOf("/") + 1)),
    }),
  ]));
  const routeByKind = {
    add: (key: string) =>
      controllers.get(key.slice(0, key.indexOf("/")) as ConfigKind)?.queue.add(key),
  };

  // Step 4: the TLS pair must be readable now.
  try {
    await readKeyPair(flags.tlsCertDir);
  } catch (e) {
    exit(1, "cannot load the TLS certificate", { dir: flags.tlsCertDir, error: e });
  }

  // Steps 5–6: informers, then the plain server before any sync.
  caches.start();
  const servers: ServerHandle[] = [];
  try {
    servers.push(
      await startPlainServer({
        address: flags.metricsBindAddress,
        listener: createPlainListener({
          readiness,
          registry,
          metrics: () => metricsResponse(metricsRegistry.registry),
        }),
      }),
    );
  } catch (e) {
    exit(1, "cannot start the metrics/health listener", {
      address: flags.metricsBindAddress,
      error: e,
    });
  }
  const stopAll = async (code: number): Promise<never> => {
    readiness.set(false);
    await publisher?.stop();
    await shutdownAll(servers, flags.shutdownTimeoutMs);
    await Promise.all([...controllers.values()].map((c) => c.stop()));
    await caches.stop();
    pool.close();
    metricsRegistry.stop();
    Deno.exit(code);
  };

  // Step 7: cache sync, failing fast on a terminal cache error.
  try {
    await caches.waitForSync(shutdown.signal);
  } catch (e) {
    if (shutdown.signal.aborted) await stopAll(0);
    log.error("informer cache failed to sync; exiting", { error: e });
    await stopAll(1);
  }

  // Step 8: the initial sync, whole passes retried until one is clean.
  const started = performance.now();
  let attempt = 0;
  let targets = 0;
  bulk = true;
  for (;;) {
    attempt++;
    try {
      // More lanes than workers keep every worker fed while results cross back.
      targets = (await initialSyncPass(registryController, caches, kinds, poolSize * 4)).targets;
      break;
    } catch (e) {
      log.error("initial sync failed; retrying", { attempt, error: e });
      await new Promise((r) => setTimeout(r, RETRY_INITIAL_SYNC_MS));
      if (shutdown.signal.aborted) await stopAll(0);
    }
  }
  bulk = false;
  metrics.refreshRegistryGauges(registry.snapshot());
  const elapsedMs = performance.now() - started;

  // Step 9: publish the Lease once (a failure is logged; the heartbeat retries), then the loop.
  if (publisher !== undefined) {
    await publisher.publishOrLog();
    publisher.start();
  }

  // Step 11 before 10 ([Deno] choice): bind the conversion listener, then report ready.
  try {
    servers.push(
      await ConversionServer.start({
        address: flags.conversionBindAddress,
        certDir: flags.tlsCertDir,
        reloadIntervalMs: flags.certReloadIntervalMs,
        listener: createNodeConvertListener({
          registry,
          metrics,
          maxRequestBytes: flags.maxRequestBytes,
          requestTimeoutMs: flags.requestTimeoutMs,
        }),
      }),
    );
  } catch (e) {
    exit(1, "cannot start the conversion listener", {
      address: flags.conversionBindAddress,
      error: e,
    });
  }
  caches.connect(routeByKind);
  for (const c of controllers.values()) c.start();
  metrics.setInitialSync(elapsedMs / 1000, targets);
  readiness.set(true);
  log.info("registry synced, marking replica ready", {
    server: flags.webhookServerName,
    targets,
    workers: poolSize,
    elapsedMs: Math.round(elapsedMs),
    attempts: attempt,
  });

  // Step 12: run until a signal, then /readyz 503 first and shut down with one deadline.
  await new Promise<void>((resolve) => shutdown.signal.addEventListener("abort", () => resolve()));
  log.info("shutting down", { reason: String(shutdown.signal.reason) });
  await stopAll(0);
}

if (import.meta.main) {
  await main(Deno.args);
}
