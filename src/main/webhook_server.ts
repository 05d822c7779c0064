/**
 * The webhook-server role: answers the apiserver's ConversionReviews for the targets assigned to
 * this ConversionWebhookServer from an in-memory plan registry. This file is only the startup
 * order, and each step is a safety property: flags (invalid ⇒ exit 1); caches, registry, metrics,
 * controllers; the TLS pair read and validated once (unreadable, not PEM, mismatched or outside
 * its validity ⇒ exit 1 with the reason); informers; the plain server; cache sync (a terminal cache
 * failure ⇒ exit 1); the initial sync, retried every 2 s until clean (only a shutdown aborts it);
 * the conversion port bound by the listener Workers, each holding the synced plan set; the
 * served-target Lease published once (from the plan set the Workers hold) and its loop started;
 * ready — and unready whenever the port holds no usable pair or no listener Worker listens.
 * Stopping: docs/design/manager.md#shutdown.
 *
 * The plain server (/healthz, /readyz, /metrics) starts before any cache sync, so a slow start is
 * visible and not killed by liveness; the replica turns ready only once the initial sync is clean
 * and the TLS listener is bound. There is deliberately no "ready anyway" timeout: a replica outside
 * the Service endpoints only costs capacity, while one inside them with a partial registry fails
 * real requests for targets it has not compiled yet. The startupProbe bounds a sync that never
 * completes.
 *
 * The conversion port is served by listener Workers (src/webhook/convert/listeners.ts), one per
 * CPU, which convert small reviews of bounded cost themselves and hand the rest to the conversion
 * pool (src/webhook/convert/pool.ts), so the event loop that answers the probes is never held by
 * a conversion, nor by the port's TLS and HTTP.
 *
 * Permissions: `--allow-net --allow-env --allow-read=<cert dir>,<service-account dir>,<workers>,
 * /sys/fs/cgroup` (the last only to size the pools from the CPU limit).
 */
import { CRD_CONFIG_KIND, XRD_CONFIG_KIND } from "../api/mod.ts";
import { DCO_GROUP } from "../api/resources.ts";
import { normalizeSerial, SERVING_SERIAL_ANNOTATION } from "../api/served_lease.ts";
import { defaultWorkers } from "../lib/worker_budget.ts";
import { createLogger } from "../obs/log.ts";
import { registerBuildInfo } from "../obs/build_info.ts";
import { createMetricsRegistry, metricsResponse } from "../obs/metrics.ts";
import { denoOtelActive, tracingEnvProblem } from "../obs/tracing.ts";
import { Controller } from "../kube/controller.ts";
import { CompilePool, syncPlan } from "../webhook/compile_pool.ts";
import { createReplicaCaches } from "../webhook/cluster.ts";
import type { ConfigKind } from "../webhook/compiled.ts";
import {
  autoInlineMaxBytes,
  ConversionListeners,
  ConversionPool,
  convertContext,
  type ConvertHandlerOptions,
  deriveRequestBounds,
  ListenerCells,
  PlanSetFanout,
  PlanSets,
  readHeap,
} from "../webhook/convert/mod.ts";
import { availableCpus } from "../webhook/cpu_limit.ts";
import { FlagError, parseWebhookServerFlags, tracingSettingsOf } from "../webhook/flags.ts";
import { WebhookMetrics } from "../webhook/metrics.ts";
import { PlanRegistry } from "../webhook/registry.ts";
import { initialSyncPass, RegistryController } from "../webhook/registry_controller.ts";
import {
  podIdentityFromEnv,
  servableTargets,
  ServedTargetPublisher,
} from "../webhook/served_lease.ts";
import { loadKeyPair } from "../net/mod.ts";
import { startMetricsListener } from "./_metrics.ts";
import { parseRoleFlags, Role } from "./_role.ts";

const RETRY_INITIAL_SYNC_MS = 2_000;
const MiB = 1024 * 1024;

async function main(argv: readonly string[]): Promise<never> {
  const flags = parseRoleFlags("webhook-server", argv, (args) => {
    const f = parseWebhookServerFlags(args);
    // Tracing needs Deno's OpenTelemetry, which only the environment at start turns on.
    const problem = tracingEnvProblem(
      tracingSettingsOf(f),
      (name) => Deno.env.get(name),
      denoOtelActive(),
    );
    if (problem !== undefined) throw new FlagError(problem);
    return f;
  });
  const tracing = tracingSettingsOf(flags);
  const kinds: ConfigKind[] = [];
  if (flags.enableCrdSupport) kinds.push("crd");
  if (flags.enableXrdSupport) kinds.push("xrd");

  // Caches, registry, metrics, controllers.
  const metricsRegistry = createMetricsRegistry();
  const metrics = new WebhookMetrics(metricsRegistry.registry);
  const role = new Role({
    logger: "webhook-server",
    shutdownTimeoutMs: flags.shutdownTimeoutMs,
    onReadyChange: (ready) => metrics.setReady(ready),
  });
  const log = role.log;
  registerBuildInfo(metricsRegistry.registry);
  const client = await role.client(flags.kubeconfig, metricsRegistry.registry);
  role.onStop("metrics", () => metricsRegistry.stop());
  const registry = new PlanRegistry();
  // What conversions read: the registry as of the last version every conversion Worker holds.
  const planSets = new PlanSets();
  planSets.follow(registry);
  const cpus = await availableCpus();
  const inlineMaxBytes = flags.conversionInlineMaxBytes === "auto"
    ? autoInlineMaxBytes(cpus)
    : flags.conversionInlineMaxBytes;
  // Workers of each kind: one per CPU, at most one per 96 MiB of heap ceiling (worker_budget.ts).
  const perKind = defaultWorkers(cpus, readHeap().limitBytes / MiB);
  const listenerCount = flags.conversionListeners > 0 ? flags.conversionListeners : perKind;
  // Shared with the listener Workers: the bounds' counts and the committed plan-set version.
  const cells = new ListenerCells(listenerCount);
  // Swaps reach every converting Worker; with none started yet, a change commits at once.
  const fanout = new PlanSetFanout(planSets, cells.version);
  let bulk = false;
  // The served-target Lease: only with the full downward-API identity (the Pod owns the Lease).
  const pod = podIdentityFromEnv((name) => Deno.env.get(name));
  // The serial of the pair the conversion listener serves, reported in the Lease (CA rotation).
  let servingSerial = "";
  const publisher = pod.ok
    ? new ServedTargetPublisher({
      client,
      namespace: pod.namespace,
      serverName: flags.webhookServerName,
      podName: pod.podName,
      podUID: pod.uid,
      targets: () => servableTargets(planSets),
      annotations: () => ({ [SERVING_SERIAL_ANNOTATION]: servingSerial || undefined }),
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
    if (!bulk) metrics.refreshRegistryGauges(registry.snapshot());
  });
  // The Lease advertises a target only once every conversion Worker can serve it.
  planSets.onCommit(() => publisher?.notify());
  const caches = createReplicaCaches({
    client,
    kinds,
    labelSelector: flags.cacheLabelSelector,
    logger: createLogger("webhook-server.cache"),
    registry: metricsRegistry.registry,
  });
  const workers = flags.initialSyncWorkers > 0 ? flags.initialSyncWorkers : perKind;
  const poolSize = Math.max(1, workers);
  const pool = new CompilePool(poolSize);
  role.onStop("compile pool", () => pool.close());
  // Registered before the listeners, so it stops after they drained their requests.
  const running: { conversions?: ConversionPool; listeners?: ConversionListeners } = {};
  role.onStop("conversion pool", () => {
    running.conversions?.close();
    fanout.close();
  });
  role.onStop("caches", () => caches.stop());
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
      kind: { group: DCO_GROUP, kind: kind === "crd" ? CRD_CONFIG_KIND : XRD_CONFIG_KIND },
      // Keys are `<kind>/<name>`: the configs are cluster-scoped.
      objectRef: (key) => ({ name: key.slice(key.indexOf("/") + 1) }),
      reconcile: (key) => registryController.reconcile(kind, key.slice(key.indexOf("/") + 1)),
    }),
  ]));
  role.onStop("controllers", () => Promise.all([...controllers.values()].map((c) => c.stop())));
  const routeByKind = {
    add: (key: string) =>
      controllers.get(key.slice(0, key.indexOf("/")) as ConfigKind)?.queue.add(key),
  };

  // The TLS pair must be usable now.
  try {
    await loadKeyPair(flags.tlsCertDir);
  } catch (e) {
    await role.configError(
      `cannot load the TLS certificate: ${
        (e as Error).message
      } (--tls-cert-dir=${flags.tlsCertDir})`,
    );
  }

  // Informers, then the plain server before any sync.
  caches.start();
  const metricsAddress = flags.metricsBindAddress;
  await role.listen(
    "cannot start the metrics/health listener",
    metricsAddress,
    () =>
      startMetricsListener({
        address: metricsAddress,
        secure: flags.metricsSecure,
        certDir: flags.tlsCertDir,
        client,
        routes: {
          readiness: role.readiness,
          registry,
          metrics: async () => {
            // The listener Workers' counts first, so a scrape sees every review answered.
            await running.listeners?.flushMetrics();
            return metricsResponse(metricsRegistry.registry);
          },
        },
        log,
      }),
  );

  // Cache sync, failing fast on a terminal cache error.
  await role.waitForSync(caches);

  // The initial sync, whole passes retried until one is clean.
  const started = performance.now();
  let attempt = 0;
  let targets = 0;
  bulk = true;
  for (;;) {
    attempt++;
    try {
      // Inline below the measured break-even, else every config queued on the pool (batched).
      const pass = (n: number) => syncPlan(pool, n);
      targets = (await initialSyncPass(registryController, caches, kinds, pass)).targets;
      break;
    } catch (e) {
      log.error("initial sync failed; retrying", { attempt, error: e });
      await new Promise((r) => setTimeout(r, RETRY_INITIAL_SYNC_MS));
      await role.exitIfStopping();
    }
  }
  bulk = false;
  metrics.refreshRegistryGauges(registry.snapshot());
  const elapsedMs = performance.now() - started;

  // The conversion port: listener Workers bind it holding the synced plan set; ready only then.
  const heap = readHeap();
  const bounds = deriveRequestBounds(heap, flags);
  metrics.setLimits(bounds);
  metrics.observeInFlight(() => cells.inFlight);
  log.info("conversion request bounds", { ...bounds, heapLimitSource: heap.source });
  const handler: ConvertHandlerOptions = {
    registry: planSets,
    metrics,
    maxRequestBytes: bounds.maxRequestBytes,
    requestTimeoutMs: flags.requestTimeoutMs,
  };
  const traceSampleRatio = tracing.endpoint === "" ? undefined : tracing.sampleRatio;
  if (traceSampleRatio !== undefined) {
    log.info("tracing on", {
      endpoint: tracing.endpoint,
      sampleRatio: traceSampleRatio,
      insecure: tracing.insecure,
    });
  }
  const context = convertContext(handler);
  // A Worker that hung keeps running whatever terminate() says (Deno 2.9): only a restart of the
  // replica takes its CPU (and a listener's share of the port) back. The others drain first.
  const restartFor = (message: string) => role.shutdown(`${message}; restarting the replica`, 1);
  const conversionWorkers = flags.conversionWorkers > 0 ? flags.conversionWorkers : perKind;
  const conversions = new ConversionPool({
    size: conversionWorkers,
    planSets,
    fanout,
    context,
    metrics,
    onWorkerLost: (reason) => {
      metrics.countWorkerLost(reason);
      if (reason === "watchdog") restartFor("a conversion pool Worker hung");
    },
    logger: createLogger("webhook-server.conversion-pool"),
  });
  running.conversions = conversions;
  metrics.observePool(() => conversions.stats());
  const listeners = await role.listen(
    "cannot start the conversion listener",
    flags.conversionBindAddress,
    () =>
      ConversionListeners.start({
        count: listenerCount,
        address: flags.conversionBindAddress,
        certDir: flags.tlsCertDir,
        reloadIntervalMs: flags.certReloadIntervalMs,
        // Readiness holds a usable pair; a failed reload is counted.
        onTlsState: (state, result) => {
          metrics.observeTls(state, result);
          role.readiness.gate("tls", state.problem);
          const serial = state.serial === "" ? "" : normalizeSerial(state.serial);
          if (serial !== servingSerial) {
            servingSerial = serial;
            publisher?.notify();
          }
        },
        onProblem: (problem) => role.readiness.gate("listeners", problem),
        onHung: restartFor,
        cells,
        fanout,
        context,
        bounds,
        inlineMaxBytes,
        pool: conversions,
        metrics,
        traceSampleRatio,
        onWorkerLost: (reason) => metrics.countListenerLost(reason),
        logger: createLogger("webhook-server.listeners"),
      }),
  );
  running.listeners = listeners;
  metrics.observeListeners(() => listeners.stats());

  // Publish the Lease once (a failure is logged; the heartbeat retries), then the loop.
  if (publisher !== undefined) {
    role.onStop("served-target Lease", () => publisher.stop());
    await publisher.publishOrLog();
    publisher.start();
  }

  caches.connect(routeByKind);
  for (const c of controllers.values()) c.start();
  metrics.setInitialSync(elapsedMs / 1000, targets);
  role.readiness.set(true);
  log.info("registry synced, marking replica ready", {
    server: flags.webhookServerName,
    targets,
    workers: poolSize,
    conversionListeners: listenerCount,
    conversionWorkers,
    conversionInlineMaxBytes: inlineMaxBytes,
    elapsedMs: Math.round(elapsedMs),
    attempts: attempt,
  });

  // Run until a signal, then /readyz 503 first and shut down with one deadline.
  return await role.run();
}

if (import.meta.main) {
  await main(Deno.args);
}
