/**
 * Minimal CustomResourceDefinitions for dco's own kinds (`terasky.com/v1alpha1`), so e2e tests of
 * the webhook server can create configs and servers in the test apiserver. The manager's issue
 * generates the full structural CRDs from the zod schemas; these keep `spec`/`status` open.
 */
import type * as k8s from "@kubernetes/client-node";

function crd(kind: string, plural: string, shortName: string): k8s.V1CustomResourceDefinition {
  const open = { type: "object", "x-kubernetes-preserve-unknown-fields": true };
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `${plural}.terasky.com` },
    spec: {
      group: "terasky.com",
      scope: "Cluster",
      names: {
        kind,
        plural,
        singular: kind.toLowerCase(),
        listKind: `${kind}List`,
        shortNames: [shortName],
      },
      versions: [{
        name: "v1alpha1",
        served: true,
        storage: true,
        subresources: { status: {} },
        schema: { openAPIV3Schema: { type: "object", properties: { spec: open, status: open } } },
      }],
    },
  };
}

export const DCO_CRDS: readonly k8s.V1CustomResourceDefinition[] = [
  crd("CRDConversionConfig", "crdconversionconfigs", "ccc"),
  crd("XRDConversionConfig", "xrdconversionconfigs", "xcc"),
  crd("ConversionWebhookServer", "conversionwebhookservers", "cws"),
];
