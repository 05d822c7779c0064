/**
 * The self-issued admission certificate (src/manager/admission_certs.ts) with fakes and a fixed
 * clock: issuance into the admission Secret (SANs of the Service, no owner), reuse, renewal at
 * two thirds of the lifetime, a new CA, races between replicas (AlreadyExists / Conflict), the
 * ValidatingWebhookConfiguration caBundle (read first, patched only when different), the
 * scheduling, and a real TLS handshake through the shared `TlsServer` reading the Secret.
 */
import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import type { KubeObject } from "../../src/kube/mod.ts";
import {
  ADMISSION_RESYNC_MS,
  ADMISSION_RETRY_MS,
  AdmissionCertKeeper,
  type AdmissionCertOptions,
  admissionDnsNames,
  caBundlePatch,
  keyPairOfSecret,
  type WebhookConfigStore,
} from "../../src/manager/admission_certs.ts";
import { TlsServer } from "../../src/net/mod.ts";
import {
  BuiltinIssuer,
  CA_SECRET_NAME,
  type SecretStore,
} from "../../src/manager/builtin_certs.ts";
import { AlreadyExists, FakeSecretStore, T0 } from "./fake_secrets.ts";

const NS = "dco-system";
const SECRET = "dco-webhook-cert";
const SVC = "dco-webhook-service";
const VWC = "dco-validating-webhook-configuration";

/** A cluster-scoped VWC store that applies the strategic patch by webhook name. */
class FakeWebhookConfigs implements WebhookConfigStore {
  readonly objects = new Map<string, KubeObject>();
  readonly patches: unknown[] = [];
  readonly gets: string[] = [];

  constructor(names: string[] = ["vxrd.terasky.com", "vcrd.terasky.com", "vcws.terasky.com"]) {
    this.objects.set(VWC, {
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: "ValidatingWebhookConfiguration",
      metadata: { name: VWC, resourceVersion: "1" },
      webhooks: names.map((name) => ({
        name,
        clientConfig: { service: { name: SVC, namespace: NS, path: `/${name}`, port: 443 } },
      })),
    } as KubeObject);
  }
  get(name: string): Promise<KubeObject | undefined> {
    this.gets.push(name);
    const o = this.objects.get(name);
    return Promise.resolve(o === undefined ? undefined : structuredClone(o));
  }
  patch(name: string, patch: unknown): Promise<KubeObject> {
    const o = this.objects.get(name);
    if (o === undefined) return Promise.reject(new Error(`not found: ${name}`));
    this.patches.push(structuredClone(patch));
    const p = patch as { webhooks: Array<{ name: string; clientConfig: { caBundle: string } }> };
    const hooks = (o as unknown as { webhooks: Array<Record<string, unknown>> }).webhooks;
    for (const w of p.webhooks) {
      const h = hooks.find((x) => x.name === w.name)!;
      h.clientConfig = { ...(h.clientConfig as object), caBundle: w.clientConfig.caBundle };
    }
    return Promise.resolve(structuredClone(o));
  }
  caBundles(): Array<string | undefined> {
    const hooks = (this.objects.get(VWC) as unknown as {
      webhooks: Array<{ clientConfig: { caBundle?: string } }>;
    }).webhooks;
    return hooks.map((w) => w.clientConfig.caBundle);
  }
}

const raceLost = (e: unknown) =>
  e instanceof AlreadyExists || (e instanceof Error && e.message.startsWith("conflict:"));

function keeper(
  store: SecretStore,
  configs: WebhookConfigStore | undefined,
  clock: { now: number },
  webhookConfiguration = VWC,
  serviceName = SVC,
  more: Partial<AdmissionCertOptions> = { isRaceLost: raceLost },
): AdmissionCertKeeper {
  return new AdmissionCertKeeper({
    issuer: new BuiltinIssuer({
      store,
      namespace: NS,
      now: () => clock.now,
      isAlreadyExists: (e) => e instanceof AlreadyExists,
    }),
    secrets: store,
    namespace: NS,
    secretName: SECRET,
    serviceName,
    webhookConfiguration,
    webhookConfigs: configs,
    now: () => clock.now,
    ...more,
  });
}

/** An empty store and VWC at T0, and a keeper over them. */
function fresh() {
  const store = new FakeSecretStore();
  const configs = new FakeWebhookConfigs();
  const clock = { now: T0 };
  return { store, configs, clock, k: keeper(store, configs, clock) };
}

function data(secret: KubeObject | undefined): Record<string, string> {
  return (secret as unknown as { data: Record<string, string> }).data;
}

Deno.test("admission certs: SANs of the Service", () => {
  assert.deepEqual(admissionDnsNames("svc", "ns"), [
    "svc",
    "svc.ns",
    "svc.ns.svc",
    "svc.ns.svc.cluster.local",
  ]);
});

Deno.test("admission certs: first ensure issues the Secret from the built-in CA and sets every caBundle", async () => {
  const store = new FakeSecretStore();
  const configs = new FakeWebhookConfigs();
  const clock = { now: T0 };
  const state = await keeper(store, configs, clock).ensure();
  assert.equal(state.issued, "the Secret does not exist");
  assert.equal(state.caBundlePatched, true);
  assert.deepEqual(store.writes, [`create ${NS}/${CA_SECRET_NAME}`, `create ${NS}/${SECRET}`]);

  const secret = store.objects.get(`${NS}/${SECRET}`)!;
  assert.equal(secret.type, "kubernetes.io/tls");
  assert.equal(secret.metadata.ownerReferences, undefined, "the manager's own: no owner");
  assert.equal(
    secret.metadata.labels?.["app.kubernetes.io/managed-by"],
    "declarative-conversion-operator",
  );
  const ca = data(store.objects.get(`${NS}/${CA_SECRET_NAME}`))["tls.crt"];
  assert.equal(data(secret)["ca.crt"], ca);
  assert.equal(state.caBundle, ca);
  const leaf = new X509Certificate(atob(data(secret)["tls.crt"]));
  assert.equal(
    leaf.subjectAltName,
    admissionDnsNames(SVC, NS).map((n) => `DNS:${n}`).join(", "),
  );
  assert.equal(leaf.subject, `CN=${SVC}.${NS}.svc`);
  assert.equal(leaf.checkIssued(new X509Certificate(atob(ca))), true);
  assert.equal(BigInt(`0x${leaf.serialNumber}`), BigInt(`0x${state.serial}`));

  assert.deepEqual(configs.caBundles(), [ca, ca, ca]);
  assert.equal(configs.patches.length, 1);
  // Only the caBundles: the patch names each webhook and nothing else.
  assert.deepEqual(configs.patches[0], {
    webhooks: ["vxrd.terasky.com", "vcrd.terasky.com", "vcws.terasky.com"].map((name) => ({
      name,
      clientConfig: { caBundle: ca },
    })),
  });
  // The listener's pair source reads the Secret back.
  const pair = await keeper(store, configs, clock).readPair();
  assert.equal(pair.cert, atob(data(secret)["tls.crt"]));
  assert.equal(pair.key, atob(data(secret)["tls.key"]));
});

Deno.test("admission certs: a current Secret and caBundle are kept (read, no writes)", async () => {
  const store = new FakeSecretStore();
  const configs = new FakeWebhookConfigs();
  const clock = { now: T0 };
  const first = await keeper(store, configs, clock).ensure();
  const before = structuredClone(store.objects);
  clock.now = T0 + 20 * 86_400_000;
  // Another replica (a fresh keeper) reads the same state.
  const again = await keeper(store, configs, clock).ensure();
  assert.equal(again.issued, undefined);
  assert.equal(again.caBundlePatched, false);
  assert.equal(again.serial, first.serial);
  assert.deepEqual(store.objects, before);
  assert.equal(configs.patches.length, 1);
  assert.equal(configs.gets.length, 2, "the VWC is read every time");
});

Deno.test("admission certs: renewal at two thirds of the lifetime; the caBundle stays", async () => {
  const { store, configs, clock, k } = fresh();
  const first = await k.ensure();
  assert.equal(k.nextDelay(first), ADMISSION_RESYNC_MS);
  clock.now = first.renewAt - 60_000;
  assert.equal(k.nextDelay(first), 60_000, "the next run is at the renewal time when sooner");
  assert.equal((await k.ensure()).issued, undefined);
  clock.now = first.renewAt;
  const renewed = await k.ensure();
  assert.equal(renewed.issued, "less than a third of its lifetime remains");
  assert.notEqual(renewed.serial, first.serial);
  assert.ok(renewed.renewAt > first.renewAt);
  assert.equal(renewed.caBundle, first.caBundle);
  assert.equal(renewed.caBundlePatched, false);
  assert.equal(configs.patches.length, 1);
  assert.deepEqual(store.writes.slice(-1), [`update ${NS}/${SECRET}`]);
  assert.equal(k.nextDelay(undefined), ADMISSION_RETRY_MS);
});

Deno.test("admission certs: a new CA re-issues the leaf and re-patches the caBundle", async () => {
  const { store, configs, k } = fresh();
  const first = await k.ensure();
  store.objects.delete(`${NS}/${CA_SECRET_NAME}`); // an admin deletes the CA
  const second = await k.ensure();
  assert.equal(second.issued, "it was signed by a different CA");
  assert.notEqual(second.caBundle, first.caBundle);
  assert.equal(second.caBundlePatched, true);
  assert.deepEqual(configs.caBundles(), [second.caBundle, second.caBundle, second.caBundle]);
  // A webhook whose caBundle was reset (e.g. the VWC re-applied) is patched alone.
  const hooks = (configs.objects.get(VWC) as unknown as {
    webhooks: Array<{ clientConfig: Record<string, unknown> }>;
  }).webhooks;
  delete hooks[1].clientConfig.caBundle;
  const third = await k.ensure();
  assert.equal(third.issued, undefined);
  assert.equal(third.caBundlePatched, true);
  assert.deepEqual(configs.patches.at(-1), {
    webhooks: [{ name: "vcrd.terasky.com", clientConfig: { caBundle: second.caBundle } }],
  });
});

/** A store where another replica writes just before this one does. */
class RacingStore implements SecretStore {
  constructor(
    readonly inner: FakeSecretStore,
    readonly other: () => Promise<unknown>,
    readonly on: "create" | "update",
  ) {}
  #raced = false;
  get(ns: string, name: string) {
    return this.inner.get(ns, name);
  }
  async create(ns: string, secret: KubeObject) {
    if (this.on === "create" && !this.#raced && secret.metadata.name === SECRET) {
      this.#raced = true;
      await this.other();
    }
    return await this.inner.create(ns, secret);
  }
  async update(ns: string, secret: KubeObject) {
    if (this.on === "update" && !this.#raced && secret.metadata.name === SECRET) {
      this.#raced = true;
      await this.other();
    }
    return await this.inner.update(ns, secret);
  }
}

Deno.test("admission certs: two replicas racing to create: the loser reads the winner's Secret", async () => {
  const inner = new FakeSecretStore();
  const configs = new FakeWebhookConfigs();
  const clock = { now: T0 };
  const winner = keeper(inner, configs, clock);
  let won: { serial: string } | undefined;
  const loser = keeper(
    new RacingStore(inner, async () => (won = await winner.ensure()), "create"),
    configs,
    clock,
  );
  const lost = await loser.ensure();
  assert.ok(won);
  assert.equal(lost.serial, won.serial, "the loser serves the winner's certificate");
  assert.equal(lost.issued, undefined);
  assert.deepEqual(inner.writes, [`create ${NS}/${CA_SECRET_NAME}`, `create ${NS}/${SECRET}`]);
});

Deno.test("admission certs: two replicas renewing at once: a Conflict means re-read and keep", async () => {
  const inner = new FakeSecretStore();
  const configs = new FakeWebhookConfigs();
  const clock = { now: T0 };
  const first = await keeper(inner, configs, clock).ensure();
  clock.now = first.renewAt;
  const winner = keeper(inner, configs, clock);
  let won: { serial: string; issued?: string } | undefined;
  const loser = keeper(
    new RacingStore(inner, async () => (won = await winner.ensure()), "update"),
    configs,
    clock,
  );
  const lost = await loser.ensure();
  assert.equal(won?.issued, "less than a third of its lifetime remains");
  assert.equal(lost.serial, won?.serial);
  assert.equal(lost.issued, undefined);
  assert.equal(inner.writes.filter((w) => w === `update ${NS}/${SECRET}`).length, 1);
});

Deno.test("admission certs: a missing VWC fails the run after the Secret was issued", async () => {
  const store = new FakeSecretStore();
  const configs = new FakeWebhookConfigs();
  configs.objects.clear();
  const clock = { now: T0 };
  const k = keeper(store, configs, clock);
  await assert.rejects(() => k.ensure(), /ValidatingWebhookConfiguration .* not found/);
  assert.ok(store.objects.has(`${NS}/${SECRET}`), "the Secret is issued first");
  await k.readPair(); // the listener can serve meanwhile
  // runOnce logs instead of throwing; onEnsured is not called.
  let ensured = 0;
  k.onEnsured = () => void ensured++;
  assert.equal(await k.runOnce(), undefined);
  assert.equal(ensured, 0);
  // Without a configured VWC the caBundle is left alone.
  const noVwc = keeper(store, configs, clock, "");
  noVwc.onEnsured = () => void ensured++;
  const state = await noVwc.runOnce();
  assert.equal(state?.caBundlePatched, false);
  assert.equal(ensured, 1);
});

Deno.test("admission certs: the XRD guard's MutatingWebhookConfiguration gets the caBundle too", async () => {
  const MWC = "dco-mutating-webhook-configuration";
  const store = new FakeSecretStore();
  const vwc = new FakeWebhookConfigs();
  const mwc = new FakeWebhookConfigs(["gxrdconversion.terasky.com"]);
  mwc.objects.set(MWC, { ...mwc.objects.get(VWC)!, metadata: { name: MWC } } as KubeObject);
  mwc.objects.delete(VWC);
  const clock = { now: T0 };
  const make = (mutating: WebhookConfigStore) =>
    keeper(store, vwc, clock, VWC, SVC, {
      mutatingWebhookConfiguration: MWC,
      mutatingWebhookConfigs: mutating,
    });
  const state = await make(mwc).ensure();
  assert.equal(state.caBundlePatched, true);
  assert.deepEqual(mwc.gets, [MWC]);
  assert.deepEqual(mwc.patches, [{
    webhooks: [{ name: "gxrdconversion.terasky.com", clientConfig: { caBundle: state.caBundle } }],
  }]);
  assert.equal(vwc.patches.length, 1);
  // Current: read, not written.
  const again = await make(mwc).ensure();
  assert.equal(again.caBundlePatched, false);
  assert.equal(mwc.patches.length, 1);
  // A missing MWC fails the run, after the VWC was still kept in sync.
  const missing = new FakeWebhookConfigs();
  missing.objects.clear();
  await assert.rejects(() => make(missing).ensure(), /MutatingWebhookConfiguration .* not found/);
});

Deno.test("admission certs: caBundlePatch and keyPairOfSecret edge cases", () => {
  const vwc = (hooks: unknown) => ({ metadata: { name: "x" }, webhooks: hooks }) as KubeObject;
  assert.equal(caBundlePatch(vwc(undefined), "Q0E="), undefined);
  assert.equal(caBundlePatch(vwc([]), "Q0E="), undefined);
  assert.equal(
    caBundlePatch(vwc([{ name: "a", clientConfig: { caBundle: "Q0E=" } }]), "Q0E="),
    undefined,
  );
  assert.deepEqual(
    caBundlePatch(vwc([{ name: "a", clientConfig: { caBundle: "T0xE" } }, { name: "b" }]), "Q0E="),
    {
      webhooks: [
        { name: "a", clientConfig: { caBundle: "Q0E=" } },
        { name: "b", clientConfig: { caBundle: "Q0E=" } },
      ],
    },
  );
  assert.throws(() => keyPairOfSecret(undefined, "Secret a/b"), /does not exist yet/);
  assert.throws(
    () => keyPairOfSecret({ metadata: {}, data: { "tls.crt": "Q0E=" } } as KubeObject, "S"),
    /tls\.key is missing/,
  );
});

Deno.test("admission certs: a hand-made Opaque Secret is taken over in place (type kept)", async () => {
  const store = new FakeSecretStore();
  await store.create(NS, {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: SECRET, namespace: NS },
    type: "Opaque",
    data: { "tls.crt": "Q0E=", "tls.key": "Q0E=", "ca.crt": "Q0E=" },
  } as KubeObject);
  const clock = { now: T0 };
  const state = await keeper(store, new FakeWebhookConfigs(), clock).ensure();
  assert.equal(state.issued, "tls.crt or tls.key does not parse");
  const secret = store.objects.get(`${NS}/${SECRET}`)!;
  assert.equal(secret.type, "Opaque", "a Secret's type is immutable");
  assert.equal(data(secret)["ca.crt"], state.caBundle);
  // Kept from then on.
  assert.equal((await keeper(store, new FakeWebhookConfigs(), clock).ensure()).issued, undefined);
  // The webhook servers' Secrets still must be kubernetes.io/tls.
  await store.create("wh", {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: "alpha-webhook-server-tls", namespace: "wh" },
    type: "Opaque",
    data: {},
  } as KubeObject);
  await assert.rejects(
    () =>
      new BuiltinIssuer({ store, namespace: NS, now: () => T0 }).ensureServingCertificate({
        namespace: "wh",
        secretName: "alpha-webhook-server-tls",
        dnsNames: ["alpha"],
        commonName: "alpha",
      }),
    /exists with type "Opaque"/,
  );
});

Deno.test({
  name: "admission certs: TlsServer serves the Secret's pair and reloads a renewed one",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    const store = new FakeSecretStore();
    const configs = new FakeWebhookConfigs();
    const clock = { now: Date.now() }; // real time: the client checks the validity
    const k = keeper(store, configs, clock, VWC, "localhost");
    const first = await k.ensure();
    const server = await TlsServer.start({
      address: "127.0.0.1:0",
      loadPair: () => k.readPair(),
      source: k.secretRef,
      reloadIntervalMs: 0,
      listener: (_req, res) => {
        res.writeHead(200, { "content-type": "text/plain" });
        res.end("admitted");
      },
      logger: { info() {}, warn() {}, error() {} },
    });
    const ca = atob(first.caBundle);
    const handshake = async (): Promise<string> => {
      const conn = await Deno.connectTls({
        hostname: "localhost",
        port: server.addr.port,
        caCerts: [ca],
      }).catch(() =>
        // localhost may resolve to ::1 first; the listener is on 127.0.0.1.
        Deno.connectTls({ hostname: "127.0.0.1", port: server.addr.port, caCerts: [ca] })
      );
      try {
        await conn.handshake();
        return "ok";
      } finally {
        conn.close();
      }
    };
    try {
      assert.equal(server.hasCertificate, true);
      const client = Deno.createHttpClient({ caCerts: [ca] });
      try {
        const res = await fetch(`https://localhost:${server.addr.port}/x`, { client });
        assert.equal(res.status, 200);
        assert.equal(await res.text(), "admitted");
      } finally {
        client.close();
      }
      const servedFirst = server.stats.serial;
      assert.equal(await server.reloadNow(), "unchanged");
      // A re-issue (here: the Secret was deleted); the server picks the new pair up on its next
      // read (the renewal path itself is covered above with a fixed clock).
      store.objects.delete(`${NS}/${SECRET}`);
      const renewed = await k.ensure();
      assert.equal(renewed.issued, "the Secret does not exist");
      assert.equal(await server.reloadNow(), "reloaded");
      assert.notEqual(server.stats.serial, servedFirst);
      assert.equal(BigInt(`0x${server.stats.serial}`), BigInt(`0x${renewed.serial}`));
      assert.equal(await handshake(), "ok");
      // A broken Secret keeps the last good pair serving.
      const s = store.objects.get(`${NS}/${SECRET}`)!;
      (s as unknown as { data: Record<string, string> }).data["tls.key"] = btoa("garbage");
      assert.equal(await server.reloadNow(), "failed");
      assert.equal(server.stats.failures, 1);
      assert.equal(await handshake(), "ok");
    } finally {
      await server.shutdown();
    }
  },
});
