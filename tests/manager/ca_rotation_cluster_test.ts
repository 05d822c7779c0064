/**
 * What the CA rotation observes (src/manager/ca_rotation_cluster.ts), over a fake client and
 * caches: which trust stores lack the new CA (serving Secrets' `ca.crt`, CRDs whose conversion
 * calls a dco server — and only those — and the admission webhook configurations), and which
 * serving pairs have not moved (a leaf of the old CA, a Lease reporting another serial, fewer
 * reports than ready replicas, the admission leaf).
 */
import assert from "node:assert/strict";
import {
  KubeApiError,
  type KubeClient,
  type KubeObject,
  type ResourceRef,
} from "../../src/kube/mod.ts";
import { VALIDATING_WEBHOOK_CONFIGURATIONS } from "../../src/kube/resources.ts";
import { textToBase64 } from "../../src/lib/base64.ts";
import { rfc3339Micro } from "../../src/lib/time.ts";
import { generateCA, issueLeaf, x509 } from "../../src/manager/builtin_certs.ts";
import { rotationCluster } from "../../src/manager/ca_rotation_cluster.ts";
import type { ManagerCaches } from "../../src/manager/caches.ts";
import { T0 } from "./fake_secrets.ts";

const NS = "dco-system";

async function ca() {
  const { certPem, keyPem } = await generateCA(T0);
  const der = x509.PemConverter.decodeFirst(keyPem);
  const key = await crypto.subtle.importKey(
    "pkcs8",
    der,
    { name: "ECDSA", namedCurve: "P-256" },
    true,
    ["sign"],
  );
  return { certPem, cert: new x509.X509Certificate(certPem), key };
}

function informer(objs: KubeObject[], keyOf = (o: KubeObject) => o.metadata?.name ?? "") {
  return {
    list: () => objs,
    get: (k: string) => objs.find((o) => keyOf(o) === k),
  };
}

/** A client answering GET from `objects` (keyed `<plural>/<ns>/<name>`) and LIST of Leases. */
function fakeClient(objects: Map<string, KubeObject>, leases: KubeObject[]): KubeClient {
  const key = (r: ResourceRef, name: string) => `${r.plural}/${r.namespace ?? ""}/${name}`;
  return {
    get: (r: ResourceRef, name: string) => {
      const o = objects.get(key(r, name));
      return o === undefined
        ? Promise.reject(new KubeApiError(404, "NotFound", `${name} not found`))
        : Promise.resolve(structuredClone(o));
    },
    list: (r: ResourceRef) => {
      assert.equal(r.plural, "leases");
      return Promise.resolve({ items: leases });
    },
  } as unknown as KubeClient;
}

const secret = (ns: string, name: string, data: Record<string, string>): KubeObject =>
  ({
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name, namespace: ns },
    data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, textToBase64(v)])),
  }) as KubeObject;

const crd = (name: string, svc: { name: string; namespace: string }, bundle: string): KubeObject =>
  ({
    metadata: { name },
    spec: {
      conversion: {
        strategy: "Webhook",
        webhook: { clientConfig: { service: svc, caBundle: textToBase64(bundle) } },
      },
    },
  }) as unknown as KubeObject;

Deno.test("rotation cluster: untrusting names every store without the new CA, and only ours", async () => {
  const [a, b] = [await ca(), await ca()];
  const both = a.certPem + b.certPem;
  const objects = new Map<string, KubeObject>([
    [
      "secrets/wh/alpha-webhook-server-tls",
      secret("wh", "alpha-webhook-server-tls", { "ca.crt": a.certPem }),
    ],
    [
      `secrets/${NS}/beta-webhook-server-tls`,
      secret(NS, "beta-webhook-server-tls", { "ca.crt": both }),
    ],
    [`secrets/${NS}/adm`, secret(NS, "adm", { "ca.crt": both })],
    ["validatingwebhookconfigurations//vwc", {
      metadata: { name: "vwc" },
      webhooks: [
        { name: "one", clientConfig: { caBundle: textToBase64(both) } },
        { name: "two", clientConfig: { caBundle: textToBase64(a.certPem) } },
      ],
    } as unknown as KubeObject],
  ]);
  const servers = [
    { metadata: { name: "alpha" }, spec: { namespace: "wh" } },
    { metadata: { name: "beta" }, spec: {} },
  ] as unknown as KubeObject[];
  const crds = [
    crd("old.example.com", { name: "alpha-webhook-server", namespace: "wh" }, a.certPem),
    crd("new.example.com", { name: "beta-webhook-server", namespace: NS }, both),
    crd("foreign.example.com", { name: "other-webhook", namespace: "x" }, a.certPem),
    crd("wrong-ns.example.com", { name: "alpha-webhook-server", namespace: NS }, a.certPem),
  ];
  const cluster = rotationCluster({
    client: fakeClient(objects, []),
    caches: {
      servers: informer(servers),
      crds: informer(crds),
      deployments: [informer([])],
      targets: new Map(),
    } as unknown as ManagerCaches,
    operatorNamespace: NS,
    builtinServers: true,
    admission: {
      secretName: "adm",
      webhookConfigurations: [{
        kind: "ValidatingWebhookConfiguration",
        name: "vwc",
        resource: VALIDATING_WEBHOOK_CONFIGURATIONS,
      }],
    },
    nudge: () => {},
  });
  assert.deepEqual(await cluster.untrusting(b.cert), [
    "Secret wh/alpha-webhook-server-tls (ca.crt)",
    "CustomResourceDefinition old.example.com (caBundle)",
    "ValidatingWebhookConfiguration vwc webhook two (caBundle)",
  ]);
  assert.deepEqual(await cluster.untrusting(a.cert), [], "everything trusts the old CA");
  assert.deepEqual(await cluster.outdated([a.cert]), [
    `Secret ${NS}/beta-webhook-server-tls (ca.crt)`,
    "CustomResourceDefinition new.example.com (caBundle)",
    `Secret ${NS}/adm (ca.crt)`,
    "ValidatingWebhookConfiguration vwc webhook one (caBundle)",
  ]);
});

Deno.test("rotation cluster: notServingFrom waits for the leaf, every replica's serial and the admission leaf", async () => {
  const [a, b] = [await ca(), await ca()];
  const leafOf = async (issuer: typeof a) =>
    (await issueLeaf(issuer, { dnsNames: ["alpha-webhook-server.wh.svc"], commonName: "x" }, T0))
      .certPem;
  const leafB = await leafOf(b);
  const serialB = new x509.X509Certificate(leafB).serialNumber.toLowerCase().replace(/^0+/, "");
  const objects = new Map<string, KubeObject>([
    [
      "secrets/wh/alpha-webhook-server-tls",
      secret("wh", "alpha-webhook-server-tls", { "tls.crt": leafB }),
    ],
    [
      `secrets/${NS}/beta-webhook-server-tls`,
      secret(NS, "beta-webhook-server-tls", { "tls.crt": await leafOf(a) }),
    ],
    [`secrets/${NS}/adm`, secret(NS, "adm", { "tls.crt": await leafOf(a) })],
  ]);
  const now = T0 + 60_000;
  const lease = (pod: string, serial: string | undefined, renewed = now) =>
    ({
      metadata: {
        name: `dco-served-${pod}`,
        annotations: serial === undefined
          ? {}
          : { "conversion.terasky.com/serving-certificate-serial": serial },
      },
      spec: { renewTime: rfc3339Micro(renewed) },
    }) as unknown as KubeObject;
  const leases = [
    lease("p1", serialB),
    lease("p2", "0abc"),
    lease("gone", "0abc", now - 10 * 60_000), // not live: ignored
  ];
  const deployment = {
    metadata: { name: "alpha-webhook-server", namespace: "wh" },
    status: { readyReplicas: 3 },
  } as unknown as KubeObject;
  const cluster = rotationCluster({
    client: fakeClient(objects, leases),
    caches: {
      servers: informer([
        { metadata: { name: "alpha" }, spec: { namespace: "wh" } },
        { metadata: { name: "beta" }, spec: {} },
      ] as unknown as KubeObject[]),
      deployments: [informer([deployment], (o) => `${o.metadata.namespace}/${o.metadata.name}`)],
      crds: informer([]),
      targets: new Map(),
    } as unknown as ManagerCaches,
    operatorNamespace: NS,
    builtinServers: true,
    admission: { secretName: "adm", webhookConfigurations: [] },
    nudge: () => {},
    now: () => now,
  });
  assert.deepEqual(await cluster.notServingFrom(b.cert), [
    `Lease wh/dco-served-p2 of ConversionWebhookServer alpha reports serial 0abc, not ${serialB}`,
    `ConversionWebhookServer alpha: 1 of 3 ready replicas report serial ${serialB}`,
    `Secret ${NS}/beta-webhook-server-tls (tls.crt not yet from the new CA)`,
    `Secret ${NS}/adm (tls.crt not yet from the new CA)`,
  ]);
});
