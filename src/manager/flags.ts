/**
 * The manager's command line: Go-style flags parsed by the shared parser (src/lib/flags.ts) and
 * validated up front; any violation is a {@link FlagError} and the process exits 1. Logging flags
 * (`--zap-*`) are consumed before this parser runs (src/obs `configureLogging`).
 *
 * Admission is served on a fixed port and cert dir in production; `--webhook-bind-address`,
 * `--webhook-cert-dir`, `--operator-namespace` and `--kubeconfig` exist for development and tests,
 * and default to those fixed values. `--admission-cert-secret`, `--admission-service`,
 * `--admission-webhook-configuration` and (for the XRD conversion guard)
 * `--admission-mutating-webhook-configuration` (default "", off) make the manager issue its own
 * admission certificate from the built-in CA (src/manager/admission_certs.ts; docs/manager.md).
 * `--webhook-server-image` is an alias of `--default-webhook-server-image`.
 *
 * `--webhook-server-namespaces`, `--webhook-server-image-repositories`,
 * `--webhook-server-service-accounts` and `--webhook-server-volume-types` (comma-separated lists)
 * are the ConversionWebhookServer policy (src/manager/admission/server_policy.ts); unset, a
 * dimension is not restricted (volume types: the safe four). `--webhook-server-namespaces` also
 * scopes the manager's Deployment/Service watches to those namespaces (the chart grants its Roles
 * only there).
 *
 * `--prepare-uninstall` switches the binary to a one-shot mode (src/manager/uninstall.ts, run by
 * the chart's pre-delete hook Job): refuse while configs exist, else delete every
 * ConversionWebhookServer and wait, at most `--prepare-uninstall-timeout` (a Go duration, > 0),
 * until they are gone; the other flags are then ignored except `--kubeconfig`.
 */
import { parseGoDuration } from "../engine/units.ts";
import { type FieldFlag, FlagError, parseFlagRecord } from "../lib/flags.ts";
import type { WebhookServerPolicy } from "./admission/server_policy.ts";

export { FlagError };

export interface ManagerFlags {
  metricsBindAddress: string;
  /**
   * `--metrics-secure`: serve `--metrics-bind-address` over TLS, `/metrics` only for an
   * authenticated, authorised bearer token (src/main/_metrics.ts; docs/security.md#metrics).
   */
  metricsSecure: boolean;
  healthProbeBindAddress: string;
  leaderElect: boolean;
  /** "" ⇒ the operator namespace. */
  leaderElectionNamespace: string;
  /** Admission TLS pair (`tls.crt`, `tls.key`); admission is off when they are missing. */
  webhookCertDir: string;
  webhookBindAddress: string;
  enableXrdSupport: boolean;
  enableCrdSupport: boolean;
  /**
   * Serve the mutating XRD conversion guard (src/manager/admission/xrd_guard.ts; XRD only) on the
   * admission listener; only with `enableXrdSupport` (otherwise ignored, logged).
   */
  enableXrdConversionGuard: boolean;
  maxConcurrentReconciles: number;
  /** "" ⇒ env `POD_NAMESPACE`, else the service-account namespace file, else `default`. */
  operatorNamespace: string;
  /** "" ⇒ the built-in default image. */
  defaultWebhookServerImage: string;
  /**
   * `--webhook-server-metrics-secure`: the webhook servers' Pods get `--metrics-secure` (and HTTPS
   * probes) unless their `spec.metrics.secure` says otherwise.
   */
  webhookServerMetricsSecure: boolean;
  /** Out-of-cluster use (development, tests); in a Pod the service account is used. */
  kubeconfig: string;
  /**
   * `--certificate-mode`: where the webhook-servers' serving certificates come from
   * (docs/manager.md "Serving certificates"). `auto` ⇒ `cert-manager` when the cluster serves
   * `cert-manager.io/v1` certificates (discovery at start-up), else `builtin`.
   */
  certificateMode: CertificateModeFlag;
  /**
   * `--admission-cert-secret`: the Secret (operator namespace) the manager issues its own
   * admission serving certificate into, from the built-in CA (src/manager/admission_certs.ts),
   * and serves admission from. "" (default) ⇒ off: admission uses `--webhook-cert-dir` only.
   * Used when `--certificate-mode` is `builtin` or `auto` and the cert dir holds no pair; needs
   * `--admission-service`.
   */
  admissionCertSecret: string;
  /** `--admission-service`: the admission Service, whose DNS names become the SANs. */
  admissionService: string;
  /**
   * `--admission-webhook-configuration`: the ValidatingWebhookConfiguration whose webhooks'
   * `clientConfig.caBundle` the manager sets to the built-in CA. "" ⇒ left alone.
   */
  admissionWebhookConfiguration: string;
  /**
   * `--admission-mutating-webhook-configuration`: the MutatingWebhookConfiguration (the XRD
   * conversion guard's) whose webhooks' `clientConfig.caBundle` the manager sets to the built-in
   * CA, like the validating one. "" ⇒ left alone.
   */
  admissionMutatingWebhookConfiguration: string;
  /**
   * `--prepare-uninstall`: run the one-shot uninstall preparation (src/manager/uninstall.ts)
   * instead of the manager, then exit (0 done, 1 refused or failed).
   */
  prepareUninstall: boolean;
  /** `--prepare-uninstall-timeout` (Go duration, > 0): how long to wait for the servers to go. */
  prepareUninstallTimeoutMs: number;
  /**
   * `--check-installation`: run the one-shot installation check (src/manager/install_check.ts,
   * the chart's `helm test` Pod) instead of the manager, then exit (0 answered, 1 not).
   */
  checkInstallation: boolean;
  /** `--check-admission-service`: the admission Service (operator namespace) that is checked. */
  checkAdmissionService: string;
  /** `--check-webhook-server`: `<namespace>/<server>` whose conversion endpoint is checked. */
  checkWebhookServer: string;
  /** `--check-timeout` (Go duration, > 0): how long each check is retried. */
  checkTimeoutMs: number;
  /**
   * `--webhook-server-namespaces`: where servers' children may go; also the namespaces the
   * Deployment/Service caches watch. undefined ⇒ any (cluster-wide watches).
   */
  webhookServerNamespaces: readonly string[] | undefined;
  /** `--webhook-server-image-repositories` (exact, or a prefix ending in `/`); undefined ⇒ any. */
  webhookServerImageRepositories: readonly string[] | undefined;
  /** `--webhook-server-service-accounts`; undefined ⇒ any. */
  webhookServerServiceAccounts: readonly string[] | undefined;
  /** `--webhook-server-volume-types`; undefined ⇒ secret, configMap, projected, emptyDir. */
  webhookServerVolumeTypes: readonly string[] | undefined;
  /**
   * `--ca-validity` (Go duration, ≥ 1h): the lifetime of a built-in CA the manager creates; a CA
   * is rotated once two thirds of this (or of its own lifetime) have passed
   * (src/manager/ca_rotation.ts).
   */
  caValidityMs: number;
  /** `--ca-rotation-check-interval` (Go duration, > 0): how often the rotation is re-checked. */
  caRotationCheckIntervalMs: number;
  /**
   * `--ca-rotation-propagation-delay` (Go duration, > 0): how long a rotation step's condition
   * must have held before the next step (apiserver caches, admission listeners' reload).
   */
  caRotationPropagationDelayMs: number;
}

export const CERTIFICATE_MODES = ["auto", "cert-manager", "builtin", "existing-secret"] as const;
export type CertificateModeFlag = typeof CERTIFICATE_MODES[number];

/** The children's `CertMode` of a resolved (non-`auto`) flag value. */
export function certModeOf(
  flag: Exclude<CertificateModeFlag, "auto">,
): "CertManager" | "Builtin" | "ExistingSecret" {
  switch (flag) {
    case "cert-manager":
      return "CertManager";
    case "builtin":
      return "Builtin";
    case "existing-secret":
      return "ExistingSecret";
  }
}

/**
 * Resolves `auto` by discovery: `certManagerServed` is whether the cluster serves
 * `cert-manager.io/v1` `certificates`. Any other value is returned as is.
 */
export function resolveCertificateMode(
  flag: CertificateModeFlag,
  certManagerServed: boolean,
): Exclude<CertificateModeFlag, "auto"> {
  if (flag !== "auto") return flag;
  return certManagerServed ? "cert-manager" : "builtin";
}

/** Go durations in milliseconds; the manager's durations must be positive. */
function positiveDurationMs(raw: string, flag: string): number {
  const ns = parseGoDuration(raw);
  if (ns === undefined || ns <= 0n) {
    throw new FlagError(
      `${flag}: ${JSON.stringify(raw)} is not a positive duration (e.g. 120s, 2m)`,
    );
  }
  return Math.max(1, Number(ns / 1_000_000n));
}

/** An object name (RFC 1123 subdomain). */
const DNS_SUBDOMAIN =
  /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const VOLUME_TYPE = /^[a-z][A-Za-z]*$/;
const IMAGE_REPOSITORY = /^[a-z0-9][a-z0-9._\-/:]*$/;

/** A comma-separated, non-empty list whose entries all match `pattern`. */
function listFlag(pattern: RegExp, one: string) {
  return (raw: string, flag: string): readonly string[] => {
    const items = raw.split(",").map((s) => s.trim());
    if (raw.trim() === "" || items.some((s) => s === "")) {
      throw new FlagError(
        `${flag}: ${JSON.stringify(raw)} must be a comma-separated list of ${one}s`,
      );
    }
    const bad = items.find((s) => !pattern.test(s));
    if (bad !== undefined) {
      throw new FlagError(
        `${flag}: ${JSON.stringify(bad)} is not a valid ${one}`,
      );
    }
    return Object.freeze([...new Set(items)]);
  };
}

const FLAGS: Record<string, FieldFlag<ManagerFlags>> = {
  "metrics-bind-address": { field: "metricsBindAddress", kind: "string" },
  "metrics-secure": { field: "metricsSecure", kind: "bool" },
  "health-probe-bind-address": { field: "healthProbeBindAddress", kind: "string" },
  "leader-elect": { field: "leaderElect", kind: "bool" },
  "leader-election-namespace": { field: "leaderElectionNamespace", kind: "string" },
  "webhook-cert-dir": { field: "webhookCertDir", kind: "string" },
  "webhook-bind-address": { field: "webhookBindAddress", kind: "string" },
  "enable-xrd-support": { field: "enableXrdSupport", kind: "bool" },
  "enable-crd-support": { field: "enableCrdSupport", kind: "bool" },
  "enable-xrd-conversion-guard": { field: "enableXrdConversionGuard", kind: "bool" },
  "max-concurrent-reconciles": { field: "maxConcurrentReconciles", kind: "int" },
  "operator-namespace": { field: "operatorNamespace", kind: "string" },
  "default-webhook-server-image": { field: "defaultWebhookServerImage", kind: "string" },
  "webhook-server-image": { field: "defaultWebhookServerImage", kind: "string" },
  "webhook-server-metrics-secure": { field: "webhookServerMetricsSecure", kind: "bool" },
  "kubeconfig": { field: "kubeconfig", kind: "string" },
  "certificate-mode": { field: "certificateMode", kind: "string" },
  "admission-cert-secret": { field: "admissionCertSecret", kind: "string" },
  "admission-service": { field: "admissionService", kind: "string" },
  "admission-webhook-configuration": { field: "admissionWebhookConfiguration", kind: "string" },
  "admission-mutating-webhook-configuration": {
    field: "admissionMutatingWebhookConfiguration",
    kind: "string",
  },
  "prepare-uninstall": { field: "prepareUninstall", kind: "bool" },
  "prepare-uninstall-timeout": { field: "prepareUninstallTimeoutMs", parse: positiveDurationMs },
  "check-installation": { field: "checkInstallation", kind: "bool" },
  "check-admission-service": { field: "checkAdmissionService", kind: "string" },
  "check-webhook-server": { field: "checkWebhookServer", kind: "string" },
  "check-timeout": { field: "checkTimeoutMs", parse: positiveDurationMs },
  "webhook-server-namespaces": {
    field: "webhookServerNamespaces",
    parse: listFlag(DNS_LABEL, "namespace name"),
  },
  "webhook-server-image-repositories": {
    field: "webhookServerImageRepositories",
    parse: listFlag(IMAGE_REPOSITORY, "image repository"),
  },
  "webhook-server-service-accounts": {
    field: "webhookServerServiceAccounts",
    parse: listFlag(DNS_SUBDOMAIN, "ServiceAccount name"),
  },
  "webhook-server-volume-types": {
    field: "webhookServerVolumeTypes",
    parse: listFlag(VOLUME_TYPE, "volume type"),
  },
  "ca-validity": { field: "caValidityMs", parse: positiveDurationMs },
  "ca-rotation-check-interval": { field: "caRotationCheckIntervalMs", parse: positiveDurationMs },
  "ca-rotation-propagation-delay": {
    field: "caRotationPropagationDelayMs",
    parse: positiveDurationMs,
  },
};

/** The fixed admission cert dir of a deployed manager (controller-runtime's default). */
export const DEFAULT_WEBHOOK_CERT_DIR = "/tmp/k8s-webhook-server/serving-certs";

export const DEFAULT_MANAGER_FLAGS: Readonly<ManagerFlags> = Object.freeze({
  metricsBindAddress: ":8080",
  metricsSecure: false,
  healthProbeBindAddress: ":8081",
  leaderElect: false,
  leaderElectionNamespace: "",
  webhookCertDir: DEFAULT_WEBHOOK_CERT_DIR,
  webhookBindAddress: ":9443",
  enableXrdSupport: true,
  enableCrdSupport: true,
  enableXrdConversionGuard: true,
  maxConcurrentReconciles: 1,
  operatorNamespace: "",
  defaultWebhookServerImage: "",
  webhookServerMetricsSecure: false,
  kubeconfig: "",
  certificateMode: "auto",
  admissionCertSecret: "",
  admissionService: "",
  admissionWebhookConfiguration: "",
  admissionMutatingWebhookConfiguration: "",
  prepareUninstall: false,
  prepareUninstallTimeoutMs: 120_000,
  checkInstallation: false,
  checkAdmissionService: "",
  checkWebhookServer: "",
  checkTimeoutMs: 120_000,
  webhookServerNamespaces: undefined,
  webhookServerImageRepositories: undefined,
  webhookServerServiceAccounts: undefined,
  webhookServerVolumeTypes: undefined,
  caValidityMs: 365 * 86_400_000,
  caRotationCheckIntervalMs: 60_000,
  caRotationPropagationDelayMs: 120_000,
});

/** The ConversionWebhookServer policy the flags name. */
export function webhookServerPolicyOf(flags: ManagerFlags): WebhookServerPolicy {
  const out: WebhookServerPolicy = {};
  if (flags.webhookServerNamespaces) out.namespaces = flags.webhookServerNamespaces;
  if (flags.webhookServerImageRepositories) {
    out.imageRepositories = flags.webhookServerImageRepositories;
  }
  if (flags.webhookServerServiceAccounts) out.serviceAccounts = flags.webhookServerServiceAccounts;
  if (flags.webhookServerVolumeTypes) out.volumeTypes = flags.webhookServerVolumeTypes;
  return out;
}

/** The shortest `--ca-validity`: shorter CAs would cap every leaf and re-issue it constantly. */
export const MIN_CA_VALIDITY_MS = 3_600_000;

/**
 * Whether the manager issues its own admission certificate: the flags are set and the
 * certificate mode flag is `builtin` or `auto` (also when `auto` picked cert-manager for the
 * webhook servers: the flags are the opt-in, and the chart passes them only when it renders no
 * admission Certificate). The cert dir, when it holds a pair, still wins (checked at start-up).
 */
export function selfIssuedAdmission(flags: ManagerFlags): boolean {
  return flags.admissionCertSecret !== "" &&
    (flags.certificateMode === "builtin" || flags.certificateMode === "auto");
}

const BIND_ADDRESS = /^(?:\[[^\]]*\]|[^:[\]]*):(\d{1,5})$/;

function checkAddress(flag: string, value: string): void {
  const m = BIND_ADDRESS.exec(value);
  if (m === null || Number(m[1]) > 65535) {
    throw new FlagError(`--${flag}: ${JSON.stringify(value)} is not a [host]:port address`);
  }
}

/** Parses `args` (logging flags already removed); throws {@link FlagError}. */
export function parseManagerFlags(args: readonly string[]): ManagerFlags {
  const out = parseFlagRecord(args, FLAGS, DEFAULT_MANAGER_FLAGS);
  if (out.maxConcurrentReconciles < 1) {
    throw new FlagError(
      `--max-concurrent-reconciles must be >= 1, got ${out.maxConcurrentReconciles}`,
    );
  }
  checkAddress("metrics-bind-address", out.metricsBindAddress);
  checkAddress("health-probe-bind-address", out.healthProbeBindAddress);
  checkAddress("webhook-bind-address", out.webhookBindAddress);
  if (out.caValidityMs < MIN_CA_VALIDITY_MS) {
    throw new FlagError(`--ca-validity must be at least 1h, got ${out.caValidityMs / 1000}s`);
  }
  if (!(CERTIFICATE_MODES as readonly string[]).includes(out.certificateMode)) {
    throw new FlagError(
      `--certificate-mode: ${JSON.stringify(out.certificateMode)} is not one of ${
        CERTIFICATE_MODES.join(", ")
      }`,
    );
  }
  if (out.webhookCertDir.trim() === "") {
    throw new FlagError("--webhook-cert-dir must not be empty");
  }
  const admission: Array<[string, string]> = [
    ["admission-cert-secret", out.admissionCertSecret],
    ["admission-service", out.admissionService],
    ["admission-webhook-configuration", out.admissionWebhookConfiguration],
    ["admission-mutating-webhook-configuration", out.admissionMutatingWebhookConfiguration],
  ];
  for (const [name, value] of admission) {
    if (value !== "" && !DNS_SUBDOMAIN.test(value)) {
      throw new FlagError(`--${name}: ${JSON.stringify(value)} is not a valid object name`);
    }
  }
  if ((out.admissionCertSecret === "") !== (out.admissionService === "")) {
    throw new FlagError(
      "--admission-cert-secret and --admission-service must be given together",
    );
  }
  for (
    const [name, value] of [
      ["admission-webhook-configuration", out.admissionWebhookConfiguration],
      ["admission-mutating-webhook-configuration", out.admissionMutatingWebhookConfiguration],
    ]
  ) {
    if (value !== "" && out.admissionCertSecret === "") {
      throw new FlagError(
        `--${name} needs --admission-cert-secret and --admission-service`,
      );
    }
  }
  return out;
}

/** Own namespace: the flag, env `POD_NAMESPACE`, the SA namespace file, `default`. */
export function resolveOperatorNamespace(
  flag: string,
  env: string | undefined,
  serviceAccountNamespace: string | undefined,
): string {
  for (const v of [flag, env, serviceAccountNamespace]) {
    const t = v?.trim();
    if (t) return t;
  }
  return "default";
}
