/**
 * `convctl diff -c CONFIG --live` on a real apiserver: the config is applied as an object (no
 * manager runs) and its status written through the status subresource, as the manager would.
 * The applied config shows no delta; a local edit shows exactly the delta the file diff of the
 * two configs shows; a config the cluster lacks is compared with "no rules"; a schema file given
 * with -x/--crd replaces the cluster's target; a missing target is a one-line error naming the
 * cluster.
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
  twoVersionCRD,
  twoVersionXRD,
} from "../support/dco_stack.ts";
import { FakeCrossplane, XRD_CRD } from "./_crossplane.ts";

const GROUP = "live.example.com";
const CRD_TARGET = `widgets.${GROUP}`;
const CONFIGS = (plural: string) => ({ group: DCO_GROUP, version: "v1alpha1", plural });
const NOW = "2026-01-01T00:00:00Z";

/** Writes `obj` as JSON (valid YAML) into a file of `dir`; resolves to its path. */
async function fileOf(dir: string, name: string, obj: unknown): Promise<string> {
  const path = `${dir}/${name}`;
  await Deno.writeTextFile(path, JSON.stringify(obj, null, 2));
  return path;
}

async function clientOf(cp: ControlPlane): Promise<KubeClient> {
  return new KubeClient(await loadKubeconfig([cp.kubeconfigPath]));
}

/** The manager's part: an Applied status with a plan hash and a Ready condition. */
async function writeAppliedStatus(client: KubeClient, plural: string, name: string) {
  await client.patch(CONFIGS(plural), name, {
    status: {
      observedGeneration: 1,
      phase: "Applied",
      lastAppliedPlanHash: "sha256:0123abcd",
      conditions: [{
        type: "Ready",
        status: "True",
        reason: "Applied",
        message: "conversion applied to the target",
        lastTransitionTime: NOW,
      }],
    },
  }, { type: "merge", subresource: "status" });
}

/** The delta fields of a diff report (everything but the sides and the cluster block). */
function deltaOf(report: Obj): Obj {
  const { from: _from, to: _to, clusterConfig: _cluster, ...delta } = report;
  return delta;
}

e2eTest(
  "convctl diff --live: the applied config, a local edit, a config the cluster lacks",
  async (cp) => {
    await installDcoCRDs(cp);
    await cp.apply(twoVersionCRD({ group: GROUP, plural: "widgets", kind: "Widget" }));
    await cp.waitForCRD(CRD_TARGET);
    const config = fieldRenameConfig({
      kind: "CRDConversionConfig",
      name: "widgets",
      target: CRD_TARGET,
      spokePath: "spec.capacity",
    }) as Obj;
    await cp.apply(config);
    using client = await clientOf(cp);
    await writeAppliedStatus(client, "crdconversionconfigs", "widgets");
    const dir = await cp.makeTempDir("live-diff");
    const local = await fileOf(dir, "config.yaml", config);
    const live = ["--live", "--kubeconfig", cp.kubeconfigPath];

    // The applied config: no delta, and the cluster's view of it.
    const same = await convctl("diff", "-c", local, ...live);
    assert.equal(same.code, 0, same.stderr);
    assert.deepEqual(JSON.parse(same.stdout), {
      resourceKind: "CRD",
      resource: CRD_TARGET,
      from: "cluster:widgets",
      to: local,
      hasDeltas: false,
      clusterConfig: {
        cluster: cp.kubeConfig.getCurrentContext(),
        name: "widgets",
        found: true,
        schema: "cluster",
        generation: 1,
        observedGeneration: 1,
        phase: "Applied",
        lastAppliedPlanHash: "sha256:0123abcd",
        conditions: [{
          type: "Ready",
          status: "True",
          reason: "Applied",
          message: "conversion applied to the target",
        }],
      },
    });
    const table = await convctl("diff", "-c", local, ...live, "-o", "table");
    assert.equal(table.code, 0, table.stderr);
    assert.equal(
      table.stdout,
      [
        "CRD Conversion Diff",
        `target: ${CRD_TARGET}`,
        `cluster:widgets → ${local}`,
        "no differences",
        `cluster ${cp.kubeConfig.getCurrentContext()}: widgets: phase Applied, generation 1 (observed 1), applied plan ` +
        "sha256:0123abcd",
        "  Ready=True (Applied): conversion applied to the target",
        "",
      ].join("\n"),
    );

    // A local edit (the rule now renames to a field v2 does not declare): exactly the file diff's
    // delta between the applied config and the edited one.
    const edited = structuredClone(config);
    edited.spec.spokes[0].rules[0].fieldRename.spokePath = "spec.volume";
    const editedFile = await fileOf(dir, "edited.yaml", edited);
    const crdFile = await fileOf(
      dir,
      "crd.yaml",
      twoVersionCRD({ group: GROUP, plural: "widgets", kind: "Widget" }),
    );
    const fileDiff = await convctl("diff", "-c", local, "-c", editedFile, "--crd", crdFile);
    assert.equal(fileDiff.code, 1, fileDiff.stderr);
    const liveDiff = await convctl("diff", "-c", editedFile, ...live);
    assert.equal(liveDiff.code, 1, liveDiff.stderr);
    const report = JSON.parse(liveDiff.stdout);
    assert.equal(report.from, "cluster:widgets");
    assert.equal(report.to, editedFile);
    assert.deepEqual(deltaOf(report), deltaOf(JSON.parse(fileDiff.stdout)));
    assert.deepEqual(report.spokes[0].ruleClaimsRemoved, [
      { strategy: "FieldRename", hubPaths: ["spec.size"], spokePaths: ["spec.capacity"] },
    ]);
    assert.deepEqual(report.spokes[0].ruleClaimsAdded, [
      { strategy: "FieldRename", hubPaths: ["spec.size"], spokePaths: ["spec.volume"] },
    ]);

    // The same edit against a schema file: the file, not the cluster's CRD, is the schema.
    const withFile = await convctl("diff", "-c", editedFile, ...live, "--crd", crdFile);
    assert.equal(withFile.code, 1, withFile.stderr);
    assert.equal(JSON.parse(withFile.stdout).clusterConfig.schema, crdFile);
    assert.deepEqual(deltaOf(JSON.parse(withFile.stdout)), deltaOf(report));

    // A config the cluster does not have: compared with the same versions and no rules.
    const other = { ...structuredClone(config), metadata: { name: "not-applied" } };
    const otherFile = await fileOf(dir, "other.yaml", other);
    const absent = await convctl("diff", "-c", otherFile, ...live);
    assert.equal(absent.code, 1, absent.stderr);
    const absentReport = JSON.parse(absent.stdout);
    assert.equal(absentReport.from, "cluster:(no CRDConversionConfig not-applied)");
    assert.deepEqual(absentReport.clusterConfig, {
      cluster: cp.kubeConfig.getCurrentContext(),
      name: "not-applied",
      found: false,
      schema: "cluster",
    });
    assert.deepEqual(absentReport.spokes[0].ruleClaimsAdded, [
      { strategy: "FieldRename", hubPaths: ["spec.size"], spokePaths: ["spec.capacity"] },
    ]);

    // A target the cluster lacks: one line naming the cluster.
    const orphan = structuredClone(config);
    orphan.spec.targetCRD.name = `gadgets.${GROUP}`;
    const orphanFile = await fileOf(dir, "orphan.yaml", orphan);
    const missing = await convctl("diff", "-c", orphanFile, ...live);
    assert.equal(missing.code, 2);
    assert.equal(
      missing.stderr,
      `error: cluster ${cp.kubeConfig.getCurrentContext()}: CRD gadgets.${GROUP} not found\n`,
    );
  },
);

e2eTest("convctl diff --live: an XRDConversionConfig against the cluster's XRD", async (cp) => {
  await installDcoCRDs(cp, [XRD_CRD]);
  const name = `xwidgets.${GROUP}`;
  await cp.apply(
    twoVersionXRD({ group: GROUP, plural: "xwidgets", kind: "XWidget", referenceable: "v1" }),
  );
  using client = await clientOf(cp);
  await new FakeCrossplane(client).establish(name);
  const config = fieldRenameConfig({
    kind: "XRDConversionConfig",
    name: "xwidgets",
    target: name,
    spokePath: "spec.capacity",
  }) as Obj;
  await cp.apply(config);
  const dir = await cp.makeTempDir("live-diff-xrd");
  const live = ["--live", "--kubeconfig", cp.kubeconfigPath];
  const same = await convctl("diff", "-c", await fileOf(dir, "config.yaml", config), ...live);
  assert.equal(same.code, 0, same.stderr);
  const report = JSON.parse(same.stdout);
  assert.equal(report.resourceKind, "XRD");
  assert.equal(report.resource, name);
  assert.equal(report.hasDeltas, false);
  // No status written: found, no phase, no applied plan.
  assert.deepEqual(report.clusterConfig, {
    cluster: cp.kubeConfig.getCurrentContext(),
    name: "xwidgets",
    found: true,
    schema: "cluster",
    generation: 1,
  });

  const noRules = structuredClone(config);
  noRules.spec.spokes[0].rules = [];
  const dropped = await convctl("diff", "-c", await fileOf(dir, "no-rules.yaml", noRules), ...live);
  assert.equal(dropped.code, 1, dropped.stderr);
  assert.deepEqual(JSON.parse(dropped.stdout).spokes[0].ruleClaimsRemoved, [
    { strategy: "FieldRename", hubPaths: ["spec.size"], spokePaths: ["spec.capacity"] },
  ]);

  // crossplane status on a cluster without Crossplane's Composition kind: no Compositions, not
  // an error; the config is found (no status yet) and covers both versions.
  const status = await convctl(
    "crossplane",
    "status",
    name,
    "--kubeconfig",
    cp.kubeconfigPath,
    "-o",
    "json",
  );
  assert.equal(status.code, 0, status.stderr);
  const report2 = JSON.parse(status.stdout);
  assert.deepEqual(report2.compositions, []);
  assert.equal(report2.unpinned, 0);
  assert.deepEqual(report2.config, { name: "xwidgets", conditions: [] });
  assert.deepEqual(report2.versions.map((v: Obj) => [v.name, v.ruleSet]), [["v1", "hub"], [
    "v2",
    "spoke",
  ]]);
});
