/**
 * The manager's Crossplane startup check, as a real process against a real kube-apiserver that
 * serves no Crossplane 2.x API. With XRD support on (`--enable-xrd-support=true`) and no
 * `apiextensions.crossplane.io` at all, the manager logs one error line naming the missing API, the
 * flag and the Helm value that turn XRD support off, and exits 1 before it builds a cache (no
 * "informer cache failed to sync", no stack). The same with only a Crossplane 1.x-shaped API (the
 * XRD kind served at v1 only: the stand-in CRD of `_crossplane.ts` without its v2). With
 * `--enable-xrd-support=false` the same cluster runs the manager (ready).
 */
import assert from "node:assert/strict";
import type * as k8s from "@kubernetes/client-node";
import { type ControlPlane, e2eTest, waitFor } from "../support/control_plane.ts";
import { admissionCertificate, installDcoCRDs, startManager } from "../support/dco_stack.ts";
import { httpGet } from "../support/role_process.ts";
import { XRD_CRD } from "./_crossplane.ts";

// deno-lint-ignore no-explicit-any
type Obj = any;

/** The stand-in XRD CRD as Crossplane 1.x serves it: v1 only. */
function crossplaneV1OnlyCRD(): k8s.KubernetesObject {
  const crd = structuredClone(XRD_CRD) as Obj;
  crd.spec.versions = crd.spec.versions
    .filter((v: Obj) => v.name === "v1")
    .map((v: Obj) => ({ ...v, storage: true }));
  return crd;
}

/** Runs the manager with `xrd` until it exits; its exit code and log. */
async function runToExit(
  cp: ControlPlane,
  setup: { certDir: string; namespace: string },
): Promise<{ code: number; log: string }> {
  await using role = startManager(cp, { ...setup, features: { xrd: true, crd: true } });
  const status = await role.child.status;
  return { code: status.code, log: role.output() };
}

/** The one error line, as its JSON object. */
function errorLine(log: string): Obj {
  const lines = log.split("\n").filter((l) => l.includes('"level":"error"'));
  assert.equal(lines.length, 1, log);
  return JSON.parse(lines[0]);
}

e2eTest("manager: XRD support without Crossplane 2.x says so and exits 1", async (cp, t) => {
  await installDcoCRDs(cp);
  const namespace = await cp.createNamespace("dco-system");
  const { certDir } = await admissionCertificate(cp, "dco-xp-ca");

  await t.step("no apiextensions.crossplane.io at all", async () => {
    const { code, log } = await runToExit(cp, { certDir, namespace });
    assert.equal(code, 1, log);
    const line = errorLine(log);
    assert.match(line.msg, /does not serve Crossplane 2\.x's CompositeResourceDefinition API/);
    assert.match(line.msg, /Install Crossplane 2\.x/);
    assert.ok(line.msg.includes("--enable-xrd-support=false"), line.msg);
    assert.ok(line.msg.includes("--set features.crossplane.enabled=false"), line.msg);
    assert.equal(line.missing, "apiextensions.crossplane.io/v2 (not served)");
    assert.equal(line.flag, "--enable-xrd-support=false");
    assert.equal(line.helmValue, "features.crossplane.enabled=false");
    assert.doesNotMatch(log, /informer cache failed to sync|informer caches scoped/);
    assert.doesNotMatch(log, /\n\s+at /, "no stack trace");
  });

  await t.step("only Crossplane 1.x's v1 is served", async () => {
    const v1Only = crossplaneV1OnlyCRD();
    await cp.apply(v1Only);
    await cp.waitForCRD(v1Only.metadata!.name!);
    const { code, log } = await runToExit(cp, { certDir, namespace });
    assert.equal(code, 1, log);
    assert.equal(errorLine(log).missing, "apiextensions.crossplane.io/v2 (not served)");
  });

  await t.step("with --enable-xrd-support=false the manager runs", async () => {
    await using role = startManager(cp, { certDir, namespace, features: { xrd: false } });
    await waitFor(
      "readyz",
      async () => (await httpGet(`${role.healthURL}/readyz`)).status === 200,
      { timeoutMs: 60_000 },
    );
    assert.doesNotMatch(role.output(), /does not serve Crossplane|"level":"error"/);
  });
});
