/**
 * The webhook-server Deployment: one restricted container, probes on the metrics port, the TLS
 * Secret mounted read-only (docs/design/server-children.md#the-deployment).
 */
import { type ConversionWebhookServer, DEFAULT_WEBHOOK_SERVICE_ACCOUNT } from "../../api/mod.ts";
import { containerArgs, resolveImage } from "./container_args.ts";
import { containerEnv } from "./container_env.ts";
import {
  childName,
  CONTAINER_NAME,
  CONVERSION_PORT,
  METRICS_PORT,
  podLabels,
  RESERVED_POD_LABEL_KEYS,
  TLS_MOUNT_PATH,
  tlsSecretName,
} from "./names.ts";
import {
  childMeta,
  identityOf,
  metricsSecureOf,
  ROLLOUT_DEFAULTS,
  type ServerChildSettings,
  STARTUP_DEFAULTS,
} from "./settings.ts";
import type { Container, Deployment, HttpProbe, PodSpec } from "./types.ts";

/**
 * Probe timeouts, set deliberately (docs/design/server-children.md#probe-timeouts). Conversions
 * run in Workers, so the event loop that answers the probes is held only by what stays on it: an
 * inline conversion of a small bounded-cost review (well under 1 ms), a `/metrics` scrape, a GC
 * pause, an informer re-list of a large CRD list (up to about a second). Readiness (and startup,
 * the same endpoint) waits 2 s: such a stall does not pull a serving replica out of the
 * endpoints, while one that cannot answer leaves them after 3 × 5 s. Liveness waits 5 s: a restart
 * is the most expensive mistake (a cold start lists and compiles everything again) and a process
 * that died fails at once with a refused connection; only a hung one needs the timeout.
 */
export const READINESS_TIMEOUT_SECONDS = 2;
export const LIVENESS_TIMEOUT_SECONDS = 5;

/** The webhook-server Deployment; throws `ServerSpecError` for an unrenderable spec. */
export function buildDeployment(
  cws: ConversionWebhookServer,
  settings: ServerChildSettings,
): Deployment {
  const { name } = identityOf(cws);
  const spec = cws.spec;
  const labels = podLabels(name);
  const rollout = spec.rollout ?? ROLLOUT_DEFAULTS;
  const startup = spec.startupProbe ?? STARTUP_DEFAULTS;
  // The probes share the metrics port; with --metrics-secure it speaks TLS (the kubelet does not
  // verify the certificate, and /healthz and /readyz need no token).
  const probe = probeOn(metricsSecureOf(cws, settings) ? "HTTPS" : "HTTP");

  const container: Container = {
    name: CONTAINER_NAME,
    image: resolveImage(spec, settings.defaultImage),
    args: containerArgs(cws, settings),
    ports: [
      { name: "conversion", containerPort: CONVERSION_PORT, protocol: "TCP" },
      { name: "metrics", containerPort: METRICS_PORT, protocol: "TCP" },
    ],
    env: containerEnv(spec),
    volumeMounts: [
      { name: "tls", mountPath: TLS_MOUNT_PATH, readOnly: true },
      { name: "tmp", mountPath: "/tmp" },
      ...(spec.extraVolumeMounts ?? []).map((m) => ({ ...m })),
    ],
    readinessProbe: probe("/readyz", 5, 3, READINESS_TIMEOUT_SECONDS),
    livenessProbe: probe("/healthz", 10, 3, LIVENESS_TIMEOUT_SECONDS),
    securityContext: {
      runAsNonRoot: true,
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ["ALL"] },
      seccompProfile: { type: "RuntimeDefault" },
    },
  };
  if (spec.image?.pullPolicy) container.imagePullPolicy = spec.image.pullPolicy;
  if (spec.resources) container.resources = structuredClone(spec.resources);
  // /readyz, not /healthz: health answers within milliseconds of start and would bound nothing.
  if (startup.enabled) {
    container.startupProbe = probe(
      "/readyz",
      startup.periodSeconds,
      startup.failureThreshold,
      READINESS_TIMEOUT_SECONDS,
    );
  }
  // The Sleep action, not an exec: the image has no shell.
  if (rollout.preStopSleepSeconds > 0) {
    container.lifecycle = { preStop: { sleep: { seconds: rollout.preStopSleepSeconds } } };
  }

  const pod: PodSpec = {
    serviceAccountName: spec.serviceAccountName || DEFAULT_WEBHOOK_SERVICE_ACCOUNT,
    terminationGracePeriodSeconds: rollout.terminationGracePeriodSeconds,
    // runAsUser/runAsGroup deliberately unset: the image's non-root USER applies.
    securityContext: { runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } },
    containers: [container],
    volumes: [
      { name: "tls", secret: { secretName: tlsSecretName(name) } },
      { name: "tmp", emptyDir: {} },
      ...(spec.extraVolumes ?? []).map((v) => structuredClone(v)),
    ],
  };
  if (spec.nodeSelector && Object.keys(spec.nodeSelector).length > 0) {
    pod.nodeSelector = { ...spec.nodeSelector };
  }
  if (spec.tolerations && spec.tolerations.length > 0) {
    pod.tolerations = structuredClone(spec.tolerations);
  }
  if (spec.affinity) pod.affinity = structuredClone(spec.affinity);
  if (spec.priorityClassName) pod.priorityClassName = spec.priorityClassName;
  if (spec.topologySpreadConstraints && spec.topologySpreadConstraints.length > 0) {
    pod.topologySpreadConstraints = structuredClone(spec.topologySpreadConstraints);
  } else if (rollout.defaultTopologySpread) {
    pod.topologySpreadConstraints = [{
      maxSkew: 1,
      topologyKey: "kubernetes.io/hostname",
      whenUnsatisfiable: "ScheduleAnyway",
      labelSelector: { matchLabels: podLabels(name) },
    }];
  }

  const templateLabels: Record<string, string> = {};
  for (const [k, v] of Object.entries(spec.podLabels ?? {})) {
    if (!RESERVED_POD_LABEL_KEYS.includes(k)) templateLabels[k] = v;
  }
  const template: Deployment["spec"]["template"] = {
    metadata: { labels: { ...labels, ...templateLabels } },
    spec: pod,
  };
  if (spec.podAnnotations && Object.keys(spec.podAnnotations).length > 0) {
    template.metadata.annotations = { ...spec.podAnnotations };
  }

  const deploymentSpec: Deployment["spec"] = {
    selector: { matchLabels: labels },
    strategy: {
      type: "RollingUpdate",
      rollingUpdate: { maxUnavailable: rollout.maxUnavailable, maxSurge: rollout.maxSurge },
    },
    template,
  };
  // With autoscaling the HPA owns the count: an applied `replicas` would fight it.
  if (!spec.autoscaling) deploymentSpec.replicas = spec.replicas;
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: childMeta(cws, settings, childName(name)),
    spec: deploymentSpec,
  };
}

function probeOn(scheme: HttpProbe["httpGet"]["scheme"]) {
  return (
    path: string,
    periodSeconds: number,
    failureThreshold: number,
    timeoutSeconds: number,
  ): HttpProbe => ({
    httpGet: { path, port: METRICS_PORT, scheme },
    periodSeconds,
    timeoutSeconds,
    failureThreshold,
  });
}
