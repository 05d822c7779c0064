/**
 * The writes of `convctl migrate-storage`: every listed object gets one PATCH whose only
 * operation tests that `metadata.uid` is still the listed one (a JSON patch). It changes no value
 * and takes no field from any manager; the write alone makes the apiserver encode the object
 * again, at the current storage version.
 *
 * Why not a server-side apply of the identity: an apply creates a missing object, so an object
 * deleted between the listing and its write would come back (the apiserver ignores a
 * `resourceVersion` in an apply that creates). A JSON patch never creates: a deleted object
 * answers 404 and counts as done.
 *
 * Why a re-run is safe (resumable): it lists again and writes every object again, so nothing is
 * skipped. An object already stored at the storage version encodes to the bytes etcd holds, and
 * the apiserver then writes nothing (no new resourceVersion, no watch event); nothing deleted is
 * recreated; an object replaced under the same name (a new uid) fails the test and is reported,
 * and the next run lists the new one.
 */
import { isNotFound, KubeApiError, type KubeClient } from "../kube/mod.ts";
import type { KubeObject, ResourceRef } from "../kube/mod.ts";

export interface MigratedObject {
  namespace?: string;
  name: string;
  error?: string;
}

export interface WritePlan {
  client: KubeClient;
  /** `<group>/<storage>/<plural>`, namespace per object. */
  ref: ResourceRef;
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

async function migrateOne(plan: WritePlan, object: KubeObject): Promise<MigratedObject> {
  const { name, namespace, uid } = object.metadata;
  const entry: MigratedObject = plan.namespaced
    ? { namespace, name: name ?? "" }
    : { name: name ?? "" };
  if (!name) return { ...entry, error: "object without metadata.name" };
  if (plan.namespaced && !namespace) {
    return { ...entry, error: "namespaced object without namespace" };
  }
  if (!uid) return { ...entry, error: "object without metadata.uid" };
  const ref = { ...plan.ref, namespace: plan.namespaced ? namespace : undefined };
  try {
    await plan.client.patch(ref, name, [{ op: "test", path: "/metadata/uid", value: uid }], {
      type: "json",
      fieldManager: plan.fieldManager,
      dryRun: plan.dryRun,
    });
    return entry;
  } catch (e) {
    // Deleted since the listing: nothing is stored any more, and the patch created nothing.
    if (isNotFound(e)) return entry;
    return { ...entry, error: errorText(e) };
  }
}

/**
 * Writes `objects` with up to `plan.concurrency` writes in flight; `done(n)` after each. The
 * results are in the order of `objects`; a failed write is recorded and the rest still run.
 */
export async function writeAll(
  plan: WritePlan,
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
