/**
 * dco on the test harness for a scale run: dco's CRDs, the chart's RBAC, the manager as a host
 * process, and the `default` ConversionWebhookServer whose Deployment the test kubelet runs as
 * real webhook-server Pods behind a Service. Also the cold start of the fleet: a rollout restart of
 * that Deployment, waited until every new replica is Ready and the old ones are gone.
 */
import { type ControlPlane, waitFor } from "../../tests/support/control_plane.ts";
import {
  getJSON,
  kubectlOK,
  type ManagerProcess,
  readyWebhookServer,
  rolloutStatus,
  startDcoStack,
  WEBHOOK_SERVER_SA,
  webhookServer,
  webhookServerKubelet,
} from "../../tests/support/dco_stack.ts";
import type { KubeletOptions } from "../../tests/support/kubelet.ts";

export const SCALE_IMAGE = "dco.test/webhook-server:scale";
export const SERVER_NAME = "default";
export const DEPLOYMENT = `${SERVER_NAME}-webhook-server`;
export const WEBHOOK_SERVER_SELECTOR =
  "app.kubernetes.io/name=declarative-conversion-webhook-server";

/** The kubelet option of the control plane a scale run needs. */
export function scaleKubelet(): KubeletOptions {
  return webhookServerKubelet(SCALE_IMAGE);
}

export interface StackOptions {
  /** webhook-server replicas; default 2. */
  replicas?: number;
  /**
   * The replicas' memory limit (e.g. `256Mi`): the manager then gives each replica a V8 heap
   * limit (`DENO_V8_FLAGS=--max-old-space-size=…`, three quarters of it). Default none.
   */
  memoryLimit?: string;
  /** How long the replicas may take to become ready; default 180 s. */
  readyTimeoutMs?: number;
}

export interface ScaleStack extends AsyncDisposable {
  /** The operator namespace (the Deployment and its Pods live here). */
  namespace: string;
  manager: ManagerProcess;
  replicas: number;
  /** The manager's and the Pods' last log lines, for a failure message. */
  logs(): Promise<string>;
}

/** Installs dco on `cp` (started with {@link scaleKubelet}) and waits for ready replicas. */
export async function startScaleStack(
  cp: ControlPlane,
  opts: StackOptions = {},
): Promise<ScaleStack> {
  const replicas = opts.replicas ?? 2;
  const manager = await startDcoStack(cp, {
    caName: "dco-scale-ca",
    webhookServerImage: SCALE_IMAGE,
    features: { xrd: false, crd: true },
  });
  const { namespace, logs } = manager;
  await cp.apply(webhookServer(SERVER_NAME, {
    default: true,
    replicas,
    serviceAccountName: WEBHOOK_SERVER_SA,
    rollout: { preStopSleepSeconds: 1, terminationGracePeriodSeconds: 35 },
    ...(opts.memoryLimit ? { resources: { limits: { memory: opts.memoryLimit } } } : {}),
  }));
  await waitFor(
    `${replicas} webhook-server replicas ready`,
    () => readyWebhookServer(cp, SERVER_NAME, replicas),
    { timeoutMs: opts.readyTimeoutMs ?? 180_000 },
  ).catch(async (e) => {
    await manager[Symbol.asyncDispose]();
    throw new Error(`${(e as Error).message}\n${await logs()}`);
  });
  return {
    namespace,
    manager,
    replicas,
    logs,
    [Symbol.asyncDispose]: () => manager[Symbol.asyncDispose](),
  };
}

/**
 * The webhook-server Pods that count as the fleet: Ready and not terminating (the observer's
 * replicas), by the product's name label.
 */
export async function readyReplicas(cp: ControlPlane, namespace: string) {
  const pods = (await getJSON(cp, "pods", "-n", namespace, "-l", WEBHOOK_SERVER_SELECTOR)).items;
  return pods.filter((
    p: {
      metadata: { deletionTimestamp?: string };
      status?: { conditions?: { type: string; status: string }[] };
    },
  ) =>
    p.metadata.deletionTimestamp === undefined &&
    (p.status?.conditions ?? []).some((c) => c.type === "Ready" && c.status === "True")
  );
}

/**
 * Rollout-restarts the webhook-server Deployment and waits until it has rolled out (new Pods
 * Ready, old ones gone); resolves to the seconds that took.
 */
export async function rollWebhookServer(
  cp: ControlPlane,
  stack: ScaleStack,
  timeoutMs = 300_000,
): Promise<number> {
  const started = performance.now();
  await kubectlOK(cp, "rollout", "restart", `deployment/${DEPLOYMENT}`, "-n", stack.namespace);
  await waitForRollout(cp, stack, timeoutMs);
  return (performance.now() - started) / 1000;
}

/**
 * Sets the replicas' memory limit on the ConversionWebhookServer (the manager derives the V8 heap
 * limit from it and rolls the Deployment) and waits for that rollout like
 * {@link rollWebhookServer}; resolves to the seconds it took.
 */
export async function setMemoryLimit(
  cp: ControlPlane,
  stack: ScaleStack,
  limit: string,
  timeoutMs = 300_000,
): Promise<number> {
  const started = performance.now();
  await kubectlOK(
    cp,
    "patch",
    "conversionwebhookservers.terasky.com",
    SERVER_NAME,
    "--type=merge",
    "-p",
    JSON.stringify({ spec: { resources: { limits: { memory: limit } } } }),
  );
  await waitFor("the Deployment carries the V8 heap limit", async () => {
    const dep = await getJSON(cp, "deployment", DEPLOYMENT, "-n", stack.namespace);
    const env: { name: string; value?: string }[] = dep.spec.template.spec.containers[0].env ?? [];
    return env.some((e) => e.name === "DENO_V8_FLAGS" && /max-old-space-size/.test(e.value ?? ""));
  }, { timeoutMs: 60_000 });
  await waitForRollout(cp, stack, timeoutMs);
  return (performance.now() - started) / 1000;
}

/** Waits until the Deployment rolled out: new Pods all Ready, the old ones gone. */
async function waitForRollout(cp: ControlPlane, stack: ScaleStack, timeoutMs: number) {
  await rolloutStatus(cp, stack.namespace, DEPLOYMENT, timeoutMs).catch(async (e) => {
    throw new Error(`${(e as Error).message}\n${await stack.logs()}`);
  });
  // `rollout status` is done when the new ReplicaSet is available; the old Pods may still be
  // draining (preStop sleep, then the server's shutdown). The fleet is measured without them.
  await waitFor("the old webhook-server Pods are gone", async () => {
    const pods = (await getJSON(cp, "pods", "-n", stack.namespace, "-l", WEBHOOK_SERVER_SELECTOR))
      .items;
    return pods.length === stack.replicas &&
      (await readyReplicas(cp, stack.namespace)).length === stack.replicas;
  }, { timeoutMs });
}
