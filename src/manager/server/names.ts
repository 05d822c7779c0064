/**
 * The names and labels of a ConversionWebhookServer's children, and the fixed ports and paths of
 * the webhook-server container (docs/design/server-children.md#names-and-labels).
 */

/** Image for servers without `spec.image.repository`: `--default-webhook-server-image`'s default. */
export const DEFAULT_WEBHOOK_SERVER_IMAGE =
  "ghcr.io/terasky-oss/declarative-conversion-webhook-server:latest";

export const LABEL_NAME = "app.kubernetes.io/name";
export const LABEL_INSTANCE = "app.kubernetes.io/instance";
export const LABEL_MANAGED_BY = "app.kubernetes.io/managed-by";
export const WEBHOOK_SERVER_APP_NAME = "declarative-conversion-webhook-server";
export const MANAGED_BY = "declarative-conversion-operator";
/** The selector keys `spec.podLabels` can never override: the Service and PDB select on them. */
export const RESERVED_POD_LABEL_KEYS: readonly string[] = [
  LABEL_NAME,
  LABEL_INSTANCE,
  LABEL_MANAGED_BY,
];

export const CONTAINER_NAME = "webhook-server";
export const CONVERSION_PORT = 9443;
export const METRICS_PORT = 8443;
export const TLS_MOUNT_PATH = "/tls";

/** `<cws>-webhook-server`: the name of the Deployment, Service, HPA and PDB. */
export function childName(cws: string): string {
  return `${cws}-webhook-server`;
}

/** `<cws>-webhook-server-cert`: the cert-manager Certificate. */
export function certificateName(cws: string): string {
  return `${cws}-webhook-server-cert`;
}

/** `<cws>-webhook-server-tls`, the Secret cert-manager writes and the pods mount. */
export function tlsSecretName(cws: string): string {
  return `${cws}-webhook-server-tls`;
}

/** The selector labels every child carries (and the pods, whatever `spec.podLabels` says). */
export function podLabels(cws: string): Record<string, string> {
  return {
    [LABEL_NAME]: WEBHOOK_SERVER_APP_NAME,
    [LABEL_INSTANCE]: cws,
    [LABEL_MANAGED_BY]: MANAGED_BY,
  };
}

/** The default `spec.certificate.dnsNames`: the Service's short and qualified DNS names. */
export function defaultDnsNames(cws: string, namespace: string): string[] {
  const svc = childName(cws);
  return [
    svc,
    `${svc}.${namespace}`,
    `${svc}.${namespace}.svc`,
    `${svc}.${namespace}.svc.cluster.local`,
  ];
}
