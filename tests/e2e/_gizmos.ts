/**
 * A shared piece of the e2e tests that run the webhook-server role as a real process against one
 * CRD through a real kube-apiserver: the "Gizmo" target (hub v1 `spec.size`, spoke v2
 * `spec.capacity`, a FieldRename), its serving certificate, and the role started with exactly its
 * permission flags.
 */
import type * as k8s from "@kubernetes/client-node";
import { writeServingPair } from "../support/certs.ts";
import { type ControlPlane, freePort } from "../support/control_plane.ts";
import { installDcoCRDs, twoVersionCRD, urlWebhookConversion } from "../support/dco_stack.ts";
import { type RoleProcess, startRoleProcess } from "../support/role_process.ts";

const REPO = new URL("../../", import.meta.url).pathname;
const ENTRY = `${REPO}src/main/webhook_server.ts`;
// From source, the compile Worker loads its imports from src/.
const SOURCES = `${REPO}src`;

export interface GizmoTarget {
  group: string;
  /** `gizmos.<group>`: the CRD and registry key. */
  target: string;
  /** The conversion port the CRD points at. */
  port: number;
  certDir: string;
  /** The CA of the serving certificate (for clients of the conversion port). */
  caPEM: string;
}

/**
 * dco's CRDs, a serving certificate for 127.0.0.1, the default ConversionWebhookServer, the Gizmo
 * CRD of `group` with its conversion webhook at a free port, and its CRDConversionConfig.
 */
export async function applyGizmoTarget(cp: ControlPlane, group: string): Promise<GizmoTarget> {
  await installDcoCRDs(cp);
  const certDir = await cp.makeTempDir(`${group.split(".")[0]}-tls`);
  const { ca } = await writeServingPair(certDir, {
    caName: `dco-${group.split(".")[0]}-ca`,
    commonName: "dco-webhook",
    hosts: ["127.0.0.1"],
  });
  const port = freePort();
  const target = `gizmos.${group}`;
  await cp.apply({
    apiVersion: "terasky.com/v1alpha1",
    kind: "ConversionWebhookServer",
    metadata: { name: "dco" },
    spec: { default: true, certificate: { issuerRef: { name: "dco-selfsigned" } } },
  } as k8s.KubernetesObject);
  await cp.apply(twoVersionCRD({
    group,
    plural: "gizmos",
    kind: "Gizmo",
    conversion: urlWebhookConversion(`https://127.0.0.1:${port}/convert/${target}`, ca.cert),
  }));
  await cp.waitForCRD(target);
  await cp.apply({
    apiVersion: "terasky.com/v1alpha1",
    kind: "CRDConversionConfig",
    metadata: { name: "gizmos" },
    spec: {
      targetCRD: { name: target },
      hubVersion: "v1",
      spokes: [{
        version: "v2",
        rules: [{
          strategy: "FieldRename",
          fieldRename: { hubPath: "spec.size", spokePath: "spec.capacity" },
        }],
      }],
    },
  } as k8s.KubernetesObject);
  return { group, target, port, certDir, caPEM: ca.cert };
}

/**
 * The role serving `t`, with its documented permission flags, CRD support only, and `args`/`env`
 * added; `metricsURL` is its plain listener.
 */
export function startGizmoServer(
  cp: ControlPlane,
  t: GizmoTarget,
  args: string[] = [],
  env: Record<string, string> = {},
): RoleProcess & { metricsURL: string } {
  const metricsPort = freePort();
  const role = startRoleProcess(
    ENTRY,
    ["--allow-net", "--allow-env", `--allow-read=${t.certDir},${cp.kubeconfigPath},${SOURCES}`],
    [
      "--webhook-server-name=dco",
      `--tls-cert-dir=${t.certDir}`,
      `--conversion-bind-address=127.0.0.1:${t.port}`,
      `--metrics-bind-address=127.0.0.1:${metricsPort}`,
      `--kubeconfig=${cp.kubeconfigPath}`,
      "--enable-xrd-support=false",
      ...args,
    ],
    env,
  );
  return Object.assign(role, { metricsURL: `http://127.0.0.1:${metricsPort}` });
}
