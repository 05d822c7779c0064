/**
 * A `FailClosed` revert of an XRD with the XRD conversion guard in the write path: the revert is
 * an update of the XRD, so the guard sees it at admission and decides from the config's status as
 * it stands at that moment. The World here runs every XRD write through the guard (its JSONPatch
 * applied to what is stored), reading the config as stored — so these tests pin the order of the
 * reconcile's writes against the guard's rule, not the guard's branches (xrd_guard_test.ts).
 */
import assert from "node:assert/strict";
import type { JsonObject } from "../../src/lib/json.ts";
import type { ConversionConfig } from "../../src/api/mod.ts";
import { reconcileConfig } from "../../src/manager/config/mod.ts";
import { decideXrdGuard, type JsonPatchOp } from "../../src/manager/admission/mod.ts";
import { netConfig, netXRD, specSchema, World, XNETS } from "./_world.ts";

/** Applies the guard's ops (add/replace of an object member) to `obj`. */
function applyOps(obj: JsonObject, ops: readonly JsonPatchOp[]): void {
  for (const op of ops) {
    const keys = op.path.split("/").slice(1).map((k) =>
      k.replaceAll("~1", "/").replaceAll("~0", "~")
    );
    const last = keys.pop()!;
    let at = obj as Record<string, unknown>;
    for (const k of keys) at = at[k] as Record<string, unknown>;
    at[last] = structuredClone(op.value);
  }
}

/** A cluster whose XRD writes pass the guard, which reads the config as stored right then. */
class GuardedWorld extends World {
  guardRestores: string[] = [];
  override async applyTarget(obj: JsonObject): Promise<void> {
    await super.applyTarget(obj);
    if (obj.kind !== "CompositeResourceDefinition") return;
    const stored = this.xrds.get(XNETS)!;
    const decision = decideXrdGuard(
      { operation: "UPDATE", name: XNETS, object: structuredClone(stored) },
      () => this.cfg === undefined ? [] : [structuredClone(this.cfg)],
    );
    if (decision.patch.length === 0) return;
    this.guardRestores.push(decision.reason);
    applyOps(stored, decision.patch);
  }
}

/** Applied with FailClosed, then the XRD drifts: its hub gains a field the spoke lacks, and the
 * spoke is no longer served (one served version, nothing stored elsewhere: the storage guard lets
 * the revert go). */
async function drifted(): Promise<GuardedWorld> {
  const cfg = netConfig();
  cfg.spec.driftPolicy = "FailClosed";
  const w = new GuardedWorld(cfg, netXRD());
  await reconcileConfig("XRDConversionConfig", "nets", w);
  assert.equal(w.status.phase, "Applied", String(w.status.message));
  assert.equal(
    (w.target!.spec as JsonObject & { conversion: JsonObject }).conversion.strategy,
    "Webhook",
  );
  const xrd = w.target!;
  const versions = (xrd.spec as JsonObject).versions as JsonObject[];
  versions[0].served = false;
  versions[1].schema = specSchema({ cidr: { type: "string" }, zone: { type: "string" } });
  xrd.metadata = { ...(xrd.metadata as JsonObject), generation: 2 };
  w.reset();
  return w;
}

Deno.test("FailClosed revert of an XRD sticks with the guard registered", async () => {
  const w = await drifted();
  await reconcileConfig("XRDConversionConfig", "nets", w);
  assert.equal(w.cond("Applied")?.reason, "Reverted", String(w.status.message));
  assert.equal(w.status.phase, "Failed");
  assert.deepEqual(w.guardRestores, [], "the guard put nothing back");
  const xrd = w.target! as JsonObject & { metadata: JsonObject; spec: JsonObject };
  assert.equal(xrd.spec.conversion, undefined, "the stanza is gone");
  assert.equal(xrd.metadata.annotations, undefined);
  // A later Crossplane write is not restored either: the config no longer wants the stanza.
  await reconcileConfig("XRDConversionConfig", "nets", w);
  assert.equal((w.target!.spec as JsonObject).conversion, undefined);
});

/** The status a crash between the two writes leaves: the revert marked, the stanza still there. */
async function crashedBeforeRevert(): Promise<GuardedWorld> {
  const w = await drifted();
  const real = w.applyTarget.bind(w);
  w.applyTarget = () => Promise.reject(new Error("process killed"));
  await assert.rejects(reconcileConfig("XRDConversionConfig", "nets", w), /process killed/);
  w.applyTarget = real;
  // The catch block wrote RevertFailed; a crash would not have: put back what the first write left.
  const marked = w.statusPatches.find((s) =>
    s.conditions?.some((c) => c.type === "Applied" && c.reason === "Reverting")
  );
  assert.ok(marked, "the revert is marked before it is written");
  assert.equal(marked.phase, "Failed");
  w.putConfig({ ...w.cfg!, status: structuredClone(marked) } as ConversionConfig);
  assert.equal(
    (w.target!.spec as JsonObject & { conversion: JsonObject }).conversion.strategy,
    "Webhook",
  );
  w.reset();
  return w;
}

Deno.test("the revert is marked before it is written: the guard sees Applied=False", async () => {
  const w = await drifted();
  await reconcileConfig("XRDConversionConfig", "nets", w);
  assert.deepEqual(w.calls.filter((c) => c === "patchStatus" || c.startsWith("apply")), [
    "patchStatus",
    "apply (no conversion)",
    "patchStatus",
  ]);
  assert.deepEqual(
    w.statusPatches.slice(-2).map((s) => s.conditions?.find((c) => c.type === "Applied")?.reason),
    ["Reverting", "Reverted"],
  );
});

Deno.test("a crash between the two writes retries the revert, the storage guard asked again", async () => {
  const w = await crashedBeforeRevert();
  await reconcileConfig("XRDConversionConfig", "nets", w);
  assert.equal(w.cond("Applied")?.reason, "Reverted", String(w.status.message));
  assert.equal((w.target!.spec as JsonObject).conversion, undefined);
  assert.deepEqual(w.guardRestores, []);
});

Deno.test("a crash between the two writes, then the storage guard holds: Applied=True, the guard keeps the stanza", async () => {
  const w = await crashedBeforeRevert();
  // Two versions served again: reverting now would relabel instead of convert.
  ((w.target!.spec as JsonObject).versions as JsonObject[])[0].served = true;
  await reconcileConfig("XRDConversionConfig", "nets", w);
  assert.equal(w.status.phase, "Stale");
  assert.equal(w.cond("RevertBlocked")?.reason, "MultipleServedVersions");
  assert.equal(w.cond("Applied")?.status, "True");
  assert.deepEqual(w.applied, [], "no revert");
  // A Crossplane full-object write now drops the stanza: the guard puts it back.
  const x = w.target! as JsonObject & { metadata: JsonObject; spec: JsonObject };
  delete x.spec.conversion;
  delete x.metadata.annotations;
  const decision = decideXrdGuard(
    { operation: "UPDATE", name: XNETS, object: structuredClone(x) },
    () => [structuredClone(w.cfg)],
  );
  assert.match(decision.reason, /restored config nets's conversion webhook/);
});
