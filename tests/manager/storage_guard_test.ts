/**
 * The storage guard (docs/design/config-reconcile.md#the-storage-guard): the pure verdict, and
 * every path that reverts a target's conversion asking it first — the delete (held with
 * `DeletionBlocked`, overridable by the break-glass annotation, which is logged) and the
 * `FailClosed` drift revert (held with `RevertBlocked`, the previously applied conversion serving
 * on) — for a CRD and for an XRD's generated CRDs, against the in-memory World.
 */
import assert from "node:assert/strict";
import type { JsonObject } from "../../src/lib/json.ts";
import {
  reconcileConfig,
  REQUEUE_DELETE_BLOCKED_MS,
  REQUEUE_REVERT_BLOCKED_MS,
  storageVerdict,
  type VersionedObject,
  versionedObject,
} from "../../src/manager/config/mod.ts";
import { netConfig, netXRD, widgetConfig, widgetCRD, WIDGETS, World, XNETS } from "./_world.ts";

const PATCH_V2 =
  `kubectl patch crd ${WIDGETS} --subresource=status --type=merge -p '{"status":{"storedVersions":["v2"]}}'`;
const REWRITE = `kubectl get ${WIDGETS} --all-namespaces -o json | kubectl replace -f -`;

const vo = (o: Partial<VersionedObject>): VersionedObject => ({
  label: `CRD "${WIDGETS}"`,
  name: WIDGETS,
  served: ["v2"],
  storage: "v2",
  stored: ["v2"],
  ...o,
});

Deno.test("storageVerdict: safe only with one served version and only the storage version stored", () => {
  const safe = vo({});
  assert.deepEqual(storageVerdict({ servedBy: [safe], storedIn: [safe] }), {
    safe: true,
    problem: "",
    remedy: "",
  });
  const stored = vo({ stored: ["v1", "v2"] });
  const pending = storageVerdict({ servedBy: [stored], storedIn: [stored] });
  assert.equal(pending.safe, false);
  assert.equal(pending.reason, "StoredVersionsPending");
  assert.match(pending.problem, /still lists v1 in status\.storedVersions \[v1, v2\]/);
  assert.ok(pending.remedy.includes(REWRITE), pending.remedy);
  assert.ok(pending.remedy.includes(PATCH_V2), pending.remedy);
  assert.match(pending.remedy, /convctl migrate-storage/);
  const served = vo({ served: ["v1", "v2"] });
  const multi = storageVerdict({ servedBy: [served], storedIn: [served] });
  assert.equal(multi.reason, "MultipleServedVersions");
  assert.match(multi.problem, /serves 2 versions \(v1, v2\)/);
  assert.doesNotMatch(multi.remedy, /migrate-storage/);
  // Both: several served versions win the reason; the message names both problems.
  const both = vo({ served: ["v1", "v2"], stored: ["v1", "v2"] });
  const v = storageVerdict({ servedBy: [both], storedIn: [both] });
  assert.equal(v.reason, "MultipleServedVersions");
  assert.match(v.problem, /serves 2 versions.*still lists v1/);
  assert.ok(v.remedy.includes(PATCH_V2));
  // Unreadable or empty storedVersions hold it too (never guessed safe).
  for (const s of [undefined, []]) {
    const u = vo({ stored: s });
    assert.equal(storageVerdict({ servedBy: [u], storedIn: [u] }).reason, "StoredVersionsPending");
  }
  // Nothing stored yet (an XRD's generated CRD not rendered): only the served versions count.
  assert.equal(storageVerdict({ servedBy: [vo({})], storedIn: [] }).safe, true);
});

Deno.test("versionedObject: served, storage (CRD) or referenceable (XRD), storedVersions", () => {
  assert.deepEqual(versionedObject("CRD", widgetCRD({ storedVersions: ["v1", "v2"] })), {
    label: `CRD "${WIDGETS}"`,
    name: WIDGETS,
    served: ["v1", "v2"],
    storage: "v2",
    stored: ["v1", "v2"],
  });
  assert.deepEqual(versionedObject("XRD", netXRD()), {
    label: `XRD "${XNETS}"`,
    name: XNETS,
    served: ["v1", "v2"],
    storage: "v2",
    stored: undefined,
  });
});

const run = (w: World) => reconcileConfig("CRDConversionConfig", "widgets", w);

/** An applied widgets config whose CRD then un-served v1 with objects still stored at v1. */
async function appliedThenUnserved(driftPolicy?: string): Promise<World> {
  const w = new World(widgetConfig({ driftPolicy }), widgetCRD());
  await run(w);
  assert.equal(w.status.phase, "Applied");
  w.target = widgetCRD({ servedV1: false, storedVersions: ["v1", "v2"] });
  w.reset();
  return w;
}

/** Trims `status.storedVersions` as the runbook's status patch does. */
function trim(w: World, stored: string[]): void {
  const t = w.target!;
  (t.status as JsonObject).storedVersions = stored;
}

Deno.test("delete: v1 still stored → DeletionBlocked/StoredVersionsPending naming v1; after the trim it reverts", async () => {
  const w = await appliedThenUnserved();
  w.markDeleted();
  assert.deepEqual(await run(w), { requeueAfter: REQUEUE_DELETE_BLOCKED_MS });
  const c = w.cond("DeletionBlocked")!;
  assert.equal(c.status, "True");
  assert.equal(c.reason, "StoredVersionsPending");
  assert.match(c.message, /still lists v1 in status\.storedVersions/);
  assert.ok(c.message.includes(PATCH_V2), c.message);
  assert.ok(c.message.includes(REWRITE), c.message);
  assert.match(c.message, /allow-unsafe-delete/);
  assert.equal(w.status.message, c.message);
  assert.equal(w.applied.length, 0, "no revert");
  assert.ok(w.cfg?.metadata?.finalizers?.includes("conversion.terasky.com/safe-revert-crd"));
  // Held on every requeue until the storage is migrated.
  w.reset();
  assert.deepEqual(await run(w), { requeueAfter: REQUEUE_DELETE_BLOCKED_MS });
  assert.equal(w.applied.length, 0);
  trim(w, ["v2"]);
  w.reset();
  assert.deepEqual(await run(w), {});
  assert.deepEqual(w.calls, [
    "getConfig",
    `getTarget CRD ${WIDGETS}`,
    `getCRDLive ${WIDGETS}`,
    "apply None",
    "finalizers []",
  ]);
  assert.equal(w.cfg, undefined, "finalizer removed");
  assert.deepEqual(w.logs, [], "no override, nothing to warn about");
});

Deno.test("delete: the reason follows the cluster — MultipleServedVersions, then StoredVersionsPending", async () => {
  const w = new World(widgetConfig(), widgetCRD());
  await run(w);
  w.target = widgetCRD({ storedVersions: ["v1", "v2"] });
  w.markDeleted();
  await run(w);
  assert.equal(w.cond("DeletionBlocked")?.reason, "MultipleServedVersions");
  assert.match(w.cond("DeletionBlocked")!.message, /serves 2 versions \(v1, v2\).*still lists v1/);
  w.target = widgetCRD({ servedV1: false, storedVersions: ["v1", "v2"] });
  await run(w);
  assert.equal(w.cond("DeletionBlocked")?.reason, "StoredVersionsPending");
  assert.equal(w.applied.length, 1, "only the first apply");
});

Deno.test("delete: the break-glass annotation overrides a pending storage migration, with a warning", async () => {
  const w = await appliedThenUnserved();
  w.markDeleted({ "conversion.terasky.com/allow-unsafe-delete": "true" });
  assert.deepEqual(await run(w), {});
  assert.deepEqual(w.calls.slice(-2), ["apply None", "finalizers []"]);
  assert.equal(w.logs.length, 1);
  assert.match(
    w.logs[0],
    /storage guard overridden by conversion\.terasky\.com\/allow-unsafe-delete/,
  );
  assert.match(w.logs[0], /still lists v1 in status\.storedVersions/);
  assert.match(w.logs[0], /lose the fields/);
});

Deno.test("FailClosed drift with v1 still stored → no revert, Stale + RevertBlocked; after the trim it reverts", async () => {
  const w = await appliedThenUnserved("FailClosed");
  w.target = widgetCRD({
    generation: 4,
    servedV1: false,
    storedVersions: ["v1", "v2"],
    hubExtra: { color: { type: "string" } },
  });
  assert.deepEqual(await run(w), { requeueAfter: REQUEUE_REVERT_BLOCKED_MS });
  assert.equal(w.applied.length, 0, "no revert");
  assert.equal(w.status.phase, "Stale");
  assert.equal(w.cond("Stale")?.reason, "SchemaDrift");
  assert.equal(w.cond("Applied")?.status, "True", "the applied conversion keeps serving");
  const c = w.cond("RevertBlocked")!;
  assert.equal(c.status, "True");
  assert.equal(c.reason, "StoredVersionsPending");
  assert.match(c.message, /FailClosed revert of CRD "widgets\.example\.com" held/);
  assert.match(c.message, /still lists v1/);
  assert.ok(c.message.includes(PATCH_V2), c.message);
  assert.deepEqual(w.transitions, ["Applied->Stale (RevertBlocked)"]);
  // Still held on the requeue (phase Stale with RevertBlocked is re-checked, not forgotten).
  w.reset();
  assert.deepEqual(await run(w), { requeueAfter: REQUEUE_REVERT_BLOCKED_MS });
  assert.equal(w.applied.length, 0);
  trim(w, ["v2"]);
  w.reset();
  assert.deepEqual(await run(w), {});
  assert.deepEqual(w.applied.map((a) => a.spec), [{ conversion: { strategy: "None" } }]);
  assert.equal(w.status.phase, "Failed");
  assert.equal(w.cond("Applied")?.reason, "Reverted");
  assert.equal(w.cond("RevertBlocked"), undefined);
  assert.equal(w.cond("Stale"), undefined);
  assert.deepEqual(w.transitions, ["Stale->Failed (Reverted)"]);
});

Deno.test("FailClosed drift while two versions are served → RevertBlocked/MultipleServedVersions", async () => {
  const w = new World(widgetConfig({ driftPolicy: "FailClosed" }), widgetCRD());
  await run(w);
  w.reset();
  w.target = widgetCRD({ generation: 4, hubExtra: { color: { type: "string" } } });
  await run(w);
  assert.equal(w.applied.length, 0);
  assert.equal(w.cond("RevertBlocked")?.reason, "MultipleServedVersions");
  assert.match(w.cond("RevertBlocked")!.message, /serves 2 versions \(v1, v2\)/);
});

Deno.test("a held FailClosed revert is dropped once the config validates again", async () => {
  const w = await appliedThenUnserved("FailClosed");
  w.target = widgetCRD({
    generation: 4,
    servedV1: false,
    storedVersions: ["v1", "v2"],
    hubExtra: { color: { type: "string" } },
  });
  await run(w);
  assert.equal(w.cond("RevertBlocked")?.status, "True");
  // v1 served again, the extra field gone: the config validates and re-applies.
  w.target = widgetCRD({ generation: 5, storedVersions: ["v1", "v2"] });
  w.reset();
  await run(w);
  assert.equal(w.status.phase, "Applied", String(w.status.message));
  assert.equal(w.cond("RevertBlocked"), undefined);
  assert.deepEqual(
    w.applied.map((a) => (a.spec as JsonObject & { conversion: JsonObject }).conversion.strategy),
    ["Webhook"],
  );
});

/** A generated CRD of the XRD `xnets.example.org` as the apiserver holds it. */
function generatedCRD(stored: string[]): JsonObject {
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: XNETS },
    spec: {
      group: "example.org",
      versions: [
        { name: "v1", served: false, storage: false },
        { name: "v2", served: true, storage: true },
      ],
    },
    status: { storedVersions: stored },
  };
}

Deno.test("XRD delete: held by the generated CRD's storedVersions, read live; not rendered yet stores nothing", async () => {
  const w = new World(netConfig(), netXRD());
  const runXRD = () => reconcileConfig("XRDConversionConfig", "nets", w);
  await runXRD();
  assert.equal(w.status.phase, "Applied", String(w.status.message));
  const xrd = w.target!;
  ((xrd.spec as JsonObject).versions as JsonObject[])[0].served = false;
  w.crds.set(XNETS, generatedCRD(["v1", "v2"]));
  w.markDeleted();
  w.reset();
  assert.deepEqual(await runXRD(), { requeueAfter: REQUEUE_DELETE_BLOCKED_MS });
  assert.ok(w.calls.includes(`getCRDLive ${XNETS}`), w.calls.join("; "));
  const c = w.cond("DeletionBlocked")!;
  assert.equal(c.reason, "StoredVersionsPending");
  assert.match(c.message, /CRD "xnets\.example\.org" still lists v1/);
  assert.equal(w.applied.length, 0);
  // The generated CRD's served versions count as well as the XRD's.
  const twoServed = generatedCRD(["v2"]);
  ((twoServed.spec as JsonObject).versions as JsonObject[])[0].served = true;
  w.crds.set(XNETS, twoServed);
  await runXRD();
  assert.equal(w.cond("DeletionBlocked")?.reason, "MultipleServedVersions");
  assert.equal(w.applied.length, 0);
  // Not rendered: nothing is stored there; the XRD serves one version ⇒ reverts.
  w.crds.delete(XNETS);
  w.reset();
  assert.deepEqual(await runXRD(), {});
  // An XRD's revert names no stanza: server-side apply removes the whole of it.
  assert.deepEqual(w.applied.map((a) => a.spec), [undefined]);
  assert.equal(w.cfg, undefined);
});

Deno.test("a failed live read is an error (retried), never a verdict", async () => {
  const w = await appliedThenUnserved();
  w.markDeleted();
  const real = w.getCRDLive.bind(w);
  w.getCRDLive = () => Promise.reject(new Error("forbidden"));
  await assert.rejects(run(w), /forbidden/);
  assert.equal(w.applied.length, 0);
  assert.ok(w.cfg?.metadata?.finalizers?.includes("conversion.terasky.com/safe-revert-crd"));
  w.getCRDLive = real;
});
