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
import { conditionList, objectMeta, optionalStrings, stringMap } from "./meta.ts";

export const WEBHOOK_SERVER_KIND = "ConversionWebhookServer";

/** Default pod service account; the chart sets its own. */
export const DEFAULT_WEBHOOK_SERVICE_ACCOUNT = "declarative-conversion-webhook-server";

/** Condition types written on a ConversionWebhookServer. */
export const WEBHOOK_SERVER_CONDITION_TYPES = [
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
] as const;

// ---------------------------------------------------------------------------------------------
// Kubernetes value types

/** A Kubernetes object copied through verbatim (`x-kubernetes-preserve-unknown-fields`). */
const k8sObject = z.looseObject({});

/** `IntOrString` (`x-kubernetes-int-or-string` in the CRD). */
export const IntOrStringSchema = z.union([z.int(), z.string()]);
export type IntOrString = z.infer<typeof IntOrStringSchema>;

const labelSelector = z.object({
  matchLabels: stringMap.optional(),
  matchExpressions: z.array(z.object({
    key: z.string(),
    operator: z.string(),
    values: z.array(z.string()).optional(),
  })).optional(),
});

const resourceRequirements = z.object({
  limits: z.record(z.string(), IntOrStringSchema).optional(),
  requests: z.record(z.string(), IntOrStringSchema).optional(),
  claims: z.array(z.object({ name: z.string(), request: z.string().optional() })).optional(),
});

const toleration = z.object({
  ...optionalStrings("key", "operator", "value", "effect"),
  tolerationSeconds: z.int().optional(),
});

const topologySpreadConstraint = z.object({
  maxSkew: z.int32(),
  topologyKey: z.string(),
  whenUnsatisfiable: z.string(),
  labelSelector: labelSelector.optional(),
  minDomains: z.int32().optional(),
  nodeAffinityPolicy: z.string().optional(),
  nodeTaintsPolicy: z.string().optional(),
  matchLabelKeys: z.array(z.string()).optional(),
});

/** `valueFrom` stays free-form. */
const envVar = z.object({
  name: z.string(),
  value: z.string().optional(),
  valueFrom: k8sObject.optional(),
});

/** The volume source (`secret`, `configMap`, ...) stays free-form next to the name. */
const volume = z.looseObject({ name: z.string() });

const volumeMount = z.object({
  name: z.string(),
  mountPath: z.string(),
  readOnly: z.boolean().optional(),
  ...optionalStrings("subPath", "subPathExpr", "mountPropagation", "recursiveReadOnly"),
});

// ---------------------------------------------------------------------------------------------
// spec

const autoscaling = z.object({
  minReplicas: z.int32().min(1),
  maxReplicas: z.int32().min(1),
  targetCPUUtilizationPercentage: z.int32().default(75),
});

const image = z.object({
  repository: z.string().optional(),
  tag: z.string().optional(),
  digest: z.string().optional(),
  pullPolicy: z.enum(["Always", "IfNotPresent", "Never"]).optional(),
});

/**
 * The serving certificate. Optional: only the manager's cert-manager mode needs `issuerRef`
 * (without it the server reports CertificateReady=False); the built-in mode reads only
 * `dnsNames`, the existing-secret mode nothing.
 */
const certificate = z.object({
  issuerRef: z.object({
    name: z.string(),
    kind: z.enum(["Issuer", "ClusterIssuer"]).default("ClusterIssuer"),
  }).optional(),
  dnsNames: z.array(z.string()).optional(),
  /** Go durations (`"2160h"`); cert-manager defaults when unset. */
  duration: z.string().optional(),
  renewBefore: z.string().optional(),
});

const service = z.object({
  type: z.enum(["ClusterIP", "NodePort", "LoadBalancer"]).default("ClusterIP"),
  port: z.int32().min(1).max(65535).default(443),
  annotations: stringMap.optional(),
});

const podDisruptionBudget = z.object({
  minAvailable: IntOrStringSchema.optional(),
  maxUnavailable: IntOrStringSchema.optional(),
});

/** Absent ≡ every field at its default. */
const startupProbe = z.object({
  enabled: z.boolean().default(true),
  periodSeconds: z.int32().min(1).default(5),
  failureThreshold: z.int32().min(1).default(60),
});

/**
 * Writing the block is the opt-in to the shard pool: `sharding: {}` is a member (the
 * default of `enabled` lives inside the block, and structural defaulting only descends into
 * objects that are present, so an absent block stays absent).
 */
export const ShardingSchema = z.object({
  enabled: z.boolean().default(true),
  weight: z.int32().min(1).default(1),
});
export type Sharding = z.infer<typeof ShardingSchema>;

/**
 * How a replica leaves service. Admission checks the timing inequality: the grace period must
 * cover the preStop sleep plus the webhook server's shutdown timeout.
 */
const rollout = z.object({
  preStopSleepSeconds: z.int32().min(0).max(300).default(5),
  terminationGracePeriodSeconds: z.int().min(1).default(45),
  maxUnavailable: IntOrStringSchema.default(0),
  maxSurge: IntOrStringSchema.default(1),
  defaultTopologySpread: z.boolean().default(true),
});

export const ConversionWebhookServerSpecSchema = z.object({
  default: z.boolean().default(false),
  /** Defaults to the operator's namespace (not a schema default). */
  namespace: z.string().optional(),
  /** Ignored while `autoscaling` is set. */
  replicas: z.int32().min(0).default(2),
  autoscaling: autoscaling.optional(),
  image: image.optional(),
  resources: resourceRequirements.optional(),
  nodeSelector: stringMap.optional(),
  tolerations: z.array(toleration).optional(),
  affinity: k8sObject.optional(),
  priorityClassName: z.string().optional(),
  topologySpreadConstraints: z.array(topologySpreadConstraint).optional(),
  serviceAccountName: z.string().default(DEFAULT_WEBHOOK_SERVICE_ACCOUNT),
  extraArgs: z.array(z.string()).optional(),
  extraEnv: z.array(envVar).optional(),
  extraVolumes: z.array(volume).optional(),
  extraVolumeMounts: z.array(volumeMount).optional(),
  podLabels: stringMap.optional(),
  podAnnotations: stringMap.optional(),
  cacheSelector: labelSelector.optional(),
  certificate: certificate.optional(),
  service: service.optional(),
  podDisruptionBudget: podDisruptionBudget.optional(),
  startupProbe: startupProbe.optional(),
  sharding: ShardingSchema.optional(),
  rollout: rollout.optional(),
});

// ---------------------------------------------------------------------------------------------
// status

const assignedConfig = z.object({
  name: z.string(),
  /** The target name for both config kinds (historical field name). */
  xrdName: z.string().optional(),
  phase: z.string().optional(),
});

export const ConversionWebhookServerStatusSchema = z.object({
  observedGeneration: z.int().optional(),
  conditions: conditionList.optional(),
  replicas: z.int32().optional(),
  readyReplicas: z.int32().optional(),
  endpoint: z.string().optional(),
  assignedConfigs: z.array(assignedConfig).optional(),
  /** Sorted intersection of the live replica reports (docs/design/kube.md#served-target-lease-report-format). */
  servedTargets: z.array(z.string()).meta({ "x-kubernetes-list-type": "atomic" }).optional(),
  /** Live replica Leases, including undecodable ones. */
  reportingReplicas: z.int32().optional(),
});

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
