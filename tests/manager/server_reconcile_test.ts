/**
 * The ConversionWebhookServer reconcile with fakes: the
 * finalizer, the delete guard (exact DeletionBlocked message, force annotation, no dependents),
 * the certificate modes, and built-in issuance/reuse/renewal/SAN change through the reconcile
 * with a fixed clock; the status (DefaultConflict, assignedConfigs,
 * servedTargets/reportingReplicas from the live Leases), the handover requeue, and the
 * watch predicates wired in the manager.
 */
import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import { CRD_CONFIG_KIND, XRD_CONFIG_KIND } from "../../src/api/mod.ts";
import {
  encodeServedTargets,
  SERVED_TARGETS_ANNOTATION,
  SERVED_TARGETS_TRUNCATED_ANNOTATION,
  type ServedLeaseLike,
} from "../../src/api/served_lease.ts";
import type { ServerInfo } from "../../src/assign/resolve.ts";
import type { KubeObject, ResourceRef, StatusCondition } from "../../src/kube/mod.ts";
import type { ConfigSummaryWithPhase } from "../../src/manager/caches.ts";
import { BuiltinIssuer, LEAF_VALIDITY_MS } from "../../src/manager/builtin_certs.ts";
import { serverReadySummary } from "../../src/manager/server/readiness.ts";
import {
  type CertMode,
  MISSING_ISSUER_MESSAGE,
  type ServerChildSettings,
} from "../../src/manager/server/mod.ts";
import {
  configAffectsServers,
  controlledByServer,
  defaultFlagChanged,
  defaultServerNames,
  deletionBlockedMessage,
  leaseServer,
  reconcileServer,
  REQUEUE_SERVER_DELETE_BLOCKED_MS,
  REQUEUE_SERVER_HANDOVER_MS,
  REQUEUE_SERVER_MS,
  servedReportChanged,
  SERVER_FINALIZER,
  type ServerReconcileDeps,
} from "../../src/manager/server/mod.ts";
import { AlreadyExists, FakeSecretStore, T0 } from "./fake_secrets.ts";

const FORCE = "conversion.terasky.com/allow-force-delete";
const TLS = "alpha-webhook-server-tls";

function rawServer(
  spec: Record<string, unknown> = {},
  meta: Record<string, unknown> = {},
): KubeObject {
  return {
    apiVersion: "terasky.com/v1alpha1",
    kind: "ConversionWebhookServer",
    metadata: { name: "alpha", uid: "uid-1", generation: 4, resourceVersion: "10", ...meta },
    spec: { namespace: "wh", ...spec },
  };
}

interface Fake {
  deps: ServerReconcileDeps;
  server: KubeObject | undefined;
  finalizerWrites: string[][];
  applied: Array<[string, string]>;
  /** The stored children by `<plural> <namespace>/<name>` (applies write them, with a uid). */
  stored: Map<string, KubeObject>;
  deleted: Array<[string, string, string]>;
  events: Array<{ reason: string; note: string }>;
  statuses: Array<Record<string, unknown>>;
  lists: number;
  leaseReads: Array<[string, string]>;
  leases: ServedLeaseLike[];
  leaseError?: Error;
  secrets: FakeSecretStore;
  clock: { now: number };
}

function fake(opts: {
  server: KubeObject;
  certMode?: CertMode;
  configs?: ConfigSummaryWithPhase[];
  servers?: ServerInfo[];
  deploymentAvailable?: boolean;
  leases?: ServedLeaseLike[];
}): Fake {
  const secrets = new FakeSecretStore();
  const clock = { now: T0 };
  const settings: ServerChildSettings = {
    operatorNamespace: "dco-system",
    enableXrdSupport: true,
    enableCrdSupport: true,
    certMode: opts.certMode ?? "Builtin",
  };
  const f: Fake = {
    server: structuredClone(opts.server),
    finalizerWrites: [],
    applied: [],
    stored: new Map(),
    deleted: [],
    events: [],
    statuses: [],
    lists: 0,
    leaseReads: [],
    leases: [...(opts.leases ?? [])],
    secrets,
    clock,
    deps: undefined as unknown as ServerReconcileDeps,
  };
  f.deps = {
    settings,
    getServer: (name) =>
      Promise.resolve(f.server?.metadata.name === name ? structuredClone(f.server) : undefined),
    updateFinalizers(server, finalizers) {
      assert.equal(server.metadata.resourceVersion, f.server?.metadata.resourceVersion);
      f.finalizerWrites.push(finalizers);
      f.server!.metadata.finalizers = finalizers;
      f.server!.metadata.resourceVersion = String(Number(f.server!.metadata.resourceVersion) + 1);
      return Promise.resolve(structuredClone(f.server!));
    },
    listConfigs() {
      f.lists++;
      return Promise.resolve(opts.configs ?? []);
    },
    listServers: () => Promise.resolve(opts.servers ?? [{ name: "alpha", default: false }]),
    listServedLeases(server, namespace) {
      f.leaseReads.push([server, namespace]);
      if (f.leaseError) return Promise.reject(f.leaseError);
      return Promise.resolve(structuredClone(f.leases));
    },
    apply(ref: ResourceRef, obj: KubeObject) {
      f.applied.push([ref.plural, `${ref.namespace}/${obj.metadata.name}`]);
      const key = `${ref.plural} ${ref.namespace}/${obj.metadata.name}`;
      const uid = f.stored.get(key)?.metadata.uid ?? `uid-${ref.plural}-${f.stored.size}`;
      const out = structuredClone(obj);
      out.metadata.uid = uid;
      f.stored.set(key, structuredClone(out));
      if (ref.plural === "deployments" && opts.deploymentAvailable) {
        out.status = {
          replicas: 2,
          readyReplicas: 2,
          conditions: [{ type: "Available", status: "True" }],
        };
      }
      return Promise.resolve(out);
    },
    getChild: (ref, name) =>
      Promise.resolve(structuredClone(f.stored.get(`${ref.plural} ${ref.namespace}/${name}`))),
    deleteChild(ref, name, uid) {
      const key = `${ref.plural} ${ref.namespace}/${name}`;
      f.deleted.push([ref.plural, `${ref.namespace}/${name}`, uid]);
      if (f.stored.get(key)?.metadata.uid === uid) f.stored.delete(key);
      return Promise.resolve();
    },
    event: (_server, e) => void f.events.push({ reason: e.reason, note: e.note }),
    getSecret: (ns, name) => secrets.get(ns, name),
    patchStatus(_name, _before, after) {
      f.statuses.push(structuredClone(after));
      (f.server as { status?: unknown }).status = structuredClone(after);
      return Promise.resolve();
    },
    issuer: new BuiltinIssuer({
      store: secrets,
      namespace: "dco-system",
      now: () => clock.now,
      isAlreadyExists: (e) => e instanceof AlreadyExists,
    }),
    now: () => clock.now,
  };
  return f;
}

function condition(status: unknown, type: string): StatusCondition | undefined {
  const list = (status as { conditions?: StatusCondition[] }).conditions ?? [];
  return list.find((c) => c.type === type);
}

function tlsCrt(f: Fake): string {
  const data = f.secrets.objects.get(`wh/${TLS}`)?.data as Record<string, string> | undefined;
  assert.ok(data?.["tls.crt"], "the TLS Secret holds tls.crt");
  return atob(data["tls.crt"]);
}

// ---------------------------------------------------------------------------------------------
// Finalizer and delete guard

Deno.test("server reconcile: the finalizer is added once, other finalizers kept", async () => {
  const f = fake({
    server: rawServer({}, { finalizers: ["other/keep"] }),
    certMode: "ExistingSecret",
  });
  await reconcileServer("alpha", f.deps);
  assert.deepEqual(f.finalizerWrites, [["other/keep", SERVER_FINALIZER]]);
  await reconcileServer("alpha", f.deps);
  assert.equal(f.finalizerWrites.length, 1, "no second write when present");
  assert.deepEqual(f.applied.slice(0, 2), [
    ["services", "wh/alpha-webhook-server"],
    ["deployments", "wh/alpha-webhook-server"],
  ]);
});

Deno.test("server reconcile: a missing server is done", async () => {
  const f = fake({ server: rawServer() });
  f.server = undefined;
  assert.deepEqual(await reconcileServer("alpha", f.deps), {});
  assert.equal(f.applied.length, 0);
});

const DELETING = { deletionTimestamp: "2030-01-01T00:00:00Z", finalizers: [SERVER_FINALIZER] };

const CONFIGS: ConfigSummaryWithPhase[] = [
  {
    kind: CRD_CONFIG_KIND,
    name: "b-widgets",
    target: "widgets.x",
    webhookServerRef: { name: "alpha" },
  },
  { kind: XRD_CONFIG_KIND, name: "a-unpinned", target: "xgizmos.x" }, // default ⇒ alpha
  { kind: CRD_CONFIG_KIND, name: "c-elsewhere", target: "c.x", webhookServerRef: { name: "beta" } },
  {
    kind: CRD_CONFIG_KIND,
    name: "d-moving",
    target: "d.x",
    webhookServerRef: { name: "beta" },
    webhookURL: "https://alpha-webhook-server.wh.svc/convert/d.x", // last applied: alpha
  },
];

Deno.test("server reconcile: delete blocked with the exact message; requeue 30 s", async () => {
  const f = fake({
    server: rawServer({ default: true }, DELETING),
    configs: CONFIGS,
    servers: [{ name: "alpha", default: true }, { name: "beta", default: false }],
  });
  const r = await reconcileServer("alpha", f.deps);
  assert.deepEqual(r, { requeueAfter: REQUEUE_SERVER_DELETE_BLOCKED_MS });
  assert.equal(REQUEUE_SERVER_DELETE_BLOCKED_MS, 30_000);
  assert.deepEqual(f.finalizerWrites, [], "the finalizer stays");
  assert.deepEqual(f.applied, [], "no children are applied while deleting");
  const c = condition(f.statuses[0], "DeletionBlocked");
  assert.equal(c?.status, "True");
  assert.equal(c?.reason, "ConfigsStillAssigned");
  assert.equal(
    c?.message,
    "deletion blocked: 3 config(s) still depend on this server (it is the default instance, " +
      "so unpinned configs without webhookServerRef depend on it too): " +
      "a-unpinned (XRDConversionConfig), b-widgets (CRDConversionConfig), " +
      "d-moving (CRDConversionConfig); move or delete them, or set the annotation " +
      'conversion.terasky.com/allow-force-delete: "true" to force the deletion',
  );
});

Deno.test("server reconcile: the blocked message of a non-default server has no suffix", async () => {
  const f = fake({
    server: rawServer({}, DELETING),
    configs: CONFIGS,
    servers: [{ name: "alpha", default: false }, { name: "beta", default: true }],
  });
  await reconcileServer("alpha", f.deps);
  assert.equal(
    condition(f.statuses[0], "DeletionBlocked")?.message,
    "deletion blocked: 2 config(s) still depend on this server: b-widgets (CRDConversionConfig), " +
      "d-moving (CRDConversionConfig); move or delete them, or set the annotation " +
      'conversion.terasky.com/allow-force-delete: "true" to force the deletion',
  );
  assert.match(
    deletionBlockedMessage(Array.from({ length: 25 }, (_, i) => `c${100 + i}`), false),
    /^deletion blocked: 25 config\(s\) .*c119, … and 5 more;/,
  );
});

Deno.test("server reconcile: the force annotation removes the finalizer without listing", async () => {
  const f = fake({
    server: rawServer({ default: true }, {
      ...DELETING,
      finalizers: ["other/keep", SERVER_FINALIZER],
      annotations: { [FORCE]: "true" },
    }),
    configs: CONFIGS,
  });
  assert.deepEqual(await reconcileServer("alpha", f.deps), {});
  assert.deepEqual(f.finalizerWrites, [["other/keep"]]);
  assert.equal(f.lists, 0);
  assert.deepEqual(f.statuses, []);
});

Deno.test('server reconcile: only the exact value "true" forces', async () => {
  const f = fake({
    server: rawServer({}, { ...DELETING, annotations: { [FORCE]: "yes" } }),
    configs: CONFIGS,
    servers: [{ name: "alpha", default: false }],
  });
  const r = await reconcileServer("alpha", f.deps);
  assert.equal(r.requeueAfter, REQUEUE_SERVER_DELETE_BLOCKED_MS);
  assert.deepEqual(f.finalizerWrites, []);
});

Deno.test("server reconcile: delete allowed when no config depends on it", async () => {
  const f = fake({
    server: rawServer({}, DELETING),
    configs: CONFIGS.filter((c) => c.name === "c-elsewhere"),
    servers: [{ name: "alpha", default: false }, { name: "beta", default: true }],
  });
  assert.deepEqual(await reconcileServer("alpha", f.deps), {});
  assert.deepEqual(f.finalizerWrites, [[]]);
  assert.deepEqual(f.statuses, []);
});

Deno.test("server reconcile: deleting without our finalizer does nothing", async () => {
  const f = fake({ server: rawServer({}, { ...DELETING, finalizers: ["other/keep"] }) });
  assert.deepEqual(await reconcileServer("alpha", f.deps), {});
  assert.deepEqual(f.finalizerWrites, []);
  assert.equal(f.lists, 0);
});

// ---------------------------------------------------------------------------------------------
// Certificate modes

Deno.test("server reconcile: builtin mode issues, then reuses, the serving certificate", async () => {
  const f = fake({ server: rawServer(), deploymentAvailable: true });
  const r = await reconcileServer("alpha", f.deps);
  assert.deepEqual(r, { requeueAfter: REQUEUE_SERVER_MS });
  assert.ok(!f.applied.some(([plural]) => plural === "certificates"), "no cert-manager object");
  const leaf = new X509Certificate(tlsCrt(f));
  assert.equal(
    leaf.subjectAltName,
    "DNS:alpha-webhook-server, DNS:alpha-webhook-server.wh, DNS:alpha-webhook-server.wh.svc, " +
      "DNS:alpha-webhook-server.wh.svc.cluster.local",
  );
  const status = f.statuses.at(-1)!;
  assert.equal(condition(status, "CertificateReady")?.status, "True");
  assert.equal(condition(status, "Available")?.status, "True");
  assert.equal(status.endpoint, "https://alpha-webhook-server.wh.svc:443");
  assert.equal(status.observedGeneration, 4);

  const first = tlsCrt(f);
  const writes = f.secrets.writes.length;
  f.clock.now = T0 + 86_400_000;
  await reconcileServer("alpha", f.deps);
  assert.equal(tlsCrt(f), first, "reused");
  assert.equal(f.secrets.writes.length, writes);
});

Deno.test("server reconcile: requeue no later than the renewal, then renewed", async () => {
  const f = fake({ server: rawServer() });
  await reconcileServer("alpha", f.deps);
  const first = tlsCrt(f);
  const notAfter = Date.parse(new X509Certificate(first).validTo);
  const notBefore = Date.parse(new X509Certificate(first).validFrom);
  const renewAt = notAfter - Math.floor((notAfter - notBefore) / 3);
  // Two minutes before the renewal: the requeue lands on it.
  f.clock.now = renewAt - 120_000;
  assert.deepEqual(await reconcileServer("alpha", f.deps), { requeueAfter: 120_000 });
  assert.equal(tlsCrt(f), first);
  f.clock.now = renewAt;
  const r = await reconcileServer("alpha", f.deps);
  const renewed = tlsCrt(f);
  assert.notEqual(renewed, first);
  assert.equal(Date.parse(new X509Certificate(renewed).validTo), renewAt + LEAF_VALIDITY_MS);
  assert.deepEqual(r, { requeueAfter: REQUEUE_SERVER_MS });
});

Deno.test("server reconcile: a dnsNames change re-issues the certificate", async () => {
  const f = fake({ server: rawServer() });
  await reconcileServer("alpha", f.deps);
  const first = tlsCrt(f);
  (f.server as unknown as { spec: Record<string, unknown> }).spec.certificate = {
    dnsNames: ["conv.example.com", "alpha-webhook-server.wh.svc"],
  };
  await reconcileServer("alpha", f.deps);
  const second = tlsCrt(f);
  assert.notEqual(second, first);
  assert.equal(
    new X509Certificate(second).subjectAltName,
    "DNS:conv.example.com, DNS:alpha-webhook-server.wh.svc",
  );
});

Deno.test("server reconcile: a builtin issuance failure is reported, then retried", async () => {
  const f = fake({ server: rawServer() });
  f.deps.issuer = {
    ensureServingCertificate: () => Promise.reject(new Error("secrets is forbidden")),
  };
  await assert.rejects(() => reconcileServer("alpha", f.deps), /secrets is forbidden/);
  const c = condition(f.statuses.at(-1), "CertificateReady");
  assert.equal(c?.status, "False");
  assert.equal(c?.reason, "CertificateNotReady");
  assert.equal(c?.message, "issuing the built-in serving certificate: secrets is forbidden");
});

Deno.test("server reconcile: cert-manager mode applies the Certificate first", async () => {
  const f = fake({
    server: rawServer({ certificate: { issuerRef: { name: "corp", kind: "Issuer" } } }),
    certMode: "CertManager",
  });
  await reconcileServer("alpha", f.deps);
  assert.deepEqual(f.applied.slice(0, 3), [
    ["certificates", "wh/alpha-webhook-server-cert"],
    ["services", "wh/alpha-webhook-server"],
    ["deployments", "wh/alpha-webhook-server"],
  ]);
  assert.equal(f.secrets.writes.length, 0, "the manager issues nothing itself");
  const c = condition(f.statuses.at(-1), "CertificateReady");
  assert.equal(c?.status, "False");
  assert.equal(c?.message, "the TLS Secret does not exist yet");
});

Deno.test("server reconcile: cert-manager mode without issuerRef is CertificateReady=False", async () => {
  for (const spec of [{}, { certificate: { dnsNames: ["x.example"] } }]) {
    const f = fake({ server: rawServer(spec), certMode: "CertManager" });
    await reconcileServer("alpha", f.deps);
    assert.ok(!f.applied.some(([plural]) => plural === "certificates"));
    const c = condition(f.statuses.at(-1), "CertificateReady");
    assert.equal(c?.status, "False");
    assert.equal(c?.reason, "CertificateNotReady");
    assert.equal(c?.message, MISSING_ISSUER_MESSAGE);
  }
});

Deno.test("server reconcile: Ready once the configs' serverReady gate would pass", async () => {
  const summary = (status: unknown) =>
    ["Ready", "Reconciling", "Stalled"].map((t) => {
      const c = condition(status, t);
      return c === undefined ? `${t}: -` : `${t}: ${c.status}/${c.reason}@${c.observedGeneration}`;
    });
  const starting = fake({ server: rawServer() });
  await reconcileServer("alpha", starting.deps);
  assert.deepEqual(summary(starting.statuses.at(-1)), [
    "Ready: False/DeploymentNotAvailable@4",
    "Reconciling: True/DeploymentNotAvailable@4",
    "Stalled: -",
  ]);
  const up = fake({ server: rawServer(), deploymentAvailable: true });
  await reconcileServer("alpha", up.deps);
  assert.deepEqual(summary(up.statuses.at(-1)), [
    "Ready: True/ServerReady@4",
    "Reconciling: -",
    "Stalled: -",
  ]);
  assert.match(condition(up.statuses.at(-1), "Ready")!.message, /^2 of 2 replicas ready at https:/);
});

Deno.test("server Events: a Ready change once, a blocked delete once (Warning)", async () => {
  const events: string[] = [];
  const record = (f: Fake) => {
    f.deps.event = (server, e) => events.push(`${server.metadata.name} ${e.type} ${e.reason}`);
  };
  const starting = fake({ server: rawServer() });
  record(starting);
  await reconcileServer("alpha", starting.deps);
  await reconcileServer("alpha", starting.deps);
  assert.deepEqual(events, ["alpha Normal DeploymentNotAvailable"], "nothing new while it holds");

  events.length = 0;
  const up = fake({ server: rawServer(), deploymentAvailable: true });
  record(up);
  (up.server as { status?: unknown }).status = structuredClone(starting.server!.status);
  await reconcileServer("alpha", up.deps);
  assert.deepEqual(events, ["alpha Normal ServerReady"]);

  events.length = 0;
  const deleting = fake({
    server: rawServer({ default: true }, DELETING),
    configs: CONFIGS,
    servers: [{ name: "alpha", default: true }],
  });
  record(deleting);
  await reconcileServer("alpha", deleting.deps);
  await reconcileServer("alpha", deleting.deps);
  assert.deepEqual(events, ["alpha Warning ConfigsStillAssigned"]);
});

Deno.test("serverReadySummary: no ready replica is not Ready, even with every condition True", () => {
  const yes = (type: string) => ({ type, status: "True" as const, reason: type, message: "" });
  const all = [yes("Available"), yes("ServiceReady"), yes("CertificateReady")];
  assert.deepEqual(serverReadySummary({ replicas: 0, readyReplicas: 0 }, all), {
    state: "Reconciling",
    reason: "NoReadyReplicas",
    message: "no webhook-server Pod is ready (0 replicas)",
  });
  assert.equal(serverReadySummary({ replicas: 1, readyReplicas: 1 }, all).state, "Ready");
});

Deno.test("server reconcile: existing-secret mode only reads the Secret", async () => {
  const f = fake({ server: rawServer(), certMode: "ExistingSecret" });
  await reconcileServer("alpha", f.deps);
  assert.equal(f.secrets.writes.length, 0);
  assert.equal(condition(f.statuses.at(-1), "CertificateReady")?.status, "False");
  await f.secrets.create("wh", {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: TLS, namespace: "wh" },
    type: "kubernetes.io/tls",
    data: { "tls.crt": btoa("user-provided") },
  });
  await reconcileServer("alpha", f.deps);
  const leafOnly = condition(f.statuses.at(-1), "CertificateReady");
  assert.equal(leafOnly?.status, "False", "a leaf without ca.crt is not enough");
  assert.match(leafOnly?.message ?? "", /has no ca\.crt/);
  const stored = (await f.secrets.get("wh", TLS))!;
  await f.secrets.update(
    "wh",
    {
      ...stored,
      data: { "tls.crt": btoa("user-provided"), "ca.crt": btoa("user CA") },
    } as typeof stored,
  );
  const r = await reconcileServer("alpha", f.deps);
  assert.deepEqual(r, { requeueAfter: REQUEUE_SERVER_MS });
  assert.equal(condition(f.statuses.at(-1), "CertificateReady")?.status, "True");
  assert.equal(f.secrets.writes.length, 2, "the user's Secret is left alone");
});

// ---------------------------------------------------------------------------------------------
// Status: DefaultConflict

Deno.test("server reconcile: DefaultConflict on every default server, removed when resolved", async () => {
  const servers: ServerInfo[] = [
    { name: "gamma", default: true },
    { name: "alpha", default: true },
    { name: "beta", default: false },
  ];
  const f = fake({ server: rawServer({ default: true }), servers, certMode: "ExistingSecret" });
  await reconcileServer("alpha", f.deps);
  const c = condition(f.statuses.at(-1), "DefaultConflict");
  assert.equal(c?.status, "True");
  assert.equal(c?.reason, "MultipleDefaults");
  assert.equal(c?.observedGeneration, 4);
  assert.equal(
    c?.message,
    "multiple ConversionWebhookServers are marked default: alpha, gamma; unpinned configs " +
      "outside a shard pool cannot be resolved until all but one set spec.default: false",
  );
  // Still conflicting later: the transition time stays.
  f.clock.now = T0 + 60_000;
  await reconcileServer("alpha", f.deps);
  assert.equal(
    condition(f.statuses.at(-1), "DefaultConflict")?.lastTransitionTime,
    c?.lastTransitionTime,
  );
  // Resolved (gamma no longer default): removed, never set to False.
  servers[0].default = false;
  await reconcileServer("alpha", f.deps);
  assert.equal(condition(f.statuses.at(-1), "DefaultConflict"), undefined);
  assert.equal(condition(f.statuses.at(-1), "Available")?.type, "Available", "others kept");
});

Deno.test("server reconcile: DefaultConflict reads this server as read through, not the cache", async () => {
  // The cache still says alpha is default, the stored object says it is not: no condition, and
  // a previous one is removed.
  const f = fake({
    server: rawServer({}),
    servers: [{ name: "alpha", default: true }, { name: "beta", default: true }],
    certMode: "ExistingSecret",
  });
  (f.server as { status?: unknown }).status = {
    conditions: [{
      type: "DefaultConflict",
      status: "True",
      reason: "MultipleDefaults",
      message: "old",
      lastTransitionTime: "2030-01-01T00:00:00Z",
    }],
  };
  await reconcileServer("alpha", f.deps);
  assert.equal(condition(f.statuses.at(-1), "DefaultConflict"), undefined);
  // The other way round: the cache lags a flip to default.
  const g = fake({
    server: rawServer({ default: true }),
    servers: [{ name: "alpha", default: false }, { name: "beta", default: true }],
    certMode: "ExistingSecret",
  });
  await reconcileServer("alpha", g.deps);
  assert.match(
    condition(g.statuses.at(-1), "DefaultConflict")?.message ?? "",
    /marked default: alpha, beta;/,
  );
  // A single default: nothing.
  const h = fake({
    server: rawServer({ default: true }),
    servers: [{ name: "alpha", default: true }, { name: "beta", default: false }],
    certMode: "ExistingSecret",
  });
  await reconcileServer("alpha", h.deps);
  assert.equal(condition(h.statuses.at(-1), "DefaultConflict"), undefined);
});

// ---------------------------------------------------------------------------------------------
// Status: assignedConfigs

const PHASED: ConfigSummaryWithPhase[] = [
  {
    kind: CRD_CONFIG_KIND,
    name: "b-widgets",
    target: "widgets.x",
    webhookServerRef: { name: "alpha" },
    phase: "Applied",
  },
  { kind: XRD_CONFIG_KIND, name: "a-unpinned", target: "xgizmos.x", phase: "Pending" },
  { kind: CRD_CONFIG_KIND, name: "c-elsewhere", target: "c.x", webhookServerRef: { name: "beta" } },
  { kind: CRD_CONFIG_KIND, name: "e-nophase", target: "e.x", webhookServerRef: { name: "alpha" } },
  { kind: XRD_CONFIG_KIND, name: "f-missing", target: "f.x", webhookServerRef: { name: "nope" } },
];

Deno.test("server reconcile: assignedConfigs lists XRD and CRD configs, sorted, with phase", async () => {
  const f = fake({
    server: rawServer({ default: true }),
    configs: PHASED,
    servers: [{ name: "alpha", default: true }, { name: "beta", default: false }],
    certMode: "ExistingSecret",
  });
  const r = await reconcileServer("alpha", f.deps);
  assert.deepEqual(f.statuses.at(-1)?.assignedConfigs, [
    { name: "a-unpinned", xrdName: "xgizmos.x", phase: "Pending" },
    { name: "b-widgets", xrdName: "widgets.x", phase: "Applied" },
    { name: "e-nophase", xrdName: "e.x" },
  ]);
  assert.deepEqual(r, { requeueAfter: REQUEUE_SERVER_MS });
  // Not the default: only the pinned ones.
  const g = fake({
    server: rawServer({}),
    configs: PHASED,
    servers: [{ name: "alpha", default: true }, { name: "beta", default: true }],
    certMode: "ExistingSecret",
  });
  await reconcileServer("alpha", g.deps);
  assert.deepEqual(
    (g.statuses.at(-1)?.assignedConfigs as Array<{ name: string }>).map((c) => c.name),
    ["b-widgets", "e-nophase"],
    "the stored (non-default) alpha wins over the cache; beta is the only default",
  );
  // None: an empty list (written, so a stale list is cleared).
  const h = fake({ server: rawServer({}), configs: [], certMode: "ExistingSecret" });
  await reconcileServer("alpha", h.deps);
  assert.deepEqual(h.statuses.at(-1)?.assignedConfigs, []);
});

Deno.test("server reconcile: assignedConfigs follows the shard pool (resolver precedence)", async () => {
  const configs: ConfigSummaryWithPhase[] = Array.from({ length: 40 }, (_, i) => ({
    kind: i % 2 ? CRD_CONFIG_KIND : XRD_CONFIG_KIND,
    name: `cfg-${String(i).padStart(2, "0")}`,
    target: `t${i}.example.com`,
  }));
  configs.push({
    kind: CRD_CONFIG_KIND,
    name: "pinned-beta",
    target: "p.x",
    webhookServerRef: { name: "beta" },
  });
  const servers: ServerInfo[] = [
    { name: "alpha", default: true, sharding: { enabled: true } },
    { name: "beta", default: false, sharding: { enabled: true, weight: 1 } },
  ];
  const names: Record<string, string[]> = {};
  for (const s of ["alpha", "beta"]) {
    const f = fake({
      server: rawServer(s === "alpha" ? { default: true, sharding: {} } : { sharding: {} }, {
        name: s,
      }),
      configs,
      servers,
      certMode: "ExistingSecret",
    });
    await reconcileServer(s, f.deps);
    names[s] = (f.statuses.at(-1)?.assignedConfigs as Array<{ name: string }>).map((c) => c.name);
  }
  assert.ok(names.alpha.length > 0 && names.beta.length > 1, "the pool splits the configs");
  assert.ok(names.beta.includes("pinned-beta") && !names.alpha.includes("pinned-beta"));
  assert.deepEqual(
    [...names.alpha, ...names.beta].sort(),
    configs.map((c) => c.name).sort(),
    "every config is assigned to exactly one pool member",
  );
  assert.deepEqual(names.alpha, [...names.alpha].sort());
});

// ---------------------------------------------------------------------------------------------
// Status: servedTargets / reportingReplicas

const micro = (ms: number) => new Date(ms).toISOString().replace(/Z$/, "000Z");

function lease(
  targets: string[] | "truncated" | "garbage",
  renewedAgoMs = 0,
): ServedLeaseLike {
  const annotations: Record<string, string> = targets === "truncated"
    ? { [SERVED_TARGETS_TRUNCATED_ANNOTATION]: "true" }
    : {
      [SERVED_TARGETS_ANNOTATION]: targets === "garbage"
        ? "not base64 gzip!"
        : encodeServedTargets(targets),
    };
  return { metadata: { annotations }, spec: { renewTime: micro(T0 - renewedAgoMs) } };
}

Deno.test("server reconcile: servedTargets is the intersection of the live Leases", async () => {
  const f = fake({
    server: rawServer(),
    certMode: "ExistingSecret",
    leases: [
      lease(["c.x", "a.x", "b.x"]),
      lease(["b.x", "c.x", "d.x"], 30_000),
      lease(["z.x"], 91_000), // stale: neither counted nor intersected
      lease(["z.x"], -301_000), // beyond the future-skew bound
    ],
  });
  await reconcileServer("alpha", f.deps);
  assert.deepEqual(f.leaseReads, [["alpha", "wh"]], "the instance namespace");
  const s = f.statuses.at(-1)!;
  assert.deepEqual(s.servedTargets, ["b.x", "c.x"]);
  assert.equal(s.reportingReplicas, 2);
  assert.equal(s.observedGeneration, 4, "the other fields stay");
  assert.equal(s.endpoint, "https://alpha-webhook-server.wh.svc:443");
});

Deno.test("server reconcile: a truncated or undecodable live report empties servedTargets", async () => {
  for (const bad of ["truncated", "garbage"] as const) {
    const f = fake({
      server: rawServer(),
      certMode: "ExistingSecret",
      leases: [lease(["a.x"])],
    });
    await reconcileServer("alpha", f.deps);
    assert.deepEqual(f.statuses.at(-1)?.servedTargets, ["a.x"]);
    f.leases.push(lease(bad, 10_000));
    await reconcileServer("alpha", f.deps);
    const s = f.statuses.at(-1)!;
    assert.deepEqual(s.servedTargets, [], `${bad}: unknown, never a partial intersection`);
    assert.equal(s.reportingReplicas, 2, `${bad}: still counted as reporting`);
    // A stale bad report does not matter.
    f.leases[1] = lease(bad, 120_000);
    await reconcileServer("alpha", f.deps);
    assert.deepEqual(f.statuses.at(-1)?.servedTargets, ["a.x"]);
    assert.equal(f.statuses.at(-1)?.reportingReplicas, 1);
  }
});

Deno.test("server reconcile: no Leases ⇒ servedTargets empty, reportingReplicas 0", async () => {
  const f = fake({ server: rawServer({ namespace: undefined }), certMode: "ExistingSecret" });
  await reconcileServer("alpha", f.deps);
  assert.deepEqual(f.leaseReads, [["alpha", "dco-system"]], "operator namespace by default");
  assert.deepEqual(f.statuses.at(-1)?.servedTargets, []);
  assert.equal(f.statuses.at(-1)?.reportingReplicas, 0);
});

Deno.test("server reconcile: a Lease read failure keeps the old values and is retried", async () => {
  const f = fake({ server: rawServer(), certMode: "ExistingSecret", leases: [lease(["a.x"])] });
  await reconcileServer("alpha", f.deps);
  f.leaseError = new Error("leases is forbidden");
  f.leases = [];
  f.clock.now = T0 + 1_000;
  await assert.rejects(
    () => reconcileServer("alpha", f.deps),
    /listing the served-target Leases of ConversionWebhookServer alpha: leases is forbidden/,
  );
  const s = f.statuses.at(-1)!;
  assert.deepEqual(s.servedTargets, ["a.x"]);
  assert.equal(s.reportingReplicas, 1);
  assert.deepEqual(s.assignedConfigs, [], "the rest of the status is still written");
});

// ---------------------------------------------------------------------------------------------
// Requeue while a handover is in flight

Deno.test("server reconcile: requeue 30 s while a config moves to or from the server", async () => {
  const servers: ServerInfo[] = [{ name: "alpha", default: true }, { name: "beta" }];
  const url = (s: string) => `https://${s}-webhook-server.wh.svc/convert/x`;
  const cases: Array<[string, ConfigSummaryWithPhase, number]> = [
    ["moving here", {
      kind: CRD_CONFIG_KIND,
      name: "m",
      target: "m.x",
      phase: "Applied",
      webhookURL: url("beta"),
    }, REQUEUE_SERVER_HANDOVER_MS],
    ["moving here (gate blocked: Stale)", {
      kind: XRD_CONFIG_KIND,
      name: "m",
      target: "m.x",
      phase: "Stale",
      webhookURL: url("beta"),
    }, REQUEUE_SERVER_HANDOVER_MS],
    ["moving away", {
      kind: CRD_CONFIG_KIND,
      name: "m",
      target: "m.x",
      phase: "Stale",
      webhookServerRef: { name: "beta" },
      webhookURL: url("alpha"),
    }, REQUEUE_SERVER_HANDOVER_MS],
    ["settled here", {
      kind: CRD_CONFIG_KIND,
      name: "m",
      target: "m.x",
      phase: "Applied",
      webhookURL: url("alpha"),
    }, REQUEUE_SERVER_MS],
    ["settled elsewhere", {
      kind: CRD_CONFIG_KIND,
      name: "m",
      target: "m.x",
      phase: "Applied",
      webhookServerRef: { name: "beta" },
      webhookURL: url("beta"),
    }, REQUEUE_SERVER_MS],
    [
      "first apply",
      { kind: CRD_CONFIG_KIND, name: "m", target: "m.x", phase: "Pending" },
      REQUEUE_SERVER_MS,
    ],
    ["not applied (no move)", {
      kind: CRD_CONFIG_KIND,
      name: "m",
      target: "m.x",
      phase: "Invalid",
      webhookURL: url("beta"),
    }, REQUEUE_SERVER_MS],
    ["unresolvable", {
      kind: CRD_CONFIG_KIND,
      name: "m",
      target: "m.x",
      phase: "Stale",
      webhookServerRef: { name: "gone" },
      webhookURL: url("alpha"),
    }, REQUEUE_SERVER_MS],
  ];
  assert.equal(REQUEUE_SERVER_HANDOVER_MS, 30_000);
  for (const [what, config, want] of cases) {
    const f = fake({
      server: rawServer({ default: true }),
      configs: [config],
      servers,
      certMode: "ExistingSecret",
    });
    assert.deepEqual(await reconcileServer("alpha", f.deps), { requeueAfter: want }, what);
  }
});

// ---------------------------------------------------------------------------------------------
// Watch predicates (wired in src/manager/server_controller.ts)

function cfg(spec: Record<string, unknown>, status: Record<string, unknown> = {}): KubeObject {
  return {
    apiVersion: "terasky.com/v1alpha1",
    kind: "CRDConversionConfig",
    metadata: { name: "c" },
    spec: { targetCRD: { name: "w.x" }, ...spec },
    status,
  } as KubeObject;
}

Deno.test("watch: configs wake the servers only on what assignedConfigs reads", () => {
  const base = cfg({}, { phase: "Applied", webhookURL: "u", conditions: [] });
  assert.equal(configAffectsServers("add", base), true);
  assert.equal(configAffectsServers("delete", base), true);
  const applied = { phase: "Applied", webhookURL: "u" };
  const updates: [string, KubeObject, boolean][] = [
    ["a condition-only status write", cfg({}, { ...applied, conditions: [{}] }), false],
    ["the phase", cfg({}, { ...applied, phase: "Stale" }), true],
    ["the webhook URL", cfg({}, { ...applied, webhookURL: "v" }), true],
    ["the server ref", cfg({ webhookServerRef: { name: "beta" } }, applied), true],
    ["the target", cfg({ targetCRD: { name: "v.x" } }, applied), true],
  ];
  for (const [what, updated, want] of updates) {
    assert.equal(configAffectsServers("update", updated, base), want, what);
  }
});

Deno.test("watch: a default flip wakes every default server", () => {
  const def = rawServer({ default: true });
  const plain = rawServer({});
  assert.equal(defaultFlagChanged("add", def), true);
  assert.equal(defaultFlagChanged("add", plain), false);
  assert.equal(defaultFlagChanged("delete", def), true);
  assert.equal(defaultFlagChanged("update", def, plain), true);
  assert.equal(defaultFlagChanged("update", plain, def), true);
  assert.equal(defaultFlagChanged("update", def, def), false);
  assert.deepEqual(
    defaultServerNames([
      rawServer({ default: true }, { name: "zeta" }),
      plain,
      rawServer({ default: true }, { name: "beta" }),
    ]),
    ["beta", "zeta"],
  );
});

// ---------------------------------------------------------------------------------------------
// Pruning removed optional children

const SCALING = {
  autoscaling: { minReplicas: 2, maxReplicas: 4, targetCPUUtilizationPercentage: 70 },
  podDisruptionBudget: { minAvailable: 1 },
};
const HPA_KEY = "horizontalpodautoscalers wh/alpha-webhook-server";
const PDB_KEY = "poddisruptionbudgets wh/alpha-webhook-server";

Deno.test("server reconcile: removing autoscaling deletes the HPA, then the PDB goes too", async () => {
  const f = fake({ server: rawServer(SCALING), certMode: "ExistingSecret" });
  await reconcileServer("alpha", f.deps);
  assert.ok(f.stored.has(HPA_KEY) && f.stored.has(PDB_KEY), "both applied");
  assert.deepEqual(f.deleted, []);
  const hpaUid = f.stored.get(HPA_KEY)!.metadata.uid!;
  const pdbUid = f.stored.get(PDB_KEY)!.metadata.uid!;

  f.server!.spec = { namespace: "wh", podDisruptionBudget: SCALING.podDisruptionBudget };
  const applies = f.applied.length;
  await reconcileServer("alpha", f.deps);
  assert.deepEqual(f.applied.slice(applies).map(([plural]) => plural), [
    "services",
    "deployments",
    "poddisruptionbudgets",
  ]);
  assert.deepEqual(f.deleted, [["horizontalpodautoscalers", "wh/alpha-webhook-server", hpaUid]]);
  assert.ok(!f.stored.has(HPA_KEY) && f.stored.has(PDB_KEY));
  assert.deepEqual(f.events.filter((e) => e.reason === "ChildDeleted"), [{
    reason: "ChildDeleted",
    note: "deleted HorizontalPodAutoscaler wh/alpha-webhook-server: its spec block was removed",
  }]);

  f.server!.spec = { namespace: "wh" };
  await reconcileServer("alpha", f.deps);
  assert.deepEqual(f.deleted.at(-1), ["poddisruptionbudgets", "wh/alpha-webhook-server", pdbUid]);
  assert.ok(!f.stored.has(PDB_KEY));
  const deletes = f.deleted.length;
  await reconcileServer("alpha", f.deps);
  assert.equal(f.deleted.length, deletes, "nothing left to delete");
});

Deno.test("server reconcile: an HPA or PDB this server does not control is never deleted", async () => {
  const f = fake({ server: rawServer(), certMode: "ExistingSecret" });
  const owner = {
    apiVersion: "terasky.com/v1alpha1",
    kind: "ConversionWebhookServer",
    name: "alpha",
    uid: "uid-1",
    controller: true,
  };
  const labels = { "app.kubernetes.io/managed-by": "declarative-conversion-operator" };
  const foreign = (uid: string, metadata: Record<string, unknown>): KubeObject => ({
    metadata: { name: "alpha-webhook-server", namespace: "wh", uid, ...metadata },
  });
  f.stored.set(HPA_KEY, foreign("h1", { labels, ownerReferences: [{ ...owner, uid: "uid-old" }] }));
  f.stored.set(PDB_KEY, foreign("p1", { ownerReferences: [owner] })); // no managed-by label
  await reconcileServer("alpha", f.deps);
  assert.deepEqual(f.deleted, []);
  f.stored.set(
    HPA_KEY,
    foreign("h2", { labels, ownerReferences: [{ ...owner, controller: false }] }),
  );
  f.stored.set(PDB_KEY, foreign("p2", { labels, ownerReferences: [{ ...owner, kind: "Other" }] }));
  await reconcileServer("alpha", f.deps);
  assert.deepEqual(f.deleted, []);
});

Deno.test("server reconcile: a failed delete fails the reconcile, naming the child", async () => {
  const f = fake({ server: rawServer(SCALING), certMode: "ExistingSecret" });
  await reconcileServer("alpha", f.deps);
  f.server!.spec = { namespace: "wh" };
  f.deps.deleteChild = () => Promise.reject(new Error("forbidden"));
  await assert.rejects(
    reconcileServer("alpha", f.deps),
    /deleting the HorizontalPodAutoscaler wh\/alpha-webhook-server that ConversionWebhookServer alpha no longer asks for/,
  );
});

Deno.test("controlledByServer: the managed-by label and this server's controller reference", () => {
  const obj = (labels: Record<string, string>, refs: Array<Record<string, unknown>>) => ({
    metadata: { name: "x", labels, ownerReferences: refs },
  });
  const labels = { "app.kubernetes.io/managed-by": "declarative-conversion-operator" };
  const ref = {
    apiVersion: "terasky.com/v1alpha1",
    kind: "ConversionWebhookServer",
    uid: "u",
    controller: true,
  };
  assert.equal(controlledByServer(obj(labels, [ref]), "u"), true);
  assert.equal(controlledByServer(obj(labels, [ref]), ""), false, "no uid, no match");
  assert.equal(controlledByServer(obj({}, [ref]), "u"), false);
  assert.equal(controlledByServer(obj(labels, [{ ...ref, apiVersion: "other/v1" }]), "u"), false);
  assert.equal(controlledByServer(obj(labels, []), "u"), false);
});

function leaseObject(
  labels: Record<string, string>,
  annotations: Record<string, string>,
): KubeObject {
  return {
    apiVersion: "coordination.k8s.io/v1",
    kind: "Lease",
    metadata: { name: "dco-served-p", namespace: "wh", labels, annotations },
    spec: { renewTime: "2030-01-01T00:00:00.000000Z" },
  };
}

Deno.test("watch: a served-target Lease wakes its server on a report change, not a heartbeat", () => {
  const label = { "conversion.terasky.com/webhook-server": "alpha" };
  const report = { [SERVED_TARGETS_ANNOTATION]: encodeServedTargets(["a.x"]) };
  const base = leaseObject(label, report);
  assert.equal(leaseServer(base), "alpha");
  assert.equal(leaseServer(leaseObject({}, report)), undefined, "no label, nothing");
  assert.equal(servedReportChanged("add", base), true);
  assert.equal(servedReportChanged("delete", base), true);
  const heartbeat = structuredClone(base);
  heartbeat.spec = { renewTime: "2030-01-01T00:00:30.000000Z" };
  const updates: [string, KubeObject, boolean][] = [
    ["a heartbeat (renewTime)", heartbeat, false],
    [
      "the report",
      leaseObject(label, { [SERVED_TARGETS_ANNOTATION]: encodeServedTargets(["b.x"]) }),
      true,
    ],
    [
      "truncated",
      leaseObject(label, { ...report, [SERVED_TARGETS_TRUNCATED_ANNOTATION]: "true" }),
      true,
    ],
    [
      "the instance",
      leaseObject({ "conversion.terasky.com/webhook-server": "beta" }, report),
      true,
    ],
  ];
  for (const [what, updated, want] of updates) {
    assert.equal(servedReportChanged("update", updated, base), want, what);
  }
});
