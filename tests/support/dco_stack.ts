/**
 * The pieces every whole-stack setup assembles dco from, on a control plane of ./control_plane.ts:
 * dco's CRDs, the chart's ServiceAccounts and RBAC (rendered by helm), the manager as a host
 * process under its Deno permission flags, the webhook-server "image" the test kubelet runs, the
 * two-version CRDs/XRDs and FieldRename configs the stories convert, and small kubectl helpers.
 *
 * Shared by the e2e tests (tests/e2e/), `hack/e2e-reassign.ts` and the live demo (hack/demo/).
 * Test code only: nothing here changes how the product behaves.
 */
import assert from "node:assert/strict";
import type * as k8s from "@kubernetes/client-node";
import type { ConversionConfigSpec } from "../../src/engine/types.ts";
import type { CertificateModeFlag } from "../../src/manager/flags.ts";
import { b64, type CertificateAuthority, writeServingPair } from "./certs.ts";
import { type ControlPlane, freePort, waitFor } from "./control_plane.ts";
import { DCO_CRDS } from "./dco_crds.ts";
import { CHART, helm } from "./helm.ts";
import type { KubeletOptions, PodImage } from "./kubelet.ts";
import { type RoleProcess, startRoleProcess } from "./role_process.ts";
import type { WatchRecorder } from "./watch_recorder.ts";

/** The repository root (with a trailing slash). */
export const REPO = new URL("../../", import.meta.url).pathname;
/** Where a Pod (and so the webhook server) finds its ServiceAccount token. */
export const SA_DIR = "/var/run/secrets/kubernetes.io/serviceaccount";
/** The chart's ServiceAccount for the webhook-server Pods. */
export const WEBHOOK_SERVER_SA = "declarative-conversion-operator-webhook-server";
/** The API group of dco's own resources. */
export const DCO_GROUP = "terasky.com";

const RELEASE = "dco";
const KUBE_VERSION = "1.37.2";

// deno-lint-ignore no-explicit-any
export type Obj = any;

// ---------------------------------------------------------------------------------------------
// Installing dco: CRDs and the chart's RBAC

/** Applies dco's CRDs (and `extra` CRDs, e.g. Crossplane's XRD stand-in) and waits for them. */
export async function installDcoCRDs(
  cp: ControlPlane,
  extra: k8s.KubernetesObject[] = [],
): Promise<void> {
  const crds = [...DCO_CRDS, ...extra];
  for (const c of crds) await cp.apply(c);
  for (const c of crds) await cp.waitForCRD(c.metadata!.name!);
}

/** Options of {@link applyChartRBAC}. */
export interface ChartRBACOptions {
  /** Render with `features.crossplane.enabled=true` (the XRD grants). Default false. */
  crossplane?: boolean;
  /** Render with `metrics.secure=true` (the review rights and the metrics-reader ClusterRole). */
  metricsSecure?: boolean;
  /** Render with `webhookServers.metrics.secure=true` (the same, for the webhook servers). */
  webhookServerMetricsSecure?: boolean;
}

/** `helm template` arguments rendering only the chart's ServiceAccounts and RBAC. */
function chartRBACArgs(namespace: string, opts: ChartRBACOptions): string[] {
  return [
    "template",
    RELEASE,
    CHART,
    "--namespace",
    namespace,
    "--kube-version",
    KUBE_VERSION,
    ...(opts.crossplane ? ["--set", "features.crossplane.enabled=true"] : []),
    ...(opts.metricsSecure ? ["--set", "metrics.secure=true"] : []),
    ...(opts.webhookServerMetricsSecure ? ["--set", "webhookServers.metrics.secure=true"] : []),
    ...[
      "templates/serviceaccount.yaml",
      "templates/rbac/clusterrole.yaml",
      "templates/rbac/clusterrolebinding.yaml",
      "templates/rbac/webhook-server-roles.yaml",
      ...(opts.metricsSecure || opts.webhookServerMetricsSecure
        ? ["templates/rbac/metrics-auth.yaml"]
        : []),
    ].flatMap((t) => ["--show-only", t]),
  ];
}

/** Renders the chart's ServiceAccounts and RBAC for `namespace`; resolves to the YAML file. */
export async function renderChartRBAC(
  cp: ControlPlane,
  namespace: string,
  opts: ChartRBACOptions = {},
): Promise<string> {
  const out = await helm(...chartRBACArgs(namespace, opts));
  if (out.code !== 0) throw new Error(`helm template: ${out.stderr}`);
  const home = await cp.makeTempDir("helm");
  const file = `${home}/rbac.yaml`;
  await Deno.writeTextFile(file, out.stdout);
  return file;
}

/** The chart's ServiceAccounts and RBAC, rendered by helm for `namespace` and applied. */
export async function applyChartRBAC(
  cp: ControlPlane,
  namespace: string,
  opts: ChartRBACOptions = {},
): Promise<void> {
  const file = await renderChartRBAC(cp, namespace, opts);
  const r = await cp.kubectl("apply", "--server-side", "-f", file);
  if (r.code !== 0) throw new Error(`applying the chart's RBAC: ${r.stderr}`);
}

// ---------------------------------------------------------------------------------------------
// The webhook-server image and the manager process

/**
 * The webhook-server "image" for the test kubelet: what the Dockerfile's entrypoint runs, with
 * its permissions (reads only its TLS, its ServiceAccount and the sources the compile Worker loads).
 */
export const WEBHOOK_SERVER_IMAGE: PodImage = {
  entrypoint: [
    Deno.execPath(),
    "run",
    "--allow-net",
    "--allow-env",
    `--allow-read=/tls,${SA_DIR},${REPO}src`,
    `${REPO}src/main/webhook_server.ts`,
  ],
  env: { NO_COLOR: "1", RUST_BACKTRACE: "0" },
};

/** Kubelet options running {@link WEBHOOK_SERVER_IMAGE} for Pods of image `image`. */
export function webhookServerKubelet(image: string): KubeletOptions {
  return { images: { [image]: WEBHOOK_SERVER_IMAGE } };
}

/** The manager's admission listener certificate: a test CA and a leaf for 127.0.0.1. */
export interface AdmissionCertificate {
  /** Holds `tls.crt` and `tls.key` (the manager's `--webhook-cert-dir`). */
  certDir: string;
  /** The CA that signed it (its `cert` is the admission webhooks' caBundle). */
  ca: CertificateAuthority;
}

/** Makes a CA named `caName` and writes the admission listener's pair into a new temp dir. */
export async function admissionCertificate(
  cp: ControlPlane,
  caName: string,
  dirName = "mgr-tls",
): Promise<AdmissionCertificate> {
  const certDir = await cp.makeTempDir(dirName);
  const { ca } = await writeServingPair(certDir, {
    caName,
    commonName: "dco-admission",
    hosts: ["127.0.0.1"],
  });
  return { certDir, ca };
}

/** Options of {@link startManager}; unset flags are not passed (the manager's defaults apply). */
export interface ManagerOptions {
  /** `--webhook-cert-dir`, also readable by the process. */
  certDir: string;
  /** `--operator-namespace`. */
  namespace: string;
  /** The admission listener's port on 127.0.0.1; default a free port. */
  admissionPort?: number;
  /** `--default-webhook-server-image`. */
  webhookServerImage?: string;
  /** `--certificate-mode`. */
  certificateMode?: CertificateModeFlag;
  /** `--enable-xrd-support` / `--enable-crd-support`. */
  features?: { xrd?: boolean; crd?: boolean };
  /** `--leader-elect`. */
  leaderElect?: boolean;
  /** `--zap-log-level`. */
  logLevel?: "debug" | "info";
  /** `--kubeconfig` (also readable by the process); default the admin kubeconfig. */
  kubeconfig?: string;
  /** `--metrics-secure` (then {@link ManagerProcess.metricsURL} is https). */
  metricsSecure?: boolean;
  /** `--webhook-server-metrics-secure`. */
  webhookServerMetricsSecure?: boolean;
  /** `--webhook-server-namespaces` (as the chart passes it; its Roles exist only there). */
  webhookServerNamespaces?: readonly string[];
}

/** The manager process and the URLs of its listeners. */
export interface ManagerProcess extends RoleProcess {
  metricsURL: string;
  healthURL: string;
}

/** `--<name>=<value>`, or nothing when `value` is undefined. */
function optionalFlag(name: string, value: string | boolean | undefined): string[] {
  return value === undefined ? [] : [`--${name}=${value}`];
}

/** The manager's flags for `opts` and the chosen listener ports. */
function managerArgs(
  cp: ControlPlane,
  opts: ManagerOptions,
  ports: { metrics: number; health: number; admission: number },
): string[] {
  const { features = {} } = opts;
  return [
    `--kubeconfig=${opts.kubeconfig ?? cp.kubeconfigPath}`,
    `--operator-namespace=${opts.namespace}`,
    `--metrics-bind-address=127.0.0.1:${ports.metrics}`,
    `--health-probe-bind-address=127.0.0.1:${ports.health}`,
    `--webhook-cert-dir=${opts.certDir}`,
    `--webhook-bind-address=127.0.0.1:${ports.admission}`,
    ...optionalFlag("default-webhook-server-image", opts.webhookServerImage),
    ...optionalFlag("certificate-mode", opts.certificateMode),
    ...optionalFlag("enable-xrd-support", features.xrd),
    ...optionalFlag("enable-crd-support", features.crd),
    ...(opts.leaderElect ? ["--leader-elect"] : []),
    ...optionalFlag("zap-log-level", opts.logLevel),
    ...(opts.metricsSecure ? ["--metrics-secure"] : []),
    ...(opts.webhookServerMetricsSecure ? ["--webhook-server-metrics-secure"] : []),
    ...optionalFlag("webhook-server-namespaces", opts.webhookServerNamespaces?.join(",")),
  ];
}

/**
 * Starts the manager as a host process with the admin kubeconfig (or `opts.kubeconfig`), under exactly its Deno
 * permission flags (network, env, and reading its cert dir, a ServiceAccount and the kubeconfig).
 */
export function startManager(cp: ControlPlane, opts: ManagerOptions): ManagerProcess {
  const ports = {
    metrics: freePort(),
    health: freePort(),
    admission: opts.admissionPort ?? freePort(),
  };
  const role = startRoleProcess(
    `${REPO}src/main/manager.ts`,
    [
      "--allow-net",
      "--allow-env",
      `--allow-read=${opts.certDir},${SA_DIR},${opts.kubeconfig ?? cp.kubeconfigPath}`,
    ],
    managerArgs(cp, opts, ports),
  );
  return Object.assign(role, {
    metricsURL: `${opts.metricsSecure ? "https" : "http"}://127.0.0.1:${ports.metrics}`,
    healthURL: `http://127.0.0.1:${ports.health}`,
  });
}

/** The last lines of the manager's log and of every Pod's (the kubelet's), for a failure. */
export async function stackLogs(
  cp: ControlPlane,
  manager: RoleProcess,
  lines: { manager: number; pods: number },
): Promise<string> {
  const tail = manager.output().split("\n").slice(-lines.manager).join("\n");
  return `--- manager ---\n${tail}\n${await cp.kubelet!.allLogs(lines.pods)}`;
}

// ---------------------------------------------------------------------------------------------
// Bringing up the whole stack: dco installed, the manager running with its built-in CA

/** Options of {@link installDco}. */
export interface InstallOptions {
  /** CRDs installed with dco's (e.g. Crossplane's XRD stand-in). */
  extraCRDs?: k8s.KubernetesObject[];
  /** How the chart's RBAC is rendered. */
  rbac?: ChartRBACOptions;
}

/** dco's CRDs, the operator namespace `dco-system` and the chart's RBAC in it; resolves to it. */
export async function installDco(cp: ControlPlane, opts: InstallOptions = {}): Promise<string> {
  await installDcoCRDs(cp, opts.extraCRDs);
  const namespace = await cp.createNamespace("dco-system");
  await applyChartRBAC(cp, namespace, opts.rbac);
  return namespace;
}

/** Options of {@link startDcoManager}: the manager's, less what it sets itself. */
export interface DcoManagerOptions extends Omit<ManagerOptions, "certDir" | "certificateMode"> {
  /** The name of the admission listener's test CA. */
  caName: string;
}

/** A manager of {@link startDcoManager}: its process, admission listener and failure message. */
export interface DcoManager extends ManagerProcess {
  /** The operator namespace. */
  namespace: string;
  /** The admission listener's port on 127.0.0.1. */
  admissionPort: number;
  /** The admission listener's CA (its `cert` is the admission webhooks' caBundle). */
  ca: CertificateAuthority;
  /** The manager's last 40 log lines and every Pod's last 30. */
  logs(): Promise<string>;
  /** Rejects with `e`'s message and {@link DcoManager.logs}: a `.catch` of the stack's waits. */
  failing(e: unknown): Promise<never>;
}

/**
 * The manager with a test certificate for its admission listener and `--certificate-mode=builtin`
 * (the webhook servers' certificates come from its own CA: no cert-manager here).
 */
export async function startDcoManager(
  cp: ControlPlane,
  opts: DcoManagerOptions,
): Promise<DcoManager> {
  const { caName, ...managerOpts } = opts;
  const { certDir, ca } = await admissionCertificate(cp, caName);
  const admissionPort = opts.admissionPort ?? freePort();
  const manager = startManager(cp, {
    ...managerOpts,
    certDir,
    admissionPort,
    certificateMode: "builtin",
  });
  const logs = () => stackLogs(cp, manager, { manager: 40, pods: 30 });
  return Object.assign(manager, {
    namespace: opts.namespace,
    admissionPort,
    ca,
    logs,
    failing: async (e: unknown): Promise<never> => {
      throw new Error(`${(e as Error).message}\n${await logs()}`);
    },
  });
}

/** {@link installDco}, then {@link startDcoManager} in its namespace. */
export async function startDcoStack(
  cp: ControlPlane,
  opts: InstallOptions & Omit<DcoManagerOptions, "namespace">,
): Promise<DcoManager> {
  const { extraCRDs, rbac, ...managerOpts } = opts;
  const namespace = await installDco(cp, { extraCRDs, rbac });
  return startDcoManager(cp, { ...managerOpts, namespace });
}

// ---------------------------------------------------------------------------------------------
// dco's resources

/** A ConversionWebhookServer named `name` with `spec`. */
export function webhookServer(name: string, spec: Record<string, unknown>): k8s.KubernetesObject {
  return {
    apiVersion: `${DCO_GROUP}/v1alpha1`,
    kind: "ConversionWebhookServer",
    metadata: { name },
    spec,
  } as k8s.KubernetesObject;
}

/** Options of {@link fieldRenameConfig}. */
export interface FieldRenameConfigOptions {
  /** The config's name. */
  name: string;
  /** A CRDConversionConfig (target a CRD) or an XRDConversionConfig (target an XRD). */
  kind: "CRDConversionConfig" | "XRDConversionConfig";
  /** The target CRD's or XRD's name. */
  target: string;
  /** Default v1 (and the spoke v2). */
  hubVersion?: string;
  /** Default v2. */
  spokeVersion?: string;
  /** Default `spec.size`. */
  hubPath?: string;
  spokePath: string;
}

/** The spec of {@link fieldRenameConfig} (what the engine analyzes). */
export function fieldRenameSpec(
  opts: Omit<FieldRenameConfigOptions, "name">,
): ConversionConfigSpec {
  const targetField = opts.kind === "CRDConversionConfig" ? "targetCRD" : "targetXRD";
  const fieldRename = { hubPath: opts.hubPath ?? "spec.size", spokePath: opts.spokePath };
  return {
    [targetField]: { name: opts.target },
    hubVersion: opts.hubVersion ?? "v1",
    spokes: [{
      version: opts.spokeVersion ?? "v2",
      rules: [{ strategy: "FieldRename", fieldRename }],
    }],
  };
}

/** A conversion config with one spoke whose single rule renames the hub's field. */
export function fieldRenameConfig(opts: FieldRenameConfigOptions): k8s.KubernetesObject {
  return {
    apiVersion: `${DCO_GROUP}/v1alpha1`,
    kind: opts.kind,
    metadata: { name: opts.name },
    spec: fieldRenameSpec(opts),
  } as k8s.KubernetesObject;
}

/** Options of {@link validatingWebhook}. */
export interface ValidatingWebhookOptions {
  /** The ValidatingWebhookConfiguration's name. */
  name: string;
  /** dco's resource kind, lower case, e.g. `crdconversionconfig` (its path and webhook name). */
  kind: string;
  /** The manager's admission listener on 127.0.0.1. */
  admissionPort: number;
  /** The admission listener's CA, PEM. */
  caPEM: string;
}

/**
 * A ValidatingWebhookConfiguration sending CREATE and UPDATE of one dco resource to the host
 * manager's admission listener (failure policy Fail).
 */
export function validatingWebhook(opts: ValidatingWebhookOptions): k8s.KubernetesObject {
  const path = `/validate-terasky-com-v1alpha1-${opts.kind}`;
  return {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "ValidatingWebhookConfiguration",
    metadata: { name: opts.name },
    webhooks: [{
      name: `v${opts.kind}.${DCO_GROUP}`,
      admissionReviewVersions: ["v1"],
      sideEffects: "None",
      failurePolicy: "Fail",
      clientConfig: {
        url: `https://127.0.0.1:${opts.admissionPort}${path}`,
        caBundle: b64(opts.caPEM),
      },
      rules: [{
        apiGroups: [DCO_GROUP],
        apiVersions: ["v1alpha1"],
        operations: ["CREATE", "UPDATE"],
        resources: [`${opts.kind}s`],
      }],
    }],
  } as k8s.KubernetesObject;
}

/**
 * The XRD conversion guard's one webhook as the chart renders it, calling `clientConfig` (the
 * chart's admission Service, or a host manager's listener by URL).
 */
export function xrdGuardWebhook(clientConfig: Obj): Obj {
  return {
    name: `gxrdconversion.${DCO_GROUP}`,
    admissionReviewVersions: ["v1"],
    sideEffects: "None",
    failurePolicy: "Ignore",
    matchPolicy: "Equivalent",
    timeoutSeconds: 5,
    reinvocationPolicy: "IfNeeded",
    clientConfig,
    rules: [{
      apiGroups: ["apiextensions.crossplane.io"],
      apiVersions: ["v1", "v2"],
      resources: ["compositeresourcedefinitions"],
      operations: ["CREATE", "UPDATE"],
      scope: "Cluster",
    }],
  };
}

/** A MutatingWebhookConfiguration sending XRD writes to the host manager's guard endpoint. */
export function xrdGuardWebhookConfiguration(
  admissionPort: number,
  caPEM: string,
): k8s.KubernetesObject {
  return {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "MutatingWebhookConfiguration",
    metadata: { name: "dco-xrd-conversion-guard" },
    webhooks: [xrdGuardWebhook({
      url: `https://127.0.0.1:${admissionPort}/guard-xrd-conversion`,
      caBundle: b64(caPEM),
    })],
  } as k8s.KubernetesObject;
}

// ---------------------------------------------------------------------------------------------
// Two-version CRDs and XRDs: v1 has an integer `spec.size`, v2 an integer `spec.capacity`

/** What {@link twoVersionCRD} and {@link twoVersionXRD} are made of. */
export interface TwoVersionOptions {
  group: string;
  plural: string;
  kind: string;
  /** String fields of `spec` in both versions; default `["color"]`. */
  stringFields?: string[];
  /** One more string field of v1's `spec` (schema drift). */
  extraV1Field?: string;
  /** Fields of `spec` of other types in both versions, by their schemas. */
  specFields?: Record<string, Obj>;
}

/** The structural schema of one version: an integer `spec.<intField>`, string and other fields. */
function specSchema(intField: string, stringFields: string[], more: Record<string, Obj>): Obj {
  const strings = Object.fromEntries(stringFields.map((f) => [f, { type: "string" }]));
  const properties = { [intField]: { type: "integer" }, ...strings, ...structuredClone(more) };
  return {
    openAPIV3Schema: { type: "object", properties: { spec: { type: "object", properties } } },
  };
}

/** v1 (`size`) and v2 (`capacity`), both served; `flag` (storage or referenceable) on `flagged`. */
function twoVersions(
  opts: TwoVersionOptions,
  flag: "storage" | "referenceable",
  flagged: "v1" | "v2",
): Obj[] {
  const strings = opts.stringFields ?? ["color"];
  const v1Strings = opts.extraV1Field ? [...strings, opts.extraV1Field] : strings;
  const schema = (intField: string, fields: string[]) =>
    specSchema(intField, fields, opts.specFields ?? {});
  return [
    { name: "v1", served: true, [flag]: flagged === "v1", schema: schema("size", v1Strings) },
    { name: "v2", served: true, [flag]: flagged === "v2", schema: schema("capacity", strings) },
  ];
}

/**
 * A CRD conversion stanza calling a webhook by URL (a test's own endpoint, not a Service), with
 * `caPEM` as its caBundle.
 */
export function urlWebhookConversion(url: string, caPEM: string): Obj {
  return {
    strategy: "Webhook",
    webhook: { conversionReviewVersions: ["v1"], clientConfig: { url, caBundle: b64(caPEM) } },
  };
}

/**
 * A Namespaced CRD `<plural>.<group>` serving v1 (storage) and v2; without conversion unless a
 * `conversion` stanza is given (e.g. {@link urlWebhookConversion}).
 */
export function twoVersionCRD(
  opts: TwoVersionOptions & { singular?: string; conversion?: Obj },
): k8s.KubernetesObject {
  const { group, plural, kind } = opts;
  const singular = opts.singular ?? kind.toLowerCase();
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      scope: "Namespaced",
      names: { plural, singular, kind, listKind: `${kind}List` },
      versions: twoVersions(opts, "storage", "v1"),
      ...(opts.conversion ? { conversion: opts.conversion } : {}),
    },
  } as k8s.KubernetesObject;
}

/** Options of {@link twoVersionXRD}. */
export interface TwoVersionXRDOptions extends TwoVersionOptions {
  /** The referenceable version (the generated CRD's storage version). */
  referenceable: "v1" | "v2";
  /** Offer claims: a legacy XRD, written at apiextensions.crossplane.io/v1. */
  claimNames?: { plural: string; kind: string };
}

/** A Crossplane XRD `<plural>.<group>` serving v1 and v2: Namespaced (v2) or with claims (v1). */
export function twoVersionXRD(opts: TwoVersionXRDOptions): k8s.KubernetesObject {
  const { group, plural, kind, claimNames } = opts;
  return {
    apiVersion: `apiextensions.crossplane.io/${claimNames ? "v1" : "v2"}`,
    kind: "CompositeResourceDefinition",
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      ...(claimNames ? { claimNames } : { scope: "Namespaced" }),
      names: { plural, kind },
      versions: twoVersions(opts, "referenceable", opts.referenceable),
    },
  } as k8s.KubernetesObject;
}

// ---------------------------------------------------------------------------------------------
// kubectl

/** Options of {@link kubectlFor}. */
export interface KubectlOptions {
  /** More context for a failure message, e.g. a process's log. */
  diagnostics?: () => string;
}

/** kubectl that must succeed, and `kubectl get -o json` parsed, bound to one control plane. */
export interface Kubectl {
  /** Runs kubectl; resolves to its stdout, rejects with its stderr unless it exits 0. */
  kubectl(...args: string[]): Promise<string>;
  /** `kubectl get <args> -o json`, parsed; rejects when the read fails. */
  getJSON(...args: string[]): Promise<Obj>;
}

/** {@link Kubectl} for `cp`. */
export function kubectlFor(cp: ControlPlane, opts: KubectlOptions = {}): Kubectl {
  const kubectl = async (...args: string[]): Promise<string> => {
    const r = await cp.kubectl(...args);
    if (r.code !== 0) {
      const extra = opts.diagnostics ? `\n${opts.diagnostics()}` : "";
      throw new Error(`kubectl ${args.join(" ")}: ${r.stderr}${extra}`);
    }
    return r.stdout;
  };
  const getJSON = async (...args: string[]): Promise<Obj> =>
    JSON.parse(await kubectl("get", ...args, "-o", "json"));
  return { kubectl, getJSON };
}

/** Runs kubectl on `cp`; resolves to its stdout, rejects with its stderr unless it exits 0. */
export function kubectlOK(cp: ControlPlane, ...args: string[]): Promise<string> {
  return kubectlFor(cp).kubectl(...args);
}

/** `kubectl get <args> -o json` on `cp`, parsed; rejects when the read fails. */
export function getJSON(cp: ControlPlane, ...args: string[]): Promise<Obj> {
  return kubectlFor(cp).getJSON(...args);
}

/**
 * `kubectl rollout status` of Deployment `name`: resolves once its new ReplicaSet is available
 * (old Pods may still be draining), rejects when that takes longer than `timeoutMs`.
 */
export function rolloutStatus(
  cp: ControlPlane,
  namespace: string,
  name: string,
  timeoutMs: number,
): Promise<string> {
  const timeout = `--timeout=${Math.ceil(timeoutMs / 1000)}s`;
  return kubectlOK(cp, "rollout", "status", `deployment/${name}`, "-n", namespace, timeout);
}

/** `kubectl rollout restart` of Deployment `name`, then {@link rolloutStatus}. */
export async function rolloutRestart(
  cp: ControlPlane,
  namespace: string,
  name: string,
  timeoutMs: number,
): Promise<void> {
  await kubectlOK(cp, "rollout", "restart", `deployment/${name}`, "-n", namespace);
  await rolloutStatus(cp, namespace, name, timeoutMs);
}

/** `kubectl get <args> -o json` on `cp`, parsed, or undefined when the read fails (polling). */
export async function tryGetJSON(cp: ControlPlane, ...args: string[]): Promise<Obj | undefined> {
  const r = await cp.kubectl("get", ...args, "-o", "json");
  return r.code === 0 ? JSON.parse(r.stdout) : undefined;
}

/** The status condition of `type` of `obj`, or undefined. */
export function findCondition(obj: Obj, type: string): Obj | undefined {
  return (obj?.status?.conditions ?? []).find((c: Obj) => c.type === type);
}

/** Writes `obj` as JSON into a new temp file, for `kubectl create -f`; resolves to its path. */
export async function writeObjectFile(cp: ControlPlane, obj: unknown): Promise<string> {
  const dir = await cp.makeTempDir("obj");
  const file = `${dir}/obj.json`;
  // JSON, not YAML: kubectl reads YAML 1.1, where an unquoted `off` is a boolean.
  await Deno.writeTextFile(file, JSON.stringify(obj));
  return file;
}

/** `kubectl create -f` of `obj` (from a temp file), in `namespace` if given; must succeed. */
export async function createObject(
  cp: ControlPlane,
  obj: unknown,
  namespace?: string,
): Promise<string> {
  const ns = namespace === undefined ? [] : ["-n", namespace];
  return kubectlOK(cp, "create", ...ns, "-f", await writeObjectFile(cp, obj));
}

// ---------------------------------------------------------------------------------------------
// Checks the whole-stack stories share

/**
 * The ConversionWebhookServer `name` once `replicas` Pods are ready and it is Available and
 * ServiceReady, else undefined (a {@link waitFor} probe).
 */
export async function readyWebhookServer(
  cp: ControlPlane,
  name: string,
  replicas: number,
): Promise<Obj | undefined> {
  const s = await getJSON(cp, `conversionwebhookservers.${DCO_GROUP}`, name);
  return s.status?.readyReplicas === replicas &&
      findCondition(s, "Available")?.status === "True" &&
      findCondition(s, "ServiceReady")?.status === "True"
    ? s
    : undefined;
}

/** Asserts that server `name` has `count` Pods, Running on the pod network, that logged ready. */
export async function assertWebhookServerPods(
  cp: ControlPlane,
  namespace: string,
  name: string,
  count: number,
): Promise<void> {
  const selector = `app.kubernetes.io/instance=${name}`;
  const pods = (await getJSON(cp, "pods", "-n", namespace, "-l", selector)).items;
  assert.equal(pods.length, count);
  for (const p of pods) {
    assert.equal(p.status.phase, "Running");
    assert.match(p.status.podIP, /^10\.\d+\.\d+\.\d+$/);
    assert.match(await cp.kubelet!.podLog(namespace, p.metadata.name), /"msg":".*ready/i);
  }
}

/**
 * Asserts, by etcd revision order, that the `target` (what `targets` watches: a CRD or an XRD)
 * got its webhook stanza only after `servers` saw a ConversionWebhookServer ready.
 */
export function assertPatchedAfterReady(
  targets: WatchRecorder,
  servers: WatchRecorder,
  target: string,
): void {
  const patched = targets.events.find((e) => e.object.spec?.conversion?.strategy === "Webhook");
  const serverReady = servers.events.find((e) =>
    e.object.status?.readyReplicas > 0 &&
    ["Available", "ServiceReady", "CertificateReady"].every((t) =>
      findCondition(e.object, t)?.status === "True"
    )
  );
  assert.ok(patched, "the watch saw the patch");
  assert.ok(serverReady, "the watch saw the server ready");
  assert.ok(
    serverReady.rv < patched.rv,
    `server ready at revision ${serverReady.rv}, ${target} patched at ${patched.rv}`,
  );
  assert.ok(
    targets.events.filter((e) => e.rv < serverReady.rv)
      .every((e) => (e.object.spec?.conversion?.strategy ?? "None") === "None"),
    "no webhook stanza before the server was ready",
  );
}

/** Options of {@link assertConvertsOnRead}: objects of a {@link twoVersionCRD}-like resource. */
export interface ConvertsOnReadOptions {
  group: string;
  plural: string;
  kind: string;
  /** Where the objects `w1` and `w2` are created. */
  namespace: string;
  /** Turns a timeout of the first converted read into the test's failure (with its logs). */
  onTimeout?: (e: unknown) => Promise<never>;
}

/**
 * Asserts objects convert on read through the apiserver both ways: `w1` created at v1 (`size` 3)
 * reads at v2 as `capacity` 3; `w2` created at v2 (`capacity` 7) reads at v1 as `size` 7; a v2
 * list shows both.
 */
export async function assertConvertsOnRead(cp: ControlPlane, opts: ConvertsOnReadOptions) {
  const { group, plural, kind, namespace } = opts;
  const at = (v: string) => ({ apiVersion: `${group}/${v}`, kind });
  await createObject(
    cp,
    { ...at("v1"), metadata: { name: "w1" }, spec: { size: 3, color: "red" } },
    namespace,
  );
  const read = waitFor(
    "read at v2",
    () => tryGetJSON(cp, `${plural}.v2.${group}`, "w1", "-n", namespace),
    { timeoutMs: 30_000 },
  );
  const v2 = await (opts.onTimeout ? read.catch(opts.onTimeout) : read);
  assert.equal(v2.apiVersion, `${group}/v2`);
  assert.deepEqual(v2.spec, { capacity: 3, color: "red" });
  // Written at v2, stored at v1 (the storage version), read back at both.
  await createObject(cp, {
    ...at("v2"),
    metadata: { name: "w2" },
    spec: { capacity: 7, color: "blue" },
  }, namespace);
  const v1 = await getJSON(cp, `${plural}.v1.${group}`, "w2", "-n", namespace);
  assert.deepEqual(v1.spec, { size: 7, color: "blue" });
  const list = await getJSON(cp, `${plural}.v2.${group}`, "-n", namespace);
  assert.deepEqual(
    list.items.map((i: Obj) => [i.metadata.name, i.spec.capacity]),
    [["w1", 3], ["w2", 7]],
  );
}
