/**
 * The chart's XRD conversion guard (XRD only; docs/manager.md#the-xrd-conversion-guard-mutating): the
 * MutatingWebhookConfiguration `<fullname>-mutating-webhook-configuration` is rendered iff
 * admission webhooks, Crossplane support and `features.crossplane.conversionGuard.enabled` are all
 * on; its webhook, rules and policy are fixed (failurePolicy Ignore whatever
 * `admissionWebhook.failurePolicy` says; no objectSelector); its caBundle comes the way the
 * ValidatingWebhookConfiguration's does (cert-manager CA injection, the manager's self-issued
 * admission certificate — `--admission-mutating-webhook-configuration` plus get/patch on exactly
 * that name — or the `admissionWebhook.caBundle` value).
 *
 * Renders with tests/chart/_helm.ts (needs the helm binary that hack/testenv.sh builds).
 */
import assert from "node:assert/strict";
import { xrdGuardWebhook } from "../support/dco_stack.ts";
import { CHART, FULLNAME, helm, KUBE_VERSION, type Obj, render, setArgs } from "./_helm.ts";

const MWC = `${FULLNAME}-mutating-webhook-configuration`;
const MWC_ARG = `--admission-mutating-webhook-configuration=${MWC}`;

function mwcs(objs: Obj[]): Obj[] {
  return objs.filter((o) => o.kind === "MutatingWebhookConfiguration");
}

function managerArgs(objs: Obj[]): string[] {
  const d = objs.find((o) => o.kind === "Deployment" && o.metadata.name === `${FULLNAME}-manager`);
  assert.ok(d, "manager Deployment rendered");
  return d.spec.template.spec.containers[0].args;
}

/** The manager ClusterRole's rules naming mutatingwebhookconfigurations by name. */
function mwcNamedRules(objs: Obj[]): Obj[] {
  const role = objs.find((o) =>
    o.kind === "ClusterRole" && o.metadata.name === `${FULLNAME}-manager-role`
  );
  assert.ok(role, "manager ClusterRole rendered");
  return (role.rules as Obj[]).filter((r) =>
    r.resources.includes("mutatingwebhookconfigurations") && r.resourceNames
  );
}

/** The one webhook exactly as the chart renders it by design (caBundle aside). */
function expectedWebhook(namespace = "dco-system", path = "/guard-xrd-conversion"): Obj {
  return xrdGuardWebhook({
    service: { name: `${FULLNAME}-webhook-service`, namespace, path, port: 443 },
  });
}

Deno.test("chart guard: default render — the MWC as documented, CA injected by cert-manager", async () => {
  const objs = await render({}, "ops");
  const [mwc, ...more] = mwcs(objs);
  assert.equal(more.length, 0);
  assert.equal(mwc.apiVersion, "admissionregistration.k8s.io/v1");
  assert.equal(mwc.metadata.name, MWC);
  assert.equal(mwc.metadata.labels["app.kubernetes.io/instance"], "rel");
  assert.deepEqual(mwc.metadata.annotations, {
    "cert-manager.io/inject-ca-from": `ops/${FULLNAME}-webhook-cert`,
  });
  assert.deepEqual(mwc.webhooks, [expectedWebhook("ops")]);
  assert.equal(mwc.webhooks[0].objectSelector, undefined, "no object selector");
  assert.equal(mwc.webhooks[0].namespaceSelector, undefined);
  // cert-manager: no self-issued flags, no named MWC grant.
  const args = managerArgs(objs);
  assert.ok(args.includes("--enable-xrd-conversion-guard=true"));
  assert.ok(!args.some((a) => a.startsWith("--admission-")));
  assert.deepEqual(mwcNamedRules(objs), []);
});

Deno.test("chart guard: failurePolicy is Ignore whatever admissionWebhook.failurePolicy says; path override", async () => {
  const objs = await render({
    "admissionWebhook.failurePolicy": "Fail",
    "features.crossplane.conversionGuard.path": "/custom-guard",
  });
  const [mwc] = mwcs(objs);
  assert.deepEqual(mwc.webhooks, [expectedWebhook("dco-system", "/custom-guard")]);
  const vwc = objs.find((o) => o.kind === "ValidatingWebhookConfiguration")!;
  assert.ok(vwc.webhooks.every((w: Obj) => w.failurePolicy === "Fail"));
});

Deno.test("chart guard: rendered only with admission webhooks, Crossplane and the guard value on", async () => {
  for (
    const sets of [
      { "admissionWebhook.enabled": "false" },
      { "features.crossplane.enabled": "false" },
      { "features.crossplane.conversionGuard.enabled": "false" },
    ] as Array<Record<string, string>>
  ) {
    for (const selfIssued of [false, true]) {
      const all = selfIssued
        ? { ...sets, "certManager.enabled": "false", "certificates.mode": "builtin" }
        : sets;
      const objs = await render(all);
      const label = JSON.stringify(all);
      assert.deepEqual(mwcs(objs), [], label);
      assert.ok(!managerArgs(objs).includes(MWC_ARG), label);
      assert.deepEqual(mwcNamedRules(objs), [], label);
    }
  }
  // The manager flag follows crossplane AND guard (admission does not gate the flag).
  const noAdmission = managerArgs(await render({ "admissionWebhook.enabled": "false" }));
  assert.ok(noAdmission.includes("--enable-xrd-conversion-guard=true"));
});

Deno.test("chart guard: self-issued admission certificate — the manager patches the MWC's caBundle", async () => {
  for (const mode of ["auto", "builtin"]) {
    const objs = await render({
      "certManager.enabled": "false",
      "certificates.mode": mode,
      "admissionWebhook.caBundle": "Q0EK", // ignored: the manager sets it
    });
    const [mwc] = mwcs(objs);
    assert.equal(mwc.metadata.annotations, undefined, mode);
    assert.deepEqual(mwc.webhooks, [expectedWebhook()], mode);
    assert.equal(mwc.webhooks[0].clientConfig.caBundle, undefined, mode);
    const args = managerArgs(objs);
    assert.deepEqual(args.filter((a) => a.startsWith("--admission-")), [
      `--admission-cert-secret=${FULLNAME}-webhook-cert`,
      `--admission-service=${FULLNAME}-webhook-service`,
      `--admission-webhook-configuration=${FULLNAME}-validating-webhook-configuration`,
      MWC_ARG,
    ]);
    assert.deepEqual(mwcNamedRules(objs), [{
      apiGroups: ["admissionregistration.k8s.io"],
      resources: ["mutatingwebhookconfigurations"],
      resourceNames: [MWC],
      verbs: ["get", "patch"],
    }]);
  }
});

Deno.test("chart guard: existing Secret — the caBundle value, like the VWC's", async () => {
  const objs = await render({
    "certManager.enabled": "false",
    "certificates.mode": "existing-secret",
    "admissionWebhook.caBundle": "Q0EK",
  });
  const [mwc] = mwcs(objs);
  assert.equal(mwc.metadata.annotations, undefined);
  assert.equal(mwc.webhooks[0].clientConfig.caBundle, "Q0EK");
  const vwc = objs.find((o) => o.kind === "ValidatingWebhookConfiguration")!;
  assert.equal(vwc.webhooks[0].clientConfig.caBundle, "Q0EK");
  assert.ok(!managerArgs(objs).some((a) => a.startsWith("--admission-")));
  assert.deepEqual(mwcNamedRules(objs), []);
  // Without a value (and nothing to look up offline): no caBundle at all.
  const none = await render({
    "certManager.enabled": "false",
    "certificates.mode": "existing-secret",
  });
  assert.equal(mwcs(none)[0].webhooks[0].clientConfig.caBundle, undefined);
});

Deno.test("chart guard: helm lint passes with the guard on (self-issued) and off", async () => {
  for (
    const sets of [
      { "certManager.enabled": "false", "certificates.mode": "builtin" },
      { "features.crossplane.conversionGuard.enabled": "false" },
    ] as Array<Record<string, string>>
  ) {
    const r = await helm(
      "lint",
      CHART,
      "--strict",
      "--kube-version",
      KUBE_VERSION,
      ...setArgs(sets),
    );
    assert.equal(r.code, 0, `helm lint failed:\n${r.stdout}\n${r.stderr}`);
  }
  const bad = await helm(
    "lint",
    CHART,
    "--strict",
    ...setArgs({ "features.crossplane.conversionGuard.path": "no-slash" }),
  );
  assert.notEqual(bad.code, 0, "values.schema.json: the path starts with /");
});
