/**
 * The objects a `ConversionWebhookServer` owns (runtime.md §6.2, api.md §3 and §5): pure builders
 * for the cert-manager Certificate, the Service, the webhook-server Deployment, the optional HPA
 * and PDB, plus {@link serverReadiness}, which turns the observed children back into the CWS
 * status fields (api.md §3.2/§3.3).
 *
 * Why pure: the reconciler only has to server-side-apply what these return (in the order of
 * {@link ServerChildren}), so every contractual detail of the rendered manifests — flag order,
 * probe timings, the restricted security context, the derived V8 heap limit — is unit-tested
 * here without an apiserver, and the replicas' side (`src/webhook/flags.ts`) can be checked
 * against the exact argument list the operator renders.
 */
import {
  CONFIG_API_VERSION,
  type ConversionWebhookServer,
  ConversionWebhookServerSpecSchema,
  DEFAULT_WEBHOOK_SERVICE_ACCOUNT,
  type IntOrString,
  MANAGED_WEBHOOK_SERVER_FLAGS,
  WEBHOOK_SERVER_KIND,
} from "../api/mod.ts";
import { quantityToMillis } from "../engine/units.ts";
import type { ConditionInput, KubeObject, ObjectMeta } from "../kube/mod.ts";

// ---------------------------------------------------------------------------------------------
// Names, labels, constants

/** Image for servers without `spec.image.repository` (manager flag default, runtime.md §2.1). */
export const DEFAULT_WEBHOOK_SERVER_IMAGE =
  "ghcr.io/terasky-oss/declarative-conversion-webhook-server:latest";

export const LABEL_NAME = "app.kubernetes.io/name";
export const LABEL_INSTANCE = "app.kubernetes.io/instance";
export const LABEL_MANAGED_BY = "app.kubernetes.io/managed-by";
export const WEBHOOK_SERVER_APP_NAME = "declarative-conversion-webhook-server";
export const MANAGED_BY = "declarative-conversion-operator";
/** The selector keys `podLabels` can never override (api.md §3.1). */
export const RESERVED_POD_LABEL_KEYS: readonly string[] = [
  LABEL_NAME,
  LABEL_INSTANCE,
  LABEL_MANAGED_BY,
];

export const CONTAINER_NAME = "webhook-server";
export const CONVERSION_PORT = 9443;
export const METRICS_PORT = 8443;
export const TLS_MOUNT_PATH = "/tls";

/**
 * Share of the container memory limit given to V8's old generation ([Deno], runtime.md §6.4).
 * Go's reference uses a *soft* 90 %; `--max-old-space-size` is a *hard* ceiling on the old
 * generation only (young generation, code space, ArrayBuffers and Rust-side memory come on top),
 * so a quarter of the limit stays free for those. 256 Mi → 192 MiB, 512 Mi → 384 MiB.
 */
export const V8_HEAP_LIMIT_FRACTION = 0.75;
export const V8_FLAGS_ENV = "DENO_V8_FLAGS";
const MAX_OLD_SPACE = "--max-old-space-size";

/** `<cws>-webhook-server`: Deployment, Service, HPA and PDB (api.md §5). */
export function childName(cws: string): string {
  return `${cws}-webhook-server`;
}

/** `<cws>-webhook-server-cert` (api.md §5). */
export function certificateName(cws: string): string {
  return `${cws}-webhook-server-cert`;
}

/** `<cws>-webhook-server-tls`, the Secret cert-manager writes and the pods mount. */
export function tlsSecretName(cws: string): string {
  return `${cws}-webhook-server-tls`;
}

/** The selector labels every child carries (api.md §5, operations.md §1.5). */
export function podLabels(cws: string): Record<string, string> {
  return {
    [LABEL_NAME]: WEBHOOK_SERVER_APP_NAME,
    [LABEL_INSTANCE]: cws,
    [LABEL_MANAGED_BY]: MANAGED_BY,
  };
}

/** `certificate.dnsNames` default (api.md §3.1). */
export function defaultDnsNames(cws: string, namespace: string): string[] {
  const svc = childName(cws);
  return [
    svc,
    `${svc}.${namespace}`,
    `${svc}.${namespace}.svc`,
    `${svc}.${namespace}.svc.cluster.local`,
  ];
}

// ---------------------------------------------------------------------------------------------
// Inputs

/**
 * Where the serving certificate comes from. `CertManager` (the specified behaviour) renders a
 * cert-manager Certificate whose Secret the pods mount; `Builtin` renders none and the manager
 * issues the Secret itself from its own CA (src/manager/builtin_certs.ts); `ExistingSecret`
 * renders none and expects the Secret `<cws>-webhook-server-tls` to be provided by someone else.
 * Every mode mounts the same Secret name.
 */
export type CertMode = "CertManager" | "Builtin" | "ExistingSecret";

/** Operator-wide settings the children depend on (manager flags, runtime.md §2.1). */
export interface ServerChildSettings {
  /** The operator's namespace: children go here unless `spec.namespace` is set. */
  operatorNamespace: string;
  /** `--default-webhook-server-image` ("" ⇒ {@link DEFAULT_WEBHOOK_SERVER_IMAGE}). */
  defaultImage?: string;
  /** Mirrored into the replicas' flags: a replica watching a missing GVK crashes. */
  enableXrdSupport: boolean;
  enableCrdSupport: boolean;
  /** Default `CertManager`. */
  certMode?: CertMode;
}

/** A spec that cannot be rendered safely (e.g. `extraArgs` naming a managed flag). */
export class ServerSpecError extends Error {
  override name = "ServerSpecError";
}

// ---------------------------------------------------------------------------------------------
// Output types (only what is rendered; pass-through Kubernetes values stay opaque)

/** A type alias, not an interface, so it fits `ObjectMeta.ownerReferences`' record type. */
export type OwnerReference = {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller: true;
  blockOwnerDeletion: true;
};

export interface ChildMeta extends ObjectMeta {
  name: string;
  namespace: string;
  labels: Record<string, string>;
  ownerReferences: OwnerReference[];
}

export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: Record<string, unknown>;
}

export interface HttpProbe {
  httpGet: { path: string; port: number; scheme: "HTTP" };
  periodSeconds: number;
  failureThreshold: number;
}

export interface Container {
  name: string;
  image: string;
  imagePullPolicy?: string;
  args: string[];
  ports: { name: string; containerPort: number; protocol: "TCP" }[];
  env: EnvVar[];
  resources?: Record<string, unknown>;
  volumeMounts: Record<string, unknown>[];
  readinessProbe: HttpProbe;
  livenessProbe: HttpProbe;
  startupProbe?: HttpProbe;
  lifecycle?: { preStop: { sleep: { seconds: number } } };
  securityContext: {
    runAsNonRoot: true;
    allowPrivilegeEscalation: false;
    readOnlyRootFilesystem: true;
    capabilities: { drop: string[] };
    seccompProfile: { type: "RuntimeDefault" };
  };
}

export interface PodSpec {
  serviceAccountName: string;
  terminationGracePeriodSeconds: number;
  securityContext: { runAsNonRoot: true; seccompProfile: { type: "RuntimeDefault" } };
  containers: Container[];
  volumes: Record<string, unknown>[];
  nodeSelector?: Record<string, string>;
  tolerations?: Record<string, unknown>[];
  affinity?: Record<string, unknown>;
  priorityClassName?: string;
  topologySpreadConstraints?: Record<string, unknown>[];
}

export interface Deployment extends KubeObject {
  apiVersion: "apps/v1";
  kind: "Deployment";
  metadata: ChildMeta;
  spec: {
    replicas?: number;
    selector: { matchLabels: Record<string, string> };
    strategy: {
      type: "RollingUpdate";
      rollingUpdate: { maxUnavailable: IntOrString; maxSurge: IntOrString };
    };
    template: {
      metadata: { labels: Record<string, string>; annotations?: Record<string, string> };
      spec: PodSpec;
    };
  };
}

export interface ServicePort {
  name: string;
  port: number;
  targetPort: number;
  protocol: "TCP";
}

export interface Service extends KubeObject {
  apiVersion: "v1";
  kind: "Service";
  metadata: ChildMeta;
  spec: { type: string; selector: Record<string, string>; ports: ServicePort[] };
}

export interface Certificate extends KubeObject {
  apiVersion: "cert-manager.io/v1";
  kind: "Certificate";
  metadata: ChildMeta;
  spec: {
    secretName: string;
    dnsNames: string[];
    issuerRef: { name: string; kind: string };
    duration?: string;
    renewBefore?: string;
  };
}

export interface HorizontalPodAutoscaler extends KubeObject {
  apiVersion: "autoscaling/v2";
  kind: "HorizontalPodAutoscaler";
  metadata: ChildMeta;
  spec: {
    scaleTargetRef: { apiVersion: "apps/v1"; kind: "Deployment"; name: string };
    minReplicas: number;
    maxReplicas: number;
    metrics: {
      type: "Resource";
      resource: { name: "cpu"; target: { type: "Utilization"; averageUtilization: number } };
    }[];
  };
}

export interface PodDisruptionBudget extends KubeObject {
  apiVersion: "policy/v1";
  kind: "PodDisruptionBudget";
  metadata: ChildMeta;
  spec: {
    selector: { matchLabels: Record<string, string> };
    minAvailable?: IntOrString;
    maxUnavailable?: IntOrString;
  };
}

/**
 * Everything a server owns, in apply order (runtime.md §6.1 step 3). `hpa`/`pdb` undefined ⇒ the
 * reconciler deletes any existing one (ignoring NotFound); `certificate` is set only in
 * `CertManager` mode with an `issuerRef`.
 */
export interface ServerChildren {
  namespace: string;
  certificate?: Certificate;
  service: Service;
  deployment: Deployment;
  hpa?: HorizontalPodAutoscaler;
  pdb?: PodDisruptionBudget;
}

// ---------------------------------------------------------------------------------------------
// Helpers

type Spec = ConversionWebhookServer["spec"];
const SHAPE = ConversionWebhookServerSpecSchema.shape;
/** Defaults of the optional blocks, taken from the schema so they live in one place. */
const STARTUP_DEFAULTS = SHAPE.startupProbe.unwrap().parse({});
const ROLLOUT_DEFAULTS = SHAPE.rollout.unwrap().parse({});
const SERVICE_DEFAULTS = SHAPE.service.unwrap().parse({});

interface Identity {
  name: string;
  uid: string;
}

function identityOf(cws: ConversionWebhookServer): Identity {
  const name = cws.metadata?.name;
  const uid = cws.metadata?.uid;
  if (!name) throw new ServerSpecError("ConversionWebhookServer has no metadata.name");
  if (!uid) throw new ServerSpecError(`ConversionWebhookServer ${name} has no metadata.uid`);
  return { name, uid };
}

/** The controller owner reference every child carries (runtime.md §6.1). */
export function ownerReferenceFor(cws: ConversionWebhookServer): OwnerReference {
  const { name, uid } = identityOf(cws);
  return {
    apiVersion: CONFIG_API_VERSION,
    kind: WEBHOOK_SERVER_KIND,
    name,
    uid,
    controller: true,
    blockOwnerDeletion: true,
  };
}

/** `spec.namespace`, else the operator's namespace (runtime.md §6.1 step 1). */
export function childNamespace(
  cws: ConversionWebhookServer,
  settings: ServerChildSettings,
): string {
  return cws.spec.namespace || settings.operatorNamespace;
}

function meta(
  cws: ConversionWebhookServer,
  settings: ServerChildSettings,
  name: string,
): ChildMeta {
  return {
    name,
    namespace: childNamespace(cws, settings),
    labels: podLabels(identityOf(cws).name),
    ownerReferences: [ownerReferenceFor(cws)],
  };
}

/** `repo@digest`, else `repo:tag`, else the operator default (api.md §3.1). */
export function resolveImage(spec: Spec, defaultImage = ""): string {
  const fallback = defaultImage || DEFAULT_WEBHOOK_SERVER_IMAGE;
  const repo = spec.image?.repository;
  if (!repo) return fallback;
  if (spec.image?.digest) return `${repo}@${spec.image.digest}`;
  if (spec.image?.tag) return `${repo}:${spec.image.tag}`;
  return fallback;
}

/**
 * The managed flags `extraArgs` names (api.md §4.2, re-checked at reconcile time so a bypassed
 * webhook cannot rewrite identity/TLS/bind/feature flags). Covers `--flag`, `--flag=value`,
 * `--flag value` (a following non-dash token is skipped as the value) and the single-dash forms.
 */
export function managedFlagsIn(extraArgs: readonly string[] | undefined): string[] {
  const managed = new Set<string>(MANAGED_WEBHOOK_SERVER_FLAGS);
  const found = new Set<string>();
  const args = extraArgs ?? [];
  for (let i = 0; i < args.length; i++) {
    const m = /^--?([^=-][^=]*)(=.*)?$/.exec(args[i]);
    if (m === null) continue;
    if (managed.has(m[1])) found.add(m[1]);
    if (m[2] === undefined && i + 1 < args.length && !args[i + 1].startsWith("-")) i++;
  }
  return [...found].sort();
}

function sortedRecord(r: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(r).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/**
 * `cacheSelector` as the JSON `--cache-label-selector` takes; undefined for an absent or empty
 * selector (≡ unscoped, flag omitted). `matchLabels` keys are sorted so the rendered argument, and
 * with it the pod template, is stable.
 */
export function cacheSelectorJSON(spec: Spec): string | undefined {
  const sel = spec.cacheSelector;
  const labels = sel?.matchLabels ?? {};
  const exprs = sel?.matchExpressions ?? [];
  if (Object.keys(labels).length === 0 && exprs.length === 0) return undefined;
  const out: Record<string, unknown> = {};
  if (Object.keys(labels).length > 0) out.matchLabels = sortedRecord(labels);
  if (exprs.length > 0) out.matchExpressions = exprs;
  return JSON.stringify(out);
}

/** Container args, in the order of runtime.md §6.2; throws if `extraArgs` names a managed flag. */
export function containerArgs(
  cws: ConversionWebhookServer,
  settings: ServerChildSettings,
): string[] {
  const { name } = identityOf(cws);
  const clash = managedFlagsIn(cws.spec.extraArgs);
  if (clash.length > 0) {
    throw new ServerSpecError(
      `spec.extraArgs must not set managed flags: ${clash.map((f) => `--${f}`).join(", ")}`,
    );
  }
  const args = [
    `--webhook-server-name=${name}`,
    `--tls-cert-dir=${TLS_MOUNT_PATH}`,
    `--conversion-bind-address=:${CONVERSION_PORT}`,
    `--metrics-bind-address=:${METRICS_PORT}`,
    `--enable-xrd-support=${settings.enableXrdSupport}`,
    `--enable-crd-support=${settings.enableCrdSupport}`,
  ];
  const selector = cacheSelectorJSON(cws.spec);
  if (selector !== undefined) args.push(`--cache-label-selector=${selector}`);
  return [...args, ...(cws.spec.extraArgs ?? [])];
}

/**
 * `--max-old-space-size` in MiB for a memory limit: `floor(bytes × 0.75 / 2^20)` (runtime.md
 * §6.4). Undefined without a (parseable, positive) limit or when the result is below 1 MiB.
 */
export function heapLimitMiB(memoryLimit: IntOrString | undefined): number | undefined {
  if (memoryLimit === undefined) return undefined;
  const millis = quantityToMillis(String(memoryLimit));
  if (millis === undefined || millis <= 0n) return undefined;
  const bytes = millis / 1000n;
  // The fraction in thousandths: integer arithmetic, no float rounding on large limits.
  const permille = BigInt(Math.round(V8_HEAP_LIMIT_FRACTION * 1000));
  const mib = (bytes * permille) / (1000n * 1048576n);
  return mib >= 1n ? Number(mib) : undefined;
}

/**
 * The container env, in order: downward-API identity (`POD_NAME`, `POD_NAMESPACE`, `POD_UID`, all
 * needed to publish the replica Lease), the derived `DENO_V8_FLAGS`, then `extraEnv`.
 *
 * A user `DENO_V8_FLAGS` always wins and is never duplicated (Kubernetes would let the later
 * entry silently replace ours): with `--max-old-space-size` in it, or set through `valueFrom`,
 * nothing is derived; a literal value without it keeps its position and gets the derived flag
 * appended (the user's other V8 flags stay, and the pod still knows its limit).
 */
export function containerEnv(spec: Spec): EnvVar[] {
  const fieldRef = (fieldPath: string) => ({ fieldRef: { apiVersion: "v1", fieldPath } });
  const env: EnvVar[] = [
    { name: "POD_NAME", valueFrom: fieldRef("metadata.name") },
    { name: "POD_NAMESPACE", valueFrom: fieldRef("metadata.namespace") },
    { name: "POD_UID", valueFrom: fieldRef("metadata.uid") },
  ];
  const mib = heapLimitMiB(spec.resources?.limits?.memory);
  const derived = mib === undefined ? undefined : `${MAX_OLD_SPACE}=${mib}`;
  const extra: EnvVar[] = (spec.extraEnv ?? []).map((e) => ({ ...e }));
  const user = extra.filter((e) => e.name === V8_FLAGS_ENV);
  if (derived !== undefined) {
    if (user.length === 0) env.push({ name: V8_FLAGS_ENV, value: derived });
    else {
      // Kubernetes uses the last entry of a repeated name: that is the one to extend.
      const last = user[user.length - 1];
      const hasLimit = (last.value ?? "").split(/\s+/).some((f) =>
        f === MAX_OLD_SPACE || f.startsWith(`${MAX_OLD_SPACE}=`) ||
        f === "--max_old_space_size" || f.startsWith("--max_old_space_size=")
      );
      if (last.valueFrom === undefined && !hasLimit) {
        last.value = last.value ? `${last.value} ${derived}` : derived;
      }
    }
  }
  return [...env, ...extra];
}

function probe(path: string, periodSeconds: number, failureThreshold: number): HttpProbe {
  return { httpGet: { path, port: METRICS_PORT, scheme: "HTTP" }, periodSeconds, failureThreshold };
}

// ---------------------------------------------------------------------------------------------
// Builders

/** `certificate.dnsNames`, else (absent or empty) {@link defaultDnsNames}. */
export function servingDnsNames(
  cws: ConversionWebhookServer,
  settings: ServerChildSettings,
): string[] {
  const { name } = identityOf(cws);
  const names = cws.spec.certificate?.dnsNames;
  // An empty list would make an invalid certificate: treated like an absent one.
  return names && names.length > 0
    ? [...names]
    : defaultDnsNames(name, childNamespace(cws, settings));
}

/** The message of CertificateReady=False for a cert-manager-mode server without an issuer. */
export const MISSING_ISSUER_MESSAGE =
  "the manager runs in cert-manager certificate mode but spec.certificate.issuerRef is not set; " +
  "set spec.certificate.issuerRef.name (and kind) or run the manager with " +
  "--certificate-mode=builtin";

/**
 * The cert-manager Certificate; undefined outside `CertManager` mode, and undefined when the
 * spec has no `certificate.issuerRef` (the reconciler reports {@link MISSING_ISSUER_MESSAGE}).
 */
export function buildCertificate(
  cws: ConversionWebhookServer,
  settings: ServerChildSettings,
): Certificate | undefined {
  if ((settings.certMode ?? "CertManager") !== "CertManager") return undefined;
  const { name } = identityOf(cws);
  const c = cws.spec.certificate;
  if (c?.issuerRef === undefined) return undefined;
  const spec: Certificate["spec"] = {
    secretName: tlsSecretName(name),
    dnsNames: servingDnsNames(cws, settings),
    issuerRef: { name: c.issuerRef.name, kind: c.issuerRef.kind },
  };
  if (c.duration) spec.duration = c.duration;
  if (c.renewBefore) spec.renewBefore = c.renewBefore;
  return {
    apiVersion: "cert-manager.io/v1",
    kind: "Certificate",
    metadata: meta(cws, settings, certificateName(name)),
    spec,
  };
}

/** The Service: `conversion` (spec port, default 443 → 9443) and `metrics` (8443 → 8443). */
export function buildService(cws: ConversionWebhookServer, settings: ServerChildSettings): Service {
  const { name } = identityOf(cws);
  const svc = cws.spec.service ?? SERVICE_DEFAULTS;
  const metadata = meta(cws, settings, childName(name));
  if (svc.annotations && Object.keys(svc.annotations).length > 0) {
    metadata.annotations = { ...svc.annotations };
  }
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata,
    spec: {
      type: svc.type,
      selector: podLabels(name),
      ports: [
        { name: "conversion", port: svc.port, targetPort: CONVERSION_PORT, protocol: "TCP" },
        { name: "metrics", port: METRICS_PORT, targetPort: METRICS_PORT, protocol: "TCP" },
      ],
    },
  };
}

/** The webhook-server Deployment (runtime.md §6.2, operations.md §6.1). */
export function buildDeployment(
  cws: ConversionWebhookServer,
  settings: ServerChildSettings,
): Deployment {
  const { name } = identityOf(cws);
  const spec = cws.spec;
  const labels = podLabels(name);
  const rollout = spec.rollout ?? ROLLOUT_DEFAULTS;
  const startup = spec.startupProbe ?? STARTUP_DEFAULTS;

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
    readinessProbe: probe("/readyz", 5, 3),
    livenessProbe: probe("/healthz", 10, 3),
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
    container.startupProbe = probe("/readyz", startup.periodSeconds, startup.failureThreshold);
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
    metadata: meta(cws, settings, childName(name)),
    spec: deploymentSpec,
  };
}

/** The HPA when `spec.autoscaling` is set; undefined ⇒ delete any existing one. */
export function buildHPA(
  cws: ConversionWebhookServer,
  settings: ServerChildSettings,
): HorizontalPodAutoscaler | undefined {
  const a = cws.spec.autoscaling;
  if (!a) return undefined;
  const { name } = identityOf(cws);
  return {
    apiVersion: "autoscaling/v2",
    kind: "HorizontalPodAutoscaler",
    metadata: meta(cws, settings, childName(name)),
    spec: {
      scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: childName(name) },
      minReplicas: a.minReplicas,
      maxReplicas: a.maxReplicas,
      metrics: [{
        type: "Resource",
        resource: {
          name: "cpu",
          target: { type: "Utilization", averageUtilization: a.targetCPUUtilizationPercentage },
        },
      }],
    },
  };
}

/** The PDB when `spec.podDisruptionBudget` is set; undefined ⇒ delete any existing one. */
export function buildPDB(
  cws: ConversionWebhookServer,
  settings: ServerChildSettings,
): PodDisruptionBudget | undefined {
  const b = cws.spec.podDisruptionBudget;
  if (!b) return undefined;
  const { name } = identityOf(cws);
  const spec: PodDisruptionBudget["spec"] = { selector: { matchLabels: podLabels(name) } };
  if (b.minAvailable !== undefined) spec.minAvailable = b.minAvailable;
  if (b.maxUnavailable !== undefined) spec.maxUnavailable = b.maxUnavailable;
  return {
    apiVersion: "policy/v1",
    kind: "PodDisruptionBudget",
    metadata: meta(cws, settings, childName(name)),
    spec,
  };
}

/** All children of `cws`; throws {@link ServerSpecError} for an unrenderable spec. */
export function serverChildren(
  cws: ConversionWebhookServer,
  settings: ServerChildSettings,
): ServerChildren {
  const out: ServerChildren = {
    namespace: childNamespace(cws, settings),
    service: buildService(cws, settings),
    deployment: buildDeployment(cws, settings),
  };
  const certificate = buildCertificate(cws, settings);
  if (certificate) out.certificate = certificate;
  const hpa = buildHPA(cws, settings);
  if (hpa) out.hpa = hpa;
  const pdb = buildPDB(cws, settings);
  if (pdb) out.pdb = pdb;
  return out;
}

// ---------------------------------------------------------------------------------------------
// Readiness (status from the observed children)

/** What {@link serverReadiness} computes; the reconciler stamps `observedGeneration`. */
export interface ServerReadiness {
  replicas: number;
  readyReplicas: number;
  /** `https://<svc>.<ns>.svc:<conversion port>` once the Service exists. */
  endpoint?: string;
  /** `Available`, `ServiceReady`, `CertificateReady`, in that order. */
  conditions: ConditionInput[];
}

/** A child as observed: the object, undefined when not found, or the lookup error. */
export type Observed = KubeObject | undefined | Error;

type Json = Record<string, unknown>;

function asRecord(v: unknown): Json | undefined {
  return typeof v === "object" && v !== null && !Array.isArray(v) ? v as Json : undefined;
}

function intField(obj: Json | undefined, key: string): number {
  const v = obj?.[key];
  return typeof v === "number" && Number.isFinite(v) ? v : 0;
}

function conditionStatus(obj: KubeObject, type: string): Json | undefined {
  const conditions = asRecord(obj.status)?.conditions;
  if (!Array.isArray(conditions)) return undefined;
  return conditions.map(asRecord).find((c) => c?.type === type);
}

function objName(obj: KubeObject): string {
  return `${obj.metadata.namespace ?? ""}/${obj.metadata.name ?? ""}`;
}

function availableCondition(deployment: Observed): ConditionInput {
  const no = (message: string): ConditionInput => ({
    type: "Available",
    status: "False",
    reason: "DeploymentNotAvailable",
    message,
  });
  if (deployment instanceof Error) return no(`looking up the Deployment: ${deployment.message}`);
  if (deployment === undefined) return no("the Deployment does not exist yet");
  const c = conditionStatus(deployment, "Available");
  if (c?.status === "True") {
    return {
      type: "Available",
      status: "True",
      reason: "DeploymentAvailable",
      message: `Deployment ${objName(deployment)} is available`,
    };
  }
  const why = typeof c?.message === "string" && c.message !== "" ? `: ${c.message}` : "";
  return no(`Deployment ${objName(deployment)} is not available${why}`);
}

/** The Service's `conversion` port (else its first port, else 443). */
function conversionPort(service: KubeObject): number {
  const ports = asRecord(service.spec)?.ports;
  const list = Array.isArray(ports) ? ports.map(asRecord) : [];
  const port = list.find((p) => p?.name === "conversion") ?? list[0];
  const n = port?.port;
  return typeof n === "number" ? n : SERVICE_DEFAULTS.port;
}

function serviceCondition(service: Observed): ConditionInput {
  if (service instanceof Error) {
    return {
      type: "ServiceReady",
      status: "False",
      reason: "ServiceMissing",
      message: `looking up the Service: ${service.message}`,
    };
  }
  if (service === undefined) {
    return {
      type: "ServiceReady",
      status: "False",
      reason: "ServiceMissing",
      message: "the Service does not exist yet",
    };
  }
  return {
    type: "ServiceReady",
    status: "True",
    reason: "ServiceReady",
    message: `Service ${objName(service)} exists`,
  };
}

function certificateCondition(source: Observed): ConditionInput {
  const no = (message: string): ConditionInput => ({
    type: "CertificateReady",
    status: "False",
    reason: "CertificateNotReady",
    message,
  });
  const yes = (message: string): ConditionInput => ({
    type: "CertificateReady",
    status: "True",
    reason: "CertificateReady",
    message,
  });
  if (source instanceof Error) return no(`looking up the TLS certificate: ${source.message}`);
  if (source === undefined) return no("the TLS Secret does not exist yet");
  if (source.kind === "Certificate") {
    const c = conditionStatus(source, "Ready");
    if (c?.status === "True") return yes(`Certificate ${objName(source)} is Ready`);
    const why = typeof c?.message === "string" && c.message !== "" ? `: ${c.message}` : "";
    return no(`Certificate ${objName(source)} is not Ready${why}`);
  }
  const crt = asRecord(source.data)?.["tls.crt"];
  if (typeof crt === "string" && crt !== "") {
    return yes(`Secret ${objName(source)} holds a certificate`);
  }
  return no(`Secret ${objName(source)} has no tls.crt yet`);
}

/**
 * Status from the observed children (api.md §3.2/§3.3, runtime.md §6.1 step 4):
 * - `replicas`/`readyReplicas` copied from the Deployment's status (0 when absent);
 * - `Available` ⇔ the Deployment's own `Available` condition is "True" (lookup error ⇒ False
 *   with the error in the message);
 * - `ServiceReady` ⇔ the Service **exists** (the reference code's rule, runtime.md §11; its docs
 *   claimed "has ready endpoints" — readiness of the pods is what `Available` and
 *   `readyReplicas` already report, so no Endpoints read is added);
 * - `CertificateReady`: given the TLS **Secret** (the specified source, read through), a non-empty
 *   `tls.crt`; given a cert-manager **Certificate**, its `Ready` condition is "True".
 */
export function serverReadiness(
  deployment: Observed,
  service: Observed,
  certificateOrSecret: Observed,
): ServerReadiness {
  const depStatus = deployment instanceof Error || deployment === undefined
    ? undefined
    : asRecord(deployment.status);
  const out: ServerReadiness = {
    replicas: intField(depStatus, "replicas"),
    readyReplicas: intField(depStatus, "readyReplicas"),
    conditions: [
      availableCondition(deployment),
      serviceCondition(service),
      certificateCondition(certificateOrSecret),
    ],
  };
  if (service !== undefined && !(service instanceof Error)) {
    const { name, namespace } = service.metadata;
    out.endpoint = `https://${name}.${namespace}.svc:${conversionPort(service)}`;
  }
  return out;
}
