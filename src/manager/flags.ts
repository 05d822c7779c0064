/**
 * The manager's command line (runtime.md §2.1): Go-style flags (`--name=value`, `--name value`,
 * `--flag` / `--flag=false` for booleans), validated up front; any violation is a
 * {@link ManagerFlagError} and the process exits 1. Logging flags (`--zap-*`) are consumed before
 * this parser runs (src/obs `configureLogging`).
 *
 * Beyond the spec's table (whose admission port and cert dir are fixed), `--webhook-bind-address`,
 * `--webhook-cert-dir`, `--operator-namespace` and `--kubeconfig` exist for development and tests;
 * their defaults are the spec's fixed values. `--admission-cert-secret`, `--admission-service` and
 * `--admission-webhook-configuration` (default "", off) and [P11]
 * `--admission-mutating-webhook-configuration` make the manager issue its own admission
 * certificate from the built-in CA (src/manager/admission_certs.ts; docs/manager.md). `--webhook-server-image` is an alias of
 * `--default-webhook-server-image`.
 *
 * `--prepare-uninstall` switches the binary to a one-shot mode (src/manager/uninstall.ts, run by
 * the chart's pre-delete hook Job): refuse while configs exist, else delete every
 * ConversionWebhookServer and wait, at most `--prepare-uninstall-timeout` (a Go duration, > 0),
 * until they are gone; the other flags are then ignored except `--kubeconfig`.
 */
import { parseGoDuration } from "../engine/units.ts";

export interface ManagerFlags {
  metricsBindAddress: string;
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
   * [P11] Serve the mutating XRD conversion guard (api.md §4.3, src/manager/admission/xrd_guard.ts) on the
   * admission listener; only with `enableXrdSupport` (otherwise ignored, logged).
   */
  enableXrdConversionGuard: boolean;
  maxConcurrentReconciles: number;
  /** "" ⇒ env `POD_NAMESPACE`, else the service-account namespace file, else `default`. */
  operatorNamespace: string;
  /** "" ⇒ the built-in default image. */
  defaultWebhookServerImage: string;
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
   * [P11] `--admission-mutating-webhook-configuration`: the MutatingWebhookConfiguration (the XRD
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

export class ManagerFlagError extends Error {
  override name = "ManagerFlagError";
}

type Kind = "string" | "bool" | "int" | "duration";

const FLAGS: Record<string, [keyof ManagerFlags, Kind]> = {
  "metrics-bind-address": ["metricsBindAddress", "string"],
  "health-probe-bind-address": ["healthProbeBindAddress", "string"],
  "leader-elect": ["leaderElect", "bool"],
  "leader-election-namespace": ["leaderElectionNamespace", "string"],
  "webhook-cert-dir": ["webhookCertDir", "string"],
  "webhook-bind-address": ["webhookBindAddress", "string"],
  "enable-xrd-support": ["enableXrdSupport", "bool"],
  "enable-crd-support": ["enableCrdSupport", "bool"],
  "enable-xrd-conversion-guard": ["enableXrdConversionGuard", "bool"],
  "max-concurrent-reconciles": ["maxConcurrentReconciles", "int"],
  "operator-namespace": ["operatorNamespace", "string"],
  "default-webhook-server-image": ["defaultWebhookServerImage", "string"],
  "webhook-server-image": ["defaultWebhookServerImage", "string"],
  "kubeconfig": ["kubeconfig", "string"],
  "certificate-mode": ["certificateMode", "string"],
  "admission-cert-secret": ["admissionCertSecret", "string"],
  "admission-service": ["admissionService", "string"],
  "admission-webhook-configuration": ["admissionWebhookConfiguration", "string"],
  "admission-mutating-webhook-configuration": ["admissionMutatingWebhookConfiguration", "string"],
  "prepare-uninstall": ["prepareUninstall", "bool"],
  "prepare-uninstall-timeout": ["prepareUninstallTimeoutMs", "duration"],
};

/** The spec's fixed admission cert dir (controller-runtime's default). */
export const DEFAULT_WEBHOOK_CERT_DIR = "/tmp/k8s-webhook-server/serving-certs";

export const DEFAULT_MANAGER_FLAGS: Readonly<ManagerFlags> = Object.freeze({
  metricsBindAddress: ":8080",
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
  kubeconfig: "",
  certificateMode: "auto",
  admissionCertSecret: "",
  admissionService: "",
  admissionWebhookConfiguration: "",
  admissionMutatingWebhookConfiguration: "",
  prepareUninstall: false,
  prepareUninstallTimeoutMs: 120_000,
});

/** An object name (RFC 1123 subdomain). */
const DNS_SUBDOMAIN =
  /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

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
    throw new ManagerFlagError(`--${flag}: ${JSON.stringify(value)} is not a [host]:port address`);
  }
}

/** Parses `args` (logging flags already removed); throws {@link ManagerFlagError}. */
export function parseManagerFlags(args: readonly string[]): ManagerFlags {
  const out: ManagerFlags = { ...DEFAULT_MANAGER_FLAGS };
  const record = out as unknown as Record<string, string | number | boolean>;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (!arg.startsWith("--")) {
      throw new ManagerFlagError(`unexpected argument ${JSON.stringify(arg)}`);
    }
    const eq = arg.indexOf("=");
    const name = arg.slice(2, eq < 0 ? undefined : eq);
    let value: string | undefined = eq < 0 ? undefined : arg.slice(eq + 1);
    const spec = FLAGS[name];
    if (spec === undefined) throw new ManagerFlagError(`unknown flag --${name}`);
    const [field, kind] = spec;
    if (kind === "bool") {
      if (value === undefined) value = "true";
      if (value !== "true" && value !== "false") {
        throw new ManagerFlagError(
          `--${name}: expected true or false, got ${JSON.stringify(value)}`,
        );
      }
      record[field] = value === "true";
      continue;
    }
    if (value === undefined) {
      value = args[++i];
      if (value === undefined) throw new ManagerFlagError(`--${name} needs a value`);
    }
    if (kind === "string") record[field] = value;
    else if (kind === "duration") {
      const ns = parseGoDuration(value);
      if (ns === undefined || ns <= 0n) {
        throw new ManagerFlagError(
          `--${name}: ${JSON.stringify(value)} is not a positive duration (e.g. 120s, 2m)`,
        );
      }
      record[field] = Math.max(1, Number(ns / 1_000_000n));
    } else {
      if (!/^-?\d+$/.test(value)) {
        throw new ManagerFlagError(`--${name}: ${JSON.stringify(value)} is not an integer`);
      }
      record[field] = Number(value);
    }
  }
  if (out.maxConcurrentReconciles < 1) {
    throw new ManagerFlagError(
      `--max-concurrent-reconciles must be >= 1, got ${out.maxConcurrentReconciles}`,
    );
  }
  checkAddress("metrics-bind-address", out.metricsBindAddress);
  checkAddress("health-probe-bind-address", out.healthProbeBindAddress);
  checkAddress("webhook-bind-address", out.webhookBindAddress);
  if (!(CERTIFICATE_MODES as readonly string[]).includes(out.certificateMode)) {
    throw new ManagerFlagError(
      `--certificate-mode: ${JSON.stringify(out.certificateMode)} is not one of ${
        CERTIFICATE_MODES.join(", ")
      }`,
    );
  }
  if (out.webhookCertDir.trim() === "") {
    throw new ManagerFlagError("--webhook-cert-dir must not be empty");
  }
  const admission: Array<[string, string]> = [
    ["admission-cert-secret", out.admissionCertSecret],
    ["admission-service", out.admissionService],
    ["admission-webhook-configuration", out.admissionWebhookConfiguration],
    ["admission-mutating-webhook-configuration", out.admissionMutatingWebhookConfiguration],
  ];
  for (const [name, value] of admission) {
    if (value !== "" && !DNS_SUBDOMAIN.test(value)) {
      throw new ManagerFlagError(`--${name}: ${JSON.stringify(value)} is not a valid object name`);
    }
  }
  if ((out.admissionCertSecret === "") !== (out.admissionService === "")) {
    throw new ManagerFlagError(
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
      throw new ManagerFlagError(
        `--${name} needs --admission-cert-secret and --admission-service`,
      );
    }
  }
  return out;
}

/** Own namespace (runtime §2.1): the flag, env `POD_NAMESPACE`, the SA namespace file, `default`. */
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
