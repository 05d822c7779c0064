/**
 * The writes of `convctl migrate-storage`: every listed object gets a forced server-side apply of
 * its identity only (`apiVersion`, `kind`, name, namespace) plus the `resourceVersion` it was
 * listed at. Setting no field changes no value and takes no field from anyone; the write alone
 * makes the apiserver encode the object again, at the current storage version.
 *
 * Why a re-run is safe (resumable): it lists again and applies every object again, so nothing is
 * skipped. An object already stored at the storage version encodes to the bytes etcd holds, and
 * the apiserver then writes nothing (no new resourceVersion, no watch event). The listed
 * resourceVersion is a precondition: an object deleted since the listing is never created again,
 * and one changed since (a `Conflict`) was written by that change at the storage version already —
 * it is read once more and applied at its new resourceVersion, or counted done when it is gone.
 */
import { isConflict, isGone, isNotFound, KubeApiError, type KubeClient } from "../kube/mod.ts";
import type { KubeObject, ResourceRef } from "../kube/mod.ts";

export interface MigratedObject {
  namespace?: string;
  name: string;
  error?: string;
}

export interface ApplyPlan {
  client: KubeClient;
  /** `<group>/<storage>/<plural>`, namespace per object. */
  ref: ResourceRef;
  apiVersion: string;
  kind: string;
  namespaced: boolean;
  fieldManager: string;
  dryRun: boolean;
  concurrency: number;
}

/** The one-line form of a failed write. */
function errorText(e: unknown): string {
  if (e instanceof KubeApiError) return `${e.reason}: ${e.message.split("\n")[0]}`;
  return (e instanceof Error ? e.message : String(e)).split("\n")[0];
}

async function migrateOne(plan: ApplyPlan, object: KubeObject): Promise<MigratedObject> {
  const { name, namespace, resourceVersion } = object.metadata;
  const entry: MigratedObject = plan.namespaced ? { namespace, name: name ?? "" } : {
    name: name ?? "",
  };
  if (!name) return { ...entry, error: "object without metadata.name" };
  if (plan.namespaced && !namespace) {
    return { ...entry, error: "namespaced object without namespace" };
  }
  const ref = { ...plan.ref, namespace: plan.namespaced ? namespace : undefined };
  const apply = (rv: string | undefined) =>
    plan.client.patch(ref, name, {
      apiVersion: plan.apiVersion,
      kind: plan.kind,
      metadata: { name, ...(plan.namespaced ? { namespace } : {}), resourceVersion: rv },
    }, { type: "apply", force: true, fieldManager: plan.fieldManager, dryRun: plan.dryRun });
  try {
    await apply(resourceVersion);
    return entry;
  } catch (e) {
    if (!isConflict(e) && !isNotFound(e)) return { ...entry, error: errorText(e) };
  }
  // Changed or deleted since the listing: read it again.
  try {
    const now = await plan.client.get(ref, name);
    await apply(now.metadata.resourceVersion);
    return entry;
  } catch (e) {
    if (isNotFound(e) || isGone(e)) return entry;
    return { ...entry, error: errorText(e) };
  }
}

/**
 * Applies `objects` with up to `plan.concurrency` writes in flight; `done(n)` after each. The
 * results are in the order of `objects`; a failed write is recorded and the rest still run.
 */
export async function applyAll(
  plan: ApplyPlan,
  objects: readonly KubeObject[],
  done: (count: number) => void,
): Promise<MigratedObject[]> {
  const results: MigratedObject[] = new Array(objects.length);
  let next = 0;
  let finished = 0;
  const worker = async () => {
    while (next < objects.length) {
      const i = next++;
      results[i] = await migrateOne(plan, objects[i]);
      done(++finished);
    }
  };
  const lanes = Math.max(1, Math.min(plan.concurrency, objects.length));
  await Promise.all(Array.from({ length: lanes }, worker));
  return results;
}
