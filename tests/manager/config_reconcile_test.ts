/**
 * The config reconcile against in-memory dependencies that record every call: gate order (G1),
 * drift policies (G2), safe delete (G3), status vocabulary and the exact SSA patch.
 */
import assert from "node:assert/strict";
import { servedAnnotations, type ServedLeaseLike } from "../../src/api/served_lease.ts";
import type { JsonObject } from "../../src/engine/mod.ts";
import {
  type ConfigKind,
  type ConversionConfig,
  type ConversionWebhookServer,
  parseConfig,
} from "../../src/api/mod.ts";
import {
  type ConfigReconcileDeps,
  type ConfigStatus,
  reconcileConfig,
  schemaHash,
} from "../../src/manager/config/mod.ts";
import type { StatusCondition } from "../../src/kube/status.ts";

const T0 = Date.UTC(2026, 10, 29, 20, 0, 0);
const TARGET = "widgets.example.com";
const CA_PEM = "-----BEGIN CERTIFICATE-----\nQUJD\n-----END CERTIFICATE-----\n";

function schema(props: Record<string, JsonObject>): JsonObject {
  return {
    openAPIV3Schema: {
      type: "object",
      properties: { spec: { type: "object", properties: props } },
    },
  };
}

interface CrdOpts {
  established?: boolean;
  generation?: number;
  servedV1?: boolean;
  /** Extra hub-only fields (schema drift). */
  hubExtra?: Record<string, JsonObject>;
}

function crd(o: CrdOpts = {}): JsonObject {
  const size = { size: { type: "string" } };
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: TARGET, generation: o.generation ?? 3 },
    spec: {
      group: "example.com",
      names: { kind: "Widget", plural: "widgets" },
      versions: [
        { name: "v1", served: o.servedV1 ?? true, storage: false, schema: schema(size) },
        {
          name: "v2",
          served: true,
          storage: true,
          schema: schema({ ...size, ...(o.hubExtra ?? {}) }),
        },
      ],
    },
    status: {
      conditions: [{ type: "Established", status: o.established === false ? "False" : "True" }],
    },
  };
}

function config(
  opts: { rules?: unknown[]; driftPolicy?: string; generation?: number } = {},
): ConversionConfig {
  const parsed = parseConfig({
    apiVersion: "terasky.com/v1alpha1",
    kind: "CRDConversionConfig",
    metadata: { name: "widgets", generation: opts.generation ?? 2 },
    spec: {
      targetCRD: { name: TARGET },
      hubVersion: "v2",
      spokes: [{ version: "v1", rules: opts.rules ?? [] }],
      ...(opts.driftPolicy ? { driftPolicy: opts.driftPolicy } : {}),
    },
  });
  if (!parsed.ok) throw new Error(parsed.errors.join("\n"));
  return parsed.config;
}

function server(ready = true): ConversionWebhookServer {
  const cond = (type: string) => ({
    type,
    status: ready ? "True" as const : "False" as const,
    reason: "x",
    message: "",
    lastTransitionTime: "2026-01-01T00:00:00Z",
  });
  return {
    apiVersion: "terasky.com/v1alpha1",
    kind: "ConversionWebhookServer",
    metadata: { name: "main" },
    spec: {
      default: true,
      namespace: "dco-system",
      replicas: 2,
      serviceAccountName: "sa",
      certificate: { issuerRef: { name: "ca", kind: "ClusterIssuer" } },
    },
    status: {
      readyReplicas: ready ? 2 : 0,
      conditions: ["Available", "CertificateReady", "ServiceReady"].map(cond),
    },
  } as ConversionWebhookServer;
}

/** In-memory cluster that records calls in order. */
class World implements ConfigReconcileDeps {
  calls: string[] = [];
  applied: JsonObject[] = [];
  statusPatches: ConfigStatus[] = [];
  cfg: ConversionConfig | undefined;
  target: JsonObject | undefined;
  servers: ConversionWebhookServer[] = [server()];
  ca: string | undefined = CA_PEM;
  applyError: Error | undefined;
  transitions: string[] = [];
  failures: string[] = [];
  clock = T0;
  operatorNamespace = "dco-system";
  metrics = {
    phaseTransition: (l: { fromPhase: string; toPhase: string; reason: string }) =>
      this.transitions.push(`${l.fromPhase}->${l.toPhase} (${l.reason})`),
    analyzeFailure: (l: { reason: string }) => this.failures.push(l.reason),
  };

  constructor(cfg: ConversionConfig, target: JsonObject | undefined = crd()) {
    this.cfg = cfg;
    this.target = target;
  }

  now = () => this.clock;

  getConfig(_kind: ConfigKind, _name: string) {
    this.calls.push("getConfig");
    return Promise.resolve(this.cfg === undefined ? undefined : structuredClone(this.cfg));
  }
  getTarget(kind: string, name: string) {
    this.calls.push(`getTarget ${kind} ${name}`);
    return Promise.resolve(this.target === undefined ? undefined : structuredClone(this.target));
  }
  leases: ServedLeaseLike[] = [];
  listServedLeases(server: string, ns: string) {
    this.calls.push(`listServedLeases ${ns}/${server}`);
    return Promise.resolve(structuredClone(this.leases));
  }
  listServers() {
    this.calls.push("listServers");
    return Promise.resolve(structuredClone(this.servers));
  }
  getServer(name: string) {
    this.calls.push(`getServer ${name}`);
    return Promise.resolve(this.servers.find((s) => s.metadata?.name === name));
  }
  readCABundle(name: string, ns: string) {
    this.calls.push(`readCABundle ${ns}/${name}`);
    return Promise.resolve(this.ca);
  }
  applyTarget(obj: JsonObject) {
    this.calls.push(
      `apply ${
        (obj.spec as JsonObject & { conversion: { strategy: string } }).conversion.strategy
      }`,
    );
    if (this.applyError) return Promise.reject(this.applyError);
    this.applied.push(obj);
    return Promise.resolve();
  }
  patchStatus(_kind: ConfigKind, _name: string, _before: unknown, after: ConfigStatus) {
    this.calls.push("patchStatus");
    this.statusPatches.push(structuredClone(after));
    if (this.cfg) this.cfg = { ...this.cfg, status: structuredClone(after) } as ConversionConfig;
    return Promise.resolve();
  }
  updateFinalizers(cfg: ConversionConfig, finalizers: string[]) {
    this.calls.push(`finalizers [${finalizers.join(",")}]`);
    const next = structuredClone(cfg);
    next.metadata = { ...next.metadata, finalizers };
    if (next.metadata.deletionTimestamp && finalizers.length === 0) this.cfg = undefined;
    else this.cfg = next;
    return Promise.resolve(structuredClone(next));
  }

  get status(): ConfigStatus {
    return (this.cfg?.status ?? {}) as ConfigStatus;
  }
  cond(type: string): StatusCondition | undefined {
    return this.status.conditions?.find((c) => c.type === type);
  }
  reset() {
    this.calls = [];
    this.applied = [];
    this.transitions = [];
    this.failures = [];
  }
}

const run = (w: World) => reconcileConfig("CRDConversionConfig", "widgets", w);

Deno.test("schemaHash golden value", async () => {
  assert.equal(
    await schemaHash(3, "v2", 2),
    // printf 'gen=3;hub=v2;cfgGen=2' | openssl dgst -sha256 -binary | base64 | tr '+/' '-_' | tr -d =
    "sha256:O_bA27w4vKrkcU6yB2rwUFi4sRbykvrX79NUe2HEcnI",
  );
});

Deno.test("first apply: gate order, Applied, exact SSA patch, status fields", async () => {
  const w = new World(config());
  assert.deepEqual(await run(w), { requeueAfter: 300_000 });
  assert.deepEqual(w.calls, [
    "getConfig",
    "finalizers [conversion.terasky.com/safe-revert-crd]",
    `getTarget CRD ${TARGET}`,
    "listServers",
    "getServer main",
    "readCABundle dco-system/main",
    "apply Webhook",
    "patchStatus",
  ]);
  const hash = await schemaHash(3, "v2", 2);
  assert.deepEqual(w.applied, [{
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: {
      name: TARGET,
      annotations: {
        "conversion.terasky.com/managed-by": "widgets",
        "conversion.terasky.com/plan-hash": hash,
      },
    },
    spec: {
      conversion: {
        strategy: "Webhook",
        webhook: {
          clientConfig: {
            service: {
              name: "main-webhook-server",
              namespace: "dco-system",
              path: `/convert/${TARGET}`,
              port: 443,
            },
            caBundle: btoa(CA_PEM),
          },
          conversionReviewVersions: ["v1"],
        },
      },
    },
  }]);
  const s = w.status;
  assert.equal(s.phase, "Applied");
  assert.equal(s.observedGeneration, 2);
  assert.equal(s.observedCRDGeneration, 3);
  assert.equal(s.schemaHash, hash);
  assert.equal(s.lastAppliedPlanHash, hash);
  assert.equal(s.assignedWebhookServer, "main");
  assert.equal(s.webhookPath, `/convert/${TARGET}`);
  assert.equal(s.webhookURL, `https://main-webhook-server.dco-system.svc/convert/${TARGET}`);
  assert.equal(s.webhookPort, undefined, "webhookPort is XRD-only");
  assert.equal(s.overallLossless, true);
  assert.equal(s.spokeStatuses?.[0].version, "v1");
  for (
    const [type, reason] of [
      ["Validated", "Validated"],
      ["CRDHealthy", "Established"],
      ["WebhookServerReady", "ServerReady"],
      ["Applied", "Applied"],
    ]
  ) {
    assert.equal(w.cond(type)?.status, "True", type);
    assert.equal(w.cond(type)?.reason, reason, type);
  }
  assert.equal(w.cond("Stale"), undefined);
  assert.deepEqual(w.transitions, ["None->Applied (Applied)"]);
});

Deno.test("gate: config invalid against the live schema → Invalid, nothing else read, no apply", async () => {
  const w = new World(config({
    rules: [{
      strategy: "FieldRename",
      fieldRename: { hubPath: "spec.nope", spokePath: "spec.size" },
    }],
  }));
  assert.deepEqual(await run(w), {});
  assert.deepEqual(w.calls.slice(2), [`getTarget CRD ${TARGET}`, "patchStatus"]);
  assert.equal(w.applied.length, 0);
  assert.equal(w.status.phase, "Invalid");
  assert.equal(w.cond("Validated")?.reason, "ValidationFailed");
  assert.match(w.status.message!, /\[spoke v1\] \[path-not-found\]/);
  assert.deepEqual(w.failures, ["ValidationErrors"]);
  assert.deepEqual(w.transitions, ["None->Invalid (ValidationFailed)"]);
  assert.ok((w.status.spokeStatuses?.[0].errors ?? []).length > 0, "last attempt recorded");
});

Deno.test("gate: rules that do not translate → Invalid with a classed message", async () => {
  const cfg = config();
  // Bypasses the strict decode on purpose: the engine's translation stage must catch it.
  (cfg.spec.spokes[0].rules as unknown[]) = [{
    strategy: "FieldRename",
    fieldRename: { hubPath: 3 },
  }];
  const w = new World(cfg);
  await run(w);
  assert.equal(w.applied.length, 0);
  assert.equal(w.status.phase, "Invalid");
  assert.equal(w.cond("Validated")?.reason, "Invalid");
  assert.match(w.status.message!, /^invalid config: \[rule-translation\]/);
  assert.deepEqual(w.failures, ["InvalidConfig"]);
  assert.deepEqual(w.transitions, ["None->Invalid (InvalidConfig)"]);
});

Deno.test("gate: target missing → Invalid, no apply", async () => {
  const w = new World(config());
  w.target = undefined;
  assert.deepEqual(await run(w), {});
  assert.equal(w.status.phase, "Invalid");
  assert.match(w.cond("Validated")!.message, /not found/);
  assert.equal(w.applied.length, 0);
});

Deno.test("gate: target not Established → Pending, server never read, no apply", async () => {
  const w = new World(config(), crd({ established: false }));
  assert.deepEqual(await run(w), { requeueAfter: 15_000 });
  assert.deepEqual(w.calls.slice(2), [`getTarget CRD ${TARGET}`, "listServers", "patchStatus"]);
  assert.equal(w.status.phase, "Pending");
  assert.equal(w.cond("CRDHealthy")?.reason, "NotEstablished");
  assert.equal(w.cond("Stale"), undefined);
  assert.equal(w.applied.length, 0);
  assert.deepEqual(w.transitions, [], "gate waits are not counted");
});

Deno.test("gate: server not ready → Pending, CA never read, no apply", async () => {
  const w = new World(config());
  w.servers = [server(false)];
  assert.deepEqual(await run(w), { requeueAfter: 15_000 });
  assert.deepEqual(w.calls.slice(-2), ["getServer main", "patchStatus"]);
  assert.equal(w.status.phase, "Pending");
  assert.equal(w.cond("WebhookServerReady")?.reason, "ServerNotReady");
  assert.equal(w.applied.length, 0);
});

Deno.test("gate: no server resolves → Invalid with the resolver's message", async () => {
  const w = new World(config());
  w.servers = [];
  await run(w);
  assert.equal(w.status.phase, "Invalid");
  assert.match(w.status.message!, /^could not resolve a ConversionWebhookServer: /);
  assert.equal(w.applied.length, 0);
});

Deno.test("missing CA bundle or failed apply → error, status not advanced to Applied", async () => {
  const w = new World(config());
  w.ca = undefined;
  await assert.rejects(run(w), /CA bundle/);
  assert.equal(w.applied.length, 0);
  w.ca = CA_PEM;
  w.applyError = new Error("boom");
  await assert.rejects(run(w), /boom/);
  assert.notEqual(w.status.phase, "Applied");
});

Deno.test("applied config failing a gate → Stale with the gate reason; target untouched", async () => {
  const w = new World(config());
  await run(w);
  w.reset();
  w.servers = [server(false)];
  await run(w);
  assert.equal(w.status.phase, "Stale");
  assert.equal(w.cond("Stale")?.reason, "ServerNotReady");
  assert.equal(w.applied.length, 0);
  assert.equal(w.cond("Applied")?.status, "True");
  // recovery removes Stale entirely
  w.servers = [server(true)];
  await run(w);
  assert.equal(w.status.phase, "Applied");
  assert.equal(w.cond("Stale"), undefined);
});

Deno.test("drift under KeepServingStale → Stale/SchemaDrift, no revert", async () => {
  const w = new World(config());
  await run(w);
  w.reset();
  w.target = crd({ generation: 4, hubExtra: { color: { type: "string" } } });
  assert.deepEqual(await run(w), {});
  assert.equal(w.status.phase, "Stale");
  assert.equal(w.cond("Stale")?.reason, "SchemaDrift");
  assert.equal(w.cond("Validated")?.reason, "ValidationFailed");
  assert.equal(w.applied.length, 0, "no revert");
  assert.deepEqual(w.transitions, ["Applied->Stale (SchemaDrift)"]);
  assert.equal(w.status.observedCRDGeneration, 4);
  assert.notEqual(w.status.schemaHash, w.status.lastAppliedPlanHash);
});

Deno.test("drift under FailClosed → revert + Failed/Reverted; a failed revert retries", async () => {
  const w = new World(config({ driftPolicy: "FailClosed" }));
  await run(w);
  w.reset();
  w.target = crd({ generation: 4, hubExtra: { color: { type: "string" } } });
  w.applyError = new Error("apiserver says no");
  await assert.rejects(run(w), /apiserver says no/);
  assert.equal(w.status.phase, "Failed");
  assert.equal(w.cond("Applied")?.reason, "RevertFailed");
  assert.match(w.status.message!, /apiserver says no/);
  assert.deepEqual(w.calls.slice(-2), ["apply None", "patchStatus"]);
  // the retry (phase Failed + RevertFailed) reverts again
  w.reset();
  w.applyError = undefined;
  await run(w);
  assert.deepEqual(w.applied, [{
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: TARGET },
    spec: { conversion: { strategy: "None" } },
  }]);
  assert.equal(w.status.phase, "Failed");
  assert.equal(w.cond("Applied")?.status, "False");
  assert.equal(w.cond("Applied")?.reason, "Reverted");
  assert.equal(w.cond("Stale"), undefined);
  // once Reverted, further failures do not revert again
  w.reset();
  await run(w);
  assert.equal(w.applied.length, 0);
});

Deno.test("FailClosed config already Stale stays Stale (no revert)", async () => {
  const w = new World(config({ driftPolicy: "FailClosed" }));
  await run(w);
  w.servers = [server(false)];
  await run(w);
  assert.equal(w.status.phase, "Stale");
  w.reset();
  w.target = crd({ hubExtra: { color: { type: "string" } } });
  await run(w);
  assert.equal(w.status.phase, "Stale");
  assert.equal(w.cond("Stale")?.reason, "SchemaDrift");
  assert.equal(w.applied.length, 0);
});

Deno.test("applied config whose target disappears → Stale/PostApplyInvalid", async () => {
  const w = new World(config());
  await run(w);
  w.target = undefined;
  await run(w);
  assert.equal(w.status.phase, "Stale");
  assert.equal(w.cond("Stale")?.reason, "PostApplyInvalid");
  assert.equal(w.cond("Validated")?.reason, "Invalid");
});

Deno.test("lastTransitionTime moves only when a condition's status flips", async () => {
  const w = new World(config());
  await run(w);
  const first = w.cond("Applied")!.lastTransitionTime;
  assert.equal(first, "2026-11-29T20:00:00Z");
  w.clock = T0 + 60_000;
  await run(w);
  assert.equal(w.cond("Applied")!.lastTransitionTime, first, "unchanged status keeps the stamp");
  w.clock = T0 + 120_000;
  w.servers = [server(false)];
  await run(w);
  assert.equal(w.cond("WebhookServerReady")!.lastTransitionTime, "2026-11-29T20:02:00Z");
  assert.equal(w.cond("Applied")!.lastTransitionTime, first);
  const staleAt = w.cond("Stale")!.lastTransitionTime;
  w.clock = T0 + 180_000;
  await run(w);
  assert.equal(w.cond("Stale")!.lastTransitionTime, staleAt);
});

function deleting(w: World, annotations?: Record<string, string>) {
  const cfg = w.cfg!;
  w.cfg = {
    ...cfg,
    metadata: { ...cfg.metadata, deletionTimestamp: "2026-11-29T21:00:00Z", annotations },
  } as ConversionConfig;
}

Deno.test("delete: blocked while > 1 version served → DeletionBlocked, no revert", async () => {
  const w = new World(config());
  await run(w);
  w.reset();
  deleting(w, { "conversion.terasky.com/allow-unsafe-delete": "yes" });
  assert.deepEqual(await run(w), { requeueAfter: 30_000 });
  assert.equal(w.cond("DeletionBlocked")?.reason, "MultipleServedVersions");
  assert.equal(w.cond("DeletionBlocked")?.status, "True");
  assert.match(w.cond("DeletionBlocked")!.message, /allow-unsafe-delete/);
  assert.equal(w.applied.length, 0);
  assert.ok(w.cfg?.metadata?.finalizers?.includes("conversion.terasky.com/safe-revert-crd"));
});

Deno.test("delete: break-glass annotation → revert, then finalizer removal", async () => {
  const w = new World(config());
  await run(w);
  w.reset();
  deleting(w, { "conversion.terasky.com/allow-unsafe-delete": "true" });
  assert.deepEqual(await run(w), {});
  assert.deepEqual(w.calls, [
    "getConfig",
    `getTarget CRD ${TARGET}`,
    "apply None",
    "finalizers []",
  ]);
  assert.equal(w.cfg, undefined);
});

Deno.test("delete: one served version → revert before finalizer removal; revert error keeps it", async () => {
  const w = new World(config());
  await run(w);
  w.reset();
  w.target = crd({ servedV1: false });
  deleting(w);
  w.applyError = new Error("nope");
  await assert.rejects(run(w), /nope/);
  assert.ok(w.cfg?.metadata?.finalizers?.includes("conversion.terasky.com/safe-revert-crd"));
  w.applyError = undefined;
  w.reset();
  await run(w);
  assert.deepEqual(w.calls.slice(-2), ["apply None", "finalizers []"]);
});

Deno.test("delete: never applied, or target gone → finalizer removed without revert", async () => {
  const w = new World(config(), crd({ established: false }));
  await run(w);
  deleting(w);
  w.reset();
  await run(w);
  assert.deepEqual(w.calls, ["getConfig", "finalizers []"]);
  const w2 = new World(config());
  await run(w2);
  deleting(w2);
  w2.target = undefined;
  w2.reset();
  await run(w2);
  assert.deepEqual(w2.calls, ["getConfig", `getTarget CRD ${TARGET}`, "finalizers []"]);
});

Deno.test("XRD kind: XRDHealthy, webhookPort, v2 write, safe-revert finalizer", async () => {
  const xrd: JsonObject = {
    apiVersion: "apiextensions.crossplane.io/v2",
    kind: "CompositeResourceDefinition",
    metadata: { name: "xnets.example.org", generation: 1 },
    spec: {
      group: "example.org",
      scope: "Namespaced",
      names: { kind: "XNet", plural: "xnets" },
      versions: [
        {
          name: "v1",
          served: true,
          referenceable: false,
          schema: schema({ cidr: { type: "string" } }),
        },
        {
          name: "v2",
          served: true,
          referenceable: true,
          schema: schema({ cidr: { type: "string" } }),
        },
      ],
    },
    status: { conditions: [{ type: "Established", status: "True" }] },
  };
  const parsed = parseConfig({
    apiVersion: "terasky.com/v1alpha1",
    kind: "XRDConversionConfig",
    metadata: { name: "nets", generation: 1 },
    spec: {
      targetXRD: { name: "xnets.example.org" },
      hubVersion: "v2",
      spokes: [{ version: "v1" }],
    },
  });
  assert.ok(parsed.ok);
  const w = new World(parsed.config, xrd);
  w.servers[0].spec.service = { port: 8443, type: "ClusterIP" } as never;
  await reconcileConfig("XRDConversionConfig", "nets", w);
  assert.equal(w.calls[1], "finalizers [conversion.terasky.com/safe-revert]");
  assert.equal(w.applied[0].apiVersion, "apiextensions.crossplane.io/v2");
  assert.equal(w.status.phase, "Applied", String(w.status.message));
  assert.equal(w.status.webhookPort, 8443);
  assert.equal(w.status.observedXRDGeneration, 1);
  assert.equal(w.cond("XRDHealthy")?.reason, "Established");
  assert.equal(
    w.status.webhookURL,
    "https://main-webhook-server.dco-system.svc/convert/xnets.example.org",
  );
});

// ---------------------------------------------------------------------------------------------
// [P15] Handover gate (runtime.md §5) inside the reconcile

function otherServer(): ConversionWebhookServer {
  const s = server();
  s.metadata = { name: "other" };
  s.spec = { ...s.spec, default: false };
  return s;
}

function lease(w: World, targets: string[], pod: string): ServedLeaseLike {
  return {
    metadata: {
      name: `dco-served-${pod}`,
      annotations: servedAnnotations(targets).annotations,
    } as {
      name: string;
      annotations: Record<string, string>;
    },
    spec: { renewTime: new Date(w.clock).toISOString() },
  };
}

/** An applied config on "main", then pinned to "other": the next reconcile is a move. */
async function moving(): Promise<World> {
  const w = new World(config());
  w.servers = [server(), otherServer()];
  await run(w);
  assert.equal(w.status.phase, "Applied");
  w.cfg!.spec.webhookServerRef = { name: "other" };
  w.reset();
  return w;
}

Deno.test("handover: a move stays closed across repeated reconciles until verified", async () => {
  const w = await moving();
  // The destination's replicas have not spoken yet.
  assert.deepEqual(await run(w), { requeueAfter: 5_000 });
  assert.equal(w.applied.length, 0, "target untouched while blocked");
  assert.ok(w.calls.includes("listServedLeases dco-system/other"));
  assert.equal(w.status.phase, "Stale");
  assert.equal(w.cond("HandoverReady")?.reason, "HandoverAwaitingReports");
  assert.equal(w.cond("Stale")?.reason, "HandoverAwaitingReports");
  assert.equal(w.status.assignedWebhookServer, "other");
  assert.match(w.status.webhookURL ?? "", /^https:\/\/main-webhook-server\./, "last applied kept");
  // Repeated reconciles: assignedWebhookServer already says "other", still gated.
  w.clock += 1_000;
  w.leases = [lease(w, [], "a"), lease(w, [], "b")];
  assert.deepEqual(await run(w), { requeueAfter: 5_000 });
  assert.equal(w.cond("HandoverReady")?.reason, "HandoverPending");
  w.clock += 60_000; // long past the grace period: an explicit "no" still blocks
  w.leases = [lease(w, [], "a"), lease(w, [], "b")];
  await run(w);
  assert.equal(w.applied.length, 0);
  assert.equal(w.cond("HandoverReady")?.reason, "HandoverPending");
  // Every ready replica serves the target: proceed, verified.
  w.leases = [lease(w, [TARGET], "a"), lease(w, [TARGET], "b")];
  assert.deepEqual(await run(w), { requeueAfter: 300_000 });
  assert.equal(w.applied.length, 1);
  assert.equal(w.status.phase, "Applied");
  assert.equal(w.cond("HandoverReady")?.status, "True");
  assert.equal(w.cond("HandoverReady")?.reason, "HandoverReady");
  assert.equal(w.cond("Stale"), undefined);
  assert.match(w.status.webhookURL ?? "", /^https:\/\/other-webhook-server\./);
  // Not a move any more: the gate is not consulted, the verdict stays visible.
  w.reset();
  await run(w);
  assert.ok(!w.calls.some((c) => c.startsWith("listServedLeases")));
  assert.equal(w.cond("HandoverReady")?.reason, "HandoverReady");
});

Deno.test("handover: 30 s of silence proceeds unverified, timed from the condition", async () => {
  const w = await moving();
  await run(w);
  assert.equal(w.cond("HandoverReady")?.reason, "HandoverAwaitingReports");
  w.clock += 29_999;
  await run(w);
  assert.equal(w.applied.length, 0);
  w.clock += 1;
  await run(w);
  assert.equal(w.applied.length, 1);
  assert.equal(w.cond("HandoverReady")?.reason, "HandoverUnverified");
  assert.equal(w.status.phase, "Applied");
});

Deno.test("handover: a first apply is never gated", async () => {
  const w = new World(config());
  w.servers = [server(), otherServer()];
  w.cfg!.spec.webhookServerRef = { name: "other" };
  await run(w);
  assert.equal(w.applied.length, 1);
  assert.ok(!w.calls.some((c) => c.startsWith("listServedLeases")));
  assert.equal(w.cond("HandoverReady"), undefined);
});
