/**
 * `convctl retarget` (live) and `convctl crossplane status` on a real apiserver with the Crossplane
 * stand-in (./_crossplane.ts: Crossplane's XRD and Composition CRDs and the CRDs it would generate;
 * no Crossplane controller runs, so nothing reacts to the patched selectors). A modern Namespaced
 * XRD keeps its Composition fields under `spec.crossplane`; a LegacyCluster XRD with claims keeps
 * them under `spec`, on composites and claims alike.
 */
import assert from "node:assert/strict";
import { convctl } from "../cli/_convctl.ts";
import { KubeClient, loadKubeconfig } from "../../src/kube/mod.ts";
import { type ControlPlane, e2eTest } from "../support/control_plane.ts";
import {
  DCO_GROUP,
  fieldRenameConfig,
  installDcoCRDs,
  type Obj,
  twoVersionXRD,
} from "../support/dco_stack.ts";
import { COMPOSITION_CRD, FakeCrossplane, XRD_CRD, XRDS } from "./_crossplane.ts";
import { refuseUpdates } from "./_refuse_updates.ts";

const GROUP = "retarget.example.com";

/** A two-version XRD whose schemas keep Crossplane's fields (`spec.crossplane`, or all of `spec`). */
function xrdWithMachinery(opts: { plural: string; kind: string; claims?: boolean }): Obj {
  const xrd = twoVersionXRD({
    group: GROUP,
    plural: opts.plural,
    kind: opts.kind,
    referenceable: "v1",
    ...(opts.claims ? { claimNames: { plural: "widgetclaims", kind: "WidgetClaim" } } : {}),
  }) as Obj;
  for (const v of xrd.spec.versions) {
    const spec = v.schema.openAPIV3Schema.properties.spec;
    if (opts.claims) spec["x-kubernetes-preserve-unknown-fields"] = true;
    else {spec.properties.crossplane = {
        type: "object",
        "x-kubernetes-preserve-unknown-fields": true,
      };}
  }
  return xrd;
}

function composition(name: string, kind: string, version: string): Obj {
  return {
    apiVersion: "apiextensions.crossplane.io/v1",
    kind: "Composition",
    metadata: { name, labels: { "xrd-api-version": version } },
    spec: { compositeTypeRef: { apiVersion: `${GROUP}/${version}`, kind } },
  };
}

/** Creates the XRD, plays Crossplane (Established, generated CRDs) and waits for them. */
async function establish(cp: ControlPlane, client: KubeClient, xrd: Obj): Promise<void> {
  await cp.apply(xrd);
  const crossplane = new FakeCrossplane(client);
  // A legacy XRD (claims) is written at v1: the stand-in's v2 refuses claimNames.
  await crossplane.establish(xrd.metadata.name, xrd.spec.claimNames ? "v1" : "v2");
  await crossplane.sync(xrd.metadata.name);
  await cp.waitForCRD(xrd.metadata.name);
  if (xrd.spec.claimNames) await cp.waitForCRD(`widgetclaims.${GROUP}`);
}

const pinned = (composition: string) => ({
  compositionRef: { name: composition },
  compositionRevisionRef: { name: `${composition}-abc` },
  compositionSelector: { matchLabels: { "xrd-api-version": "v1", team: "a" } },
});
const onTarget = { compositionSelector: { matchLabels: { "xrd-api-version": "v2" } } };

e2eTest("convctl retarget and crossplane status: a Namespaced XRD", async (cp) => {
  await installDcoCRDs(cp, [XRD_CRD, COMPOSITION_CRD]);
  using client = new KubeClient(await loadKubeconfig([cp.kubeconfigPath]));
  const name = `xwidgets.${GROUP}`;
  await establish(cp, client, xrdWithMachinery({ plural: "xwidgets", kind: "XWidget" }));
  await cp.apply(composition("xwidgets-v1", "XWidget", "v1"));
  await cp.apply(composition("xwidgets-v2", "XWidget", "v2"));
  const ns = await cp.createNamespace("retarget");
  const objects = { group: GROUP, version: "v1", plural: "xwidgets", namespace: ns };
  const xr = (n: string, crossplane: Obj) => ({
    apiVersion: `${GROUP}/v1`,
    kind: "XWidget",
    metadata: { name: n, namespace: ns },
    spec: { size: 1, crossplane },
  });
  await client.create(objects, xr("a", pinned("xwidgets-v1")));
  await client.create(objects, xr("b", pinned("xwidgets-v1")));
  await client.create(objects, xr("c", onTarget));
  const read = async (n: string) => ((await client.get(objects, n)) as Obj).spec.crossplane;
  const kube = ["--kubeconfig", cp.kubeconfigPath];

  // crossplane status before: two pins on the v1 Composition, one unpinned object, no config yet.
  const before = await convctl("crossplane", "status", name, ...kube, "-o", "json");
  assert.equal(before.code, 0, before.stderr);
  const status = JSON.parse(before.stdout);
  assert.equal(status.scope, "Namespaced");
  assert.deepEqual(status.compositions, [
    { name: "xwidgets-v1", version: "v1", pinnedBy: 2 },
    { name: "xwidgets-v2", version: "v2", pinnedBy: 0 },
  ]);
  assert.equal(status.unpinned, 1);
  assert.equal(status.config, null);
  assert.deepEqual(
    status.versions.map((v: Obj) => [v.name, v.ruleSet, v.objects, v.servedWithoutRuleSet]),
    [
      ["v1", "none", 3, true],
      ["v2", "none", 0, true],
    ],
  );
  assert.deepEqual(status.generatedCRDs, [{
    name,
    role: "composite",
    found: true,
    scope: "Namespaced",
    conversionStrategy: "None",
    storageVersion: "v1",
    storedVersions: ["v1"],
    objects: 3,
    propagationGap: false,
  }]);

  // Server-side dry run: the plan is printed first, the apiserver takes both patches, nothing
  // changes.
  const dry = await convctl(
    "retarget",
    "-x",
    name,
    "--to",
    "v2",
    "--dry-run",
    ...kube,
    "-o",
    "json",
  );
  assert.equal(dry.code, 0, dry.stderr);
  assert.equal(
    dry.stderr,
    `retarget: cluster ${cp.kubeConfig.getCurrentContext()}: dry run (server-side) of patching 2 of 3 object(s) of XRD ` +
      `${name} (3 selected, 1 already on target) to select Compositions xrd-api-version=v2, ` +
      "field manager convctl-retarget\n",
  );
  const dryReport = JSON.parse(dry.stdout);
  assert.equal(dryReport.dryRun, true);
  assert.deepEqual(dryReport.objects.map((o: Obj) => [o.name, o.action, o.result]), [
    ["a", "patch", "patched"],
    ["b", "patch", "patched"],
    ["c", "already-on-target", undefined],
  ]);
  assert.deepEqual(dryReport.objects[0].patch, {
    spec: {
      crossplane: {
        compositionRef: null,
        compositionRevisionRef: null,
        compositionSelector: { matchLabels: { team: null, "xrd-api-version": "v2" } },
      },
    },
  });
  assert.deepEqual(await read("a"), pinned("xwidgets-v1"));

  // A canary of one: only the first object in list order.
  const canary = await convctl(
    "retarget",
    "-x",
    name,
    "--to",
    "v2",
    "--canary",
    "1",
    ...kube,
    "--quiet",
  );
  assert.equal(canary.code, 0, canary.stderr);
  assert.equal(canary.stderr, "");
  assert.match(canary.stdout, /CANARY: 1 of 3 object\(s\) selected/);
  assert.deepEqual(await read("a"), onTarget);
  assert.deepEqual(await read("b"), pinned("xwidgets-v1"));
  const fields = ((await client.get(objects, "a")) as Obj).metadata.managedFields.map((f: Obj) =>
    f.manager
  );
  assert.ok(fields.includes("convctl-retarget"), JSON.stringify(fields));

  // Everything: b is patched, a and c are already on target.
  const all = await convctl("retarget", "-x", name, "--to", "v2", ...kube, "-o", "json", "--quiet");
  assert.equal(all.code, 0, all.stderr);
  assert.deepEqual(JSON.parse(all.stdout).objects.map((o: Obj) => [o.name, o.action, o.result]), [
    ["a", "already-on-target", undefined],
    ["b", "patch", "patched"],
    ["c", "already-on-target", undefined],
  ]);
  assert.deepEqual(await read("b"), onTarget);

  // A config serving v1 as hub and v2 as spoke, the XRD converting through a webhook that has
  // not reached its CRD yet: the status shows the rule sets, the gap and the config's condition.
  const config = fieldRenameConfig({
    kind: "XRDConversionConfig",
    name: "xwidgets",
    target: name,
    spokePath: "spec.capacity",
  });
  await cp.apply(config);
  await client.patch(
    { group: DCO_GROUP, version: "v1alpha1", plural: "xrdconversionconfigs" },
    "xwidgets",
    {
      status: {
        phase: "Applied",
        conditions: [{
          type: "ConversionPropagated",
          status: "False",
          reason: "CRDNotPropagated",
          message: "waiting for Crossplane",
          lastTransitionTime: "2026-01-01T00:00:00Z",
        }],
      },
    },
    { type: "merge", subresource: "status" },
  );
  await client.patch(XRDS(), name, {
    spec: { conversion: { strategy: "Webhook", webhook: { conversionReviewVersions: ["v1"] } } },
  }, { type: "merge" });
  const after = await convctl("crossplane", "status", name, ...kube, "-o", "json");
  assert.equal(after.code, 0, after.stderr);
  const later = JSON.parse(after.stdout);
  assert.equal(later.unpinned, 3);
  assert.deepEqual(later.compositions.map((c: Obj) => c.pinnedBy), [0, 0]);
  assert.deepEqual(later.versions.map((v: Obj) => [v.name, v.ruleSet, v.servedWithoutRuleSet]), [
    ["v1", "hub", false],
    ["v2", "spoke", false],
  ]);
  assert.equal(later.xrdConversionStrategy, "Webhook");
  assert.equal(later.generatedCRDs[0].propagationGap, true);
  assert.deepEqual(later.config, {
    name: "xwidgets",
    phase: "Applied",
    conditions: [{
      type: "ConversionPropagated",
      status: "False",
      reason: "CRDNotPropagated",
      message: "waiting for Crossplane",
    }],
  });
  const table = await convctl("crossplane", "status", name, ...kube);
  assert.equal(table.code, 0, table.stderr);
  assert.match(table.stdout, /None — NOT PROPAGATED/);
  assert.ok(
    table.stdout.includes(
      "XRDConversionConfig xwidgets: phase Applied\n" +
        "  ConversionPropagated=False (CRDNotPropagated): waiting for Crossplane\n",
    ),
    table.stdout,
  );

  // Refusals: a version the XRD does not declare, an XRD the cluster lacks.
  const bad = await convctl("retarget", "-x", name, "--to", "v9", ...kube);
  assert.equal(bad.code, 2);
  assert.equal(bad.stderr, `error: --to v9: not a version of XRD ${name} (versions: v1, v2)\n`);
  const none = await convctl("crossplane", "status", `nothing.${GROUP}`, ...kube);
  assert.equal(none.code, 2);
  assert.equal(
    none.stderr,
    `error: cluster ${cp.kubeConfig.getCurrentContext()}: XRD nothing.${GROUP} not found\n`,
  );
});

e2eTest(
  "convctl retarget: a LegacyCluster XRD's composites and claims, fields under spec",
  async (cp) => {
    await installDcoCRDs(cp, [XRD_CRD, COMPOSITION_CRD]);
    using client = new KubeClient(await loadKubeconfig([cp.kubeconfigPath]));
    const name = `xwidgets.${GROUP}`;
    await establish(
      cp,
      client,
      xrdWithMachinery({ plural: "xwidgets", kind: "XWidget", claims: true }),
    );
    const ns = await cp.createNamespace("claims");
    const composites = { group: GROUP, version: "v1", plural: "xwidgets" };
    const claims = { group: GROUP, version: "v1", plural: "widgetclaims", namespace: ns };
    await client.create(composites, {
      apiVersion: `${GROUP}/v1`,
      kind: "XWidget",
      metadata: { name: "legacy" },
      spec: { size: 1, ...pinned("xwidgets-v1") },
    });
    await client.create(claims, {
      apiVersion: `${GROUP}/v1`,
      kind: "WidgetClaim",
      metadata: { name: "claim", namespace: ns },
      spec: { size: 1, ...pinned("xwidgets-v1") },
    });
    await client.create(composites, {
      apiVersion: `${GROUP}/v1`,
      kind: "XWidget",
      metadata: { name: "refused" },
      spec: { size: 2, ...pinned("xwidgets-v1") },
    });
    await refuseUpdates(cp, client, {
      policy: "refuse-retarget",
      group: GROUP,
      resource: "xwidgets",
      expression: "object.metadata.name != 'refused'",
      probe: { ref: composites, name: "refused" },
    });
    const r = await convctl(
      "retarget",
      "-x",
      name,
      "--to",
      "v2",
      "--kubeconfig",
      cp.kubeconfigPath,
      "-o",
      "json",
      "--quiet",
    );
    // One refused patch: reported on its line, exit 1, the others still patched.
    assert.equal(r.code, 1, r.stderr);
    const report = JSON.parse(r.stdout);
    assert.equal(report.scope, "LegacyCluster");
    const refused = report.objects.find((o: Obj) => o.name === "refused");
    assert.equal(refused.result, "failed");
    assert.match(
      refused.error,
      new RegExp(
        `^cluster ${cp.kubeConfig.getCurrentContext()}: patching refused: .*refused by the test policy`,
      ),
    );
    report.objects = report.objects.filter((o: Obj) => o !== refused);
    assert.deepEqual(report.objects.map((o: Obj) => [o.namespace, o.name, o.crdRole, o.result]), [
      [undefined, "legacy", "composite", "patched"],
      [ns, "claim", "claim", "patched"],
    ]);
    const legacy = ((await client.get(composites, "legacy")) as Obj).spec;
    const claim = ((await client.get(claims, "claim")) as Obj).spec;
    for (const spec of [legacy, claim]) {
      assert.equal(spec.compositionRef, undefined);
      assert.equal(spec.compositionRevisionRef, undefined);
      assert.deepEqual(spec.compositionSelector, onTarget.compositionSelector);
      assert.equal(spec.crossplane, undefined);
    }
    const kept = ((await client.get(composites, "refused")) as Obj).spec;
    assert.deepEqual(kept.compositionRef, { name: "xwidgets-v1" });
  },
);
