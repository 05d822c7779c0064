/**
 * The config reconcile against the in-memory World that records every call: the gate order,
 * drift policies, safe delete, status vocabulary and the exact SSA patch.
 */
import assert from "node:assert/strict";
import type { JsonObject } from "../../src/lib/json.ts";
import type { ConversionConfig } from "../../src/api/mod.ts";
import { CONFIG_GATES, reconcileConfig, schemaHash } from "../../src/manager/config/mod.ts";
import { buildConversionPatch } from "../../src/manager/conversion_patch.ts";
import {
  CA_PEM,
  netConfig,
  netXRD,
  OPERATOR_NAMESPACE,
  servedLease,
  T0,
  webhookServer as server,
  widgetConfig,
  widgetCRD,
  WIDGETS,
  World,
} from "./_world.ts";

const TARGET = WIDGETS;

const crd = widgetCRD;
const config = widgetConfig;

/** A world holding `cfg` and its target CRD. */
const world = (cfg: ConversionConfig, target: JsonObject = crd()) => new World(cfg, target);

const run = (w: World) => reconcileConfig("CRDConversionConfig", "widgets", w);

Deno.test("schemaHash golden value", async () => {
  assert.equal(
    await schemaHash(3, "v2", 2),
    // printf 'gen=3;hub=v2;cfgGen=2' | openssl dgst -sha256 -binary | base64 | tr '+/' '-_' | tr -d =
    "sha256:O_bA27w4vKrkcU6yB2rwUFi4sRbykvrX79NUe2HEcnI",
  );
});

Deno.test("the gates run in this order", () => {
  assert.deepEqual(CONFIG_GATES.map((g) => g.name), [
    "target",
    "translated",
    "analyzed",
    "validated",
    "serverResolved",
    "targetEstablished",
    "serverReady",
    "handover",
    "caBundle",
    "apply",
    "applied",
    "propagation",
  ]);
});

Deno.test("first apply: gate order, Applied, exact SSA patch, status fields", async () => {
  const w = world(config());
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
  // The patch's exact shape is pinned by conversion_patch_test.ts; here, what the reconcile
  // decides: the server's Service (name, namespace, port), the CA bundle and the plan hash.
  assert.deepEqual(w.applied, [buildConversionPatch({
    targetKind: "CRD",
    targetName: TARGET,
    configName: "widgets",
    planHash: hash,
    serverName: "main",
    serverNamespace: OPERATOR_NAMESPACE,
    servicePort: 443,
    caBundle: btoa(CA_PEM),
  })]);
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
  const verdicts = (types: string[]) =>
    Object.fromEntries(types.map((t) => [t, `${w.cond(t)?.status}/${w.cond(t)?.reason}`]));
  assert.deepEqual(verdicts(["Validated", "CRDHealthy", "WebhookServerReady", "Applied"]), {
    Validated: "True/Validated",
    CRDHealthy: "True/Established",
    WebhookServerReady: "True/ServerReady",
    Applied: "True/Applied",
  });
  assert.equal(w.cond("Stale"), undefined);
  assert.deepEqual(w.transitions, ["None->Applied (Applied)"]);
});

Deno.test("gate: config invalid against the live schema → Invalid, nothing else read, no apply", async () => {
  const w = world(config({
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
  const w = world(cfg);
  await run(w);
  assert.equal(w.applied.length, 0);
  assert.equal(w.status.phase, "Invalid");
  assert.equal(w.cond("Validated")?.reason, "Invalid");
  assert.match(w.status.message!, /^invalid config: \[rule-translation\]/);
  assert.deepEqual(w.failures, ["InvalidConfig"]);
  assert.deepEqual(w.transitions, ["None->Invalid (InvalidConfig)"]);
});

Deno.test("gate: target missing → Invalid, no apply", async () => {
  const w = world(config());
  w.target = undefined;
  assert.deepEqual(await run(w), {});
  assert.equal(w.status.phase, "Invalid");
  assert.match(w.cond("Validated")!.message, /not found/);
  assert.equal(w.applied.length, 0);
});

Deno.test("gate: target not Established → Pending, server never read, no apply", async () => {
  const w = world(config(), crd({ established: false }));
  assert.deepEqual(await run(w), { requeueAfter: 15_000 });
  assert.deepEqual(w.calls.slice(2), [`getTarget CRD ${TARGET}`, "listServers", "patchStatus"]);
  assert.equal(w.status.phase, "Pending");
  assert.equal(w.cond("CRDHealthy")?.reason, "NotEstablished");
  assert.equal(w.cond("Stale"), undefined);
  assert.equal(w.applied.length, 0);
  assert.deepEqual(w.transitions, [], "gate waits are not counted");
});

Deno.test("gate: server not ready → Pending, CA never read, no apply", async () => {
  const w = world(config());
  w.servers = [server("main", false)];
  assert.deepEqual(await run(w), { requeueAfter: 15_000 });
  assert.deepEqual(w.calls.slice(-2), ["getServer main", "patchStatus"]);
  assert.equal(w.status.phase, "Pending");
  assert.equal(w.cond("WebhookServerReady")?.reason, "ServerNotReady");
  assert.equal(w.applied.length, 0);
});

Deno.test("gate: no server resolves → Invalid with the resolver's message", async () => {
  const w = world(config());
  w.servers = [];
  await run(w);
  assert.equal(w.status.phase, "Invalid");
  assert.match(w.status.message!, /^could not resolve a ConversionWebhookServer: /);
  assert.equal(w.applied.length, 0);
});

Deno.test("missing CA bundle or failed apply → error, status not advanced to Applied", async () => {
  const w = world(config());
  w.ca = undefined;
  await assert.rejects(run(w), /CA bundle/);
  assert.equal(w.applied.length, 0);
  w.ca = CA_PEM;
  w.applyError = new Error("boom");
  await assert.rejects(run(w), /boom/);
  assert.notEqual(w.status.phase, "Applied");
});

Deno.test("applied config failing a gate → Stale with the gate reason; target untouched", async () => {
  const w = world(config());
  await run(w);
  w.reset();
  w.servers = [server("main", false)];
  await run(w);
  assert.equal(w.status.phase, "Stale");
  assert.equal(w.cond("Stale")?.reason, "ServerNotReady");
  assert.equal(w.applied.length, 0);
  assert.equal(w.cond("Applied")?.status, "True");
  // recovery removes Stale entirely
  w.servers = [server()];
  await run(w);
  assert.equal(w.status.phase, "Applied");
  assert.equal(w.cond("Stale"), undefined);
});

Deno.test("drift under KeepServingStale → Stale/SchemaDrift, no revert", async () => {
  const w = world(config());
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
  const w = world(config({ driftPolicy: "FailClosed" }));
  await run(w);
  w.reset();
  // One served version, only the storage version stored: the storage guard lets it revert.
  w.target = crd({ generation: 4, servedV1: false, hubExtra: { color: { type: "string" } } });
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
  const w = world(config({ driftPolicy: "FailClosed" }));
  await run(w);
  w.servers = [server("main", false)];
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
  const w = world(config());
  await run(w);
  w.target = undefined;
  await run(w);
  assert.equal(w.status.phase, "Stale");
  assert.equal(w.cond("Stale")?.reason, "PostApplyInvalid");
  assert.equal(w.cond("Validated")?.reason, "Invalid");
});

Deno.test("lastTransitionTime moves only when a condition's status flips", async () => {
  const w = world(config());
  await run(w);
  const first = w.cond("Applied")!.lastTransitionTime;
  assert.equal(first, "2026-11-29T20:00:00Z");
  w.clock = T0 + 60_000;
  await run(w);
  assert.equal(w.cond("Applied")!.lastTransitionTime, first, "unchanged status keeps the stamp");
  w.clock = T0 + 120_000;
  w.servers = [server("main", false)];
  await run(w);
  assert.equal(w.cond("WebhookServerReady")!.lastTransitionTime, "2026-11-29T20:02:00Z");
  assert.equal(w.cond("Applied")!.lastTransitionTime, first);
  const staleAt = w.cond("Stale")!.lastTransitionTime;
  w.clock = T0 + 180_000;
  await run(w);
  assert.equal(w.cond("Stale")!.lastTransitionTime, staleAt);
});

Deno.test("delete: blocked while > 1 version served → DeletionBlocked, no revert", async () => {
  const w = world(config());
  await run(w);
  w.reset();
  w.markDeleted({ "conversion.terasky.com/allow-unsafe-delete": "yes" });
  assert.deepEqual(await run(w), { requeueAfter: 30_000 });
  assert.equal(w.cond("DeletionBlocked")?.reason, "MultipleServedVersions");
  assert.equal(w.cond("DeletionBlocked")?.status, "True");
  assert.match(w.cond("DeletionBlocked")!.message, /allow-unsafe-delete/);
  assert.equal(w.applied.length, 0);
  assert.ok(w.cfg?.metadata?.finalizers?.includes("conversion.terasky.com/safe-revert-crd"));
});

Deno.test("delete: break-glass annotation → revert, then finalizer removal", async () => {
  const w = world(config());
  await run(w);
  w.reset();
  w.markDeleted({ "conversion.terasky.com/allow-unsafe-delete": "true" });
  assert.deepEqual(await run(w), {});
  assert.deepEqual(w.calls, [
    "getConfig",
    `getTarget CRD ${TARGET}`,
    `getCRDLive ${TARGET}`,
    "apply None",
    "finalizers []",
  ]);
  assert.equal(w.cfg, undefined);
  assert.equal(w.logs.length, 1, "the override is logged");
  assert.match(w.logs[0], /storage guard overridden.*serves 2 versions \(v1, v2\)/);
});

Deno.test("delete: one served version → revert before finalizer removal; revert error keeps it", async () => {
  const w = world(config());
  await run(w);
  w.reset();
  w.target = crd({ servedV1: false });
  w.markDeleted();
  w.applyError = new Error("nope");
  await assert.rejects(run(w), /nope/);
  assert.ok(w.cfg?.metadata?.finalizers?.includes("conversion.terasky.com/safe-revert-crd"));
  w.applyError = undefined;
  w.reset();
  await run(w);
  assert.deepEqual(w.calls.slice(-2), ["apply None", "finalizers []"]);
});

Deno.test("delete: never applied, or target gone → finalizer removed without revert", async () => {
  const w = world(config(), crd({ established: false }));
  await run(w);
  w.markDeleted();
  w.reset();
  await run(w);
  assert.deepEqual(w.calls, ["getConfig", "finalizers []"]);
  const w2 = world(config());
  await run(w2);
  w2.markDeleted();
  w2.target = undefined;
  w2.reset();
  await run(w2);
  assert.deepEqual(w2.calls, ["getConfig", `getTarget CRD ${TARGET}`, "finalizers []"]);
});

Deno.test("XRD kind: XRDHealthy, webhookPort, v2 write, safe-revert finalizer", async () => {
  const w = new World(netConfig(), netXRD());
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
// The handover gate inside the reconcile

/** A ready replica `pod` of "other" reporting `targets` now. */
/** Adds the second server, "other", with its TLS Secret. */
function addOther(w: World): void {
  w.servers = [server(), server("other")];
  w.putTLSSecret(OPERATOR_NAMESPACE, "other", { "ca.crt": CA_PEM });
}

const lease = (w: World, targets: string[], pod: string) =>
  servedLease(OPERATOR_NAMESPACE, "other", pod, targets, w.clock);

/** An applied config on "main", then pinned to "other": the next reconcile is a move. */
async function moving(): Promise<World> {
  const w = world(config());
  addOther(w);
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
  const w = world(config());
  addOther(w);
  w.cfg!.spec.webhookServerRef = { name: "other" };
  await run(w);
  assert.equal(w.applied.length, 1);
  assert.ok(!w.calls.some((c) => c.startsWith("listServedLeases")));
  assert.equal(w.cond("HandoverReady"), undefined);
});

Deno.test("delete of an XRD config: held until the generated CRD leaves the webhook, at most 60 s", async () => {
  const applied = async () => {
    const w = new World(netConfig(), netXRD());
    await reconcileConfig("XRDConversionConfig", "nets", w);
    assert.equal(w.status.phase, "Applied", String(w.status.message));
    // Crossplane copied the stanza into the CRD it generates (both versions served: break glass).
    w.crds.set("xnets.example.org", { spec: { conversion: { strategy: "Webhook" } } });
    w.markDeleted({ "conversion.terasky.com/allow-unsafe-delete": "true" });
    w.reset();
    return w;
  };
  const w = await applied();
  assert.deepEqual(await reconcileConfig("XRDConversionConfig", "nets", w), {
    requeueAfter: 1_000,
  });
  assert.ok(w.calls.includes("apply (no conversion)"), w.calls.join("; "));
  assert.ok(w.cfg?.metadata?.finalizers?.includes("conversion.terasky.com/safe-revert"));
  assert.equal(w.cond("DeletionBlocked")?.reason, "RevertPropagating");
  assert.match(w.cond("DeletionBlocked")?.message ?? "", /out of xnets\.example\.org/);
  // Crossplane re-rendered it: released.
  w.crds.set("xnets.example.org", { spec: { conversion: { strategy: "None" } } });
  w.reset();
  await reconcileConfig("XRDConversionConfig", "nets", w);
  assert.equal(w.calls.at(-1), "finalizers []");
  // Nobody re-renders it (no Crossplane): released 60 s after the delete.
  const w2 = await applied();
  w2.clock = Date.parse("2026-11-29T21:00:59Z");
  assert.deepEqual(await reconcileConfig("XRDConversionConfig", "nets", w2), {
    requeueAfter: 1_000,
  });
  w2.clock = Date.parse("2026-11-29T21:01:00Z");
  w2.reset();
  await reconcileConfig("XRDConversionConfig", "nets", w2);
  assert.equal(w2.calls.at(-1), "finalizers []");
});
