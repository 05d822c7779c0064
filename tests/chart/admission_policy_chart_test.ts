/**
 * The ConversionWebhookServer policy as the chart configures it: the manager's rendered flags,
 * parsed by the manager's own flag parser, admit the ConversionWebhookServer the chart renders
 * (for the defaults and for the values that move it), and deny a foreign image, a hostPath
 * volume, a foreign ServiceAccount and a namespace outside the allowed set.
 */
import assert from "node:assert/strict";
import {
  type ServerAdmissionContext,
  validateServerAdmission,
} from "../../src/manager/admission/mod.ts";
import { parseManagerFlags, webhookServerPolicyOf } from "../../src/manager/flags.ts";
import { FULLNAME, type Obj, render } from "./_helm.ts";

const RELEASE_NS = "dco-system";

/** The admission context the rendered manager would run with. */
function contextOf(objs: Obj[]): ServerAdmissionContext {
  const dep = objs.find((o) =>
    o.kind === "Deployment" && o.metadata.name === `${FULLNAME}-manager`
  );
  assert.ok(dep, "manager Deployment rendered");
  const args = (dep.spec.template.spec.containers[0].args as string[])
    .filter((a) => a.startsWith("--webhook-server-"));
  assert.equal(args.length, 4, `the four policy flags: ${args.join(" ")}`);
  return {
    listConfigs: () => [],
    listServers: () => [],
    serverPolicy: {
      policy: webhookServerPolicyOf(parseManagerFlags(args)),
      operatorNamespace: RELEASE_NS,
    },
  };
}

const chartServer = (objs: Obj[]): Obj => {
  const cws = objs.find((o) => o.kind === "ConversionWebhookServer");
  assert.ok(cws, "the chart's ConversionWebhookServer");
  return { ...cws, metadata: { ...cws.metadata, uid: "u" } };
};

for (
  const [name, sets] of [
    ["defaults", {}],
    ["other registry and tag", {
      "image.registry": "registry.example",
      "image.webhookServer.tag": "v2",
    }],
    ["no registry, digest", {
      "image.registry": "",
      "image.webhookServer.digest": `sha256:${"b".repeat(64)}`,
    }],
    ["server in its own namespace", { "conversionWebhookServer.namespace": "webhooks" }],
    ["custom ServiceAccount name", { "serviceAccount.webhookServerName": "ws" }],
    ["extra volumes of the safe types", {
      "conversionWebhookServer.extraVolumes[0].name": "extra",
      "conversionWebhookServer.extraVolumes[0].configMap.name": "cm",
    }],
  ] as Array<[string, Record<string, string>]>
) {
  Deno.test(`chart admission policy (${name}): the defaults admit the chart's server`, async () => {
    const objs = await render(sets, RELEASE_NS);
    const d = await validateServerAdmission(
      "CREATE",
      chartServer(objs),
      undefined,
      contextOf(objs),
    );
    assert.deepEqual(d, { allowed: true });
  });
}

Deno.test("chart admission policy: the defaults deny each field outside the policy", async () => {
  const objs = await render({}, RELEASE_NS);
  const ctx = contextOf(objs);
  const base = chartServer(objs);
  const cases: Array<[string, Obj, RegExp]> = [
    [
      "foreign image",
      { image: { repository: "docker.io/evil/miner", tag: "1" } },
      /^spec\.image\.repository: "docker\.io\/evil\/miner" is not an allowed webhook-server image repository \(allowed: "ghcr\.io\/terasky-oss\/declarative-conversion-webhook-server"/,
    ],
    [
      "hostPath volume",
      { extraVolumes: [{ name: "root", hostPath: { path: "/" } }] },
      /^spec\.extraVolumes\[0\]\.hostPath: volume type "hostPath" is not allowed for webhook servers \(allowed: "secret", "configMap", "projected", "emptyDir"\)$/,
    ],
    [
      "foreign ServiceAccount",
      { serviceAccountName: "default" },
      new RegExp(
        `^spec\\.serviceAccountName: "default" is not an allowed webhook-server ServiceAccount \\(allowed: "${FULLNAME}-webhook-server"\\)$`,
      ),
    ],
    [
      "disallowed namespace",
      { namespace: "kube-system" },
      /^spec\.namespace: "kube-system" is not a namespace webhook servers may use \(allowed: "dco-system"\)$/,
    ],
  ];
  for (const [what, spec, message] of cases) {
    const d = await validateServerAdmission(
      "CREATE",
      { ...base, spec: { ...base.spec, ...spec } },
      undefined,
      ctx,
    );
    assert.equal(d.allowed, false, what);
    assert.match((d as { message: string }).message, message, what);
  }
});

Deno.test("chart admission policy: the values widen each dimension", async () => {
  const objs = await render({
    "webhookServers.namespaces[0]": "team-a",
    "webhookServers.imageRepositories[0]": "registry.example/dco/",
    "webhookServers.serviceAccounts[0]": "team-sa",
    "webhookServers.volumeTypes[0]": "secret",
    "webhookServers.volumeTypes[1]": "hostPath",
  }, RELEASE_NS);
  const base = chartServer(objs);
  const d = await validateServerAdmission(
    "CREATE",
    {
      ...base,
      spec: {
        ...base.spec,
        namespace: "team-a",
        image: { repository: "registry.example/dco/webhook", tag: "1" },
        serviceAccountName: "team-sa",
        extraVolumes: [{ name: "h", hostPath: { path: "/x" } }],
      },
    },
    undefined,
    contextOf(objs),
  );
  assert.deepEqual(d, { allowed: true });
});
