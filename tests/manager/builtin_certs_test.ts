/**
 * The built-in certificate issuer (src/manager/builtin_certs.ts): CA Secret created once and
 * reused, leaf issuance into `<cws>-webhook-server-tls`, reuse, renewal at two thirds of the
 * lifetime (fixed clock), re-issue on SAN change / other CA / garbage, and a real TLS handshake
 * with the issued pair.
 */
import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import {
  BACKDATE_MS,
  BuiltinCAError,
  BuiltinIssuer,
  CA_SECRET_NAME,
  DEFAULT_CA_VALIDITY_MS,
  generateCA,
  LEAF_VALIDITY_MS,
  renewalTime,
  type SecretStore,
  type ServingCertRequest,
  x509,
} from "../../src/manager/builtin_certs.ts";
import type { KubeObject } from "../../src/kube/mod.ts";
import { AlreadyExists, FakeSecretStore, OWNER, T0 } from "./fake_secrets.ts";

function request(dnsNames: string[], namespace = "wh"): ServingCertRequest {
  return {
    namespace,
    secretName: "alpha-webhook-server-tls",
    dnsNames,
    commonName: "alpha-webhook-server",
    owner: OWNER,
    labels: { "app.kubernetes.io/instance": "alpha" },
  };
}

const NAMES = ["alpha-webhook-server", "alpha-webhook-server.wh.svc"];

function pem(secret: KubeObject | undefined, key: string): string {
  const v = (secret as { data?: Record<string, string> } | undefined)?.data?.[key];
  assert.ok(v, `secret has ${key}`);
  return atob(v);
}

function issuerAt(store: FakeSecretStore, clock: { now: number }): BuiltinIssuer {
  return new BuiltinIssuer({
    store,
    namespace: "dco-system",
    now: () => clock.now,
    isAlreadyExists: (e) => e instanceof AlreadyExists,
  });
}

Deno.test("builtin certs: CA created on first need, leaf issued with SANs, issuer, validity", async () => {
  const store = new FakeSecretStore();
  const clock = { now: T0 };
  const r = await issuerAt(store, clock).ensureServingCertificate(request(NAMES));
  assert.equal(r.issued, "the Secret does not exist");
  assert.deepEqual(store.writes, [
    "create dco-system/dco-webhook-ca",
    "create wh/alpha-webhook-server-tls",
  ]);

  const caSecret = store.objects.get(`dco-system/${CA_SECRET_NAME}`)!;
  assert.equal(caSecret.type, "kubernetes.io/tls");
  // The trust bundle starts as the signing CA alone.
  assert.deepEqual(Object.keys(caSecret.data as object).sort(), ["ca.crt", "tls.crt", "tls.key"]);
  assert.equal(pem(caSecret, "ca.crt"), pem(caSecret, "tls.crt"));
  const ca = new X509Certificate(pem(caSecret, "tls.crt"));
  assert.equal(ca.ca, true);
  assert.equal(ca.subject, "CN=dco-webhook-ca");
  assert.equal(Date.parse(ca.validTo), T0 + DEFAULT_CA_VALIDITY_MS);
  assert.equal(ca.publicKey.asymmetricKeyType, "ec");
  assert.equal(ca.publicKey.asymmetricKeyDetails?.namedCurve, "prime256v1");

  const secret = store.objects.get("wh/alpha-webhook-server-tls")!;
  assert.equal(secret.type, "kubernetes.io/tls");
  assert.deepEqual(Object.keys(secret.data as object).sort(), ["ca.crt", "tls.crt", "tls.key"]);
  assert.deepEqual(secret.metadata.ownerReferences, [OWNER]);
  assert.equal(secret.metadata.labels?.["app.kubernetes.io/instance"], "alpha");
  assert.equal(pem(secret, "ca.crt"), pem(caSecret, "tls.crt"));

  const leaf = new X509Certificate(pem(secret, "tls.crt"));
  assert.equal(leaf.subjectAltName, "DNS:alpha-webhook-server, DNS:alpha-webhook-server.wh.svc");
  assert.equal(leaf.issuer, "CN=dco-webhook-ca");
  assert.equal(leaf.ca, false);
  const eku = new x509.X509Certificate(pem(secret, "tls.crt"))
    .getExtension(x509.ExtendedKeyUsageExtension);
  assert.deepEqual([...(eku?.usages ?? [])], ["1.3.6.1.5.5.7.3.1"]); // serverAuth
  assert.equal(Date.parse(leaf.validFrom), T0 - BACKDATE_MS);
  assert.equal(Date.parse(leaf.validTo), T0 + LEAF_VALIDITY_MS);
  assert.equal(leaf.verify(ca.publicKey), true);
  assert.equal(leaf.checkIssued(ca), true);
  assert.equal(leaf.publicKey.asymmetricKeyDetails?.namedCurve, "prime256v1");
  assert.equal(r.notAfter, T0 + LEAF_VALIDITY_MS);
  assert.equal(r.renewAt, renewalTime(T0 - BACKDATE_MS, T0 + LEAF_VALIDITY_MS));
  assert.equal(r.renewAt, T0 + LEAF_VALIDITY_MS - (LEAF_VALIDITY_MS + BACKDATE_MS) / 3);
});

Deno.test("builtin certs: the CA and a current leaf are reused (no writes)", async () => {
  const store = new FakeSecretStore();
  const clock = { now: T0 };
  await issuerAt(store, clock).ensureServingCertificate(request(NAMES));
  const before = structuredClone(store.objects);
  clock.now = T0 + 30 * 86_400_000;
  // A fresh issuer (a restarted manager) reads the same CA back.
  const r = await issuerAt(store, clock).ensureServingCertificate(request([...NAMES].reverse()));
  assert.equal(r.issued, undefined);
  assert.equal(store.writes.length, 2);
  assert.deepEqual(store.objects, before);
});

Deno.test("builtin certs: renewal when less than a third of the lifetime remains", async () => {
  const store = new FakeSecretStore();
  const clock = { now: T0 };
  const issuer = issuerAt(store, clock);
  const first = await issuer.ensureServingCertificate(request(NAMES));
  const firstCrt = pem(store.objects.get("wh/alpha-webhook-server-tls"), "tls.crt");
  clock.now = first.renewAt - 1000;
  assert.equal((await issuer.ensureServingCertificate(request(NAMES))).issued, undefined);
  clock.now = first.renewAt;
  const renewed = await issuer.ensureServingCertificate(request(NAMES));
  assert.equal(renewed.issued, "less than a third of its lifetime remains");
  const secret = store.objects.get("wh/alpha-webhook-server-tls")!;
  const crt = pem(secret, "tls.crt");
  assert.notEqual(crt, firstCrt);
  const leaf = new X509Certificate(crt);
  assert.equal(
    Date.parse(leaf.validTo),
    Math.floor(first.renewAt / 1000) * 1000 + LEAF_VALIDITY_MS,
  );
  assert.ok(renewed.renewAt > first.renewAt);
  // Same CA: the caBundle does not change.
  assert.equal(store.writes.filter((w) => w.includes(CA_SECRET_NAME)).length, 1);
});

Deno.test("builtin certs: re-issued when the SANs change, keeping the Secret's identity", async () => {
  const store = new FakeSecretStore();
  const clock = { now: T0 };
  const issuer = issuerAt(store, clock);
  await issuer.ensureServingCertificate(request(NAMES));
  const r = await issuer.ensureServingCertificate(request([...NAMES, "extra.example"]));
  assert.equal(r.issued, "the DNS names changed");
  assert.equal(store.writes.at(-1), "update wh/alpha-webhook-server-tls");
  const leaf = new X509Certificate(
    pem(store.objects.get("wh/alpha-webhook-server-tls"), "tls.crt"),
  );
  assert.match(leaf.subjectAltName ?? "", /DNS:extra\.example/);
});

Deno.test("builtin certs: re-issued when signed by another CA or unparseable", async () => {
  const store = new FakeSecretStore();
  const clock = { now: T0 };
  await issuerAt(store, clock).ensureServingCertificate(request(NAMES));
  // A new CA (the CA Secret was deleted): the leaf was signed by a different CA.
  store.objects.delete(`dco-system/${CA_SECRET_NAME}`);
  const r = await issuerAt(store, clock).ensureServingCertificate(request(NAMES));
  assert.equal(r.issued, "it was signed by a different CA");
  const secret = store.objects.get("wh/alpha-webhook-server-tls")!;
  const ca = new X509Certificate(pem(store.objects.get(`dco-system/${CA_SECRET_NAME}`), "tls.crt"));
  assert.equal(new X509Certificate(pem(secret, "tls.crt")).verify(ca.publicKey), true);
  assert.equal(pem(secret, "ca.crt").trim(), ca.toString().trim());

  // Garbage in tls.crt.
  (secret.data as Record<string, string>)["tls.crt"] = btoa("not a certificate");
  const r2 = await issuerAt(store, clock).ensureServingCertificate(request(NAMES));
  assert.equal(r2.issued, "tls.crt or tls.key does not parse");
  // A key of another pair.
  const other = new FakeSecretStore();
  await issuerAt(other, clock).ensureServingCertificate(request(NAMES));
  (store.objects.get("wh/alpha-webhook-server-tls")!.data as Record<string, string>)["tls.key"] =
    (other.objects.get("wh/alpha-webhook-server-tls")!.data as Record<string, string>)["tls.key"];
  const r3 = await issuerAt(store, clock).ensureServingCertificate(request(NAMES));
  assert.equal(r3.issued, "tls.key does not match tls.crt");
});

Deno.test("builtin certs: an unusable CA Secret is an error, never silently replaced", async () => {
  const store = new FakeSecretStore();
  await store.create("dco-system", {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: CA_SECRET_NAME, namespace: "dco-system" },
    type: "kubernetes.io/tls",
    data: { "tls.crt": btoa("garbage"), "tls.key": btoa("garbage") },
  });
  await assert.rejects(
    () => issuerAt(store, { now: T0 }).ensureServingCertificate(request(NAMES)),
    (e: unknown) => e instanceof BuiltinCAError && /delete it/.test(e.message),
  );
  assert.equal(store.objects.has("wh/alpha-webhook-server-tls"), false);
});

Deno.test("builtin certs: a CA creation race reuses the winner's CA", async () => {
  const store = new FakeSecretStore();
  // Another writer's CA is stored, but our first read missed it (it raced our GET).
  const won = await generateCA(T0);
  await store.create("dco-system", {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: CA_SECRET_NAME, namespace: "dco-system" },
    type: "kubernetes.io/tls",
    data: { "tls.crt": btoa(won.certPem), "tls.key": btoa(won.keyPem) },
  });
  let missed = false;
  const racing: SecretStore = {
    get: (ns, name) => {
      if (!missed && name === CA_SECRET_NAME) {
        missed = true;
        return Promise.resolve(undefined);
      }
      return store.get(ns, name);
    },
    create: (ns, secret) => store.create(ns, secret),
    update: (ns, secret) => store.update(ns, secret),
  };
  const issuer = new BuiltinIssuer({
    store: racing,
    namespace: "dco-system",
    now: () => T0,
    isAlreadyExists: (e) => e instanceof AlreadyExists,
  });
  await issuer.ensureServingCertificate(request(NAMES));
  assert.equal(missed, true);
  const leaf = new X509Certificate(
    pem(store.objects.get("wh/alpha-webhook-server-tls"), "tls.crt"),
  );
  assert.equal(leaf.verify(new X509Certificate(won.certPem).publicKey), true);
  assert.equal(pem(store.objects.get(`dco-system/${CA_SECRET_NAME}`), "tls.crt"), won.certPem);
});

Deno.test({
  name: "builtin certs: a real TLS handshake against the issued pair (127.0.0.1 SAN)",
  fn: async () => {
    const store = new FakeSecretStore();
    const issuer = new BuiltinIssuer({ store, namespace: "dco-system" }); // real clock
    await issuer.ensureServingCertificate(request(["127.0.0.1", "localhost"]));
    const secret = store.objects.get("wh/alpha-webhook-server-tls")!;
    const ac = new AbortController();
    const server = Deno.serve({
      hostname: "127.0.0.1",
      port: 0,
      cert: pem(secret, "tls.crt"),
      key: pem(secret, "tls.key"),
      signal: ac.signal,
      onListen: () => {},
    }, () => new Response("converted"));
    const client = Deno.createHttpClient({ caCerts: [pem(secret, "ca.crt")] });
    try {
      const res = await fetch(`https://127.0.0.1:${server.addr.port}/`, { client });
      assert.equal(res.status, 200);
      assert.equal(await res.text(), "converted");
      // Another CA's bundle must not be accepted (the handshake really verifies).
      const other = new FakeSecretStore();
      await new BuiltinIssuer({ store: other, namespace: "x" }).ca();
      const wrong = Deno.createHttpClient({
        caCerts: [pem(other.objects.get(`x/${CA_SECRET_NAME}`), "tls.crt")],
      });
      try {
        await assert.rejects(() =>
          fetch(`https://127.0.0.1:${server.addr.port}/`, { client: wrong })
        );
      } finally {
        wrong.close();
      }
    } finally {
      client.close();
      ac.abort();
      await server.finished;
    }
  },
});
