/** The API resources of a server's children that dco's shared resource list does not name. */
import type { ResourceRef } from "../../kube/mod.ts";

export const CERTIFICATES = (namespace: string): ResourceRef => ({
  group: "cert-manager.io",
  version: "v1",
  plural: "certificates",
  namespace,
});
export const HPAS = (namespace: string): ResourceRef => ({
  group: "autoscaling",
  version: "v2",
  plural: "horizontalpodautoscalers",
  namespace,
});
export const PDBS = (namespace: string): ResourceRef => ({
  group: "policy",
  version: "v1",
  plural: "poddisruptionbudgets",
  namespace,
});
