/**
 * zod schema for `ConversionWebhookServer` (`terasky.com/v1alpha1`): a deployable instance of the
 * conversion runtime (a Deployment, its Service, certificate and PodDisruptionBudget, which the
 * manager renders from this spec).
 *
 * Like the config kinds, this is the source of the CRD's OpenAPI schema (see crds.ts), so it only
 * uses shapes that map onto a structural schema: no unions of objects, no recursion; Kubernetes
 * types that dco copies through verbatim (affinity, volumes, env sources, ...) are free-form
 * (`x-kubernetes-preserve-unknown-fields`) and validated when the Deployment is applied.
 *
 * Unlike the config kinds, the spec decodes leniently (unknown keys are dropped, not errors): the
 * operator reads servers from the cluster, where an older or newer CRD may carry other fields.
 * Schema defaults (`.default()`) are the ones the apiserver applies; decoding applies them too.
 */
import { z } from "zod";
import { kindShape } from "./config.ts";
import { conditionList, objectMeta, stringMap } from "./meta.ts";

export const WEBHOOK_SERVER_KIND = "ConversionWebhookServer";

/** Default pod service account; the chart sets its own. */
export const DEFAULT_WEBHOOK_SERVICE_ACCOUNT = "declarative-conversion-webhook-server";

/** Condition types written on a ConversionWebhookServer (Ready, Reconciling: the summary). */
export const WEBHOOK_SERVER_CONDITION_TYPES = [
  "Ready",
  "Reconciling",
  "Available",
  "ServiceReady",
  "CertificateReady",
  "DefaultConflict",
  "DeletionBlocked",
] as const;

/**
 * `extraArgs` must not name these: the manager sets them itself (admission rejects them, and the
 * reconcile would override them).
 */
export const MANAGED_WEBHOOK_SERVER_FLAGS = [
  "webhook-server-name",
  "tls-cert-dir",
  "conversion-bind-address",
  "metrics-bind-address",
  "enable-xrd-support",
  "enable-crd-support",
  "cache-label-selector",
  "metrics-secure",
] as const;

// ---------------------------------------------------------------------------------------------
// Kubernetes value types

/** A Kubernetes object copied through verbatim (`x-kubernetes-preserve-unknown-fields`). */
const k8sObject = z.looseObject({});

/** `IntOrString` (`x-kubernetes-int-or-string` in the CRD). */
export const IntOrStringSchema = z.union([z.int(), z.string()]);
export type IntOrString = z.infer<typeof IntOrStringSchema>;

/** A string field with its description. */
const str = (description: string) => z.string().describe(description);
const optStr = (description: string) => str(description).optional();

function labelSelector(description: string) {
  return z.object({
    matchLabels: stringMap.optional().describe("Labels an object must carry (key → value)."),
    matchExpressions: z.array(z.object({
      key: str("The label key."),
      operator: str("In, NotIn, Exists or DoesNotExist."),
      values: z.array(z.string()).optional().describe(
        "Values for In and NotIn; empty for Exists and DoesNotExist.",
      ),
    })).optional().describe("Label requirements, all of which must hold."),
  }).describe(description);
}

const resourceRequirements = z.object({
  limits: z.record(z.string(), IntOrStringSchema).optional().describe(
    "Maximum compute resources (resource name → quantity).",
  ),
  requests: z.record(z.string(), IntOrStringSchema).optional().describe(
    "Compute resources the scheduler reserves (resource name → quantity).",
  ),
  claims: z.array(z.object({
    name: str("Name of a resource claim of the Pod."),
    request: optStr("The request of the claim to use."),
  })).optional().describe("Dynamic resource claims the container uses."),
});

const toleration = z.object({
  key: optStr("The taint key to tolerate; empty with operator Exists tolerates every taint."),
  operator: optStr("Exists or Equal (the default)."),
  value: optStr("The taint value, with operator Equal."),
  effect: optStr("The taint effect to tolerate (NoSchedule, PreferNoSchedule, NoExecute)."),
  tolerationSeconds: z.int().optional().describe(
    "How long a NoExecute taint is tolerated before eviction.",
  ),
});

const topologySpreadConstraint = z.object({
  maxSkew: z.int32().describe("Largest allowed difference of matching Pods between domains."),
  topologyKey: str("Node label whose values are the domains, e.g. topology.kubernetes.io/zone."),
  whenUnsatisfiable: str("DoNotSchedule or ScheduleAnyway."),
  labelSelector: labelSelector("Selects the Pods counted in each domain.").optional(),
  minDomains: z.int32().optional().describe("Minimum number of eligible domains."),
  nodeAffinityPolicy: optStr("Honor or Ignore the Pod's node affinity when counting."),
  nodeTaintsPolicy: optStr("Honor or Ignore node taints when counting."),
  matchLabelKeys: z.array(z.string()).optional().describe(
    "Pod label keys whose values narrow the Pods counted.",
  ),
});

/** `valueFrom` stays free-form. */
const envVar = z.object({
  name: str("Name of the environment variable."),
  value: optStr("Its value."),
  valueFrom: k8sObject.optional().describe(
    "A source for the value (secretKeyRef, configMapKeyRef, fieldRef, ...), as in a Pod.",
  ),
});

/** The volume source (`secret`, `configMap`, ...) stays free-form next to the name. */
const volume = z.looseObject({
  name: str("Name of the volume; the source (secret, configMap, ...) is given as in a Pod."),
});

const volumeMount = z.object({
  name: str("Name of the volume to mount."),
  mountPath: str("Where in the container the volume is mounted."),
  readOnly: z.boolean().optional().describe("Mounts the volume read-only."),
  subPath: optStr("Path inside the volume to mount instead of its root."),
  subPathExpr: optStr("Like subPath, with $(VAR) references to the container's environment."),
  mountPropagation: optStr("None, HostToContainer or Bidirectional."),
  recursiveReadOnly: optStr("Disabled, IfPossible or Enabled."),
});

// ---------------------------------------------------------------------------------------------
// spec

const autoscaling = z.object({
  minReplicas: z.int32().min(1).describe("Fewest replicas."),
  maxReplicas: z.int32().min(1).describe("Most replicas."),
  targetCPUUtilizationPercentage: z.int32().default(75).describe(
    "Average CPU use, in percent of the request, the autoscaler aims for.",
  ),
});

const image = z.object({
  repository: optStr("Image repository; without it the manager's default image is used."),
  tag: optStr("Image tag."),
  digest: optStr("Image digest (sha256:...); takes precedence over the tag."),
  pullPolicy: z.enum(["Always", "IfNotPresent", "Never"]).optional().describe(
    "Always, IfNotPresent or Never.",
  ),
});

/**
 * The serving certificate. Optional: only the manager's cert-manager mode needs `issuerRef`
 * (without it the server reports CertificateReady=False); the built-in mode reads only
 * `dnsNames`, the existing-secret mode nothing.
 */
const certificate = z.object({
  issuerRef: z.object({
    name: str("Name of the issuer."),
    kind: z.enum(["Issuer", "ClusterIssuer"]).default("ClusterIssuer").describe(
      "Issuer (in the server's namespace) or ClusterIssuer.",
    ),
  }).optional().describe("The cert-manager issuer that signs the certificate (cert-manager mode)."),
  dnsNames: z.array(z.string()).optional().describe(
    "DNS names of the certificate; unset or empty: the Service's DNS names.",
  ),
  /** Go durations (`"2160h"`); cert-manager defaults when unset. */
  duration: optStr("Requested lifetime as a Go duration (2160h); cert-manager's default if unset."),
  renewBefore: optStr(
    "Renew this long before expiry (Go duration); cert-manager's default if unset.",
  ),
});

const service = z.object({
  type: z.enum(["ClusterIP", "NodePort", "LoadBalancer"]).default("ClusterIP").describe(
    "ClusterIP, NodePort or LoadBalancer.",
  ),
  port: z.int32().min(1).max(65535).default(443).describe(
    "The Service port the apiserver calls.",
  ),
  annotations: stringMap.optional().describe("Annotations on the Service."),
});

const podDisruptionBudget = z.object({
  minAvailable: IntOrStringSchema.optional().describe(
    "Pods that must stay available (a number or a percentage).",
  ),
  maxUnavailable: IntOrStringSchema.optional().describe(
    "Pods that may be unavailable (a number or a percentage).",
  ),
});

/** Absent ≡ every field at its default. */
const startupProbe = z.object({
  enabled: z.boolean().default(true).describe("Whether the Pods get the startup probe."),
  periodSeconds: z.int32().min(1).default(5).describe("Seconds between probes."),
  failureThreshold: z.int32().min(1).default(60).describe(
    "Failed probes before the container is restarted.",
  ),
});

/**
 * Writing the block is the opt-in to the shard pool: `sharding: {}` is a member (the
 * default of `enabled` lives inside the block, and structural defaulting only descends into
 * objects that are present, so an absent block stays absent).
 */
export const ShardingSchema = z.object({
  enabled: z.boolean().default(true).describe("Whether this server is in the shard pool."),
  weight: z.int32().min(1).default(1).describe(
    "Relative share of the pool's configs this server takes.",
  ),
});
export type Sharding = z.infer<typeof ShardingSchema>;

/**
 * How a replica leaves service. Admission checks the timing inequality: the grace period must
 * cover the preStop sleep plus the webhook server's shutdown timeout.
 */
const rollout = z.object({
  preStopSleepSeconds: z.int32().min(0).max(300).default(5).describe(
    "Seconds a stopping Pod keeps serving, so endpoints drop it first.",
  ),
  terminationGracePeriodSeconds: z.int().min(1).default(45).describe(
    "The Pods' grace period; must cover the preStop sleep plus the server's shutdown timeout.",
  ),
  maxUnavailable: IntOrStringSchema.default(0).describe(
    "Pods that may be unavailable during a rolling update (number or percentage).",
  ),
  maxSurge: IntOrStringSchema.default(1).describe(
    "Pods created above the desired count during a rolling update (number or percentage).",
  ),
  defaultTopologySpread: z.boolean().default(true).describe(
    "Spreads the Pods over zones and nodes unless topologySpreadConstraints is set.",
  ),
});

/**
 * The Pods' metrics listener. `secure` has no schema default: absent ⇒ the manager's
 * `--webhook-server-metrics-secure` decides, so one manager flag covers every server that does not
 * say otherwise.
 */
const metrics = z.object({
  secure: z.boolean().optional().describe(
    "Serves /metrics over TLS, only to a bearer token allowed to get /metrics (TokenReview, " +
      "SubjectAccessReview); unset: the manager's --webhook-server-metrics-secure.",
  ),
});

export const ConversionWebhookServerSpecSchema = z.object({
  default: z.boolean().default(false).describe(
    "Serves the configs nothing else assigns; at most one server may be the default.",
  ),
  /** Defaults to the operator's namespace (not a schema default). */
  namespace: optStr(
    "Namespace of the Deployment, Service and Secret; defaults to the operator's namespace.",
  ),
  /** Ignored while `autoscaling` is set. */
  replicas: z.int32().min(0).default(2).describe(
    "Number of webhook-server Pods; ignored while autoscaling is set.",
  ),
  autoscaling: autoscaling.optional().describe(
    "Scales the Pods with a HorizontalPodAutoscaler instead of a fixed replica count.",
  ),
  image: image.optional().describe(
    "The webhook-server image: repository with a digest or tag; otherwise the manager's default " +
      "image.",
  ),
  resources: resourceRequirements.optional().describe("The container's compute resources."),
  nodeSelector: stringMap.optional().describe("Node labels the Pods must be scheduled on."),
  tolerations: z.array(toleration).optional().describe("Taints the Pods tolerate."),
  affinity: k8sObject.optional().describe("Pod affinity rules, as in a Pod spec."),
  priorityClassName: optStr("PriorityClass of the Pods."),
  topologySpreadConstraints: z.array(topologySpreadConstraint).optional().describe(
    "How the Pods spread over the cluster; replaces the default zone and node spread.",
  ),
  serviceAccountName: z.string().default(DEFAULT_WEBHOOK_SERVICE_ACCOUNT).describe(
    "ServiceAccount of the Pods (the chart creates the default one).",
  ),
  extraArgs: z.array(z.string()).optional().describe(
    "Extra webhook-server flags; flags the manager sets itself are rejected.",
  ),
  extraEnv: z.array(envVar).optional().describe("Extra environment variables of the container."),
  extraVolumes: z.array(volume).optional().describe("Extra volumes of the Pods."),
  extraVolumeMounts: z.array(volumeMount).optional().describe(
    "Extra volume mounts of the container.",
  ),
  podLabels: stringMap.optional().describe(
    "Extra labels on the Pods (the selector's own labels cannot be changed).",
  ),
  podAnnotations: stringMap.optional().describe("Extra annotations on the Pods."),
  cacheSelector: labelSelector(
    "The server caches and serves only targets whose labels match.",
  ).optional(),
  certificate: certificate.optional().describe(
    "The serving certificate (which fields matter depends on the manager's certificate mode).",
  ),
  service: service.optional().describe("The Service the apiserver calls."),
  podDisruptionBudget: podDisruptionBudget.optional().describe(
    "The PodDisruptionBudget of the Pods; set one of the two fields.",
  ),
  startupProbe: startupProbe.optional().describe("The Pods' startup probe on /readyz."),
  sharding: ShardingSchema.optional().describe(
    "Membership in the shard pool that serves unpinned configs; writing the block (even {}) " +
      "joins it.",
  ),
  rollout: rollout.optional().describe("How Pods are replaced and stopped without downtime."),
  metrics: metrics.optional().describe("The Pods' metrics listener (port metrics, 8443)."),
}).describe("The desired webhook-server Deployment and its Service, certificate and budget.");

// ---------------------------------------------------------------------------------------------
// status

const assignedConfig = z.object({
  name: str("Name of the config."),
  /** The target name for both config kinds (historical field name). */
  xrdName: optStr("Name of the config's target (an XRD or a CRD, despite the field name)."),
  phase: optStr("The config's phase."),
});

export const ConversionWebhookServerStatusSchema = z.object({
  observedGeneration: z.int().optional().describe(
    "The metadata.generation the status describes.",
  ),
  conditions: conditionList.optional(),
  replicas: z.int32().optional().describe("Pods of the Deployment."),
  readyReplicas: z.int32().optional().describe("Ready Pods of the Deployment."),
  endpoint: optStr(
    "Base URL of the conversion endpoint, https://<service>.<namespace>.svc:<port>.",
  ),
  assignedConfigs: z.array(assignedConfig).optional().describe(
    "The configs assigned to this server.",
  ),
  /** Sorted intersection of the live replica reports (docs/design/kube.md#served-target-lease-report-format). */
  servedTargets: z.array(z.string()).meta({ "x-kubernetes-list-type": "atomic" }).optional()
    .describe("Targets every reporting replica serves (sorted)."),
  /** Live replica Leases, including undecodable ones. */
  reportingReplicas: z.int32().optional().describe(
    "Replicas with a live served-target report (Lease).",
  ),
}).describe("The observed state, written by the operator.");

export const ConversionWebhookServerSchema = z.object(
  kindShape(
    WEBHOOK_SERVER_KIND,
    objectMeta,
    ConversionWebhookServerSpecSchema,
    ConversionWebhookServerStatusSchema,
  ),
);

export type ConversionWebhookServerSpec = z.infer<typeof ConversionWebhookServerSpecSchema>;
export type ConversionWebhookServerStatus = z.infer<typeof ConversionWebhookServerStatusSchema>;
export type ConversionWebhookServer = z.infer<typeof ConversionWebhookServerSchema>;

/** Shard-pool membership: the block is present and `enabled` is not false. */
export function isShardMember(spec: { sharding?: { enabled?: boolean } | null }): boolean {
  return spec.sharding != null && spec.sharding.enabled !== false;
}

/** A stored weight ≤ 0 (only reachable by bypassing admission) counts as 1. */
export function shardWeight(spec: { sharding?: { weight?: number } | null }): number {
  const w = spec.sharding?.weight;
  return w === undefined || !Number.isFinite(w) || w <= 0 ? 1 : w;
}
