/** The CWS reconcile's dependencies backed by the manager's client and caches. */
import { referenceOf } from "../../kube/events.ts";
import {
  applyObject,
  getOrUndefined,
  type Informer,
  isAlreadyExists,
  isNotFound,
  patchStatus,
  type ResourceRef,
} from "../../kube/mod.ts";
import { HPAS, PDBS } from "../../kube/resources.ts";
import { BuiltinIssuer } from "../builtin_certs.ts";
import { SERVER_RESOURCE } from "../../api/resources.ts";
import { admissionContext } from "../admission_setup.ts";
import {
  type DepsOptions,
  getCached,
  listConfigsWithPhase,
  listServedLeases,
  type ManagerCaches,
} from "../caches.ts";
import { clientSecretStore } from "../secret_store.ts";
import type { ServerReconcileDeps } from "./reconcile.ts";
import type { ServerChildSettings } from "./settings.ts";

/** The owned-children caches of the kinds the reconcile may prune, by plural. */
function childCaches(caches: ManagerCaches): ReadonlyMap<string, readonly Informer[]> {
  return new Map([[HPAS().plural, caches.hpas], [PDBS().plural, caches.pdbs]]);
}

/** {@link ServerReconcileDeps} backed by the client (reads through) and the caches (lists). */
export function serverReconcileDeps(
  o: DepsOptions,
  settings: ServerChildSettings,
): ServerReconcileDeps {
  const { client } = o;
  const ctx = admissionContext(o, { xrd: true, crd: true }); // servers only
  const secrets = clientSecretStore(client);
  const children = childCaches(o.caches);
  const deps: ServerReconcileDeps = {
    settings,
    // Read through: the finalizer and status writes must build on the previous reconcile's own
    // writes, which the cache may not have seen yet.
    getServer: (name) => getOrUndefined(client.get(SERVER_RESOURCE, name)),
    async updateFinalizers(server, finalizers) {
      return await client.patch(
        SERVER_RESOURCE,
        server.metadata.name ?? "",
        { metadata: { finalizers, resourceVersion: server.metadata.resourceVersion } },
        { type: "merge" },
      );
    },
    listConfigs: () => Promise.resolve(listConfigsWithPhase(o)),
    listServers: () => Promise.resolve(ctx.listServers()),
    // Read through, like the handover gate's read.
    listServedLeases: (server, namespace) => listServedLeases(client, server, namespace),
    apply: (ref, obj) => applyObject(client, ref, obj),
    // From the owned caches: the delete is preconditioned on the uid, so a stale read cannot
    // delete a replacement.
    getChild(ref: ResourceRef, name: string) {
      const informers = children.get(ref.plural);
      if (informers === undefined) {
        return Promise.reject(new Error(`no owned cache of ${ref.plural}`));
      }
      return Promise.resolve(getCached(informers, `${ref.namespace}/${name}`));
    },
    async deleteChild(ref, name, uid) {
      try {
        await client.delete(ref, name, { preconditions: { uid } });
      } catch (e) {
        if (!isNotFound(e)) throw e;
      }
    },
    getSecret: secrets.get,
    async patchStatus(name, before, after) {
      await patchStatus(client, SERVER_RESOURCE, name, { status: before }, { status: after });
    },
    now: o.now ?? Date.now,
    event: o.events === undefined
      ? undefined
      : (server, e) => o.events?.record({ regarding: referenceOf(server), ...e }),
  };
  if (settings.certMode === "Builtin") {
    deps.issuer = new BuiltinIssuer({
      namespace: o.operatorNamespace,
      now: o.now ?? Date.now,
      isAlreadyExists,
      store: secrets,
      ...(settings.caValidityMs === undefined ? {} : { caValidityMs: settings.caValidityMs }),
    });
  }
  return deps;
}
