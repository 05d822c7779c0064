/**
 * Where the kinds dco reads and writes are served (group, version, plural): dco's own kinds and
 * the neighbours' kinds it targets — Crossplane's CompositeResourceDefinition and cert-manager's
 * Certificate. Kubernetes' built-in kinds are in src/kube/resources.ts.
 */
import { type ConfigKind, CRD_CONFIG_KIND, XRD_CONFIG_KIND } from "./config.ts";

/**
 * A collection's address: `group` "" is the core group; `namespace` undefined means
 * cluster-scoped (or all namespaces). The same shape as the kube client's `ResourceRef`, which
 * this layer does not import.
 */
export interface GroupVersionResource {
  readonly group: string;
  readonly version: string;
  readonly plural: string;
  readonly namespace?: string;
}

/** dco's API group and version. */
export const DCO_GROUP = "terasky.com";
export const DCO_VERSION = "v1alpha1";

/** The config kinds' collections. */
export const CONFIG_RESOURCES: Readonly<Record<ConfigKind, GroupVersionResource>> = {
  [CRD_CONFIG_KIND]: { group: DCO_GROUP, version: DCO_VERSION, plural: "crdconversionconfigs" },
  [XRD_CONFIG_KIND]: { group: DCO_GROUP, version: DCO_VERSION, plural: "xrdconversionconfigs" },
};

/** ConversionWebhookServers. */
export const SERVER_RESOURCE: GroupVersionResource = {
  group: DCO_GROUP,
  version: DCO_VERSION,
  plural: "conversionwebhookservers",
};

/** Crossplane's CompositeResourceDefinitions at `version` (dco reads and writes v2). */
export function xrdResource(version = "v2"): GroupVersionResource {
  return { group: "apiextensions.crossplane.io", version, plural: "compositeresourcedefinitions" };
}

/** The XRD collection dco watches. */
export const XRD_RESOURCE: GroupVersionResource = xrdResource();

/** cert-manager Certificates in `namespace`. */
export const CERTIFICATES = (namespace: string): GroupVersionResource => ({
  group: "cert-manager.io",
  version: "v1",
  plural: "certificates",
  namespace,
});
