/**
 * hack/upgrade-crds.sh without a cluster: `--print` emits exactly the chart's three CRDs (as
 * `helm show crds` reads them), and a chart without CRDs is refused rather than applied. Its diff
 * and `--apply` modes run against a real apiserver in tests/e2e/chart/helm_install_test.ts.
 */
import assert from "node:assert/strict";
import { parseAllDocuments } from "yaml";
import { upgradeCrds } from "./_upgrade_crds.ts";
import { CHART } from "./_helm.ts";

Deno.test("upgrade-crds.sh --print emits the chart's three CRDs", async () => {
  const r = await upgradeCrds(["--print"], { KUBECTL: "/nonexistent/kubectl" });
  assert.equal(r.code, 0, r.stderr);
  const docs = parseAllDocuments(r.stdout).map((d) => d.toJS()).filter((o) => o);
  assert.deepEqual(docs.map((o) => `${o.kind}/${o.metadata.name}`).sort(), [
    "CustomResourceDefinition/conversionwebhookservers.terasky.com",
    "CustomResourceDefinition/crdconversionconfigs.terasky.com",
    "CustomResourceDefinition/xrdconversionconfigs.terasky.com",
  ]);
  // The same with the chart named explicitly.
  const named = await upgradeCrds(["--chart", CHART, "--print"]);
  assert.equal(named.stdout, r.stdout);
});

Deno.test("upgrade-crds.sh refuses a chart without CRDs and unknown arguments", async () => {
  const dir = await Deno.makeTempDir();
  await Deno.writeTextFile(
    `${dir}/Chart.yaml`,
    "apiVersion: v2\nname: empty\nversion: 0.1.0\n",
  );
  const r = await upgradeCrds(["--chart", dir, "--apply"], { KUBECTL: "/nonexistent/kubectl" });
  assert.equal(r.code, 2);
  assert.match(r.stderr, /printed no CustomResourceDefinition; nothing applied/);
  const bad = await upgradeCrds(["--frobnicate"]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /unknown argument --frobnicate/);
});
