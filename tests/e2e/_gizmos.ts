/**
 * A shared piece of the e2e tests that run the webhook-server role as a real process against one
 * CRD through a real kube-apiserver: its serving certificate, the default ConversionWebhookServer
 * it serves for, the role started with exactly its permission flags, and the "Gizmo" target (hub
 * v1 `spec.size`, spoke v2 `spec.capacity`, a FieldRename).
 */
import type * as k8s from "@kubernetes/client-node";
import { writeServingPair } from "../support/certs.ts";
import { type ControlPlane, freePort } from "../support/control_plane.ts";
import {
  fieldRenameConfig,
  installDcoCRDs,
  REPO,
  twoVersionCRD,
  urlWebhookConversion,
  webhookServer,
} from "../support/dco_stack.ts";
import { type RoleProcess, startRoleProcess } from "../support/role_process.ts";

const ENTRY = `${REPO}src/main/webhook_server.ts`;
// From source, the compile Worker loads its imports from src/ (a bundle reads one worker.js).
const SOURCES = `${REPO}src`;

/** The role's serving certificate: a cert dir with `tls.crt`/`tls.key`, and its CA. */
export interface RoleCertificate {
  certDir: string;
  /** The CA of the serving certificate (for clients of the conversion port). */
  caPEM: string;
}

/** A serving certificate for `hosts`, signed by a new CA `dco-<name>-ca`, in a new temp dir. */
export async function roleCertificate(
  cp: ControlPlane,
  name: string,
  hosts: string[] = ["127.0.0.1"],
): Promise<RoleCertificate> {
  const certDir = await cp.makeTempDir(`${name}-tls`);
  const { ca } = await writeServingPair(certDir, {
    caName: `dco-${name}-ca`,
    commonName: "dco-webhook",
    hosts,
  });
  return { certDir, caPEM: ca.cert };
}

/**
 * The default ConversionWebhookServer `dco` the role serves as. Its certificate settings are the
 * manager's; the role here serves the test's own certificate.
 */
export function defaultRoleServer(): k8s.KubernetesObject {
  return webhookServer("dco", {
    default: true,
    certificate: { issuerRef: { name: "dco-selfsigned" } },
  });
}

/** Options of {@link startRole}. */
export interface RoleOptions {
  /** `--tls-cert-dir`, also readable by the process. */
  certDir: string;
  /** The conversion listener's port on 127.0.0.1. */
  port: number;
  /** `--kubeconfig` (also readable by the process); default the admin kubeconfig. */
  kubeconfig?: string;
  /** More flags. */
  args?: string[];
  env?: Record<string, string>;
}

/**
 * The role as server `dco`, with its documented permission flags, CRD support only, and `args`/
 * `env` added; `metricsURL` is its plain listener.
 */
export function startRole(
  cp: ControlPlane,
  opts: RoleOptions,
): RoleProcess & { metricsURL: string } {
  const metricsPort = freePort();
  const kubeconfig = opts.kubeconfig ?? cp.kubeconfigPath;
  const role = startRoleProcess(
    ENTRY,
    ["--allow-net", "--allow-env", `--allow-read=${opts.certDir},${kubeconfig},${SOURCES}`],
    [
      "--webhook-server-name=dco",
      `--tls-cert-dir=${opts.certDir}`,
      `--conversion-bind-address=127.0.0.1:${opts.port}`,
      `--metrics-bind-address=127.0.0.1:${metricsPort}`,
      `--kubeconfig=${kubeconfig}`,
      "--enable-xrd-support=false",
      ...(opts.args ?? []),
    ],
    opts.env,
  );
  return Object.assign(role, { metricsURL: `http://127.0.0.1:${metricsPort}` });
}

export interface GizmoTarget extends RoleCertificate {
  group: string;
  /** `gizmos.<group>`: the CRD and registry key. */
  target: string;
  /** The conversion port the CRD points at. */
  port: number;
}

/**
 * dco's CRDs, a serving certificate for 127.0.0.1, the default ConversionWebhookServer, the Gizmo
 * CRD of `group` with its conversion webhook at a free port, and its CRDConversionConfig.
 */
export async function applyGizmoTarget(cp: ControlPlane, group: string): Promise<GizmoTarget> {
  await installDcoCRDs(cp);
  const cert = await roleCertificate(cp, group.split(".")[0]);
  const port = freePort();
  const target = `gizmos.${group}`;
  await cp.apply(defaultRoleServer());
  await cp.apply(twoVersionCRD({
    group,
    plural: "gizmos",
    kind: "Gizmo",
    conversion: urlWebhookConversion(`https://127.0.0.1:${port}/convert/${target}`, cert.caPEM),
  }));
  await cp.waitForCRD(target);
  await cp.apply(fieldRenameConfig({
    name: "gizmos",
    kind: "CRDConversionConfig",
    target,
    spokePath: "spec.capacity",
  }));
  return { group, target, port, ...cert };
}

/** {@link startRole} serving `t`, with `args` and `env` added. */
export function startGizmoServer(
  cp: ControlPlane,
  t: GizmoTarget,
  args: string[] = [],
  env: Record<string, string> = {},
): RoleProcess & { metricsURL: string } {
  return startRole(cp, { certDir: t.certDir, port: t.port, args, env });
}
