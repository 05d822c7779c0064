/**
 * The config reconcile's cluster side: {@link ConfigReconcileDeps} backed by the manager's caches
 * and client.
 *
 * Writes go to the apiserver: SSA of targets (dco's field manager, force), merge patches of
 * `/status`, and a merge patch of `metadata.finalizers` carrying `resourceVersion` (so it fails
 * with a conflict on a stale read, like an update, without writing the decoded spec's defaults).
 */
import {
  type ConfigKind,
  type ConversionConfig,
  type ConversionWebhookServer,
  CRD_CONFIG_KIND,
  parseConfig,
  XRD_CONFIG_KIND,
} from "../api/mod.ts";
import { CONFIG_RESOURCES, xrdResource } from "../api/resources.ts";
import { type ServedLeaseLike, servedLeaseSelector } from "../api/served_lease.ts";
import type { JsonObject } from "../engine/mod.ts";
import {
  applyObject,
  isNotFound,
  type KubeClient,
  type KubeObject,
  patchStatus,
  TerminalError,
} from "../kube/mod.ts";
import { CRD_RESOURCE, SECRETS } from "../kube/resources.ts";
import { createLogger } from "../obs/log.ts";
import { decodeServer, type DepsOptions, getTarget, TARGET_RESOURCES } from "./caches.ts";
import type { ConfigReconcileDeps, ConfigReconcileMetrics } from "./config_reconcile.ts";
import type { TargetKind } from "./conversion_patch.ts";
import { tlsSecretName } from "./server_children.ts";

// ---------------------------------------------------------------------------------------------
// Decoding cached objects

/** The strictly decoded config (TerminalError when the stored object does not decode). */
export function decodeConfig(obj: KubeObject): ConversionConfig {
  const r = parseConfig(obj);
  if (!r.ok) {
    throw new TerminalError(
      `stored ${obj.kind} ${JSON.stringify(obj.metadata?.name)} does not decode: ${
        r.errors.join("; ")
      }`,
    );
  }
  return r.config;
}

// ---------------------------------------------------------------------------------------------
// Adapter

function configKindOfTarget(kind: TargetKind): ConfigKind {
  return kind === "XRD" ? XRD_CONFIG_KIND : CRD_CONFIG_KIND;
}

function decodeBase64(s: string): string {
  const bin = atob(s);
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  return new TextDecoder().decode(bytes);
}

/** `ca.crt` if non-empty, else `tls.crt`, of `<server>-webhook-server-tls` (read through). */
export async function readCABundle(
  client: KubeClient,
  serverName: string,
  namespace: string,
): Promise<string | undefined> {
  let secret: KubeObject;
  try {
    secret = await client.get(SECRETS(namespace), tlsSecretName(serverName));
  } catch (e) {
    if (isNotFound(e)) return undefined;
    throw e;
  }
  const data = (secret as { data?: Record<string, string> }).data ?? {};
  for (const key of ["ca.crt", "tls.crt"]) {
    const v = data[key];
    if (typeof v === "string" && v !== "") return decodeBase64(v);
  }
  return undefined;
}

/** A CRD Crossplane generated, from the CRD cache (else a live GET). */
async function getGeneratedCRD(o: DepsOptions, name: string): Promise<JsonObject | undefined> {
  const cache = o.caches.crds;
  if (cache !== undefined) {
    const obj = cache.get(name);
    return obj === undefined ? undefined : structuredClone(obj) as unknown as JsonObject;
  }
  try {
    return await o.client.get(CRD_RESOURCE, name) as unknown as JsonObject;
  } catch (e) {
    if (isNotFound(e)) return undefined;
    throw e;
  }
}

const configLog = createLogger("manager.config");

/** {@link ConfigReconcileDeps} backed by the caches and the client. */
export function configReconcileDeps(
  o: DepsOptions,
  metrics?: ConfigReconcileMetrics,
): ConfigReconcileDeps {
  const { client, caches } = o;
  return {
    // Read through, not from the cache: phase transitions, finalizers and status patches must
    // build on the previous reconcile's own writes, which the cache may not have seen yet (a
    // stale phase would repeat the apply and count the transition twice).
    async getConfig(kind, name) {
      try {
        return decodeConfig(await client.get(CONFIG_RESOURCES[kind], name));
      } catch (e) {
        if (isNotFound(e)) return undefined;
        throw e;
      }
    },
    getTarget: (kind, name) => getTarget(o, configKindOfTarget(kind), name),
    async getTargetLive(kind, name) {
      try {
        return await client.get(
          TARGET_RESOURCES[configKindOfTarget(kind)],
          name,
        ) as unknown as JsonObject;
      } catch (e) {
        if (isNotFound(e)) return undefined;
        throw e;
      }
    },
    getGeneratedCRD: (name) => getGeneratedCRD(o, name),
    // Read through: the gate decides on what the replicas report now, not on a cache's past.
    async listServedLeases(serverName, serverNamespace) {
      const list = await client.list(
        {
          group: "coordination.k8s.io",
          version: "v1",
          plural: "leases",
          namespace: serverNamespace,
        },
        { labelSelector: servedLeaseSelector(serverName) },
      );
      return list.items as unknown as ServedLeaseLike[];
    },
    listServers() {
      const out: ConversionWebhookServer[] = [];
      for (const obj of caches.servers.list()) {
        const s = decodeServer(obj);
        if (s !== undefined) out.push(s);
      }
      return Promise.resolve(out);
    },
    getServer(name) {
      const obj = caches.servers.get(name);
      return Promise.resolve(obj === undefined ? undefined : decodeServer(obj));
    },
    readCABundle: (server, namespace) => readCABundle(client, server, namespace),
    async applyTarget(obj) {
      const apiVersion = typeof obj.apiVersion === "string" ? obj.apiVersion : "";
      const ref = obj.kind === "CustomResourceDefinition"
        ? CRD_RESOURCE
        : xrdResource(apiVersion.split("/")[1] || "v2");
      await applyObject(client, ref, obj as unknown as KubeObject);
    },
    async patchStatus(kind, name, before, after) {
      await patchStatus(client, CONFIG_RESOURCES[kind], name, { status: before }, {
        status: after,
      });
    },
    async updateFinalizers(config, finalizers) {
      const updated = await client.patch(
        CONFIG_RESOURCES[config.kind],
        config.metadata?.name ?? "",
        {
          metadata: { finalizers, resourceVersion: config.metadata?.resourceVersion },
        },
        { type: "merge" },
      );
      return decodeConfig(updated);
    },
    now: o.now ?? Date.now,
    operatorNamespace: o.operatorNamespace,
    metrics,
    log: (msg, fields) => configLog.warn(msg, fields),
  };
}
