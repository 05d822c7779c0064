/**
 * `convctl test --live` and fleet mode against a real kube-apiserver: a two-version CRD whose
 * conversion webhook (served by this test with the engine) makes the apiserver hand out v1 and v2
 * of the same objects differently. convctl lists them at both versions and round-trips each; a
 * CRD without a webhook is read at its storage version only; a schema that no longer declares a
 * field the live objects carry fails with that leaf; bounded sampling is reproducible; a fleet of
 * two healthy contexts (one apiserver under two names) and one unreachable context reports both
 * and the error, and exits 1.
 *
 * An XRD offering claims (the Crossplane stand-in of ./_crossplane.ts renders its two CRDs and
 * copies its webhook into them): composites and claims are both sampled, each sample names its
 * CRD, `--namespace` narrows the claims only, and `--verify-propagation` reports the webhook
 * propagated — until the claim CRD loses it, when the run fails naming that CRD, and says the
 * applied config's own condition disagrees. `migrate-storage -x` then rewrites both CRDs' objects;
 * a claim an admission policy refuses blocks the prune of both, and once let through both prune.
 */
import assert from "node:assert/strict";
import * as k8s from "@kubernetes/client-node";
import {
  analyze,
  type ConversionConfigSpec,
  convertObject,
  createRouter,
  type JsonObject,
  type Router,
  schemaSourceFromCRD,
} from "../../src/engine/mod.ts";
import { createCA } from "../support/certs.ts";
import {
  DCO_GROUP,
  fieldRenameConfig,
  fieldRenameSpec,
  installDcoCRDs,
  type Obj as Loose,
  twoVersionCRD,
  twoVersionXRD,
  urlWebhookConversion,
} from "../support/dco_stack.ts";
import { KubeClient, loadKubeconfig } from "../../src/kube/mod.ts";
import { schemaSourceFromXRD } from "../../src/engine/mod.ts";
import { CRDS, FakeCrossplane, XRD_CRD } from "./_crossplane.ts";
import { allowUpdates, refuseUpdates } from "./_refuse_updates.ts";
import { type ControlPlane, e2eTest, freePort } from "../support/control_plane.ts";
import { type Obj, startConversionWebhook } from "../support/conversion_webhook.ts";
import { convctl } from "../cli/_convctl.ts";

const GROUP = "live.dco.test";
const PLURAL = "widgets";
const CRD_NAME = `${PLURAL}.${GROUP}`;

const CONFIG: ConversionConfigSpec = fieldRenameSpec({
  kind: "CRDConversionConfig",
  target: CRD_NAME,
  spokePath: "spec.capacity",
});

/** The CRD; `withStatus` adds a top-level `status.phase` to both versions' schemas. */
function widgetCRD(withStatus: boolean, conversion?: Obj): k8s.KubernetesObject {
  const crd = twoVersionCRD({ group: GROUP, plural: PLURAL, kind: "Widget", conversion }) as Obj;
  if (withStatus) {
    for (const v of (crd.spec as { versions: Obj[] }).versions) {
      const root = (v.schema as { openAPIV3Schema: { properties: Obj } }).openAPIV3Schema;
      root.properties.status = { type: "object", properties: { phase: { type: "string" } } };
    }
  }
  return crd as k8s.KubernetesObject;
}

function buildRouter(crd: JsonObject): Router {
  const result = analyze(schemaSourceFromCRD(crd), CONFIG);
  assert.ok(!result.hasErrors, "the test's config is valid");
  return createRouter(result);
}

interface Report {
  summary: { samples: number; pathsTested: number; pass: number; unacknowledgedLoss: number };
  samples: { file: string; assertedVersion: string; paths: { result: string }[] }[];
  sampling?: Record<string, unknown>;
  live?: Record<string, unknown>;
}

e2eTest("convctl test --live and fleet mode on a real apiserver", async (cp: ControlPlane, t) => {
  const pki = await cp.makeTempDir("webhook-pki");
  const ca = await createCA(pki, "convctl-live-ca");
  const tls = await ca.issue({ commonName: "convctl-live", hosts: [cp.webhookHost, "localhost"] });
  // The webhook converts with the engine, by the same config the test later checks.
  const router = buildRouter(widgetCRD(true) as unknown as JsonObject);
  await using hook = startConversionWebhook({
    tls,
    hostname: cp.external ? "0.0.0.0" : "127.0.0.1",
    publicHost: cp.webhookHost,
    convert: (obj, desired) => convertObject(router, obj as JsonObject, desired) as Obj,
  });
  const crd = widgetCRD(true, urlWebhookConversion(hook.url, ca.cert));
  await cp.apply(crd);
  await cp.waitForCRD(CRD_NAME);

  const east = await cp.createNamespace("live-east");
  const west = await cp.createNamespace("live-west");
  const co = cp.api(k8s.CustomObjectsApi);
  const create = (namespace: string, version: string, name: string, spec: Obj) =>
    co.createNamespacedCustomObject({
      group: GROUP,
      version,
      namespace,
      plural: PLURAL,
      body: {
        apiVersion: `${GROUP}/${version}`,
        kind: "Widget",
        metadata: { name },
        spec,
        status: { phase: "Ready" },
      },
    });
  for (let i = 0; i < 4; i++) {
    await create(east, "v1", `old-${i}`, { size: i, color: "red" });
    await create(east, "v2", `new-${i}`, { capacity: 10 + i, color: "blue" });
  }
  await create(west, "v1", "w-0", { size: 1, color: "green" });
  await create(west, "v2", "w-1", { capacity: 2, color: "green" });

  // The files convctl reads: the config, the CRD as deployed, and the CRD minus `status`.
  const dir = await cp.makeTempDir("convctl-live");
  const configFile = `${dir}/config.yaml`;
  await Deno.writeTextFile(
    configFile,
    JSON.stringify(fieldRenameConfig({
      name: "widgets-conversion",
      kind: "CRDConversionConfig",
      target: CRD_NAME,
      spokePath: "spec.capacity",
    })),
  );
  const crdFile = `${dir}/crd.yaml`;
  await Deno.writeTextFile(crdFile, JSON.stringify(crd));
  const droppedFile = `${dir}/crd-without-status.yaml`;
  await Deno.writeTextFile(droppedFile, JSON.stringify(widgetCRD(false)));

  // Three contexts: two names for this apiserver, one for a port nothing listens on.
  const kubeconfig = JSON.parse(await Deno.readTextFile(cp.kubeconfigPath));
  const [cluster] = kubeconfig.clusters;
  const [user] = kubeconfig.users;
  kubeconfig.clusters.push({
    name: "gone",
    cluster: { ...cluster.cluster, server: `https://127.0.0.1:${freePort()}` },
  });
  kubeconfig.contexts = [
    { name: "east", context: { cluster: cluster.name, user: user.name, namespace: east } },
    { name: "west", context: { cluster: cluster.name, user: user.name, namespace: west } },
    { name: "gone", context: { cluster: "gone", user: user.name } },
  ];
  kubeconfig["current-context"] = "east";
  const kubeconfigFile = `${dir}/kubeconfig`;
  await Deno.writeTextFile(kubeconfigFile, JSON.stringify(kubeconfig));

  const live = (schema: string, ...more: string[]) =>
    convctl(
      "test",
      "-c",
      configFile,
      "--crd",
      schema,
      "--live",
      "--kubeconfig",
      kubeconfigFile,
      ...more,
    );
  const reportOf = (stdout: string) => JSON.parse(stdout) as Report;

  await t.step("every object at v1 and at v2, through the webhook: all pass", async () => {
    const r = await live(crdFile, "--context", "east", "-o", "json");
    assert.equal(r.code, 0, r.stderr);
    const report = reportOf(r.stdout);
    assert.deepEqual(report.live, {
      cluster: "east",
      crd: CRD_NAME,
      conversionStrategy: "Webhook",
      versions: ["v1", "v2"],
    });
    // 10 objects × 2 versions, each round-tripped to the other version and kept at its own.
    assert.equal(report.summary.samples, 20);
    assert.equal(report.summary.pathsTested, 40);
    assert.equal(report.summary.pass, 40);
    assert.equal(report.sampling, undefined);
    const names = report.samples.map((s) => s.file);
    assert.ok(names.includes(`cluster:${east}/new-0@v1`), names.join(" "));
    assert.ok(names.includes(`cluster:${east}/new-0@v2`), names.join(" "));
    assert.ok(names.includes(`cluster:${west}/w-0@v2`), names.join(" "));
    assert.ok(
      hook.reviews.some((rv) => rv.desiredAPIVersion === `${GROUP}/v2`),
      "the apiserver converted through the webhook",
    );

    const table = await live(crdFile, "--context", "east", "--namespace", west, "--quiet");
    assert.equal(table.code, 0, table.stderr);
    assert.match(
      table.stdout,
      new RegExp(
        `^LIVE: cluster east, ${CRD_NAME} in namespace ${west} read at v1, v2 through`,
        "m",
      ),
    );
    assert.match(table.stdout, /^SUMMARY: 4 samples, 8 paths — 8 PASS,/m);
  });

  await t.step("no webhook yet (strategy None): the storage version only", async () => {
    const plural = "gadgets";
    const gadgets = twoVersionCRD({ group: GROUP, plural, kind: "Gadget" });
    await cp.apply(gadgets);
    await cp.waitForCRD(`${plural}.${GROUP}`);
    await co.createNamespacedCustomObject({
      group: GROUP,
      version: "v1",
      namespace: east,
      plural,
      body: {
        apiVersion: `${GROUP}/v1`,
        kind: "Gadget",
        metadata: { name: "g" },
        spec: { size: 4 },
      },
    });
    const gadgetFile = `${dir}/gadget-crd.yaml`;
    await Deno.writeTextFile(gadgetFile, JSON.stringify(gadgets));
    const gadgetConfig = `${dir}/gadget-config.yaml`;
    await Deno.writeTextFile(
      gadgetConfig,
      JSON.stringify(fieldRenameConfig({
        name: "gadgets-conversion",
        kind: "CRDConversionConfig",
        target: `${plural}.${GROUP}`,
        spokePath: "spec.capacity",
      })),
    );
    const r = await convctl(
      "test",
      "-c",
      gadgetConfig,
      "--crd",
      gadgetFile,
      "--live",
      "--kubeconfig",
      kubeconfigFile,
      "--context",
      "east",
      "-o",
      "json",
    );
    assert.equal(r.code, 0, r.stderr);
    const report = reportOf(r.stdout);
    assert.deepEqual(report.live, {
      cluster: "east",
      crd: `${plural}.${GROUP}`,
      conversionStrategy: "None",
      versions: ["v1"],
    });
    assert.deepEqual(report.samples.map((s) => s.file), [`cluster:${east}/g@v1`]);
    assert.equal(report.summary.pass, 2);
  });

  await t.step("a schema without a field the live objects carry fails at that leaf", async () => {
    const r = await live(droppedFile, "-o", "json");
    assert.equal(r.code, 1, r.stderr);
    const report = reportOf(r.stdout);
    assert.ok(report.summary.unacknowledgedLoss > 0);
    const issues = report.samples.flatMap((s) =>
      s.paths.flatMap((p) => (p as { issues?: { field: string; type: string }[] }).issues ?? [])
    );
    assert.ok(issues.length > 0);
    assert.ok(
      issues.every((i) => i.field === "status" && i.type === "unacknowledged-loss"),
      JSON.stringify(issues.slice(0, 3)),
    );
    const github = await live(droppedFile, "-o", "github");
    assert.equal(github.code, 1);
    assert.match(
      github.stdout,
      /^::error [^\n]*::cluster:live-east-[\w-]+\/new-0@v1 v1→v2: status: /m,
    );
    const sarif = JSON.parse((await live(droppedFile, "-o", "sarif")).stdout);
    assert.ok(
      sarif.runs[0].results.some((x: { ruleId: string }) =>
        x.ruleId === "convctl/unacknowledged-loss"
      ),
    );
    const markdown = await live(droppedFile, "-o", "markdown");
    assert.match(markdown.stdout, /unacknowledged-loss/);
    const table = await live(droppedFile, "--quiet");
    assert.equal(table.code, 1);
    assert.match(
      table.stdout,
      / status +v1 → v2 +unacknowledged-loss +\{"phase":"Ready"\} came back as absent/,
    );
  });

  await t.step(
    "--max-samples 5 --sample-strategy random --seed 7: reproducible, says so",
    async () => {
      const args = ["--max-samples", "5", "--sample-strategy", "random", "--seed", "7"];
      const first = await live(crdFile, ...args, "-o", "json");
      const again = await live(crdFile, ...args, "-o", "json");
      assert.equal(first.code, 0, first.stderr);
      const a = reportOf(first.stdout), b = reportOf(again.stdout);
      assert.deepEqual(a.sampling, {
        strategy: "random",
        population: 10,
        tested: 5,
        seed: 7,
        live: true,
      });
      assert.equal(a.summary.samples, 10, "5 objects, each at v1 and v2");
      assert.deepEqual(a.samples.map((s) => s.file), b.samples.map((s) => s.file));

      const table = await live(crdFile, ...args);
      assert.match(
        table.stdout,
        /^SAMPLED: 5 of 10 live object\(s\), strategy random, seed 7 — this run did NOT cover every object$/m,
      );
      const junit = await live(crdFile, ...args, "-o", "junit");
      assert.match(junit.stdout, /<property name="sampled" value="true"\/>/);
      assert.match(junit.stdout, /<property name="samplePopulation" value="10"\/>/);
      const first3 = await live(crdFile, "--max-samples", "3", "-o", "json");
      assert.deepEqual(reportOf(first3.stdout).sampling, {
        strategy: "first",
        population: 10,
        tested: 3,
        live: true,
      });
    },
  );

  await t.step("fleet: two healthy contexts and an unreachable one, exit 1", async () => {
    const contexts = ["--contexts", "east,west", "--contexts", "gone"];
    const r = await live(crdFile, ...contexts, "-o", "json");
    assert.equal(r.code, 1, r.stderr);
    const fleet = JSON.parse(r.stdout) as {
      clusters: { label: string; error?: string; report?: Report }[];
    };
    assert.deepEqual(fleet.clusters.map((c) => c.label), ["east", "west", "gone"]);
    for (const healthy of fleet.clusters.slice(0, 2)) {
      assert.equal(healthy.error, undefined);
      assert.equal(healthy.report!.summary.pass, 40);
      assert.equal(healthy.report!.live!.cluster, healthy.label);
    }
    assert.equal(fleet.clusters[2].report, undefined);
    assert.match(fleet.clusters[2].error!, /^cluster gone: .*unreachable/);
    assert.match(r.stderr, /^=== gone ===\nERROR: cluster gone: /m);
    assert.match(r.stderr, /^=== east ===\nSUMMARY: 20 samples, 40 paths/m);

    const table = await live(crdFile, ...contexts, "--quiet");
    assert.equal(table.code, 1);
    assert.match(table.stdout, /^=== west ===\nCRD Conversion Test Report$/m);
    assert.match(table.stdout, /^FLEET: 3 clusters, 1 failed$/m);

    const junit = await live(crdFile, ...contexts, "-o", "junit", "--quiet");
    assert.match(
      junit.stdout,
      /^<testsuites name="convctl fleet" tests="81" failures="0" errors="1"/m,
    );
    assert.match(junit.stdout, new RegExp(`<testsuite name="west/CRD/${CRD_NAME}"`));
    assert.match(junit.stdout, /classname="east\.widgets-conversion\.v1"/);
    assert.match(junit.stdout, /<error message="cluster error">cluster gone: /);

    const sarif = await live(crdFile, ...contexts, "-o", "sarif");
    assert.equal(sarif.code, 2);
    assert.match(sarif.stderr, /-o sarif cannot be used with several clusters/);

    const healthyOnly = await live(crdFile, "--contexts", "east,west", "--quiet");
    assert.equal(healthyOnly.code, 0, healthyOnly.stdout);
    assert.match(healthyOnly.stdout, /^FLEET: 2 clusters, 0 failed$/m);
  });
});

const XGROUP = "claims.dco.test";
const XRD_NAME = `xwidgets.${XGROUP}`;
const CLAIM_CRD = `widgetclaims.${XGROUP}`;

interface XRDReport extends Report {
  samples: {
    file: string;
    crd?: string;
    crdRole?: string;
    assertedVersion: string;
    paths: { result: string }[];
  }[];
  live: Record<string, unknown> & { crds: Record<string, unknown>[] };
  propagation?: Loose;
}

e2eTest(
  "convctl test --live on an XRD offering claims: both CRDs sampled, --verify-propagation",
  async (cp: ControlPlane, t) => {
    await installDcoCRDs(cp, [XRD_CRD]);
    using client = new KubeClient(await loadKubeconfig([cp.kubeconfigPath]));
    const pki = await cp.makeTempDir("xrd-webhook-pki");
    const ca = await createCA(pki, "convctl-claims-ca");
    const tls = await ca.issue({ commonName: "convctl-claims", hosts: [cp.webhookHost] });
    const xrd = twoVersionXRD({
      group: XGROUP,
      plural: "xwidgets",
      kind: "XWidget",
      referenceable: "v1",
      claimNames: { plural: "widgetclaims", kind: "WidgetClaim" },
    }) as Loose;
    const config = fieldRenameConfig({
      kind: "XRDConversionConfig",
      name: "xwidgets",
      target: XRD_NAME,
      spokePath: "spec.capacity",
    }) as Loose;
    const analysis = analyze(schemaSourceFromXRD(xrd as JsonObject), config.spec);
    assert.ok(!analysis.hasErrors, "the test's config is valid");
    const router = createRouter(analysis);
    await using hook = startConversionWebhook({
      tls,
      hostname: cp.external ? "0.0.0.0" : "127.0.0.1",
      publicHost: cp.webhookHost,
      convert: (obj, desired) => convertObject(router, obj as JsonObject, desired) as Obj,
    });
    // The XRD points at the test's webhook; the stand-in renders both CRDs carrying it.
    xrd.spec.conversion = urlWebhookConversion(hook.url, ca.cert);
    await cp.apply(xrd as k8s.KubernetesObject);
    const crossplane = new FakeCrossplane(client);
    await crossplane.establish(XRD_NAME, "v1");
    crossplane.copy.add(XRD_NAME);
    await crossplane.sync(XRD_NAME);
    await cp.waitForCRD(XRD_NAME);
    await cp.waitForCRD(CLAIM_CRD);

    // Named so that the apiserver lists `ns` before `other`.
    const ns = await cp.createNamespace("claims-a");
    const other = await cp.createNamespace("claims-b");
    const body = (kind: string, version: string, name: string, spec: Obj) => ({
      apiVersion: `${XGROUP}/${version}`,
      kind,
      metadata: { name },
      spec,
    });
    const composites = (version: string) => ({ group: XGROUP, version, plural: "xwidgets" });
    const claims = (version: string, namespace: string) => ({
      group: XGROUP,
      version,
      plural: "widgetclaims",
      namespace,
    });
    await client.create(composites("v1"), body("XWidget", "v1", "c-1", { size: 1, color: "red" }));
    await client.create(
      composites("v2"),
      body("XWidget", "v2", "c-2", { capacity: 2, color: "blue" }),
    );
    await client.create(claims("v1", ns), body("WidgetClaim", "v1", "k-1", { size: 3 }));
    await client.create(claims("v2", ns), body("WidgetClaim", "v2", "k-2", { capacity: 4 }));
    await client.create(claims("v1", other), body("WidgetClaim", "v1", "k-3", { size: 5 }));

    const dir = await cp.makeTempDir("convctl-claims");
    const configFile = `${dir}/config.yaml`;
    await Deno.writeTextFile(configFile, JSON.stringify(config));
    const xrdFile = `${dir}/xrd.yaml`;
    await Deno.writeTextFile(xrdFile, JSON.stringify(xrd));
    const cluster = cp.kubeConfig.getCurrentContext();
    const live = (...more: string[]) =>
      convctl(
        "test",
        "-c",
        configFile,
        "-x",
        xrdFile,
        "--live",
        "--kubeconfig",
        cp.kubeconfigPath,
        ...more,
      );

    await t.step("composites and claims at v1 and v2, each sample naming its CRD", async () => {
      const r = await live("--verify-propagation", "-o", "json");
      assert.equal(r.code, 0, r.stderr);
      const report = JSON.parse(r.stdout) as XRDReport;
      // 2 composites + 3 claims, each at v1 and v2, each round-tripped and kept.
      assert.equal(report.summary.samples, 10);
      assert.equal(report.summary.pass, 20);
      assert.deepEqual(
        report.samples.map((s) => [s.file, s.crd, s.crdRole]),
        [
          ["cluster:c-1@v1", XRD_NAME, "composite"],
          ["cluster:c-1@v2", XRD_NAME, "composite"],
          ["cluster:c-2@v1", XRD_NAME, "composite"],
          ["cluster:c-2@v2", XRD_NAME, "composite"],
          [`cluster:${ns}/k-1@v1`, CLAIM_CRD, "claim"],
          [`cluster:${ns}/k-1@v2`, CLAIM_CRD, "claim"],
          [`cluster:${ns}/k-2@v1`, CLAIM_CRD, "claim"],
          [`cluster:${ns}/k-2@v2`, CLAIM_CRD, "claim"],
          [`cluster:${other}/k-3@v1`, CLAIM_CRD, "claim"],
          [`cluster:${other}/k-3@v2`, CLAIM_CRD, "claim"],
        ],
      );
      assert.deepEqual(report.live.crds, [
        {
          name: XRD_NAME,
          role: "composite",
          conversionStrategy: "Webhook",
          versions: ["v1", "v2"],
          population: 2,
          objects: 2,
          samples: 4,
        },
        {
          name: CLAIM_CRD,
          role: "claim",
          conversionStrategy: "Webhook",
          versions: ["v1", "v2"],
          population: 3,
          objects: 3,
          samples: 6,
        },
      ]);
      assert.ok(
        hook.reviews.some((rv) => rv.from.includes(`${XGROUP}/v1`)),
        "the apiserver converted through the webhook",
      );
      assert.deepEqual(report.propagation, {
        propagated: true,
        reason: "Propagated",
        message: `the conversion of XRD ${XRD_NAME} reached its generated CRD ${XRD_NAME}, ` +
          CLAIM_CRD,
        xrd: XRD_NAME,
        webhook: hook.url,
        crds: [XRD_NAME, CLAIM_CRD].map((name, i) => ({
          name,
          role: i === 0 ? "composite" : "claim",
          state: "propagated",
          observedCABundleHash: report.propagation!.crds[0].observedCABundleHash,
        })),
        config: { name: "xwidgets", found: false },
      });
      assert.match(report.propagation!.crds[0].observedCABundleHash, /^sha256:[0-9a-f]{64}$/);

      const table = await live("--verify-propagation", "--quiet");
      assert.equal(table.code, 0, table.stderr);
      assert.ok(
        table.stdout.includes(
          `LIVE: cluster ${cluster}, ${XRD_NAME} read at v1, v2 through its conversion webhook: ` +
            "4 sample(s) of 2 composite object(s)\n" +
            `LIVE: cluster ${cluster}, ${CLAIM_CRD} read at v1, v2 through its conversion ` +
            "webhook: 6 sample(s) of 3 claim object(s)\n" +
            `PROPAGATION: propagated (Propagated): the conversion of XRD ${XRD_NAME} reached`,
        ),
        table.stdout,
      );
      const junit = await live("-o", "junit", "--quiet");
      assert.equal(junit.code, 0, junit.stderr);
      assert.match(
        junit.stdout,
        new RegExp(
          `<testcase name="cluster:${ns}/k-1@v1: v1→v2"[^>]*>\\n {6}<properties>\\n` +
            ` {8}<property name="crd" value="${CLAIM_CRD}"/>\\n` +
            ` {8}<property name="crdRole" value="claim"/>`,
        ),
      );
    });

    await t.step("--namespace narrows the claims only; --max-samples counts both", async () => {
      const r = await live("--namespace", ns, "--max-samples", "3", "-o", "json");
      assert.equal(r.code, 0, r.stderr);
      const report = JSON.parse(r.stdout) as XRDReport;
      assert.deepEqual(report.sampling, {
        strategy: "first",
        population: 4,
        tested: 3,
        live: true,
      });
      assert.deepEqual(
        [...new Set(report.samples.map((s) => s.file.replace(/@v\d$/, "")))],
        ["cluster:c-1", "cluster:c-2", `cluster:${ns}/k-1`],
      );
      assert.deepEqual(
        report.live.crds.map((c) => [c.name, c.namespace, c.population, c.objects]),
        [[XRD_NAME, undefined, 2, 2], [CLAIM_CRD, ns, 2, 1]],
      );
    });

    await t.step(
      "the claim CRD loses the webhook: NOT propagated, exit 1, the config disagrees",
      async () => {
        await client.patch(CRDS, CLAIM_CRD, [
          { op: "replace", path: "/spec/conversion", value: { strategy: "None" } },
        ], { type: "json" });
        await cp.apply(config as k8s.KubernetesObject);
        await client.patch(
          { group: DCO_GROUP, version: "v1alpha1", plural: "xrdconversionconfigs" },
          "xwidgets",
          {
            status: {
              conditions: [{
                type: "ConversionPropagated",
                status: "True",
                reason: "Propagated",
                message: "seen earlier",
                lastTransitionTime: "2026-01-01T00:00:00Z",
              }],
            },
          },
          { type: "merge", subresource: "status" },
        );
        const r = await live("--verify-propagation", "-o", "json");
        assert.equal(r.code, 1, r.stderr);
        const report = JSON.parse(r.stdout) as XRDReport;
        assert.equal(report.summary.unacknowledgedLoss, 0);
        const p = report.propagation!;
        assert.equal(p.propagated, false);
        assert.equal(p.reason, "NotPropagated");
        assert.equal(
          p.message,
          `generated CRD ${CLAIM_CRD} of XRD ${XRD_NAME} does not carry the applied conversion: ` +
            `${CLAIM_CRD}: conversion strategy is "None", not "Webhook"`,
        );
        assert.deepEqual(p.crds.map((c: Loose) => [c.name, c.state]), [
          [XRD_NAME, "propagated"],
          [CLAIM_CRD, "mismatch"],
        ]);
        assert.deepEqual(p.config, {
          name: "xwidgets",
          found: true,
          condition: { status: "True", reason: "Propagated", message: "seen earlier" },
          agrees: false,
        });
        // Without the webhook, the claims are read at their storage version only.
        assert.deepEqual(report.live.crds[1].versions, ["v1"]);
        assert.equal(report.live.crds[1].conversionStrategy, "None");

        const table = await live("--verify-propagation", "--quiet");
        assert.equal(table.code, 1);
        assert.match(table.stdout, /^PROPAGATION: NOT PROPAGATED \(NotPropagated\): /m);
        assert.match(
          table.stdout,
          new RegExp(
            `^  claim ${CLAIM_CRD}: mismatch — conversion strategy is "None", not "Webhook"$`,
            "m",
          ),
        );
        assert.match(
          table.stdout,
          /^ {2}config xwidgets: ConversionPropagated=True \(Propagated\) — DISAGREES$/m,
        );
      },
    );

    await t.step(
      "migrate-storage -x: both CRDs rewritten; a refused claim blocks the prune of both",
      async () => {
        const storedOf = async (name: string) =>
          ((await client.get(CRDS, name)) as Loose).status.storedVersions;
        for (const name of [XRD_NAME, CLAIM_CRD]) {
          const crd = (await client.get(CRDS, name)) as Loose;
          await client.update(CRDS, {
            ...crd,
            status: { ...crd.status, storedVersions: ["v1", "v2"] },
          }, { subresource: "status" });
        }
        const refusal = {
          policy: "refuse-claim",
          group: XGROUP,
          resource: "widgetclaims",
          expression: "object.metadata.name != 'k-3'",
          probe: { ref: claims("v1", other), name: "k-3" },
        };
        await refuseUpdates(cp, client, refusal);
        const migrate = (...more: string[]) =>
          convctl(
            "migrate-storage",
            "-x",
            XRD_NAME,
            "--kubeconfig",
            cp.kubeconfigPath,
            "--prune-stored-versions",
            ...more,
          );
        const refused = await migrate("-o", "json");
        assert.equal(refused.code, 1, refused.stderr);
        const report = JSON.parse(refused.stdout) as Loose;
        assert.deepEqual(
          report.objects.map((o: Loose) => [o.crd, o.namespace, o.name, o.error !== undefined]),
          [
            [XRD_NAME, undefined, "c-1", false],
            [XRD_NAME, undefined, "c-2", false],
            [CLAIM_CRD, ns, "k-1", false],
            [CLAIM_CRD, ns, "k-2", false],
            [CLAIM_CRD, other, "k-3", true],
          ],
        );
        assert.deepEqual(
          report.crds.map((c: Loose) => [c.crd, c.role, c.succeeded, c.failed, c.pruned]),
          [[XRD_NAME, "composite", 2, 0, false], [CLAIM_CRD, "claim", 2, 1, false]],
        );
        assert.deepEqual(report.warnings, [
          `--prune-stored-versions skipped: 1 object(s) of ${CLAIM_CRD} failed and may still ` +
          "be stored at an older version",
        ]);
        assert.deepEqual(await storedOf(XRD_NAME), ["v1", "v2"]);
        assert.deepEqual(await storedOf(CLAIM_CRD), ["v1", "v2"]);

        await allowUpdates(client, refusal);
        const ok = await migrate();
        assert.equal(ok.code, 0, ok.stderr);
        assert.match(ok.stdout, /^OBJECTS: {2}5 \(5 ok, 0 failed\)$/m);
        assert.ok(
          ok.stdout.includes(
            `  claim ${CLAIM_CRD} at v1 (stored v1, v2): 3 (3 ok, 0 failed), storedVersions set ` +
              "to [v1]\n",
          ),
          ok.stdout,
        );
        assert.match(ok.stdout, new RegExp(`^CRD +NAMESPACE +NAME +RESULT$`, "m"));
        assert.deepEqual(await storedOf(XRD_NAME), ["v1"]);
        assert.deepEqual(await storedOf(CLAIM_CRD), ["v1"]);
      },
    );
  },
);
