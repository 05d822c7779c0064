/**
 * The XRD-only parts of the config reconcile against the in-memory World: `PackageManaged`,
 * out-of-band revert detection, propagation verification into the CRDs Crossplane generates
 * (every `ConversionPropagated` reason, `status.generatedCRDs`, the requeues and the two metrics)
 * and the XRD write version (v1 with claims, else v2). The rules:
 * docs/design/config-reconcile.md#xrd-propagation.
 */
import assert from "node:assert/strict";
import type { JsonObject } from "../../src/lib/json.ts";
import type { ConversionConfig } from "../../src/api/mod.ts";
import {
  isOurConversion,
  packageRevisionOwner,
  reconcileConfig,
  REQUEUE_APPLIED_MS,
  REQUEUE_WAITING_MS,
  sha256Hex,
  verifyGeneratedCRD,
} from "../../src/manager/config/mod.ts";
import { createManagerCaches } from "../../src/manager/caches.ts";
import { mapGeneratedCRDToConfigs } from "../../src/manager/config_controller.ts";
import { createLogger } from "../../src/obs/log.ts";
import type { KubeObject } from "../../src/kube/mod.ts";
import { textToBase64 as b64 } from "../../src/lib/base64.ts";
import { CA_PEM, netConfig, netXRD, widgetConfig, widgetCRD, World, XNETS } from "./_world.ts";

const XRD_NAME = XNETS;
const CLAIM_CRD = "nets.example.org";
const CONFIG = "nets";
const OTHER_PEM = "-----BEGIN CERTIFICATE-----\nWFla\n-----END CERTIFICATE-----\n";

const xrd = netXRD;
const config = netConfig;

/** The `spec.conversion` Crossplane copies from the XRD into a generated CRD. */
function crdWith(name: string, conversion: JsonObject | undefined): JsonObject {
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name },
    spec: { group: "example.org", ...(conversion ? { conversion } : {}) },
  };
}

function conversionOf(target: JsonObject): JsonObject {
  return structuredClone((target.spec as JsonObject).conversion as JsonObject);
}

/** A world holding `cfg` and its target XRD. */
const world = (cfg: ConversionConfig, target: JsonObject = xrd()) => new World(cfg, target);

/** Plays Crossplane: copies the XRD's current `spec.conversion` into the generated CRD(s). */
function propagate(w: World, ...names: string[]): void {
  const conv = conversionOf(w.target!);
  for (const n of names.length ? names : [XRD_NAME]) w.crds.set(n, crdWith(n, conv));
}

/** An out-of-band full-object update that drops `spec.conversion` (and/or the annotations). */
function overwrite(
  w: World,
  o: { conversion?: JsonObject; annotations?: Record<string, string> },
): void {
  const t = w.target as JsonObject & { metadata: JsonObject; spec: JsonObject };
  if (o.conversion) t.spec.conversion = o.conversion;
  else delete t.spec.conversion;
  if (o.annotations) t.metadata.annotations = o.annotations;
  else delete t.metadata.annotations;
}

const run = (w: World) => reconcileConfig("XRDConversionConfig", CONFIG, w);

Deno.test("first apply, generated CRD not rendered yet → GeneratedCRDNotFound, requeue 15 s", async () => {
  const w = world(config());
  const r = await run(w);
  assert.equal(w.status.phase, "Applied", String(w.status.message));
  assert.equal(r.requeueAfter, REQUEUE_WAITING_MS);
  const c = w.cond("ConversionPropagated");
  assert.equal(c?.status, "False");
  assert.equal(c?.reason, "GeneratedCRDNotFound");
  assert.match(c!.message, /xnets\.example\.org.*not found/);
  assert.deepEqual(w.status.generatedCRDs, [{
    name: XRD_NAME,
    role: "composite",
    propagated: false,
    observedCABundleHash: "",
    observedAt: "2026-11-29T20:00:00Z",
    message: "not found",
  }]);
  assert.equal(w.gauge.get(XRD_NAME), 0);
  assert.deepEqual(w.lags, []);
  assert.deepEqual(w.reverts, [], "never on a first apply");
  // The XRD is re-read after the apply, then the generated CRD.
  const i = w.calls.findIndex((c) => c.startsWith("apply"));
  assert.deepEqual(w.calls.slice(i + 1), [
    `getTarget XRD ${XRD_NAME}`,
    `getGeneratedCRD ${XRD_NAME}`,
    "patchStatus",
  ]);
  // Status fields of the apply.
  assert.equal(w.status.webhookPort, 443);
  assert.equal(w.status.lastAppliedPlanHash, w.status.schemaHash);
  assert.ok(w.status.lastAppliedPlanHash?.startsWith("sha256:"));
});

Deno.test("Crossplane copies the stanza → Propagated once, lag observed once, requeue 5 min", async () => {
  const w = world(config());
  await run(w);
  w.clock += 7_000;
  propagate(w);
  const r = await run(w);
  assert.equal(r.requeueAfter, REQUEUE_APPLIED_MS);
  const c = w.cond("ConversionPropagated");
  assert.equal(c?.status, "True");
  assert.equal(c?.reason, "Propagated");
  assert.equal(w.gauge.get(XRD_NAME), 1);
  assert.deepEqual(w.lags, [7], "now − Applied.lastTransitionTime");
  const entry = w.status.generatedCRDs?.[0];
  assert.equal(entry?.propagated, true);
  assert.equal(entry?.message, "");
  assert.equal(
    entry?.observedCABundleHash,
    await sha256Hex(new TextEncoder().encode(CA_PEM)),
  );
  assert.match(entry!.observedCABundleHash, /^sha256:[0-9a-f]{64}$/);
  // Staying propagated observes no further lag.
  w.clock += 60_000;
  await run(w);
  assert.deepEqual(w.lags, [7]);
  assert.equal(w.gauge.get(XRD_NAME), 1);
  assert.deepEqual(w.reverts, []);
});

Deno.test("generated CRD with strategy None (relabel without convert) → NotPropagated", async () => {
  const w = world(config());
  w.crds.set(XRD_NAME, crdWith(XRD_NAME, { strategy: "None" }));
  const r = await run(w);
  const c = w.cond("ConversionPropagated");
  assert.equal(c?.reason, "NotPropagated");
  assert.equal(c?.status, "False");
  assert.match(c!.message, /conversion strategy is "None"/);
  assert.equal(r.requeueAfter, REQUEUE_WAITING_MS);
  assert.equal(w.status.generatedCRDs?.[0].propagated, false);
  assert.equal(w.gauge.get(XRD_NAME), 0);
});

Deno.test("each mismatch is NotPropagated: service, path, port, review versions, no CRD conversion", async () => {
  const cases: Array<[string, (conv: JsonObject) => void, RegExp]> = [
    ["name", (c) => svcOf(c).name = "other-webhook-server", /service name/],
    ["namespace", (c) => svcOf(c).namespace = "elsewhere", /service namespace/],
    ["path", (c) => svcOf(c).path = "/convert/x", /service path/],
    ["port", (c) => svcOf(c).port = 8443, /service port/],
    ["no service", (c) => delete clientOf(c).service, /no service client config/],
    [
      "review versions",
      (c) => (c.webhook as JsonObject).conversionReviewVersions = ["v1", "v1beta1"],
      /conversionReviewVersions/,
    ],
  ];
  for (const [what, edit, re] of cases) {
    const w = world(config());
    await run(w);
    propagate(w);
    const crd = w.crds.get(XRD_NAME) as JsonObject;
    edit((crd.spec as JsonObject).conversion as JsonObject);
    await run(w);
    const c = w.cond("ConversionPropagated");
    assert.equal(c?.reason, "NotPropagated", what);
    assert.match(c!.message, re, what);
    assert.match(w.status.generatedCRDs![0].message, re, what);
  }
  // No conversion block at all on the CRD: strategy defaults to None.
  const w = world(config());
  w.crds.set(XRD_NAME, crdWith(XRD_NAME, undefined));
  await run(w);
  assert.equal(w.cond("ConversionPropagated")?.reason, "NotPropagated");
});

function clientOf(conv: JsonObject): JsonObject {
  return (conv.webhook as JsonObject).clientConfig as JsonObject;
}
function svcOf(conv: JsonObject): JsonObject {
  return clientOf(conv).service as JsonObject;
}

Deno.test("caBundle-only difference → CABundleStale with the observed hash", async () => {
  const w = world(config());
  await run(w);
  propagate(w);
  const conv = ((w.crds.get(XRD_NAME) as JsonObject).spec as JsonObject).conversion as JsonObject;
  clientOf(conv).caBundle = b64(OTHER_PEM);
  const r = await run(w);
  const c = w.cond("ConversionPropagated");
  assert.equal(c?.status, "False");
  assert.equal(c?.reason, "CABundleStale");
  assert.equal(r.requeueAfter, REQUEUE_WAITING_MS);
  const other = await sha256Hex(new TextEncoder().encode(OTHER_PEM));
  assert.equal(w.status.generatedCRDs?.[0].observedCABundleHash, other);
  assert.equal(w.status.generatedCRDs?.[0].propagated, false);
  assert.ok(c!.message.includes(other));
  // No caBundle at all is stale too (everything else matches), with an empty observed hash.
  delete clientOf(conv).caBundle;
  await run(w);
  assert.equal(w.cond("ConversionPropagated")?.reason, "CABundleStale");
  assert.equal(w.status.generatedCRDs?.[0].observedCABundleHash, "");
});

Deno.test("review versions compare as sets; an absent port means 443", async () => {
  const w = world(config(["v1", "v1beta1"]));
  await run(w);
  propagate(w);
  const conv = ((w.crds.get(XRD_NAME) as JsonObject).spec as JsonObject).conversion as JsonObject;
  (conv.webhook as JsonObject).conversionReviewVersions = ["v1beta1", "v1"];
  delete svcOf(conv).port;
  await run(w);
  assert.equal(w.cond("ConversionPropagated")?.reason, "Propagated");
});

Deno.test("claims: v1 write, composite + claim CRDs; not-found wins over mismatch over stale", async () => {
  const w = world(config(), xrd({ claims: true }));
  await run(w);
  assert.equal(w.applied[0].apiVersion, "apiextensions.crossplane.io/v1", "claims ⇒ v1");
  assert.deepEqual(w.status.generatedCRDs?.map((g) => [g.name, g.role]), [
    [XRD_NAME, "composite"],
    [CLAIM_CRD, "claim"],
  ]);
  // Composite mismatching, claim missing → GeneratedCRDNotFound names the claim CRD.
  w.crds.set(XRD_NAME, crdWith(XRD_NAME, { strategy: "None" }));
  await run(w);
  let c = w.cond("ConversionPropagated");
  assert.equal(c?.reason, "GeneratedCRDNotFound");
  assert.match(c!.message, /^generated CRD nets\.example\.org of/);
  // Claim stale, composite mismatching → NotPropagated.
  propagate(w, CLAIM_CRD);
  const claimConv = ((w.crds.get(CLAIM_CRD) as JsonObject).spec as JsonObject)
    .conversion as JsonObject;
  clientOf(claimConv).caBundle = b64(OTHER_PEM);
  await run(w);
  assert.equal(w.cond("ConversionPropagated")?.reason, "NotPropagated");
  // Composite fixed, claim still stale → CABundleStale.
  propagate(w, XRD_NAME);
  await run(w);
  c = w.cond("ConversionPropagated");
  assert.equal(c?.reason, "CABundleStale");
  assert.match(c!.message, /nets\.example\.org/);
  // Both match → Propagated.
  propagate(w, XRD_NAME, CLAIM_CRD);
  await run(w);
  assert.equal(w.cond("ConversionPropagated")?.reason, "Propagated");
  assert.deepEqual(w.status.generatedCRDs?.map((g) => g.propagated), [true, true]);
  // The revert on delete addresses the claim XRD at v1 too (the read decides).
  w.markDeleted({ "conversion.terasky.com/allow-unsafe-delete": "true" });
  w.applied = [];
  await run(w);
  assert.equal(w.applied[0].apiVersion, "apiextensions.crossplane.io/v1");
  // No stanza at all: Crossplane's v1 schema refuses `strategy: None`.
  assert.equal(w.applied[0].spec, undefined);
  const reverted = w.xrds.get(XRD_NAME)?.spec as JsonObject;
  assert.equal(reverted.conversion, undefined, "the stanza is gone");
});

Deno.test("v2 write for an XRD without claims, for apply and delete revert", async () => {
  const w = world(config());
  await run(w);
  assert.equal(w.applied[0].apiVersion, "apiextensions.crossplane.io/v2");
  assert.deepEqual((w.applied[0].metadata as JsonObject).annotations, {
    "conversion.terasky.com/managed-by": CONFIG,
    "conversion.terasky.com/plan-hash": w.status.schemaHash,
  });
  w.markDeleted({ "conversion.terasky.com/allow-unsafe-delete": "true" });
  w.applied = [];
  await run(w);
  assert.equal(w.applied[0].apiVersion, "apiextensions.crossplane.io/v2");
  assert.equal(w.applied[0].spec, undefined, "the stanza is removed at v2 too");
  assert.equal(w.cfg, undefined, "finalizer removed after the revert");
  assert.deepEqual(w.reverts, [], "never during delete");
});

Deno.test("generated-CRD set cannot be determined → NotPropagated, gauge 0, nothing read", async () => {
  const w = world(config(), xrd({ plural: "" }));
  await run(w);
  assert.equal(w.status.phase, "Applied", String(w.status.message));
  const c = w.cond("ConversionPropagated");
  assert.equal(c?.reason, "NotPropagated");
  assert.match(c!.message, /cannot determine the CRDs generated/);
  assert.deepEqual(w.status.generatedCRDs, []);
  assert.equal(w.gauge.get(XRD_NAME), 0);
  assert.ok(!w.calls.some((c) => c.startsWith("getGeneratedCRD")));
});

Deno.test("a generated CRD that cannot be read is a mismatch carrying the error", async () => {
  const w = world(config());
  w.crds.set(XRD_NAME, new Error("forbidden: cannot get customresourcedefinitions"));
  await run(w);
  const c = w.cond("ConversionPropagated");
  assert.equal(c?.reason, "NotPropagated");
  assert.match(c!.message, /forbidden/);
  assert.match(w.status.generatedCRDs![0].message, /read failed: forbidden/);
});

Deno.test("CRD kind: no propagation check, no PackageManaged, 5-minute requeue unchanged", async () => {
  // A generated-CRD reader is there, and never consulted for the CRD kind.
  const w = new World(widgetConfig(), widgetCRD());
  const r = await reconcileConfig("CRDConversionConfig", "widgets", w);
  assert.equal(w.status.phase, "Applied", String(w.status.message));
  assert.equal(r.requeueAfter, REQUEUE_APPLIED_MS);
  assert.equal(w.cond("ConversionPropagated"), undefined);
  assert.equal(w.cond("PackageManaged"), undefined);
  assert.equal(w.status.generatedCRDs, undefined);
  assert.ok(!w.calls.some((c) => c.startsWith("getGeneratedCRD")));
  assert.equal(w.gauge.size, 0);
});

// ---------------------------------------------------------------------------------------------
// Out-of-band revert detection

async function appliedWorld(): Promise<World> {
  const w = world(config());
  await run(w);
  propagate(w);
  await run(w);
  assert.equal(w.cond("ConversionPropagated")?.reason, "Propagated");
  assert.deepEqual(w.reverts, []);
  w.calls = [];
  w.applied = [];
  return w;
}

Deno.test("revert: strategy gone (annotations kept) → counted, logged, re-applied", async () => {
  const w = await appliedWorld();
  overwrite(w, {
    conversion: { strategy: "None" },
    annotations: { "conversion.terasky.com/managed-by": CONFIG },
  });
  await run(w);
  assert.deepEqual(w.reverts, [`xrd/${XRD_NAME}`]);
  assert.equal(w.logs.length, 1);
  assert.match(w.logs[0], /gone.*re-applied/);
  assert.equal(w.applied.length, 1, "the ordinary flow re-applies");
  assert.ok(isOurConversion(w.target!, CONFIG));
  // Crossplane has not re-rendered yet: the generated CRD still has the old block, which equals
  // the re-applied one, so it stays Propagated; the next pass with the stanza back counts nothing.
  await run(w);
  assert.deepEqual(w.reverts, [`xrd/${XRD_NAME}`]);
});

Deno.test("revert: whole stanza and annotations dropped (package establisher) → counted", async () => {
  const w = await appliedWorld();
  overwrite(w, {});
  await run(w);
  assert.deepEqual(w.reverts, [`xrd/${XRD_NAME}`]);
});

Deno.test("revert: a foreign webhook with our annotation gone → counted (both halves)", async () => {
  const w = await appliedWorld();
  const conv = conversionOf(w.target!);
  overwrite(w, { conversion: conv, annotations: { "conversion.terasky.com/managed-by": "other" } });
  await run(w);
  assert.deepEqual(w.reverts, [`xrd/${XRD_NAME}`], "annotation names another config");
  const w2 = await appliedWorld();
  overwrite(w2, { conversion: conversionOf(w2.target!) });
  await run(w2);
  assert.deepEqual(w2.reverts, [`xrd/${XRD_NAME}`], "annotation missing");
});

Deno.test("no revert: stanza ours; stale cache confirmed ours live; not Applied; first apply", async () => {
  const w = await appliedWorld();
  await run(w);
  assert.deepEqual(w.reverts, []);
  assert.ok(!w.calls.some((c) => c.startsWith("getTargetLive")), "no live read when ours");
  // The cache has not seen our own last apply yet, the live object has.
  const live = structuredClone(w.target!);
  overwrite(w, { conversion: { strategy: "None" } });
  w.liveTarget = live;
  await run(w);
  assert.deepEqual(w.reverts, []);
  assert.ok(w.calls.includes(`getTargetLive XRD ${XRD_NAME}`));
  // Applied not True (FailClosed revert happened) → no count even though the stanza is gone.
  const w2 = await appliedWorld();
  const status = w2.status;
  status.conditions = status.conditions?.map((c) =>
    c.type === "Applied" ? { ...c, status: "False" as const, reason: "Reverted" } : c
  );
  overwrite(w2, {});
  await run(w2);
  assert.deepEqual(w2.reverts, []);
  // Never applied (no lastAppliedPlanHash) with a foreign stanza → no count.
  const w3 = world(config());
  overwrite(w3, { conversion: { strategy: "Webhook", webhook: {} } });
  await run(w3);
  assert.deepEqual(w3.reverts, []);
});

// ---------------------------------------------------------------------------------------------
// PackageManaged

Deno.test("PackageManaged: pkg.crossplane.io *Revision owner, set before any gate", async () => {
  const owner = {
    apiVersion: "pkg.crossplane.io/v1",
    kind: "ConfigurationRevision",
    name: "platform-abc123",
    uid: "u",
    controller: true,
  };
  const w = world(config(), xrd({ owner, established: false }));
  await run(w);
  assert.equal(w.status.phase, "Pending", "the Established gate held");
  const c = w.cond("PackageManaged");
  assert.equal(c?.status, "True");
  assert.equal(c?.reason, "OwnedByPackageRevision");
  assert.match(c!.message, /ConfigurationRevision "platform-abc123"/);

  const w2 = world(config());
  await run(w2);
  assert.equal(w2.cond("PackageManaged")?.status, "False");
  assert.equal(w2.cond("PackageManaged")?.reason, "NotPackageManaged");

  assert.equal(
    packageRevisionOwner(xrd({ owner: { ...owner, kind: "Configuration" } })),
    undefined,
  );
  assert.equal(
    packageRevisionOwner(xrd({ owner: { ...owner, apiVersion: "example.org/v1" } })),
    undefined,
  );
  assert.deepEqual(packageRevisionOwner(xrd({ owner: { ...owner, kind: "ProviderRevision" } })), {
    kind: "ProviderRevision",
    name: "platform-abc123",
  });
});

Deno.test("verifyGeneratedCRD: not found, read error", async () => {
  const expected = {
    serviceName: "main-webhook-server",
    serviceNamespace: "dco-system",
    path: "/convert/x",
    port: 443,
    conversionReviewVersions: ["v1"],
    caBundleHash: "sha256:00",
  };
  assert.equal((await verifyGeneratedCRD(undefined, expected)).state, "notFound");
  const err = await verifyGeneratedCRD(new Error("boom"), expected);
  assert.equal(err.state, "mismatch");
  assert.match(err.message, /boom/);
});

Deno.test("mapGeneratedCRDToConfigs: by XRD owner references and by the CRD's own name", () => {
  const index: Record<string, string[]> = {
    [XRD_NAME]: ["nets"],
    "xdbs.example.org": ["dbs", "nets"],
  };
  const map = mapGeneratedCRDToConfigs({
    indexKeys: (_name: string, value: string) => index[value] ?? [],
  });
  const crd = (name: string, owners: JsonObject[] = []) =>
    ({ metadata: { name, ownerReferences: owners } }) as unknown as KubeObject;
  const xrdOwner = (name: string, apiVersion = "apiextensions.crossplane.io/v1") => ({
    apiVersion,
    kind: "CompositeResourceDefinition",
    name,
  });
  assert.deepEqual(map(crd(XRD_NAME)), ["nets"], "composite CRD named like its XRD");
  assert.deepEqual(map(crd(CLAIM_CRD, [xrdOwner(XRD_NAME)])), ["nets"], "claim CRD by owner");
  assert.deepEqual(
    map(
      crd(XRD_NAME, [
        xrdOwner(XRD_NAME),
        xrdOwner("xdbs.example.org", "apiextensions.crossplane.io/v2"),
      ]),
    ),
    ["dbs", "nets"],
    "deduplicated, sorted",
  );
  assert.deepEqual(map(crd(CLAIM_CRD, [xrdOwner(XRD_NAME, "example.org/v1")])), []);
  assert.deepEqual(map(crd("unrelated.example.org")), []);
});

Deno.test("caches: XRD support caches all CRDs (shared with the CRD target cache when on)", () => {
  const client = {} as never; // informers only talk to it once started
  const logger = createLogger("test");
  const xrdOnly = createManagerCaches({ client, kinds: ["XRDConversionConfig"], logger });
  assert.ok(xrdOnly.crds !== undefined);
  assert.equal(xrdOnly.crds.resource.plural, "customresourcedefinitions");
  assert.equal(xrdOnly.crds.resource.group, "apiextensions.k8s.io");
  assert.ok(xrdOnly.informers.includes(xrdOnly.crds), "synced and started with the rest");
  assert.match(xrdOnly.description, /generated CRDs/);
  const both = createManagerCaches({
    client,
    kinds: ["CRDConversionConfig", "XRDConversionConfig"],
    logger,
  });
  assert.equal(both.crds, both.targets.get("CRDConversionConfig"), "one CRD cache, not two");
  assert.equal(new Set(both.informers).size, both.informers.length);
  assert.equal(
    both.informers.filter((i) => i.resource.plural === "customresourcedefinitions").length,
    1,
  );
  const crdOnly = createManagerCaches({ client, kinds: ["CRDConversionConfig"], logger });
  assert.equal(crdOnly.crds, undefined);
});
