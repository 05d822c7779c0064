/**
 * The Helm chart `charts/declarative-conversion-operator` (docs/installation.md): `helm lint` for
 * the default values and the main toggles, `helm template` parsed into objects and asserted on
 * (feature flags, RBAC gating, the restricted security context, probes, the derived V8 heap
 * limit, the Lease Role's namespace, admission wiring, the default ConversionWebhookServer),
 * `values.schema.json` rejecting unknown keys, the opt-in monitoring objects (ServiceMonitors,
 * PrometheusRule, Grafana dashboard ConfigMaps; their alerts run through promtool in
 * tests/chart/alerts_test.ts). That the apiserver accepts every rendered object is checked by
 * tests/e2e/chart/helm_install_test.ts.
 *
 * Needs the helm binary that hack/testenv.sh builds (found through `resolveAssets()`).
 */
import assert from "node:assert/strict";
import { podLabels } from "../../src/manager/server/mod.ts";
import {
  CHART,
  FULLNAME,
  helm,
  KUBE_VERSION,
  type Obj,
  render,
  type Run,
  setArgs,
  template,
} from "./_helm.ts";

function find(objs: Obj[], kind: string, name: string): Obj {
  const o = objs.find((x) => x.kind === kind && x.metadata?.name === name);
  assert.ok(
    o,
    `${kind} ${name} not rendered; have ${objs.map((x) => `${x.kind}/${x.metadata?.name}`)}`,
  );
  return o;
}

function all(objs: Obj[], kind: string): Obj[] {
  return objs.filter((x) => x.kind === kind);
}

function managerContainer(objs: Obj[]): Obj {
  const d = find(objs, "Deployment", `${FULLNAME}-manager`);
  return d.spec.template.spec.containers[0];
}

function ruleFor(role: Obj, group: string, resource: string): Obj | undefined {
  return role.rules.find((r: Obj) => r.apiGroups.includes(group) && r.resources.includes(resource));
}

/** XRDs and CRDs, as [API group, resource] for {@link roleRule}. */
const XRD_RESOURCE = ["apiextensions.crossplane.io", "compositeresourcedefinitions"] as const;
const CRD_RESOURCE = ["apiextensions.k8s.io", "customresourcedefinitions"] as const;

/** The rule of the `role` ClusterRole (manager or webhook-server) in `objs` for `resource`. */
function roleRule(
  objs: Obj[],
  role: "manager" | "webhook-server",
  [group, resource]: readonly [string, string],
): Obj | undefined {
  return ruleFor(find(objs, "ClusterRole", `${FULLNAME}-${role}-role`), group, resource);
}

async function lint(sets: Record<string, string> = {}): Promise<Run> {
  return await helm("lint", CHART, "--strict", "--kube-version", KUBE_VERSION, ...setArgs(sets));
}

// ---------------------------------------------------------------------------------------------
// lint

const LINT_CASES: Array<[string, Record<string, string>]> = [
  ["default values", {}],
  ["crossplane off", { "features.crossplane.enabled": "false" }],
  ["nativeCRD off", { "features.nativeCRD.enabled": "false" }],
  ["networkPolicy off", { "networkPolicy.enabled": "false" }],
  ["networkPolicy with scrape namespaces and peers", {
    "networkPolicy.metrics.namespaces[0]": "monitoring",
    "networkPolicy.metrics.allowedPeers[0].podSelector.matchLabels.app": "prometheus",
  }],
  ["webhook servers in more namespaces, wider policy", {
    "webhookServers.namespaces[0]": "team-a",
    "webhookServers.imageRepositories[0]": "registry.example/dco/",
    "webhookServers.serviceAccounts[0]": "team-sa",
    "webhookServers.volumeTypes[0]": "secret",
  }],
  ["certManager off", { "certManager.enabled": "false" }],
  ["built-in serving certificates", { "certificates.mode": "builtin" }],
  ["ServiceMonitors, PrometheusRule and dashboards on", {
    "metrics.serviceMonitor.enabled": "true",
    "metrics.prometheusRule.enabled": "true",
    "dashboards.enabled": "true",
  }],
  ["no pre-delete uninstall Job", { "uninstall.prepareJob.enabled": "false" }],
  ["cert-manager and Crossplane forced on", {
    "certManager.enabled": "true",
    "features.crossplane.enabled": "true",
  }],
  ["image.tag, manager ports, contexts, probes and history set; no test hooks", {
    "image.tag": "v1.2.3",
    "image.manager.pullPolicy": "Always",
    "manager.ports.webhook": "10443",
    "manager.podSecurityContext.runAsUser": "65532",
    "manager.readinessProbe.periodSeconds": "30",
    "manager.revisionHistoryLimit": "2",
    "tests.enabled": "false",
  }],
  ["admission webhook off, no CWS, autoscaling", {
    "admissionWebhook.enabled": "false",
    "conversionWebhookServer.create": "false",
    "conversionWebhookServer.autoscaling.enabled": "true",
  }],
];

for (const [name, sets] of LINT_CASES) {
  Deno.test(`chart: helm lint passes (${name})`, async () => {
    const r = await lint(sets);
    assert.equal(r.code, 0, `helm lint failed:\n${r.stdout}\n${r.stderr}`);
  });
}

// ---------------------------------------------------------------------------------------------
// template: default values

Deno.test("chart: default render has every object, with its documented name", async () => {
  const objs = await render();
  const names = objs.map((o) => `${o.kind}/${o.metadata.name}`).sort();
  assert.deepEqual(names, [
    `Certificate/${FULLNAME}-webhook-cert`,
    `ClusterIssuer/${FULLNAME}-selfsigned-issuer`,
    `ClusterRole/${FULLNAME}-manager-role`,
    `ClusterRole/${FULLNAME}-webhook-server-role`,
    `ClusterRoleBinding/${FULLNAME}-manager-rolebinding`,
    `ClusterRoleBinding/${FULLNAME}-webhook-server-rolebinding`,
    "ConversionWebhookServer/default",
    `Deployment/${FULLNAME}-manager`,
    `Job/${FULLNAME}-prepare-uninstall`,
    `MutatingWebhookConfiguration/${FULLNAME}-mutating-webhook-configuration`,
    `NetworkPolicy/${FULLNAME}-manager`,
    `NetworkPolicy/${FULLNAME}-webhook-server`,
    `Pod/${FULLNAME}-test`,
    `Role/${FULLNAME}-manager`,
    `Role/${FULLNAME}-manager-events`,
    `Role/${FULLNAME}-manager-servers`,
    `Role/${FULLNAME}-test-0`,
    `Role/${FULLNAME}-test-1`,
    `Role/${FULLNAME}-webhook-server-leases`,
    `RoleBinding/${FULLNAME}-manager`,
    `RoleBinding/${FULLNAME}-manager-events`,
    `RoleBinding/${FULLNAME}-manager-servers`,
    `RoleBinding/${FULLNAME}-test-0`,
    `RoleBinding/${FULLNAME}-test-1`,
    `RoleBinding/${FULLNAME}-webhook-server-leases`,
    `Service/${FULLNAME}-manager-metrics`,
    `Service/${FULLNAME}-webhook-service`,
    `ServiceAccount/${FULLNAME}-manager`,
    `ServiceAccount/${FULLNAME}-test`,
    `ServiceAccount/${FULLNAME}-webhook-server`,
    `ValidatingAdmissionPolicy/${FULLNAME}-webhook-server-leases`,
    `ValidatingAdmissionPolicyBinding/${FULLNAME}-webhook-server-leases`,
    `ValidatingWebhookConfiguration/${FULLNAME}-validating-webhook-configuration`,
  ]);
  for (const o of objs) {
    assert.equal(o.metadata.labels["app.kubernetes.io/instance"], "rel");
    assert.equal(o.metadata.labels["app.kubernetes.io/managed-by"], "Helm");
  }
});

Deno.test("chart: manager Deployment args, ports, probes and restricted security context", async () => {
  const objs = await render();
  const d = find(objs, "Deployment", `${FULLNAME}-manager`);
  assert.equal(d.metadata.namespace, "dco-system");
  assert.equal(d.metadata.labels["control-plane"], "controller-manager");
  assert.equal(d.spec.replicas, 1);
  const pod = d.spec.template.spec;
  assert.equal(pod.serviceAccountName, `${FULLNAME}-manager`);
  assert.equal(pod.terminationGracePeriodSeconds, 10);
  assert.deepEqual(pod.securityContext, {
    runAsNonRoot: true,
    seccompProfile: { type: "RuntimeDefault" },
  });
  const c = pod.containers[0];
  assert.equal(c.image, "ghcr.io/terasky-oss/declarative-conversion-operator:0.1.0");
  assert.deepEqual(c.args, [
    "--health-probe-bind-address=:8081",
    "--metrics-bind-address=:8080",
    "--leader-elect",
    "--default-webhook-server-image=ghcr.io/terasky-oss/declarative-conversion-webhook-server:0.1.0",
    "--enable-xrd-support=true",
    "--enable-crd-support=true",
    "--enable-xrd-conversion-guard=true",
    "--max-concurrent-reconciles=1",
    "--certificate-mode=auto",
    "--webhook-server-namespaces=dco-system",
    "--webhook-server-image-repositories=ghcr.io/terasky-oss/declarative-conversion-webhook-server",
    `--webhook-server-service-accounts=${FULLNAME}-webhook-server`,
    "--webhook-server-volume-types=secret,configMap,projected,emptyDir",
  ]);
  assert.deepEqual(c.securityContext, {
    allowPrivilegeEscalation: false,
    readOnlyRootFilesystem: true,
    runAsNonRoot: true,
    capabilities: { drop: ["ALL"] },
    seccompProfile: { type: "RuntimeDefault" },
  });
  assert.equal(c.securityContext.runAsUser, undefined);
  assert.deepEqual(
    c.ports.map((p: Obj) => [p.name, p.containerPort]),
    [["webhook-server", 9443], ["metrics", 8080], ["probes", 8081]],
  );
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
  assert.deepEqual(c.env[0], {
    name: "POD_NAMESPACE",
    valueFrom: { fieldRef: { apiVersion: "v1", fieldPath: "metadata.namespace" } },
  });
  assert.deepEqual(c.resources, {
    requests: { cpu: "10m", memory: "64Mi" },
    limits: { memory: "256Mi" },
  });
  // /tmp is writable; the admission pair is mounted where --webhook-cert-dir defaults to.
  const mounts = Object.fromEntries(c.volumeMounts.map((m: Obj) => [m.name, m]));
  assert.equal(mounts.tmp.mountPath, "/tmp");
  assert.equal(mounts["webhook-cert"].mountPath, "/tmp/k8s-webhook-server/serving-certs");
  assert.equal(mounts["webhook-cert"].readOnly, true);
  const vols = Object.fromEntries(pod.volumes.map((v: Obj) => [v.name, v]));
  assert.deepEqual(vols.tmp, { name: "tmp", emptyDir: {} });
  assert.equal(vols["webhook-cert"].secret.secretName, `${FULLNAME}-webhook-cert`);
});

Deno.test("chart: the pre-delete hook Job runs the manager image with --prepare-uninstall", async () => {
  const objs = await render();
  const job = find(objs, "Job", `${FULLNAME}-prepare-uninstall`);
  assert.equal(job.metadata.namespace, "dco-system");
  assert.deepEqual(job.metadata.annotations, {
    "helm.sh/hook": "pre-delete",
    "helm.sh/hook-weight": "0",
    "helm.sh/hook-delete-policy": "before-hook-creation,hook-succeeded",
  });
  assert.equal(job.metadata.labels["app.kubernetes.io/component"], "prepare-uninstall");
  assert.equal(job.spec.backoffLimit, 0);
  assert.equal(job.spec.activeDeadlineSeconds, 180);
  const pod = job.spec.template.spec;
  // Not selected by the manager's Services/PDB/NetworkPolicy.
  assert.equal(job.spec.template.metadata.labels["control-plane"], undefined);
  assert.equal(pod.restartPolicy, "Never");
  assert.equal(pod.serviceAccountName, `${FULLNAME}-manager`);
  const manager = find(objs, "Deployment", `${FULLNAME}-manager`).spec.template.spec;
  assert.deepEqual(pod.securityContext, manager.securityContext);
  const c = pod.containers[0];
  const m = manager.containers[0];
  assert.equal(c.image, m.image);
  assert.equal(c.imagePullPolicy, m.imagePullPolicy);
  assert.deepEqual(c.args, ["--prepare-uninstall", "--prepare-uninstall-timeout=120s"]);
  assert.deepEqual(c.securityContext, m.securityContext);
  assert.deepEqual(c.resources, m.resources);
  assert.deepEqual(c.volumeMounts, [{ name: "tmp", mountPath: "/tmp" }]);
  assert.deepEqual(pod.volumes, [{ name: "tmp", emptyDir: {} }]);

  const tuned = await render({
    "uninstall.prepareJob.timeoutSeconds": "300",
    "image.manager.digest": "sha256:" + "a".repeat(64),
    "manager.nodeSelector.pool": "system",
    "manager.tolerations[0].operator": "Exists",
    "imagePullSecrets[0].name": "regcred",
  });
  const tj = find(tuned, "Job", `${FULLNAME}-prepare-uninstall`);
  assert.equal(tj.spec.activeDeadlineSeconds, 360);
  const tpod = tj.spec.template.spec;
  assert.deepEqual(tpod.containers[0].args, [
    "--prepare-uninstall",
    "--prepare-uninstall-timeout=300s",
  ]);
  assert.match(tpod.containers[0].image, /@sha256:a{64}$/);
  assert.deepEqual(tpod.nodeSelector, { pool: "system" });
  assert.deepEqual(tpod.tolerations, [{ operator: "Exists" }]);
  assert.deepEqual(tpod.imagePullSecrets, [{ name: "regcred" }]);

  const off = await render({ "uninstall.prepareJob.enabled": "false" });
  assert.equal(all(off, "Job").length, 0);
  for (const bad of ["uninstall.prepareJob.timeoutSeconds=0", "uninstall.prepareJob.wait=1"]) {
    const r = await helm("template", "rel", CHART, "--kube-version", KUBE_VERSION, "--set", bad);
    assert.notEqual(r.code, 0, `${bad} must be rejected`);
    assert.match(r.stderr, /schema/, bad);
  }
});

Deno.test("chart: DENO_V8_FLAGS is floor(memory limit x 0.75 / MiB), absent without a limit", async () => {
  const heap = async (sets: Record<string, string>, extra: string[] = []) => {
    const env = managerContainer(await render(sets, "dco-system", extra)).env as Obj[];
    return env.filter((e) => e.name === "DENO_V8_FLAGS").map((e) => e.value);
  };
  assert.deepEqual(await heap({}), ["--max-old-space-size=192"]); // 256Mi
  assert.deepEqual(await heap({ "manager.resources.limits.memory": "1Gi" }), [
    "--max-old-space-size=768",
  ]);
  assert.deepEqual(await heap({ "manager.resources.limits.memory": "512M" }), [
    "--max-old-space-size=366",
  ]);
  // 1 MiB x 0.75 floors to 0: no flag.
  assert.deepEqual(
    await heap({}, ["--set-string", "manager.resources.limits.memory=1048576"]),
    [],
  );
  assert.deepEqual(await heap({ "manager.resources.limits": "null" }), []);
  // A user DENO_V8_FLAGS wins and appears once.
  assert.deepEqual(
    await heap({
      "manager.extraEnv[0].name": "DENO_V8_FLAGS",
      "manager.extraEnv[0].value": "--max-old-space-size=100",
    }),
    ["--max-old-space-size=100"],
  );
  // Every Kubernetes quantity form: decimals, exponents, milli (below 1 MiB: no flag).
  assert.deepEqual(await heap({ "manager.resources.limits.memory": "1.5Gi" }), [
    "--max-old-space-size=1152",
  ]);
  assert.deepEqual(await heap({ "manager.resources.limits.memory": "1e9" }), [
    "--max-old-space-size=715",
  ]);
  assert.deepEqual(await heap({ "manager.resources.limits.memory": "500m" }), []);
  // What is not a quantity is rejected by the schema.
  const bad = await template({ "manager.resources.limits.memory": "1.5 Gi" });
  assert.notEqual(bad.code, 0);
  assert.match(bad.stderr, /memory/);
});

Deno.test("chart: feature toggles change the manager flags and RBAC", async () => {
  const on = await render();
  const mgrOn = find(on, "ClusterRole", `${FULLNAME}-manager-role`);
  assert.deepEqual(
    ruleFor(mgrOn, "apiextensions.crossplane.io", "compositeresourcedefinitions")?.verbs,
    [
      "get",
      "list",
      "watch",
      "patch",
    ],
  );
  assert.deepEqual(ruleFor(mgrOn, "apiextensions.k8s.io", "customresourcedefinitions")?.verbs, [
    "get",
    "list",
    "watch",
    "patch",
  ]);
  // Namespaced kinds are granted by Roles only (tests/chart/rbac_test.ts checks every rule).
  for (
    const r of [
      "secrets",
      "leases",
      "deployments",
      "services",
      "horizontalpodautoscalers",
      "poddisruptionbudgets",
      "certificates",
    ]
  ) {
    assert.ok(!mgrOn.rules.some((x: Obj) => x.resources.includes(r)), r);
  }
  assert.deepEqual(ruleFor(mgrOn, "terasky.com", "conversionwebhookservers/status")?.verbs, [
    "patch",
  ]);
  assert.equal(ruleFor(mgrOn, "terasky.com", "crdconversionconfigs/finalizers"), undefined);
  const whOn = find(on, "ClusterRole", `${FULLNAME}-webhook-server-role`);
  for (const r of whOn.rules) assert.deepEqual(r.verbs, ["list", "watch"]);
  assert.ok(ruleFor(whOn, "apiextensions.crossplane.io", "compositeresourcedefinitions"));
  assert.ok(ruleFor(whOn, "apiextensions.k8s.io", "customresourcedefinitions"));
  assert.equal(ruleFor(whOn, "", "secrets"), undefined);

  const noXrd = await render({ "features.crossplane.enabled": "false" });
  const a = managerContainer(noXrd).args as string[];
  assert.ok(a.includes("--enable-xrd-support=false"));
  assert.ok(a.includes("--enable-crd-support=true"));
  assert.ok(a.includes("--enable-xrd-conversion-guard=false"));
  assert.equal(roleRule(noXrd, "manager", XRD_RESOURCE), undefined);
  assert.equal(roleRule(noXrd, "webhook-server", XRD_RESOURCE), undefined);

  const noGuard = managerContainer(
    await render({ "features.crossplane.conversionGuard.enabled": "false" }),
  ).args as string[];
  assert.ok(noGuard.includes("--enable-xrd-support=true"));
  assert.ok(noGuard.includes("--enable-xrd-conversion-guard=false"));

  const noCrd = await render({ "features.nativeCRD.enabled": "false" });
  const b = managerContainer(noCrd).args as string[];
  assert.ok(b.includes("--enable-crd-support=false"));
  assert.ok(b.includes("--enable-xrd-support=true"));
  // The XRD path still reads generated CRDs, but nothing patches them.
  assert.deepEqual(roleRule(noCrd, "manager", CRD_RESOURCE)?.verbs, ["get", "list", "watch"]);
  assert.equal(roleRule(noCrd, "webhook-server", CRD_RESOURCE), undefined);

  const neither = await render({
    "features.nativeCRD.enabled": "false",
    "features.crossplane.enabled": "false",
  });
  assert.equal(roleRule(neither, "manager", CRD_RESOURCE), undefined);

  const tuned = managerContainer(
    await render({
      "manager.leaderElection.enabled": "false",
      "manager.maxConcurrentReconciles": "4",
      "manager.extraArgs[0]": "--zap-log-level=debug",
      "image.manager.digest": `sha256:${"a".repeat(64)}`,
      "image.webhookServer.tag": "v9",
    }),
  );
  assert.ok(!tuned.args.includes("--leader-elect"));
  assert.ok(tuned.args.includes("--max-concurrent-reconciles=4"));
  assert.equal(tuned.args.at(-1), "--zap-log-level=debug");
  assert.equal(
    tuned.image,
    `ghcr.io/terasky-oss/declarative-conversion-operator@sha256:${"a".repeat(64)}`,
  );
  assert.ok(
    tuned.args.includes(
      "--default-webhook-server-image=ghcr.io/terasky-oss/declarative-conversion-webhook-server:v9",
    ),
  );
});

Deno.test("chart: the webhook-server Lease Role follows the release (or CWS) namespace", async () => {
  for (
    const [ns, sets, want] of [
      ["dco-system", {}, "dco-system"],
      ["other-ns", {}, "other-ns"],
      ["other-ns", { "conversionWebhookServer.namespace": "cws-ns" }, "cws-ns"],
    ] as Array<[string, Record<string, string>, string]>
  ) {
    const objs = await render(sets, ns);
    const role = find(objs, "Role", `${FULLNAME}-webhook-server-leases`);
    assert.equal(role.metadata.namespace, want);
    assert.deepEqual(role.rules, [{
      apiGroups: ["coordination.k8s.io"],
      resources: ["leases"],
      verbs: ["get", "create", "update"],
    }]);
    const rb = find(objs, "RoleBinding", `${FULLNAME}-webhook-server-leases`);
    assert.equal(rb.metadata.namespace, want);
    // A Pod uses a ServiceAccount of its own namespace: the one the chart creates there.
    assert.deepEqual(rb.subjects, [{
      kind: "ServiceAccount",
      name: `${FULLNAME}-webhook-server`,
      namespace: want,
    }]);
    assert.equal(find(objs, "ConversionWebhookServer", "default").spec.namespace, want);
    assert.equal(find(objs, "ServiceAccount", `${FULLNAME}-manager`).metadata.namespace, ns);
    assert.equal(
      find(objs, "ServiceAccount", `${FULLNAME}-webhook-server`).metadata.namespace,
      want,
    );
  }
});

Deno.test("chart: certificates.mode is the manager flag; builtin/auto get namespaced Secret writes", async () => {
  const servers = `${FULLNAME}-manager-servers`;
  for (
    const [sets, mode, namespaces, secretVerbs, caRole] of [
      [{}, "auto", ["dco-system"], ["get", "create", "update"], true],
      [
        { "certificates.mode": "builtin", "conversionWebhookServer.namespace": "cws-ns" },
        "builtin",
        ["cws-ns"],
        ["get", "create", "update"],
        true,
      ],
      [
        {
          "certificates.mode": "builtin",
          "certificates.secretNamespaces[0]": "team-a",
          "webhookServers.namespaces[0]": "dco-system",
        },
        "builtin",
        ["dco-system", "team-a"],
        ["get", "create", "update"],
        true,
      ],
      [{ "certificates.mode": "cert-manager" }, "cert-manager", ["dco-system"], ["get"], false],
      [
        { "certificates.mode": "existing-secret" },
        "existing-secret",
        ["dco-system"],
        ["get"],
        false,
      ],
    ] as Array<[Record<string, string>, string, string[], string[], boolean]>
  ) {
    const objs = await render(sets);
    const args: string[] = managerContainer(objs).args;
    assert.deepEqual(args.filter((a) => a.startsWith("--certificate-mode")), [
      `--certificate-mode=${mode}`,
    ]);
    assert.deepEqual(args.filter((a) => a.startsWith("--webhook-server-namespaces")), [
      `--webhook-server-namespaces=${namespaces.join(",")}`,
    ]);
    const roles = all(objs, "Role").filter((r) => r.metadata.name === servers);
    assert.deepEqual(roles.map((r) => r.metadata.namespace).sort(), namespaces, mode);
    for (const role of roles) {
      assert.deepEqual(ruleFor(role, "", "secrets")?.verbs, secretVerbs, mode);
      assert.equal(ruleFor(role, "", "secrets")?.resourceNames, undefined);
    }
    const bindings = all(objs, "RoleBinding").filter((r) => r.metadata.name === servers);
    assert.deepEqual(bindings.map((r) => r.metadata.namespace).sort(), namespaces, mode);
    for (const rb of bindings) {
      assert.deepEqual(rb.subjects, [{
        kind: "ServiceAccount",
        name: `${FULLNAME}-manager`,
        namespace: "dco-system",
      }]);
      assert.equal(rb.roleRef.name, servers);
    }
    // The CA Secret in the release namespace: by name.
    const release = find(objs, "Role", `${FULLNAME}-manager`);
    const named = (release.rules as Obj[]).find((r) =>
      r.resources.includes("secrets") && r.resourceNames
    );
    assert.deepEqual(named?.resourceNames, caRole ? ["dco-webhook-ca"] : undefined, mode);
    // No Secret access cluster-wide.
    const mgr = find(objs, "ClusterRole", `${FULLNAME}-manager-role`);
    assert.equal(ruleFor(mgr, "", "secrets"), undefined);
  }
  const bad = await lint({ "certificates.mode": "selfsigned" });
  assert.notEqual(bad.code, 0, "values.schema.json rejects an unknown mode");
});

Deno.test("chart: admission Service and ValidatingWebhookConfiguration (cert-manager on/off)", async () => {
  const objs = await render();
  const svc = find(objs, "Service", `${FULLNAME}-webhook-service`);
  assert.deepEqual(svc.spec.ports, [{
    name: "https",
    port: 443,
    targetPort: "webhook-server",
    protocol: "TCP",
  }]);
  assert.equal(svc.spec.selector["control-plane"], "controller-manager");
  const vwc = find(
    objs,
    "ValidatingWebhookConfiguration",
    `${FULLNAME}-validating-webhook-configuration`,
  );
  assert.equal(
    vwc.metadata.annotations["cert-manager.io/inject-ca-from"],
    `dco-system/${FULLNAME}-webhook-cert`,
  );
  assert.deepEqual(
    vwc.webhooks.map((w: Obj) => [w.name, w.clientConfig.service.path, w.rules[0].operations]),
    [
      ["vxrdconversionconfig.terasky.com", "/validate-terasky-com-v1alpha1-xrdconversionconfig", [
        "CREATE",
        "UPDATE",
      ]],
      ["vcrdconversionconfig.terasky.com", "/validate-terasky-com-v1alpha1-crdconversionconfig", [
        "CREATE",
        "UPDATE",
      ]],
      [
        "vconversionwebhookserver.terasky.com",
        "/validate-terasky-com-v1alpha1-conversionwebhookserver",
        ["CREATE", "UPDATE", "DELETE"],
      ],
    ],
  );
  for (const w of vwc.webhooks) {
    assert.equal(w.failurePolicy, "Fail");
    assert.equal(w.sideEffects, "None");
    assert.deepEqual(w.admissionReviewVersions, ["v1"]);
    assert.equal(w.clientConfig.service.name, `${FULLNAME}-webhook-service`);
    assert.equal(w.clientConfig.service.namespace, "dco-system");
    assert.equal(w.clientConfig.caBundle, undefined);
  }
  const cert = find(objs, "Certificate", `${FULLNAME}-webhook-cert`);
  assert.equal(cert.spec.secretName, `${FULLNAME}-webhook-cert`);
  assert.deepEqual(cert.spec.dnsNames, [
    `${FULLNAME}-webhook-service.dco-system.svc`,
    `${FULLNAME}-webhook-service.dco-system.svc.cluster.local`,
  ]);
  assert.deepEqual(cert.spec.issuerRef, {
    name: `${FULLNAME}-selfsigned-issuer`,
    kind: "ClusterIssuer",
  });

  // cert-manager off with a mode where the manager does not issue the admission certificate:
  // the user's Secret, mounted, and the caBundle value.
  const off = await render({
    "certManager.enabled": "false",
    "certificates.mode": "existing-secret",
    "admissionWebhook.caBundle": "Q0EK",
    "admissionWebhook.failurePolicy": "Ignore",
  });
  assert.equal(all(off, "Certificate").length, 0);
  assert.equal(all(off, "ClusterIssuer").length, 0);
  const vwcOff = find(
    off,
    "ValidatingWebhookConfiguration",
    `${FULLNAME}-validating-webhook-configuration`,
  );
  assert.equal(vwcOff.metadata.annotations, undefined);
  for (const w of vwcOff.webhooks) {
    assert.equal(w.clientConfig.caBundle, "Q0EK");
    assert.equal(w.failurePolicy, "Ignore");
  }
  // The manager still mounts the (user-provided) Secret.
  assert.ok(managerContainer(off).volumeMounts.some((m: Obj) => m.name === "webhook-cert"));
  assert.ok(!managerContainer(off).args.some((a: string) => a.startsWith("--admission-")));

  const noAdmission = await render({ "admissionWebhook.enabled": "false" });
  assert.equal(all(noAdmission, "ValidatingWebhookConfiguration").length, 0);
  assert.equal(all(noAdmission, "Certificate").length, 0);
  assert.ok(
    !managerContainer(noAdmission).volumeMounts.some((m: Obj) => m.name === "webhook-cert"),
  );
});

Deno.test("chart: without cert-manager, auto/builtin make the manager issue the admission certificate", async () => {
  const vwcName = `${FULLNAME}-validating-webhook-configuration`;
  const selfIssuedArgs = [
    `--admission-cert-secret=${FULLNAME}-webhook-cert`,
    `--admission-service=${FULLNAME}-webhook-service`,
    `--admission-webhook-configuration=${vwcName}`,
    `--admission-mutating-webhook-configuration=${FULLNAME}-mutating-webhook-configuration`,
  ];
  const vwcRule = (objs: Obj[]) =>
    (find(objs, "ClusterRole", `${FULLNAME}-manager-role`).rules as Obj[]).filter((r) =>
      r.resources.includes("validatingwebhookconfigurations") && r.resourceNames
    );
  for (const mode of ["auto", "builtin"]) {
    const objs = await render({
      "certManager.enabled": "false",
      "certificates.mode": mode,
      // Ignored: the manager sets the caBundle.
      "admissionWebhook.caBundle": "Q0EK",
    });
    const c = managerContainer(objs);
    assert.deepEqual(c.args.filter((a: string) => a.startsWith("--admission-")), selfIssuedArgs);
    // Read through the API: neither mounted nor required.
    assert.ok(!c.volumeMounts.some((m: Obj) => m.name === "webhook-cert"), mode);
    const pod = find(objs, "Deployment", `${FULLNAME}-manager`).spec.template.spec;
    assert.ok(!pod.volumes.some((v: Obj) => v.name === "webhook-cert"), mode);
    const vwc = find(objs, "ValidatingWebhookConfiguration", vwcName);
    assert.equal(vwc.metadata.annotations, undefined);
    assert.equal(vwc.webhooks.length, 3);
    for (const w of vwc.webhooks) assert.equal(w.clientConfig.caBundle, undefined, mode);
    assert.equal(all(objs, "Certificate").length, 0);
    // RBAC: get/patch on exactly the chart's VWC; the Secret through the namespaced Role (create
    // cannot be limited by name) and the ClusterRole's get.
    assert.deepEqual(vwcRule(objs), [{
      apiGroups: ["admissionregistration.k8s.io"],
      resources: ["validatingwebhookconfigurations"],
      resourceNames: [vwcName],
      verbs: ["get", "patch"],
    }]);
    const role = find(objs, "Role", `${FULLNAME}-manager`);
    assert.equal(role.metadata.namespace, "dco-system");
    assert.deepEqual(
      (role.rules as Obj[]).filter((r) => r.resources.includes("secrets")),
      [
        {
          apiGroups: [""],
          resources: ["secrets"],
          resourceNames: ["dco-webhook-ca", `${FULLNAME}-webhook-cert`],
          verbs: ["get", "update"],
        },
        { apiGroups: [""], resources: ["secrets"], verbs: ["create"] },
      ],
    );
    assert.equal(
      ruleFor(find(objs, "ClusterRole", `${FULLNAME}-manager-role`), "", "secrets"),
      undefined,
    );
  }
  // Not with cert-manager (the Certificate + CA injection), nor in the other modes, nor without
  // admission.
  for (
    const sets of [
      {},
      { "certManager.enabled": "false", "certificates.mode": "cert-manager" },
      { "certManager.enabled": "false", "certificates.mode": "existing-secret" },
      { "certManager.enabled": "false", "admissionWebhook.enabled": "false" },
    ] as Array<Record<string, string>>
  ) {
    const objs = await render(sets);
    const label = JSON.stringify(sets);
    assert.ok(
      !managerContainer(objs).args.some((a: string) => a.startsWith("--admission-")),
      label,
    );
    assert.deepEqual(vwcRule(objs), [], label);
  }
  const linted = await lint({ "certManager.enabled": "false", "certificates.mode": "builtin" });
  assert.equal(linted.code, 0, linted.stdout + linted.stderr);
});

Deno.test("chart: the default ConversionWebhookServer", async () => {
  const cws = find(await render(), "ConversionWebhookServer", "default");
  assert.equal(cws.apiVersion, "terasky.com/v1alpha1");
  assert.deepEqual(cws.spec, {
    default: true,
    namespace: "dco-system",
    replicas: 2,
    image: {
      repository: "ghcr.io/terasky-oss/declarative-conversion-webhook-server",
      tag: "0.1.0",
      pullPolicy: "IfNotPresent",
    },
    serviceAccountName: `${FULLNAME}-webhook-server`,
    resources: { requests: { cpu: "50m", memory: "64Mi" }, limits: { memory: "256Mi" } },
    certificate: {
      issuerRef: { name: `${FULLNAME}-selfsigned-issuer`, kind: "ClusterIssuer" },
      duration: "2160h",
      renewBefore: "360h",
    },
    service: { type: "ClusterIP", port: 443 },
    podDisruptionBudget: { minAvailable: 1 },
  });

  const tuned = find(
    await render({
      "conversionWebhookServer.autoscaling.enabled": "true",
      "conversionWebhookServer.maxRequestBytes": "1048576",
      "conversionWebhookServer.requestTimeout": "10s",
      "conversionWebhookServer.extraArgs[0]": "--zap-log-level=debug",
      "conversionWebhookServer.rollout.maxSurge": "2",
      "conversionWebhookServer.startupProbe.failureThreshold": "30",
      "conversionWebhookServer.sharding.weight": "3",
      "conversionWebhookServer.cacheSelector.matchLabels.team": "a",
      "certManager.issuerRef.name": "corp-ca",
    }),
    "ConversionWebhookServer",
    "default",
  );
  assert.equal(tuned.spec.replicas, undefined);
  assert.deepEqual(tuned.spec.autoscaling, {
    minReplicas: 2,
    maxReplicas: 10,
    targetCPUUtilizationPercentage: 75,
  });
  assert.deepEqual(tuned.spec.extraArgs, [
    "--max-request-bytes=1048576",
    "--request-timeout=10s",
    "--zap-log-level=debug",
  ]);
  assert.deepEqual(tuned.spec.rollout, { maxSurge: 2 });
  assert.deepEqual(tuned.spec.startupProbe, { failureThreshold: 30 });
  assert.deepEqual(tuned.spec.sharding, { weight: 3 });
  assert.deepEqual(tuned.spec.cacheSelector, { matchLabels: { team: "a" } });
  assert.deepEqual(tuned.spec.certificate.issuerRef, { name: "corp-ca", kind: "ClusterIssuer" });

  const none = await render({ "conversionWebhookServer.create": "false" });
  assert.equal(all(none, "ConversionWebhookServer").length, 0);

  const zero = await template({ "conversionWebhookServer.maxRequestBytes": "0" });
  assert.notEqual(zero.code, 0, "maxRequestBytes=0 must be rejected by the schema");
});

Deno.test("chart: NetworkPolicy on by default: 9443 open, metrics only from the scrape peers", async () => {
  const portsOf = (np: Obj) =>
    Object.fromEntries(np.spec.ingress.map((r: Obj) => [r.ports[0].port, r.from ?? "any"]));
  const defaults = await render();
  const mgr0 = find(defaults, "NetworkPolicy", `${FULLNAME}-manager`);
  assert.equal(mgr0.spec.podSelector.matchLabels["control-plane"], "controller-manager");
  assert.deepEqual(mgr0.spec.policyTypes, ["Ingress"]);
  // No scrape peers named: nothing may reach the metrics ports.
  assert.deepEqual(portsOf(mgr0), { 9443: "any", 8081: "any" });
  const wh0 = find(defaults, "NetworkPolicy", `${FULLNAME}-webhook-server`);
  assert.equal(wh0.metadata.namespace, "dco-system");
  // Every server's pods, not only the chart's.
  assert.deepEqual(wh0.spec.podSelector.matchLabels, {
    "app.kubernetes.io/name": "declarative-conversion-webhook-server",
    "app.kubernetes.io/managed-by": "declarative-conversion-operator",
  });
  assert.deepEqual(portsOf(wh0), { 9443: "any" });

  const objs = await render({
    "networkPolicy.metrics.namespaces[0]": "monitoring",
    "networkPolicy.metrics.allowedPeers[0].podSelector.matchLabels.app": "prom",
    "webhookServers.namespaces[0]": "team-a",
  });
  const peers = [
    { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "monitoring" } } },
    { podSelector: { matchLabels: { app: "prom" } } },
  ];
  assert.deepEqual(portsOf(find(objs, "NetworkPolicy", `${FULLNAME}-manager`)), {
    9443: "any",
    8081: "any",
    8080: peers,
  });
  const whs = all(objs, "NetworkPolicy").filter((n) =>
    n.metadata.name === `${FULLNAME}-webhook-server`
  );
  assert.deepEqual(whs.map((n) => n.metadata.namespace).sort(), ["dco-system", "team-a"]);
  for (const wh of whs) assert.deepEqual(portsOf(wh), { 9443: "any", 8443: peers });
  const noMetrics = find(
    await render({ "networkPolicy.metrics.namespaces[0]": "m", "metrics.enabled": "false" }),
    "NetworkPolicy",
    `${FULLNAME}-manager`,
  );
  assert.deepEqual(noMetrics.spec.ingress.map((r: Obj) => r.ports[0].port), [9443, 8081]);
  assert.equal(
    all(await render({ "networkPolicy.enabled": "false" }), "NetworkPolicy").length,
    0,
  );
});

Deno.test("chart: commonLabels and podLabels drop the reserved keys", async () => {
  const objs = await render({
    "commonLabels.team": "platform",
    "commonLabels.control-plane": "hijack",
    "manager.podLabels.tier": "ops",
    "manager.podLabels.control-plane": "hijack",
  });
  for (const o of objs) {
    assert.equal(o.metadata.labels.team, "platform", `${o.kind}/${o.metadata.name}`);
    assert.equal(o.metadata.labels["app.kubernetes.io/instance"], "rel");
  }
  const d = find(objs, "Deployment", `${FULLNAME}-manager`);
  assert.equal(d.metadata.labels["control-plane"], "controller-manager");
  assert.equal(d.spec.template.metadata.labels.tier, "ops");
  assert.equal(d.spec.template.metadata.labels["control-plane"], "controller-manager");
});

Deno.test("chart: values.schema.json rejects unknown keys (top level and in a block)", async () => {
  for (const cmd of ["template", "lint"]) {
    const args = cmd === "template" ? ["template", "rel", CHART] : ["lint", CHART];
    const top = await helm(
      ...args,
      "--kube-version",
      KUBE_VERSION,
      "--set",
      "managr.replicaCount=2",
    );
    assert.notEqual(top.code, 0, `${cmd} must fail`);
    const topOut = top.stdout + top.stderr;
    assert.match(topOut, /schema/);
    assert.match(topOut, /additional properties 'managr' not allowed/);
    const nested = await helm(
      ...args,
      "--kube-version",
      KUBE_VERSION,
      "--set",
      "manager.replicas=2",
    );
    assert.notEqual(nested.code, 0, `${cmd} must fail`);
    assert.match(
      nested.stdout + nested.stderr,
      /\/manager.*additional properties 'replicas' not allowed/,
    );
  }
});

// ---------------------------------------------------------------------------------------------
// monitoring: ServiceMonitors, PrometheusRule, dashboards
// (docs/observability.md#scraping-alerts-and-dashboards-from-the-chart)

const MONITORING_ON: Record<string, string> = {
  "metrics.serviceMonitor.enabled": "true",
  "metrics.prometheusRule.enabled": "true",
  "dashboards.enabled": "true",
};
const MONITORING_KINDS = ["ServiceMonitor", "PrometheusRule", "ConfigMap"];

function monitoringObjects(objs: Obj[]): string[] {
  return objs.filter((o) => MONITORING_KINDS.includes(o.kind)).map((o) =>
    `${o.kind}/${o.metadata.name}`
  ).sort();
}

function alertRules(objs: Obj[], name = FULLNAME): Record<string, Obj> {
  const pr = find(objs, "PrometheusRule", name);
  return Object.fromEntries(
    pr.spec.groups.flatMap((g: Obj) => g.rules).map((r: Obj) => [r.alert, r]),
  );
}

Deno.test("chart: monitoring objects render only when metrics.enabled and their own gate are on", async () => {
  assert.deepEqual(monitoringObjects(await render()), []);
  assert.deepEqual(
    monitoringObjects(await render({ ...MONITORING_ON, "metrics.enabled": "false" })),
    [],
  );
  assert.deepEqual(monitoringObjects(await render(MONITORING_ON)), [
    `ConfigMap/${FULLNAME}-dashboard-conversion-overview`,
    `ConfigMap/${FULLNAME}-dashboard-platform-stability`,
    `ConfigMap/${FULLNAME}-dashboard-target-detail`,
    `PrometheusRule/${FULLNAME}`,
    `ServiceMonitor/${FULLNAME}-manager`,
    `ServiceMonitor/${FULLNAME}-webhook-server`,
  ]);
  assert.deepEqual(
    monitoringObjects(await render({ "metrics.serviceMonitor.enabled": "true" })),
    [`ServiceMonitor/${FULLNAME}-manager`, `ServiceMonitor/${FULLNAME}-webhook-server`],
  );
  assert.deepEqual(
    monitoringObjects(await render({ "metrics.prometheusRule.enabled": "true" })),
    [`PrometheusRule/${FULLNAME}`],
  );
  assert.deepEqual(
    monitoringObjects(await render({ "dashboards.enabled": "true" })),
    [
      `ConfigMap/${FULLNAME}-dashboard-conversion-overview`,
      `ConfigMap/${FULLNAME}-dashboard-platform-stability`,
      `ConfigMap/${FULLNAME}-dashboard-target-detail`,
    ],
  );
  for (const o of (await render(MONITORING_ON)).filter((x) => MONITORING_KINDS.includes(x.kind))) {
    assert.equal(o.metadata.namespace, "dco-system", `${o.kind}/${o.metadata.name}`);
    assert.equal(o.metadata.labels["app.kubernetes.io/instance"], "rel");
  }
});

Deno.test("chart: ServiceMonitors scrape the manager and every webhook-server, with targetLabels", async () => {
  const objs = await render({
    "metrics.serviceMonitor.enabled": "true",
    "metrics.serviceMonitor.interval": "15s",
    "metrics.serviceMonitor.labels.release": "kube-prometheus",
    "metrics.serviceMonitor.labels.app\\.kubernetes\\.io/name": "hijack",
  });
  const svc = find(objs, "Service", `${FULLNAME}-manager-metrics`);
  const mgr = find(objs, "ServiceMonitor", `${FULLNAME}-manager`);
  assert.equal(mgr.apiVersion, "monitoring.coreos.com/v1");
  // The selector picks the manager metrics Service (and not the admission Service).
  for (const [k, v] of Object.entries(mgr.spec.selector.matchLabels)) {
    assert.equal(svc.metadata.labels[k], v, `manager metrics Service carries ${k}`);
  }
  const admission = find(objs, "Service", `${FULLNAME}-webhook-service`);
  assert.ok(
    Object.entries(mgr.spec.selector.matchLabels).some(([k, v]) =>
      admission.metadata.labels[k] !== v
    ),
    "the admission Service is not selected",
  );
  assert.deepEqual(mgr.spec.namespaceSelector, { matchNames: ["dco-system"] });
  assert.ok(svc.spec.ports.some((p: Obj) => p.name === "metrics" && p.port === 8080));
  const wh = find(objs, "ServiceMonitor", `${FULLNAME}-webhook-server`);
  // What the manager puts on every webhook-server Service (src/manager/server/).
  const childLabels = podLabels("any-cws");
  assert.deepEqual(wh.spec.selector.matchLabels, {
    "app.kubernetes.io/name": childLabels["app.kubernetes.io/name"],
    "app.kubernetes.io/managed-by": childLabels["app.kubernetes.io/managed-by"],
  });
  assert.deepEqual(wh.spec.namespaceSelector, { any: true });
  for (const sm of [mgr, wh]) {
    assert.deepEqual(sm.spec.targetLabels, ["app.kubernetes.io/name"]);
    assert.deepEqual(sm.spec.endpoints, [{
      port: "metrics",
      scheme: "http",
      path: "/metrics",
      interval: "15s",
    }]);
    assert.equal(sm.metadata.labels.release, "kube-prometheus");
    assert.equal(sm.metadata.labels["app.kubernetes.io/name"], FULLNAME, "reserved key kept");
  }
});

Deno.test("chart: PrometheusRule alert thresholds and durations follow values", async () => {
  const def = alertRules(await render({ "metrics.prometheusRule.enabled": "true" }));
  assert.equal(Object.keys(def).length, 17);
  assert.match(def.InformerCacheStale.expr, /dco_informer_last_sync_timestamp_seconds > 900$/);
  assert.equal(def.InformerCacheStale.for, "5m");
  assert.match(def.InformerWatchErrors.expr, /\{reason!="Expired"\}\[5m\]\) > 0$/);
  assert.equal(def.InformerWatchErrors.for, "15m");
  const sel =
    'app_kubernetes_io_name=~"declarative-conversion-operator|declarative-conversion-webhook-server"';
  assert.ok(def.ControllerWorkqueueBacklog.expr.includes(`workqueue_depth{${sel}}`));
  assert.match(def.ControllerWorkqueueBacklog.expr, /> 10$/);
  assert.equal(def.ControllerWorkqueueBacklog.for, "15m");
  assert.ok(
    def.ControllerReconcileErrors.expr.includes(
      `controller_runtime_reconcile_errors_total{${sel}}[5m]`,
    ),
  );
  assert.match(def.ControllerReconcileErrors.expr, /> 0\.1$/);
  assert.equal(def.ControllerReconcileErrors.for, "15m");
  assert.equal(def.ConversionAppliedButNotPropagated.for, "5m");

  const objs = await render({
    "metrics.prometheusRule.enabled": "true",
    "metrics.prometheusRule.labels.release": "kube-prometheus",
    "metrics.prometheusRule.workqueueDepthThreshold": "25",
    "metrics.prometheusRule.workqueueBacklogFor": "30m",
    "metrics.prometheusRule.reconcileErrorRateThreshold": "0.5",
    "metrics.prometheusRule.propagationLagFor": "20m",
  });
  assert.equal(find(objs, "PrometheusRule", FULLNAME).metadata.labels.release, "kube-prometheus");
  const tuned = alertRules(objs);
  assert.match(tuned.ControllerWorkqueueBacklog.expr, /> 25$/);
  assert.equal(tuned.ControllerWorkqueueBacklog.for, "30m");
  assert.match(
    tuned.ControllerWorkqueueBacklog.annotations.description,
    /for 30m \(threshold 25\)/,
  );
  assert.match(tuned.ControllerReconcileErrors.expr, /> 0\.5$/);
  assert.equal(tuned.ControllerReconcileErrors.for, "15m", "fixed");
  assert.equal(tuned.ConversionAppliedButNotPropagated.for, "20m");
  // Nothing else changes.
  for (const [name, r] of Object.entries(def)) {
    if (
      ![
        "ControllerWorkqueueBacklog",
        "ControllerReconcileErrors",
        "ConversionAppliedButNotPropagated",
      ]
        .includes(name)
    ) assert.deepEqual(tuned[name], r, name);
  }
  // nameOverride renames the manager's app.kubernetes.io/name, so the selector follows it.
  const renamed = alertRules(
    await render({ "metrics.prometheusRule.enabled": "true", "nameOverride": "dco" }),
    "dco",
  );
  assert.ok(
    renamed.ControllerWorkqueueBacklog.expr.includes(
      'app_kubernetes_io_name=~"dco|declarative-conversion-webhook-server"',
    ),
  );
});

Deno.test("chart: dashboards carry the sidecar label and every panel has a description", async () => {
  const objs = await render({ "dashboards.enabled": "true", "dashboards.labels.team": "sre" });
  const cm = find(objs, "ConfigMap", `${FULLNAME}-dashboard-conversion-overview`);
  assert.equal(cm.metadata.labels.grafana_dashboard, "1");
  assert.equal(cm.metadata.labels.team, "sre");
  assert.deepEqual(Object.keys(cm.data), ["conversion-overview.json"]);
  const dash = JSON.parse(cm.data["conversion-overview.json"]);
  assert.equal(dash.uid, "dco-conversion-overview");
  assert.deepEqual(dash.tags, ["conversion"]);
  assert.ok(
    dash.templating.list.some((v: Obj) => v.name === "datasource" && v.type === "datasource"),
  );
  const panels = dash.panels as Obj[];
  const ids = new Set<number>();
  for (const p of panels) {
    assert.ok(typeof p.description === "string" && p.description.length > 20, `${p.title}`);
    assert.ok(!ids.has(p.id), `duplicate panel id ${p.id}`);
    ids.add(p.id);
    for (const t of p.targets ?? []) {
      assert.ok(t.expr, `${p.title} has a query`);
      assert.doesNotMatch(t.expr, /__[A-Z_]+__/, `${p.title}: placeholder left`);
    }
  }
  const rows = panels.filter((p) => p.type === "row").map((p) => p.title);
  assert.deepEqual(rows, ["Overview", "Controller health"]);
  const start = panels.findIndex((p) => p.title === "Controller health");
  const health = panels.slice(start + 1);
  const byTitle = Object.fromEntries(health.map((p) => [p.title, p]));
  const sel =
    'app_kubernetes_io_name=~"declarative-conversion-operator|declarative-conversion-webhook-server"';
  for (
    const [title, metric] of [
      ["Workqueue depth", "workqueue_depth"],
      ["Workqueue add rate", "workqueue_adds_total"],
      ["Work duration p50 / p99", "workqueue_work_duration_seconds_bucket"],
      ["Reconcile error rate", "controller_runtime_reconcile_errors_total"],
    ]
  ) {
    const p = byTitle[title];
    assert.ok(p, `controller-health panel ${title}`);
    for (const t of p.targets) {
      assert.ok(t.expr.includes(`${metric}{${sel}}`), `${title}: ${t.expr}`);
      assert.match(t.expr, /by \(job, controller/);
    }
  }
  assert.deepEqual(
    byTitle["Work duration p50 / p99"].targets.map((t: Obj) => t.expr.slice(0, 24)),
    ["histogram_quantile(0.5, ", "histogram_quantile(0.99,"],
  );
  // Depth and add rate are read against each other.
  assert.match(byTitle["Workqueue depth"].description, /add rate/);
  assert.match(byTitle["Workqueue add rate"].description, /depth/);
  const wake = panels.find((p) =>
    p.targets?.some((t: Obj) => t.expr.includes("dco_operator_wake_total"))
  );
  assert.ok(wake, "a wake-cause panel");
  assert.match(wake.targets[0].expr, /by \([^)]*cause[^)]*\)/);
  // The sidecar label's value can be changed.
  const custom = find(
    await render({ "dashboards.enabled": "true" }, "dco-system", [
      "--set-string",
      "dashboards.labels.grafana_dashboard=true",
    ]),
    "ConfigMap",
    `${FULLNAME}-dashboard-conversion-overview`,
  );
  assert.equal(custom.metadata.labels.grafana_dashboard, "true");
});

Deno.test("chart: values.schema.json accepts the monitoring keys and rejects unknown ones", async () => {
  await render({
    ...MONITORING_ON,
    "metrics.serviceMonitor.interval": "1m",
    "metrics.serviceMonitor.labels.release": "p",
    "metrics.prometheusRule.labels.release": "p",
    "metrics.prometheusRule.propagationLagFor": "1h30m",
    "metrics.prometheusRule.workqueueDepthThreshold": "0",
    "metrics.prometheusRule.workqueueBacklogFor": "90s",
    "metrics.prometheusRule.reconcileErrorRateThreshold": "2.5",
    "dashboards.labels.team": "sre",
  });
  for (
    const [key, value, want] of [
      ["metrics.serviceMonitor.scheme", "https", /additional properties 'scheme' not allowed/],
      ["metrics.prometheusRule.severity", "page", /additional properties 'severity' not allowed/],
      ["metrics.grafana", "true", /additional properties 'grafana' not allowed/],
      ["dashboards.folder", "x", /additional properties 'folder' not allowed/],
      ["metrics.prometheusRule.workqueueBacklogFor", "15", /workqueueBacklogFor/],
      ["metrics.prometheusRule.propagationLagFor", "soon", /propagationLagFor/],
      ["metrics.serviceMonitor.interval", "30", /interval/],
      ["metrics.prometheusRule.workqueueDepthThreshold", "-1", /workqueueDepthThreshold/],
      ["metrics.prometheusRule.reconcileErrorRateThreshold", "-0.1", /reconcileErrorRateThreshold/],
    ] as Array<[string, string, RegExp]>
  ) {
    const r = await template({ [key]: value });
    assert.notEqual(r.code, 0, `${key}=${value} must be rejected`);
    assert.match(r.stdout + r.stderr, want, `${key}=${value}`);
  }
});
