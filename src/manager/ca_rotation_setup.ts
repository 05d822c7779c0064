/**
 * The `ca-rotation` controller: one key (the CA Secret's name), reconciled by the leader only
 * (it is one of the term's controllers), each run one {@link CARotator.step} that requeues itself.
 * It wakes the writers of the serving Secrets and caBundles while a step waits on them: every
 * ConversionWebhookServer (its reconcile re-issues or re-bundles the serving Secret), every config
 * (its reconcile re-applies the target's caBundle) and the leader's admission certificate keeper.
 * Each step that changes the CA Secret is logged, counted and recorded as an Event on the Secret.
 */
import { Controller, isAlreadyExists, type KubeClient, type WorkQueue } from "../kube/mod.ts";
import type { EventRecorder } from "../kube/events.ts";
import {
  MUTATING_WEBHOOK_CONFIGURATIONS,
  VALIDATING_WEBHOOK_CONFIGURATIONS,
} from "../kube/resources.ts";
import { createLogger } from "../obs/log.ts";
import type { Registry } from "prom-client";
import { ADMISSION_CERT_RELOAD_MS } from "./admission_certs.ts";
import { BuiltinIssuer, CA_SECRET_NAME } from "./builtin_certs.ts";
import { CARotationMetrics } from "./ca_rotation_metrics.ts";
import { type KeptWebhookConfiguration, rotationCluster } from "./ca_rotation_cluster.ts";
import { CARotator, type RotationStep } from "./ca_rotation.ts";
import type { ManagerCaches } from "./caches.ts";
import { clientSecretStore } from "./secret_store.ts";

/** The controller's name (the `controller` label of the framework's metrics). */
export const CA_ROTATION_CONTROLLER = "ca-rotation";

export interface CARotationSetupOptions {
  /** The leader term's client. */
  client: KubeClient;
  caches: ManagerCaches;
  operatorNamespace: string;
  registry: Registry;
  /** `--certificate-mode` resolved to builtin: the servers' certificates are the manager's. */
  builtinServers: boolean;
  /** The self-issued admission certificate's names, when the manager issues it. */
  admission?: {
    secretName: string;
    validatingWebhookConfiguration: string;
    mutatingWebhookConfiguration: string;
    /** Runs the (leader-local) admission certificate keeper once; set once it exists. */
    run: () => unknown;
  };
  /** The server controller's queue and the config controllers' queues with their caches. */
  serverQueue: Pick<WorkQueue, "add">;
  configQueues: ReadonlyArray<{ queue: Pick<WorkQueue, "add">; keys: () => string[] }>;
  caValidityMs: number;
  checkIntervalMs: number;
  propagationDelayMs: number;
  /** Where the rotation's steps are recorded as Events on the CA Secret (none when absent). */
  events?: Pick<EventRecorder, "record">;
  now?: () => number;
}

const EVENT_REASON: Record<RotationStep, string> = {
  started: "CARotationStarted",
  promoted: "CARotationPromoted",
  retired: "CARotationRetired",
  completed: "CARotationCompleted",
};

/** The rotation controller (its key queued; it runs once the term starts it). */
export function setupCARotation(o: CARotationSetupOptions): Controller {
  const log = createLogger("manager.ca-rotation");
  const now = o.now ?? Date.now;
  const store = clientSecretStore(o.client);
  const issuer = new BuiltinIssuer({
    store,
    namespace: o.operatorNamespace,
    now,
    isAlreadyExists,
    caValidityMs: o.caValidityMs,
  });
  const kept: KeptWebhookConfiguration[] = [];
  if (o.admission?.validatingWebhookConfiguration) {
    kept.push({
      kind: "ValidatingWebhookConfiguration",
      name: o.admission.validatingWebhookConfiguration,
      resource: VALIDATING_WEBHOOK_CONFIGURATIONS,
    });
  }
  if (o.admission?.mutatingWebhookConfiguration) {
    kept.push({
      kind: "MutatingWebhookConfiguration",
      name: o.admission.mutatingWebhookConfiguration,
      resource: MUTATING_WEBHOOK_CONFIGURATIONS,
    });
  }
  const nudge = () => {
    if (o.builtinServers) {
      for (const s of o.caches.servers.list()) o.serverQueue.add(s.metadata?.name ?? "");
      for (const c of o.configQueues) for (const k of c.keys()) c.queue.add(k);
    }
    void Promise.resolve(o.admission?.run()).catch(() => {});
  };
  const metrics = new CARotationMetrics(o.registry);
  const caSecret = {
    apiVersion: "v1",
    kind: "Secret",
    name: CA_SECRET_NAME,
    namespace: o.operatorNamespace,
  };
  const recordEvent = (step: RotationStep, message: string) =>
    o.events?.record({
      regarding: caSecret,
      type: "Normal",
      reason: EVENT_REASON[step],
      action: "RotateCA",
      note: message,
    });
  const rotator = new CARotator({
    issuer,
    store,
    cluster: rotationCluster({
      client: o.client,
      caches: o.caches,
      operatorNamespace: o.operatorNamespace,
      builtinServers: o.builtinServers,
      ...(o.admission === undefined
        ? {}
        : { admission: { secretName: o.admission.secretName, webhookConfigurations: kept } }),
      nudge,
      now,
    }),
    caValidityMs: o.caValidityMs,
    checkIntervalMs: o.checkIntervalMs,
    propagationDelayMs: o.propagationDelayMs,
    // The admission listeners re-read their pair every 30 s: the old CA stays trusted past that.
    retireDelayMs: Math.max(
      o.propagationDelayMs,
      o.admission === undefined ? 0 : ADMISSION_CERT_RELOAD_MS + 5_000,
    ),
    now,
    logger: log,
    reporter: {
      phase: (p) => metrics.phase(p),
      pending: (n) => metrics.pending(n),
      ca: (info) => metrics.ca(info),
      step: (step, message) => {
        metrics.step(step);
        recordEvent(step, message);
      },
    },
  });
  const controller = new Controller({
    name: CA_ROTATION_CONTROLLER,
    registry: o.registry,
    logger: log,
    reconcile: async () => ({ requeueAfter: (await rotator.step()).requeueAfter }),
  });
  controller.queue.add(CA_SECRET_NAME);
  return controller;
}
