/**
 * The chart values of an installable, conventional chart: image tags and pull policies (a global
 * `image.tag`, per-image overrides, the appVersion fallback), the manager's configurable security
 * contexts, probes, ports and revisionHistoryLimit (today's values by default), Kubernetes
 * quantities in `resources`, the detection behind the `auto` defaults of `certManager.enabled`
 * and `features.crossplane.enabled` (a bare cluster renders without cert-manager or Crossplane
 * objects), `crds.install`, the `helm test` hooks and the Chart.yaml metadata.
 */
import assert from "node:assert/strict";
import { parse } from "yaml";
import {
  BARE_CLUSTER,
  CHART,
  FULL_CLUSTER,
  FULLNAME,
  helm,
  type Obj,
  render,
  template,
} from "./_helm.ts";

const NS = "dco-system";
const APP_VERSION = (parse(await Deno.readTextFile(`${CHART}/Chart.yaml`)) as Obj).appVersion;

function find(objs: Obj[], kind: string, name: string): Obj {
  const o = objs.find((x) => x.kind === kind && x.metadata?.name === name);
  assert.ok(
    o,
    `${kind} ${name} not rendered; have ${objs.map((x) => `${x.kind}/${x.metadata?.name}`)}`,
  );
  return o;
}

const has = (objs: Obj[], kind: string, name: string) =>
  objs.some((x) => x.kind === kind && x.metadata?.name === name);

const deployment = (objs: Obj[]) => find(objs, "Deployment", `${FULLNAME}-manager`);
const manager = (objs: Obj[]) => deployment(objs).spec.template.spec.containers[0];
const job = (objs: Obj[]) => find(objs, "Job", `${FULLNAME}-prepare-uninstall`);
const testPod = (objs: Obj[]) => find(objs, "Pod", `${FULLNAME}-test`);
const cwsImage = (objs: Obj[]) => find(objs, "ConversionWebhookServer", "default").spec.image;
const arg = (c: Obj, flag: string) =>
  (c.args as string[]).filter((a) => a.startsWith(`${flag}=`)).map((a) => a.slice(flag.length + 1));

const MANAGER_REPO = "ghcr.io/terasky-oss/declarative-conversion-operator";
const SERVER_REPO = "ghcr.io/terasky-oss/declarative-conversion-webhook-server";

Deno.test("chart values: image.tag is the default tag of both images, appVersion without it", async () => {
  const images = (objs: Obj[]) => ({
    manager: manager(objs).image,
    job: job(objs).spec.template.spec.containers[0].image,
    test: testPod(objs).spec.containers[0].image,
    defaultServerFlag: arg(manager(objs), "--default-webhook-server-image")[0],
    cws: cwsImage(objs).tag,
  });
  assert.deepEqual(images(await render()), {
    manager: `${MANAGER_REPO}:${APP_VERSION}`,
    job: `${MANAGER_REPO}:${APP_VERSION}`,
    test: `${MANAGER_REPO}:${APP_VERSION}`,
    defaultServerFlag: `${SERVER_REPO}:${APP_VERSION}`,
    cws: APP_VERSION,
  });
  assert.deepEqual(images(await render({ "image.tag": "v9.9.9" })), {
    manager: `${MANAGER_REPO}:v9.9.9`,
    job: `${MANAGER_REPO}:v9.9.9`,
    test: `${MANAGER_REPO}:v9.9.9`,
    defaultServerFlag: `${SERVER_REPO}:v9.9.9`,
    cws: "v9.9.9",
  });
  // A per-image tag wins over image.tag; a digest wins over both.
  const digest = `sha256:${"a".repeat(64)}`;
  assert.deepEqual(
    images(
      await render({
        "image.tag": "v9.9.9",
        "image.manager.tag": "m1",
        "image.webhookServer.digest": digest,
      }),
    ),
    {
      manager: `${MANAGER_REPO}:m1`,
      job: `${MANAGER_REPO}:m1`,
      test: `${MANAGER_REPO}:m1`,
      defaultServerFlag: `${SERVER_REPO}@${digest}`,
      cws: undefined,
    },
  );
});

Deno.test("chart values: pullPolicy per image, image.pullPolicy by default", async () => {
  const policies = (objs: Obj[]) => [
    manager(objs).imagePullPolicy,
    job(objs).spec.template.spec.containers[0].imagePullPolicy,
    testPod(objs).spec.containers[0].imagePullPolicy,
    cwsImage(objs).pullPolicy,
  ];
  assert.deepEqual(policies(await render()), [
    "IfNotPresent",
    "IfNotPresent",
    "IfNotPresent",
    "IfNotPresent",
  ]);
  assert.deepEqual(
    policies(await render({ "image.pullPolicy": "Never", "image.manager.pullPolicy": "Always" })),
    ["Always", "Always", "Always", "Never"],
  );
  const bad = await template({ "image.webhookServer.pullPolicy": "Sometimes" });
  assert.notEqual(bad.code, 0);
  assert.match(bad.stderr, /pullPolicy/);
});

Deno.test("chart values: security contexts, probes and revisionHistoryLimit are values (today's by default)", async () => {
  const d = deployment(await render());
  assert.equal(d.spec.revisionHistoryLimit, 10);
  const c = d.spec.template.spec.containers[0];
  assert.deepEqual(c.livenessProbe, {
    httpGet: { path: "/healthz", port: "probes" },
    initialDelaySeconds: 15,
    periodSeconds: 20,
    timeoutSeconds: 5,
  });
  assert.deepEqual(c.readinessProbe, {
    httpGet: { path: "/readyz", port: "probes" },
    initialDelaySeconds: 5,
    periodSeconds: 10,
    timeoutSeconds: 2,
  });

  const objs = await render({
    "manager.revisionHistoryLimit": "3",
    "manager.podSecurityContext.runAsUser": "65532",
    "manager.securityContext.readOnlyRootFilesystem": "false",
    "manager.livenessProbe.periodSeconds": "60",
    "manager.readinessProbe": "null",
  });
  const d2 = deployment(objs);
  assert.equal(d2.spec.revisionHistoryLimit, 3);
  assert.equal(d2.spec.template.spec.securityContext.runAsUser, 65532);
  assert.equal(d2.spec.template.spec.securityContext.runAsNonRoot, true, "merged with defaults");
  const c2 = d2.spec.template.spec.containers[0];
  assert.equal(c2.securityContext.readOnlyRootFilesystem, false);
  assert.deepEqual(c2.securityContext.capabilities, { drop: ["ALL"] });
  assert.equal(c2.livenessProbe.periodSeconds, 60);
  assert.equal(c2.livenessProbe.timeoutSeconds, 5);
  assert.equal(c2.readinessProbe, undefined, "a null probe is dropped");
  // The hook pods run with the same contexts.
  for (const spec of [job(objs).spec.template.spec, testPod(objs).spec]) {
    assert.deepEqual(spec.securityContext, d2.spec.template.spec.securityContext);
    assert.deepEqual(spec.containers[0].securityContext, c2.securityContext);
  }
});

Deno.test("chart values: manager.ports move the listeners, the Services and the NetworkPolicy", async () => {
  const def = manager(await render());
  assert.deepEqual(arg(def, "--webhook-bind-address"), [], "the default port needs no flag");
  const objs = await render({
    "manager.ports.webhook": "10443",
    "manager.ports.metrics": "18080",
    "manager.ports.probes": "18081",
  });
  const c = manager(objs);
  assert.deepEqual(arg(c, "--webhook-bind-address"), [":10443"]);
  assert.deepEqual(arg(c, "--metrics-bind-address"), [":18080"]);
  assert.deepEqual(arg(c, "--health-probe-bind-address"), [":18081"]);
  assert.deepEqual(
    c.ports.map((p: Obj) => [p.name, p.containerPort]),
    [["webhook-server", 10443], ["metrics", 18080], ["probes", 18081]],
  );
  const metrics = find(objs, "Service", `${FULLNAME}-manager-metrics`).spec.ports[0];
  assert.deepEqual([metrics.port, metrics.targetPort], [18080, "metrics"]);
  const admission = find(objs, "Service", `${FULLNAME}-webhook-service`).spec.ports[0];
  assert.deepEqual([admission.port, admission.targetPort], [443, "webhook-server"]);
  const np = find(objs, "NetworkPolicy", `${FULLNAME}-manager`);
  assert.deepEqual(
    np.spec.ingress.flatMap((r: Obj) => r.ports.map((p: Obj) => p.port)),
    [10443, 18081],
  );
  const bad = await template({ "manager.ports.webhook": "70000" });
  assert.notEqual(bad.code, 0);
});

Deno.test("chart values: resources take every Kubernetes quantity form", async () => {
  const objs = await render({}, NS, [
    "--set-string",
    "manager.resources.requests.cpu=500m",
    "--set-json",
    "manager.resources.requests.memory=1e8",
    "--set-string",
    "manager.resources.limits.memory=1.5Gi",
    "--set-string",
    "conversionWebhookServer.resources.limits.memory=0.5Gi",
    "--set",
    "conversionWebhookServer.resources.requests.cpu=2",
  ]);
  assert.deepEqual(manager(objs).resources, {
    requests: { cpu: "500m", memory: 1e8 },
    limits: { memory: "1.5Gi" },
  });
  assert.deepEqual(find(objs, "ConversionWebhookServer", "default").spec.resources, {
    requests: { cpu: 2, memory: "64Mi" },
    limits: { memory: "0.5Gi" },
  });
  for (const bad of ["1.5 Gi", "Gi", "12x", "-"]) {
    const r = await template({}, [
      "--set-string",
      `conversionWebhookServer.resources.limits.memory=${bad}`,
    ]);
    assert.notEqual(r.code, 0, `${bad} must be rejected`);
    assert.match(r.stderr, /schema/, bad);
  }
});

Deno.test("chart values: on a bare cluster the defaults need neither cert-manager nor Crossplane", async () => {
  const bare = await render({}, NS, [], BARE_CLUSTER);
  assert.ok(!has(bare, "Certificate", `${FULLNAME}-webhook-cert`));
  assert.ok(!has(bare, "ClusterIssuer", `${FULLNAME}-selfsigned-issuer`));
  assert.ok(
    !has(bare, "MutatingWebhookConfiguration", `${FULLNAME}-mutating-webhook-configuration`),
  );
  const c = manager(bare);
  assert.deepEqual(arg(c, "--enable-xrd-support"), ["false"]);
  assert.deepEqual(arg(c, "--enable-xrd-conversion-guard"), ["false"]);
  // The manager issues the admission certificate and sets the caBundle itself.
  assert.deepEqual(arg(c, "--admission-cert-secret"), [`${FULLNAME}-webhook-cert`]);
  const vwc = find(
    bare,
    "ValidatingWebhookConfiguration",
    `${FULLNAME}-validating-webhook-configuration`,
  );
  assert.equal(vwc.metadata.annotations?.["cert-manager.io/inject-ca-from"], undefined);
  const role = find(bare, "ClusterRole", `${FULLNAME}-manager-role`);
  assert.ok(
    !role.rules.some((r: Obj) => r.apiGroups.includes("apiextensions.crossplane.io")),
    "no XRD grants without Crossplane",
  );

  // Where the cluster serves both, `auto` uses them.
  const full = await render({}, NS, [], FULL_CLUSTER);
  assert.ok(has(full, "Certificate", `${FULLNAME}-webhook-cert`));
  assert.ok(
    has(full, "MutatingWebhookConfiguration", `${FULLNAME}-mutating-webhook-configuration`),
  );
  assert.deepEqual(arg(manager(full), "--enable-xrd-support"), ["true"]);
  assert.deepEqual(arg(manager(full), "--admission-cert-secret"), []);

  // Each detection apart: only cert-manager, only Crossplane.
  const cm = await render({}, NS, [], ["cert-manager.io/v1"]);
  assert.ok(has(cm, "Certificate", `${FULLNAME}-webhook-cert`));
  assert.deepEqual(arg(manager(cm), "--enable-xrd-support"), ["false"]);
  const xp = await render({}, NS, [], ["apiextensions.crossplane.io/v2"]);
  assert.ok(!has(xp, "Certificate", `${FULLNAME}-webhook-cert`));
  assert.deepEqual(arg(manager(xp), "--enable-xrd-support"), ["true"]);

  // true/false force either way, whatever the cluster serves.
  const forced = await render(
    { "certManager.enabled": "true", "features.crossplane.enabled": "true" },
    NS,
    [],
    BARE_CLUSTER,
  );
  assert.ok(has(forced, "Certificate", `${FULLNAME}-webhook-cert`));
  assert.deepEqual(arg(manager(forced), "--enable-xrd-support"), ["true"]);
  const off = await render(
    { "certManager.enabled": "false", "features.crossplane.enabled": "false" },
    NS,
    [],
    FULL_CLUSTER,
  );
  assert.ok(!has(off, "Certificate", `${FULLNAME}-webhook-cert`));
  assert.deepEqual(arg(manager(off), "--enable-xrd-support"), ["false"]);
  // The strings `--set-string` gives mean the same as the booleans.
  const offStrings = await render({}, NS, [
    "--set-string",
    "certManager.enabled=false",
    "--set-string",
    "features.crossplane.enabled=false",
  ], FULL_CLUSTER);
  assert.ok(!has(offStrings, "Certificate", `${FULLNAME}-webhook-cert`));
  assert.deepEqual(arg(manager(offStrings), "--enable-xrd-support"), ["false"]);
  const bad = await template({ "certManager.enabled": "maybe" });
  assert.notEqual(bad.code, 0);
});

Deno.test("chart values: crds.install is accepted as true and refused as false", async () => {
  const ok = await template({ "crds.install": "true" });
  assert.equal(ok.code, 0, ok.stderr);
  const off = await template({ "crds.install": "false" });
  assert.notEqual(off.code, 0);
  assert.match(off.stderr, /crds\.install=false is not supported: .*--skip-crds/);
  // What Helm does install: crds/, also for `helm show crds` (the CRD upgrade path).
  const crds = await helm("show", "crds", CHART);
  assert.equal(crds.code, 0, crds.stderr);
  const names = crds.stdout.split(/^---$/m).map((d) => (parse(d) as Obj | null)?.metadata?.name)
    .filter((n) => n).sort();
  assert.deepEqual(names, [
    "conversionwebhookservers.terasky.com",
    "crdconversionconfigs.terasky.com",
    "xrdconversionconfigs.terasky.com",
  ]);
});

Deno.test("chart values: the helm test hooks check the admission and conversion Services", async () => {
  const objs = await render();
  const pod = testPod(objs);
  assert.equal(pod.metadata.annotations["helm.sh/hook"], "test");
  assert.equal(pod.spec.restartPolicy, "Never");
  assert.equal(pod.spec.serviceAccountName, `${FULLNAME}-test`);
  assert.deepEqual(pod.spec.containers[0].args, [
    "--check-installation",
    "--check-timeout=120s",
    `--check-admission-service=${FULLNAME}-webhook-service`,
    `--check-webhook-server=${NS}/default`,
  ]);
  // Every test object is a test hook, gone after a passing run.
  const hooks = objs.filter((o) => o.metadata.annotations?.["helm.sh/hook"] === "test");
  assert.deepEqual(hooks.map((o) => `${o.kind}/${o.metadata.name}`).sort(), [
    `Pod/${FULLNAME}-test`,
    `Role/${FULLNAME}-test-0`,
    `Role/${FULLNAME}-test-1`,
    `RoleBinding/${FULLNAME}-test-0`,
    `RoleBinding/${FULLNAME}-test-1`,
    `ServiceAccount/${FULLNAME}-test`,
  ]);
  for (const h of hooks) {
    assert.equal(
      h.metadata.annotations["helm.sh/hook-delete-policy"],
      "before-hook-creation,hook-succeeded",
    );
  }
  // Exactly the two Services and their proxies.
  const rules = hooks.filter((o) => o.kind === "Role").map((r) => r.rules);
  assert.deepEqual(rules, [
    [
      {
        apiGroups: [""],
        resources: ["services"],
        resourceNames: [`${FULLNAME}-webhook-service`],
        verbs: ["get"],
      },
      {
        apiGroups: [""],
        resources: ["services/proxy"],
        resourceNames: [`https:${FULLNAME}-webhook-service:443`],
        verbs: ["create"],
      },
    ],
    [
      {
        apiGroups: [""],
        resources: ["services"],
        resourceNames: ["default-webhook-server"],
        verbs: ["get"],
      },
      {
        apiGroups: [""],
        resources: ["services/proxy"],
        resourceNames: ["https:default-webhook-server:443"],
        verbs: ["create"],
      },
    ],
  ]);

  // The server's namespace and port follow the values; the check follows what is rendered.
  const moved = await render({
    "conversionWebhookServer.namespace": "servers",
    "conversionWebhookServer.service.port": "8443",
    "admissionWebhook.enabled": "false",
    "tests.timeoutSeconds": "30",
  });
  assert.deepEqual(testPod(moved).spec.containers[0].args, [
    "--check-installation",
    "--check-timeout=30s",
    "--check-webhook-server=servers/default",
  ]);
  const role = find(moved, "Role", `${FULLNAME}-test-0`);
  assert.equal(role.metadata.namespace, "servers");
  assert.deepEqual(role.rules[1].resourceNames, ["https:default-webhook-server:8443"]);

  const none = await render({ "tests.enabled": "false" });
  assert.deepEqual(none.filter((o) => o.metadata.annotations?.["helm.sh/hook"] === "test"), []);
});

Deno.test("chart values: Chart.yaml carries the metadata chart indexes show", async () => {
  const r = await helm("show", "chart", CHART);
  assert.equal(r.code, 0, r.stderr);
  const chart = parse(r.stdout) as Obj;
  assert.match(chart.home, /^https:\/\/github\.com\//);
  assert.ok(chart.sources.length > 0);
  assert.ok(chart.maintainers.every((m: Obj) => m.name));
  assert.match(chart.icon, /^https:\/\//);
  assert.ok(chart.keywords.includes("crossplane"));
  const crds = parse(chart.annotations["artifacthub.io/crds"]) as Obj[];
  assert.deepEqual(crds.map((c) => c.kind).sort(), [
    "CRDConversionConfig",
    "ConversionWebhookServer",
    "XRDConversionConfig",
  ]);
  // The icon is a file of this repository, at the path the URL names.
  const path = chart.icon.replace(/^.*\/main\//, "");
  await Deno.stat(new URL(`../../${path}`, import.meta.url));
});
