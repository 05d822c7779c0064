/**
 * {@link ConfigReconcileDeps} over the manager's caches and the client — the real adapter the
 * in-memory fake of the manager tests must behave like (tests/e2e/config_deps_contract_test.ts).
 *
 * Reads come from the caches (a stale read is corrected by the write's optimistic lock or the next
 * event), except the config itself, the live target, the served-target Leases and the one Secret
 * per server and the CRDs the storage guard reads, which are read through. Writes go to the apiserver: SSA of targets (dco's field
 * manager, force), merge patches of `/status`, and a merge patch of `metadata.finalizers` carrying
 * `resourceVersion` (so it fails with a conflict on a stale read, like an update, without writing
 * the decoded spec's defaults).
 */
import type { ConfigKind, ConversionConfig, ConversionWebhookServer } from "../../api/mod.ts";
import { CRD_CONFIG_KIND, parseConfig, XRD_CONFIG_KIND } from "../../api/mod.ts";
import {
  applyObject,
  getOrUndefined,
  type Informer,
  type KubeClient,
  type KubeObject,
  patchStatus,
  type ResourceRef,
  TerminalError,
} from "../../kube/mod.ts";
import { referenceOf } from "../../kube/events.ts";
import { base64ToBytes } from "../../lib/base64.ts";
import type { JsonObject } from "../../lib/json.ts";
import { createLogger } from "../../obs/log.ts";
import type { TargetKind } from "../conversion_patch.ts";
import { CONFIG_RESOURCES, xrdResource } from "../../api/resources.ts";
import { CRD_RESOURCE, SECRETS } from "../../kube/resources.ts";
import { decodeServer, type DepsOptions, listServedLeases, TARGET_RESOURCES } from "../caches.ts";
import { tlsSecretName } from "../server/names.ts";
import type { ConfigReconcileDeps, ConfigReconcileMetrics } from "./types.ts";

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

function configKindOfTarget(kind: TargetKind): ConfigKind {
  return kind === "XRD" ? XRD_CONFIG_KIND : CRD_CONFIG_KIND;
}

/** An object from its cache (a copy), else (no cache for it) a live GET. */
async function cachedOrLive(
  client: KubeClient,
  cache: Informer | undefined,
  resource: ResourceRef,
  name: string,
): Promise<JsonObject | undefined> {
  const obj = cache === undefined
    ? await getOrUndefined(client.get(resource, name))
    : cache.get(name);
  if (obj === undefined) return undefined;
  return (cache === undefined ? obj : structuredClone(obj)) as unknown as JsonObject;
}

/**
 * `ca.crt` of `<server>-webhook-server-tls` (read through); undefined when the Secret or the key
 * is missing or empty. The leaf in `tls.crt` is never used as the bundle: trusting a leaf pins it,
 * and the conversion breaks the moment the leaf renews.
 */
export async function readCABundle(
  client: KubeClient,
  serverName: string,
  namespace: string,
): Promise<string | undefined> {
  const secret = await getOrUndefined(client.get(SECRETS(namespace), tlsSecretName(serverName)));
  if (secret === undefined) return undefined;
  const v = ((secret as { data?: Record<string, string> }).data ?? {})["ca.crt"];
  return typeof v === "string" && v !== "" ? new TextDecoder().decode(base64ToBytes(v)) : undefined;
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
      const obj = await getOrUndefined(client.get(CONFIG_RESOURCES[kind], name));
      return obj === undefined ? undefined : decodeConfig(obj);
    },
    getTarget(kind, name) {
      const configKind = configKindOfTarget(kind);
      return cachedOrLive(
        client,
        caches.targets.get(configKind),
        TARGET_RESOURCES[configKind],
        name,
      );
    },
    async getTargetLive(kind, name) {
      const obj = await getOrUndefined(
        client.get(TARGET_RESOURCES[configKindOfTarget(kind)], name),
      );
      return obj as unknown as JsonObject | undefined;
    },
    getGeneratedCRD: (name) => cachedOrLive(client, caches.crds, CRD_RESOURCE, name),
    async getCRDLive(name) {
      const obj = await getOrUndefined(client.get(CRD_RESOURCE, name));
      return obj as unknown as JsonObject | undefined;
    },
    // Read through: the gate decides on what the replicas report now, not on a cache's past.
    listServedLeases: (serverName, serverNamespace) =>
      listServedLeases(client, serverName, serverNamespace),
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
    event: o.events === undefined
      ? undefined
      : (config, e) => o.events?.record({ regarding: referenceOf(config), ...e }),
  };
}
