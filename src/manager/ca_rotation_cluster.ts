/**
 * What the CA rotation (./ca_rotation.ts) observes, over the manager's caches and the client:
 *
 * - **trust stores**: `ca.crt` of every ConversionWebhookServer's serving Secret (read through:
 *   Secrets are never cached), the `caBundle` of every CRD whose conversion webhook is the Service
 *   of one of those servers (from the CRD cache — the CRDs Crossplane generates from XRDs included,
 *   since those are what the apiserver calls with), and, with the self-issued admission
 *   certificate, the admission Secret's `ca.crt` and every webhook's `caBundle` of the Validating-
 *   and MutatingWebhookConfiguration the manager keeps;
 * - **serving pairs**: each serving Secret's `tls.crt` must be signed by the CA, and every live
 *   served-target Lease of the server must report that certificate's serial — at least as many as
 *   the Deployment has ready replicas; the admission Secret's `tls.crt` must be signed by the CA
 *   (the admission listeners re-read it every 30 s: the rotation's retire delay covers that).
 *
 * - **outdated stores**: the trust stores whose bundle is not exactly the CA Secret's (after the
 *   old CA was retired, until every writer dropped it).
 *
 * Servers are only observed in the `Builtin` certificate mode (cert-manager or you own their
 * Secrets otherwise).
 */
import { CRD_CONFIG_KIND } from "../api/mod.ts";
import { normalizeSerial, SERVING_SERIAL_ANNOTATION } from "../api/served_lease.ts";
import { getOrUndefined, type Informer, type KubeClient, type KubeObject } from "../kube/mod.ts";
import type { ResourceRef } from "../kube/mod.ts";
import { CRD_RESOURCE, SECRETS } from "../kube/resources.ts";
import { base64ToText } from "../lib/base64.ts";
import { bundleHas, tryParseBundle } from "./ca_bundle.ts";
import { getCached, listServedLeases, type ManagerCaches } from "./caches.ts";
import type { RotationCluster } from "./ca_rotation.ts";
import { isLeaseLive } from "./served_targets.ts";
import { childName, tlsSecretName } from "./server/names.ts";
import type { x509 } from "./x509.ts";

/** A webhook configuration whose caBundles the admission keeper sets. */
export interface KeptWebhookConfiguration {
  kind: "ValidatingWebhookConfiguration" | "MutatingWebhookConfiguration";
  name: string;
  resource: ResourceRef;
}

export interface RotationClusterOptions {
  client: KubeClient;
  caches: Pick<ManagerCaches, "servers" | "deployments" | "crds" | "targets">;
  operatorNamespace: string;
  /** The servers' certificates are the manager's (`--certificate-mode` resolved to builtin). */
  builtinServers: boolean;
  /** The self-issued admission certificate, when the manager keeps one. */
  admission?: { secretName: string; webhookConfigurations: readonly KeptWebhookConfiguration[] };
  /** Wakes the writers (see {@link RotationCluster.nudge}). */
  nudge: () => void;
  /** The clock Lease liveness is judged by. */
  now?: () => number;
}

function dataValue(secret: KubeObject | undefined, key: string): string | undefined {
  const v = (secret as { data?: Record<string, unknown> } | undefined)?.data?.[key];
  if (typeof v !== "string" || v === "") return undefined;
  try {
    return base64ToText(v);
  } catch {
    return undefined;
  }
}

async function signedBy(leafPem: string | undefined, ca: x509.X509Certificate) {
  const [leaf] = tryParseBundle(leafPem);
  if (leaf === undefined) return undefined;
  try {
    return await leaf.verify({ publicKey: ca.publicKey, signatureOnly: true }) ? leaf : undefined;
  } catch {
    return undefined;
  }
}

interface ServerRef {
  name: string;
  namespace: string;
}

/** {@link RotationCluster} over the caches and the client. */
export function rotationCluster(o: RotationClusterOptions): RotationCluster {
  const secret = (ns: string, name: string) => getOrUndefined(o.client.get(SECRETS(ns), name));
  const servers = (): ServerRef[] =>
    o.builtinServers
      ? o.caches.servers.list().map((s) => {
        const ns = (s as { spec?: { namespace?: string } }).spec?.namespace;
        return { name: s.metadata?.name ?? "", namespace: ns ? ns : o.operatorNamespace };
      })
      : [];
  const crds = async (): Promise<KubeObject[]> => {
    const cache: Informer | undefined = o.caches.crds ?? o.caches.targets.get(CRD_CONFIG_KIND);
    if (cache !== undefined) return cache.list();
    return (await o.client.list(CRD_RESOURCE)).items;
  };

  const decoded = (raw: string | undefined) => {
    try {
      return raw === undefined ? undefined : base64ToText(raw);
    } catch {
      return undefined;
    }
  };
  /** Every trust store and the CAs it holds (a missing or unparsable bundle holds none). */
  const trustStores = async (): Promise<Array<{ name: string; certs: x509.X509Certificate[] }>> => {
    const out: Array<{ name: string; certs: x509.X509Certificate[] }> = [];
    const list = servers();
    for (const s of list) {
      const name = tlsSecretName(s.name);
      const stored = await secret(s.namespace, name);
      if (stored !== undefined) {
        out.push({
          name: `Secret ${s.namespace}/${name} (ca.crt)`,
          certs: tryParseBundle(dataValue(stored, "ca.crt")),
        });
      }
    }
    const services = new Set(list.map((s) => `${s.namespace}/${childName(s.name)}`));
    for (const crd of await crds()) {
      const conversion = (crd as {
        spec?: {
          conversion?: {
            strategy?: string;
            webhook?: {
              clientConfig?: {
                caBundle?: string;
                service?: { name?: string; namespace?: string };
              };
            };
          };
        };
      }).spec?.conversion;
      const svc = conversion?.webhook?.clientConfig?.service;
      if (conversion?.strategy !== "Webhook" || svc === undefined) continue;
      if (!services.has(`${svc.namespace}/${svc.name}`)) continue;
      out.push({
        name: `CustomResourceDefinition ${crd.metadata?.name} (caBundle)`,
        certs: tryParseBundle(decoded(conversion.webhook?.clientConfig?.caBundle)),
      });
    }
    if (o.admission !== undefined) {
      const { secretName, webhookConfigurations } = o.admission;
      const stored = await secret(o.operatorNamespace, secretName);
      if (stored !== undefined) {
        out.push({
          name: `Secret ${o.operatorNamespace}/${secretName} (ca.crt)`,
          certs: tryParseBundle(dataValue(stored, "ca.crt")),
        });
      }
      for (const wc of webhookConfigurations) {
        const config = await getOrUndefined(o.client.get(wc.resource, wc.name));
        const hooks = (config as { webhooks?: unknown } | undefined)?.webhooks;
        for (const w of Array.isArray(hooks) ? hooks : []) {
          const hook = w as { name?: string; clientConfig?: { caBundle?: string } };
          out.push({
            name: `${wc.kind} ${wc.name} webhook ${hook.name} (caBundle)`,
            certs: tryParseBundle(decoded(hook.clientConfig?.caBundle)),
          });
        }
      }
    }
    return out;
  };

  return {
    nudge: o.nudge,

    async untrusting(ca) {
      return (await trustStores()).filter((t) => !bundleHas(t.certs, ca)).map((t) => t.name);
    },

    async outdated(bundle) {
      const same = (certs: x509.X509Certificate[]) =>
        certs.length === bundle.length && bundle.every((c) => bundleHas(certs, c));
      return (await trustStores()).filter((t) => !same(t.certs)).map((t) => t.name);
    },

    async notServingFrom(ca) {
      const out: string[] = [];
      const now = (o.now ?? Date.now)();
      for (const s of servers()) {
        const name = tlsSecretName(s.name);
        const stored = await secret(s.namespace, name);
        if (stored === undefined) continue; // nothing serves it
        const leaf = await signedBy(dataValue(stored, "tls.crt"), ca);
        if (leaf === undefined) {
          out.push(`Secret ${s.namespace}/${name} (tls.crt not yet from the new CA)`);
          continue;
        }
        const serial = normalizeSerial(leaf.serialNumber);
        const live = (await listServedLeases(o.client, s.name, s.namespace))
          .filter((l) => isLeaseLive(l, now));
        let moved = 0;
        for (const lease of live) {
          const reported = lease.metadata?.annotations?.[SERVING_SERIAL_ANNOTATION] ?? "";
          if (reported === serial) {
            moved++;
          } else {
            out.push(
              `Lease ${s.namespace}/${lease.metadata?.name} of ConversionWebhookServer ${s.name} ` +
                `reports serial ${reported || "(none)"}, not ${serial}`,
            );
          }
        }
        const deployment = getCached(o.caches.deployments, `${s.namespace}/${childName(s.name)}`);
        const ready = (deployment as { status?: { readyReplicas?: number } } | undefined)?.status
          ?.readyReplicas ?? 0;
        if (moved < ready) {
          out.push(
            `ConversionWebhookServer ${s.name}: ${moved} of ${ready} ready replicas report serial ${serial}`,
          );
        }
      }
      if (o.admission !== undefined) {
        const { secretName } = o.admission;
        const stored = await secret(o.operatorNamespace, secretName);
        if (
          stored !== undefined && await signedBy(dataValue(stored, "tls.crt"), ca) === undefined
        ) {
          out.push(`Secret ${o.operatorNamespace}/${secretName} (tls.crt not yet from the new CA)`);
        }
      }
      return out;
    },
  };
}
