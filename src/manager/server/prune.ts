/**
 * Pruning the optional children a server no longer asks for: a server whose `spec.autoscaling` or
 * `spec.podDisruptionBudget` is removed must lose the HorizontalPodAutoscaler or the
 * PodDisruptionBudget the manager made for it. A leftover HPA keeps setting the Deployment's
 * replica count against the spec's `replicas`; a leftover PDB keeps blocking node drains.
 *
 * Only a child this server controls is deleted: the object at the child's name must carry the
 * managed-by label and a controller owner reference to this very server (its uid), and the delete
 * is preconditioned on the object's uid, so an object someone else put at that name is never
 * touched (docs/design/server-children.md#pruning-removed-children).
 */
import { CONFIG_API_VERSION, WEBHOOK_SERVER_KIND } from "../../api/mod.ts";
import type { KubeObject, ResourceRef } from "../../kube/mod.ts";
import { HPAS, PDBS } from "../../kube/resources.ts";
import { childName, LABEL_MANAGED_BY, MANAGED_BY } from "./names.ts";
import type { ServerChildren } from "./types.ts";

/** An optional child kind: where it is served and whether the rendered children have it. */
interface OptionalChild {
  kind: string;
  ref: (namespace: string) => ResourceRef;
  wanted: (children: ServerChildren) => boolean;
}

/** The optional children, in apply order. */
export const OPTIONAL_CHILDREN: readonly OptionalChild[] = [
  { kind: "HorizontalPodAutoscaler", ref: HPAS, wanted: (c) => c.hpa !== undefined },
  { kind: "PodDisruptionBudget", ref: PDBS, wanted: (c) => c.pdb !== undefined },
];

/** One child to delete: its kind, where it is, and the uid the delete is preconditioned on. */
export interface StaleChild {
  kind: string;
  ref: ResourceRef;
  name: string;
  uid: string;
}

/**
 * Whether `obj` is a child the server with `serverUid` controls: the managed-by label and a
 * controller owner reference of kind ConversionWebhookServer (dco's API) with that uid.
 */
export function controlledByServer(obj: KubeObject, serverUid: string): boolean {
  if (serverUid === "" || obj.metadata.labels?.[LABEL_MANAGED_BY] !== MANAGED_BY) return false;
  return (obj.metadata.ownerReferences ?? []).some((r) =>
    r.controller === true && r.kind === WEBHOOK_SERVER_KIND &&
    r.apiVersion === CONFIG_API_VERSION && r.uid === serverUid
  );
}

/**
 * The optional children of server `serverName` (uid `serverUid`) that `children` no longer
 * renders but that still exist (`observe` reads the stored object at a child's place) and that the
 * server controls.
 */
export async function staleChildren(
  serverName: string,
  serverUid: string,
  children: ServerChildren,
  observe: (ref: ResourceRef, name: string) => Promise<KubeObject | undefined>,
): Promise<StaleChild[]> {
  const name = childName(serverName);
  const out: StaleChild[] = [];
  for (const child of OPTIONAL_CHILDREN) {
    if (child.wanted(children)) continue;
    const ref = child.ref(children.namespace);
    const obj = await observe(ref, name);
    const uid = obj?.metadata.uid;
    if (obj === undefined || uid === undefined || !controlledByServer(obj, serverUid)) continue;
    out.push({ kind: child.kind, ref, name, uid });
  }
  return out;
}
