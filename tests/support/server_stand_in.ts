/**
 * Playing the parts a cluster without a kubelet lacks for one ConversionWebhookServer: its TLS
 * Secret (a serving pair for its Service, as the existing-secret certificate mode expects) and its
 * Deployment reporting available replicas. With both, the manager sees the server ready and
 * applies the configs assigned to it. Test code only.
 */
import type * as k8s from "@kubernetes/client-node";
import { rfc3339 } from "../../src/lib/time.ts";
import { b64, type CertificateAuthority } from "./certs.ts";
import type { ControlPlane } from "./control_plane.ts";
import type { Kubectl } from "./dco_stack.ts";

/** `<server>-webhook-server`: the Service and Deployment of server `server`. */
export function serverChild(server: string): string {
  return `${server}-webhook-server`;
}

/** Creates server `server`'s TLS Secret in `ns`: a serving pair for its Service issued by `ca`. */
export async function provideServingSecret(
  cp: ControlPlane,
  ca: CertificateAuthority,
  ns: string,
  server: string,
): Promise<void> {
  const svc = serverChild(server);
  const serving = await ca.issue({
    commonName: svc,
    hosts: [`${svc}.${ns}.svc`, `${svc}.${ns}`, svc],
  });
  await cp.apply({
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: `${svc}-tls`, namespace: ns },
    type: "kubernetes.io/tls",
    data: { "tls.crt": b64(serving.cert), "tls.key": b64(serving.key), "ca.crt": b64(ca.cert) },
  } as k8s.KubernetesObject);
}

/** The kubelet's part: server `server`'s Deployment in `ns` reports `replicas` available. */
export async function markServerAvailable(
  { kubectl }: Kubectl,
  ns: string,
  server: string,
  replicas = 2,
): Promise<void> {
  const now = rfc3339(Date.now());
  await kubectl(
    "patch",
    "deployment",
    serverChild(server),
    "-n",
    ns,
    "--subresource=status",
    "--type=merge",
    "-p",
    JSON.stringify({
      status: {
        observedGeneration: 1,
        replicas,
        updatedReplicas: replicas,
        readyReplicas: replicas,
        availableReplicas: replicas,
        conditions: [{
          type: "Available",
          status: "True",
          reason: "MinimumReplicasAvailable",
          message: "Deployment has minimum availability.",
          lastUpdateTime: now,
          lastTransitionTime: now,
        }],
      },
    }),
  );
}
