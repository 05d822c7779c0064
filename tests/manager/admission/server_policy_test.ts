/**
 * The ConversionWebhookServer policy (src/manager/admission/server_policy.ts): per field, a write
 * that breaks it is denied by the validating webhook with a message naming the field and the
 * allowed set, and the reconcile refuses to render the same spec; the flags that carry it.
 */
import assert from "node:assert/strict";
import {
  type ServerAdmissionContext,
  validateServerAdmission,
  type WebhookServerPolicy,
  webhookServerPolicyViolations,
} from "../../../src/manager/admission/mod.ts";
import { ConversionWebhookServerSchema } from "../../../src/api/mod.ts";
import { FlagError, parseManagerFlags, webhookServerPolicyOf } from "../../../src/manager/flags.ts";
import { serverChildren } from "../../../src/manager/server/children.ts";
import { ServerSpecError } from "../../../src/manager/server/settings.ts";

const OPERATOR_NS = "dco-system";
const IMAGE = "ghcr.io/terasky-oss/declarative-conversion-webhook-server";
const SA = "declarative-conversion-operator-webhook-server";
const POLICY: WebhookServerPolicy = {
  namespaces: [OPERATOR_NS, "team-a"],
  imageRepositories: [IMAGE],
  serviceAccounts: [SA],
};

function server(spec: Record<string, unknown>): Record<string, unknown> {
  return {
    apiVersion: "terasky.com/v1alpha1",
    kind: "ConversionWebhookServer",
    metadata: { name: "s1", uid: "u-1" },
    spec: {
      serviceAccountName: SA,
      image: { repository: IMAGE, tag: "v1" },
      ...spec,
    },
  };
}

const ctx = (policy: WebhookServerPolicy = POLICY): ServerAdmissionContext => ({
  listConfigs: () => [],
  listServers: () => [],
  serverPolicy: { policy, operatorNamespace: OPERATOR_NS },
});

async function denial(spec: Record<string, unknown>, policy?: WebhookServerPolicy) {
  const d = await validateServerAdmission("CREATE", server(spec), undefined, ctx(policy));
  assert.equal(d.allowed, false, `expected a denial for ${JSON.stringify(spec)}`);
  return (d as { message: string }).message;
}

Deno.test("server policy: a compliant server is admitted (default and allowed namespace)", async () => {
  for (const spec of [{}, { namespace: "team-a" }, { image: undefined }]) {
    const d = await validateServerAdmission("CREATE", server(spec), undefined, ctx());
    assert.deepEqual(d, { allowed: true }, JSON.stringify(spec));
  }
});

Deno.test("server policy: a foreign image repository is denied, naming the field and the set", async () => {
  const msg = await denial({ image: { repository: "evil.example/miner", tag: "1" } });
  assert.match(msg, /^spec\.image\.repository: "evil\.example\/miner" is not an allowed/);
  assert.ok(msg.includes(`(allowed: "${IMAGE}"`), msg);
  // A near miss is not a match: exact unless the entry ends in "/".
  await denial({ image: { repository: `${IMAGE}-fork`, tag: "1" } });
  await denial({ image: { repository: `${IMAGE}/x`, tag: "1" } });
  // A prefix entry allows what is under it, not the prefix itself or a sibling.
  const org: WebhookServerPolicy = { ...POLICY, imageRepositories: ["ghcr.io/terasky-oss/"] };
  const ok = await validateServerAdmission(
    "CREATE",
    server({ image: { repository: "ghcr.io/terasky-oss/other", tag: "1" } }),
    undefined,
    ctx(org),
  );
  assert.equal(ok.allowed, true);
  await denial({ image: { repository: "ghcr.io/terasky-ossx/other", tag: "1" } }, org);
});

Deno.test("server policy: a hostPath volume is denied; the safe types pass unless widened", async () => {
  const msg = await denial({
    extraVolumes: [
      { name: "ok", configMap: { name: "cm" } },
      { name: "root", hostPath: { path: "/" } },
    ],
  });
  assert.equal(
    msg,
    'spec.extraVolumes[1].hostPath: volume type "hostPath" is not allowed for webhook servers (allowed: "secret", "configMap", "projected", "emptyDir")',
  );
  const safe = [
    { name: "a", secret: { secretName: "s" } },
    { name: "b", configMap: { name: "c" } },
    { name: "c", projected: { sources: [] } },
    { name: "d", emptyDir: {} },
  ];
  assert.equal(
    (await validateServerAdmission("CREATE", server({ extraVolumes: safe }), undefined, ctx()))
      .allowed,
    true,
  );
  const widened = { ...POLICY, volumeTypes: ["hostPath"] };
  const d = await validateServerAdmission(
    "CREATE",
    server({ extraVolumes: [{ name: "h", hostPath: { path: "/x" } }] }),
    undefined,
    ctx(widened),
  );
  assert.equal(d.allowed, true);
  // The operator's own volume names are reserved.
  assert.match(
    await denial({ extraVolumes: [{ name: "tls", emptyDir: {} }] }),
    /^spec\.extraVolumes\[0\]\.name: "tls" is the operator's own volume/,
  );
});

Deno.test("server policy: a foreign ServiceAccount is denied (also the schema default)", async () => {
  const msg = await denial({ serviceAccountName: "cluster-admin-sa" });
  assert.equal(
    msg,
    `spec.serviceAccountName: "cluster-admin-sa" is not an allowed webhook-server ServiceAccount (allowed: "${SA}")`,
  );
  // Unset: the CRD's default name, which is not the chart's ServiceAccount.
  const s = server({});
  delete (s.spec as Record<string, unknown>).serviceAccountName;
  const d = await validateServerAdmission("CREATE", s, undefined, ctx());
  assert.equal(d.allowed, false);
  assert.match((d as { message: string }).message, /"declarative-conversion-webhook-server"/);
});

Deno.test("server policy: a disallowed namespace is denied (explicit and the operator default)", async () => {
  assert.equal(
    await denial({ namespace: "kube-system" }),
    `spec.namespace: "kube-system" is not a namespace webhook servers may use (allowed: "${OPERATOR_NS}", "team-a")`,
  );
  const msg = await denial({}, { ...POLICY, namespaces: ["team-a"] });
  assert.match(msg, /^spec\.namespace: "dco-system" \(the operator namespace, the default\)/);
});

Deno.test("server policy: extraEnv cannot override the variables the manager sets", async () => {
  for (const name of ["POD_NAME", "POD_NAMESPACE", "POD_UID"]) {
    const msg = await denial({ extraEnv: [{ name: "OK", value: "1" }, { name, value: "x" }] });
    assert.equal(
      msg,
      `spec.extraEnv[1].name: "${name}" is set by the operator and cannot be overridden (managed: "POD_NAME", "POD_NAMESPACE", "POD_UID")`,
    );
  }
});

Deno.test("server policy: every violation is named in one denial", async () => {
  const msg = await denial({
    namespace: "kube-system",
    serviceAccountName: "x",
    extraVolumes: [{ name: "h", hostPath: { path: "/" } }],
  });
  assert.equal(msg.split("; ").length, 3, msg);
});

Deno.test("server policy: without a policy only volume types and managed env apply", async () => {
  const open: ServerAdmissionContext = { listConfigs: () => [], listServers: () => [] };
  const any = server({
    namespace: "anywhere",
    serviceAccountName: "x",
    image: { repository: "r" },
  });
  assert.equal((await validateServerAdmission("CREATE", any, undefined, open)).allowed, true);
  const host = server({ extraVolumes: [{ name: "h", hostPath: { path: "/" } }] });
  assert.equal((await validateServerAdmission("CREATE", host, undefined, open)).allowed, false);
});

Deno.test("server policy: an UPDATE is checked too; one being deleted is not", async () => {
  const bad = server({ serviceAccountName: "x" });
  assert.equal((await validateServerAdmission("UPDATE", bad, bad, ctx())).allowed, false);
  const deleting = { ...bad, metadata: { name: "s1", deletionTimestamp: "2026-01-01T00:00:00Z" } };
  assert.equal((await validateServerAdmission("UPDATE", bad, deleting, ctx())).allowed, true);
});

Deno.test("server policy: the reconcile refuses to render a spec the policy forbids", () => {
  const settings = {
    operatorNamespace: OPERATOR_NS,
    enableXrdSupport: true,
    enableCrdSupport: true,
    policy: POLICY,
  };
  const good = ConversionWebhookServerSchema.parse(server({}));
  assert.equal(serverChildren(good, settings).deployment.spec.template.spec.serviceAccountName, SA);
  const bad = ConversionWebhookServerSchema.parse(
    server({ extraVolumes: [{ name: "h", hostPath: { path: "/" } }], namespace: "kube-system" }),
  );
  assert.throws(
    () => serverChildren(bad, settings),
    (e: unknown) =>
      e instanceof ServerSpecError && /spec\.namespace: "kube-system"/.test(e.message) &&
      /spec\.extraVolumes\[0\]\.hostPath/.test(e.message),
  );
  // Pure function, same answer as admission's.
  assert.equal(webhookServerPolicyViolations(bad.spec, POLICY, OPERATOR_NS).length, 2);
});

Deno.test("server policy flags: comma lists, validated; unset means unrestricted", () => {
  const f = parseManagerFlags([
    "--webhook-server-namespaces=dco-system, team-a",
    `--webhook-server-image-repositories=${IMAGE},ghcr.io/terasky-oss/`,
    `--webhook-server-service-accounts=${SA}`,
    "--webhook-server-volume-types=secret,emptyDir",
  ]);
  assert.deepEqual(webhookServerPolicyOf(f), {
    namespaces: ["dco-system", "team-a"],
    imageRepositories: [IMAGE, "ghcr.io/terasky-oss/"],
    serviceAccounts: [SA],
    volumeTypes: ["secret", "emptyDir"],
  });
  assert.deepEqual(webhookServerPolicyOf(parseManagerFlags([])), {});
  for (
    const bad of [
      "--webhook-server-namespaces=",
      "--webhook-server-namespaces=a,,b",
      "--webhook-server-namespaces=Team_A",
      "--webhook-server-volume-types=host-path",
      "--webhook-server-service-accounts=UPPER",
    ]
  ) {
    assert.throws(() => parseManagerFlags([bad]), FlagError, bad);
  }
  assert.throws(
    () => parseManagerFlags(["--webhook-server-namespaces=ok,Team_A"]),
    (e: unknown) =>
      e instanceof FlagError &&
      /--webhook-server-namespaces: "Team_A" is not a valid namespace name/.test(e.message),
  );
});
