/**
 * Where the built-in Kubernetes kinds dco uses are served (group, version, plural). A function
 * takes the namespace of a namespaced kind (undefined: all namespaces). dco's own kinds and the
 * neighbours' kinds it targets are in src/api/resources.ts.
 */
import type { ResourceRef } from "./objects.ts";

const namespaced =
  (group: string, version: string, plural: string) => (namespace?: string): ResourceRef => ({
    group,
    version,
    plural,
    namespace,
  });

export const CRD_RESOURCE: ResourceRef = {
  group: "apiextensions.k8s.io",
  version: "v1",
  plural: "customresourcedefinitions",
};
export const VALIDATING_WEBHOOK_CONFIGURATIONS: ResourceRef = {
  group: "admissionregistration.k8s.io",
  version: "v1",
  plural: "validatingwebhookconfigurations",
};
export const MUTATING_WEBHOOK_CONFIGURATIONS: ResourceRef = {
  ...VALIDATING_WEBHOOK_CONFIGURATIONS,
  plural: "mutatingwebhookconfigurations",
};
export const DEPLOYMENTS = namespaced("apps", "v1", "deployments");
export const SERVICES = namespaced("", "v1", "services");
export const SECRETS = namespaced("", "v1", "secrets");
export const LEASES = namespaced("coordination.k8s.io", "v1", "leases");
export const HPAS = namespaced("autoscaling", "v2", "horizontalpodautoscalers");
export const PDBS = namespaced("policy", "v1", "poddisruptionbudgets");
