import assert from "node:assert/strict";
import { type ConversionWebhookServer, ConversionWebhookServerSchema } from "../../src/api/mod.ts";
import {
  buildCertificate,
  buildDeployment,
  buildHPA,
  buildPDB,
  buildService,
  cacheSelectorJSON,
  containerEnv,
  DEFAULT_WEBHOOK_SERVER_IMAGE,
  derivedV8Flags,
  expectedListeners,
  heapLimitMiB,
  managedFlagsIn,
  MISSING_ISSUER_MESSAGE,
  resolveImage,
  serverChildren,
  type ServerChildSettings,
  type ServerReadiness,
  serverReadiness,
  ServerSpecError,
  servingDnsNames,
  V8_HEAP_LIMIT_FRACTION,
} from "../../src/manager/server/mod.ts";
import { parseWebhookServerFlags } from "../../src/webhook/flags.ts";
import type { KubeObject } from "../../src/kube/mod.ts";

const SETTINGS: ServerChildSettings = {
  operatorNamespace: "dco-system",
  enableXrdSupport: true,
  enableCrdSupport: true,
};

const LABELS = {
  "app.kubernetes.io/name": "declarative-conversion-webhook-server",
  "app.kubernetes.io/instance": "alpha",
  "app.kubernetes.io/managed-by": "declarative-conversion-operator",
};

const OWNER = {
  apiVersion: "terasky.com/v1alpha1",
  kind: "ConversionWebhookServer",
  name: "alpha",
  uid: "uid-1",
  controller: true,
  blockOwnerDeletion: true,
};

/** A CWS as the apiserver would return it: parsed through the schema (defaults applied). */
function cws(spec: Record<string, unknown> = {}, name = "alpha"): ConversionWebhookServer {
  return ConversionWebhookServerSchema.parse({
    apiVersion: "terasky.com/v1alpha1",
    kind: "ConversionWebhookServer",
    metadata: { name, uid: "uid-1", generation: 3 },
    spec: { certificate: { issuerRef: { name: "ca" } }, ...spec },
  });
}

const FULL_SPEC = {
  default: true,
  namespace: "webhooks",
  replicas: 5,
  autoscaling: { minReplicas: 3, maxReplicas: 9, targetCPUUtilizationPercentage: 60 },
  image: { repository: "reg.example/dco-ws", tag: "v1.2.3", pullPolicy: "Always" },
  resources: { requests: { cpu: "100m", memory: "128Mi" }, limits: { memory: "512Mi" } },
  nodeSelector: { "kubernetes.io/os": "linux" },
  tolerations: [{ key: "dedicated", operator: "Equal", value: "dco", effect: "NoSchedule" }],
  affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: {} } },
  priorityClassName: "system-cluster-critical",
  topologySpreadConstraints: [{
    maxSkew: 2,
    topologyKey: "topology.kubernetes.io/zone",
    whenUnsatisfiable: "DoNotSchedule",
  }],
  serviceAccountName: "custom-sa",
  extraArgs: ["--max-request-bytes=1048576", "--request-timeout", "10s", "--shutdown-timeout=20s"],
  extraEnv: [{ name: "LOG_LEVEL", value: "debug" }],
  extraVolumes: [{ name: "extra", configMap: { name: "cm" } }],
  extraVolumeMounts: [{ name: "extra", mountPath: "/extra", readOnly: true }],
  podLabels: { team: "platform", "app.kubernetes.io/name": "hijack" },
  podAnnotations: { "prometheus.io/scrape": "true" },
  cacheSelector: {
    matchLabels: { tier: "b", dco: "yes" },
    matchExpressions: [{ key: "env", operator: "In", values: ["prod"] }],
  },
  certificate: {
    issuerRef: { name: "corp-ca", kind: "Issuer" },
    dnsNames: ["alpha.example"],
    duration: "2160h",
    renewBefore: "360h",
  },
  service: { type: "NodePort", port: 8444, annotations: { "a/b": "c" } },
  podDisruptionBudget: { minAvailable: 1 },
  startupProbe: { enabled: true, periodSeconds: 2, failureThreshold: 90 },
  sharding: { weight: 3 },
  rollout: {
    preStopSleepSeconds: 10,
    terminationGracePeriodSeconds: 60,
    maxUnavailable: "25%",
    maxSurge: 2,
    defaultTopologySpread: true,
  },
};

// ---------------------------------------------------------------------------------------------
// Default CWS

Deno.test("default CWS: Deployment metadata, selector, replicas, strategy", () => {
  const d = buildDeployment(cws(), SETTINGS);
  assert.equal(d.apiVersion, "apps/v1");
  assert.equal(d.kind, "Deployment");
  assert.deepEqual(d.metadata, meta("alpha-webhook-server"));
  assert.equal(d.spec.replicas, 2);
  assert.deepEqual(d.spec.selector, { matchLabels: LABELS });
  assert.deepEqual(d.spec.strategy, {
    type: "RollingUpdate",
    rollingUpdate: { maxUnavailable: 0, maxSurge: 1 },
  });
  assert.deepEqual(d.spec.template.metadata, { labels: LABELS });
});

/** The managed flags of server `alpha` with both kinds enabled, in their rendered order. */
const MANAGED_ARGS = [
  "--webhook-server-name=alpha",
  "--tls-cert-dir=/tls",
  "--conversion-bind-address=:9443",
  "--metrics-bind-address=:8443",
  "--enable-xrd-support=true",
  "--enable-crd-support=true",
];

Deno.test("default CWS: container args, ports, mounts, image", () => {
  const c = buildDeployment(cws(), SETTINGS).spec.template.spec.containers[0];
  assert.equal(c.name, "webhook-server");
  assert.equal(c.image, DEFAULT_WEBHOOK_SERVER_IMAGE);
  assert.equal(c.imagePullPolicy, undefined);
  assert.deepEqual(c.args, MANAGED_ARGS);
  assert.deepEqual(c.ports, [
    { name: "conversion", containerPort: 9443, protocol: "TCP" },
    { name: "metrics", containerPort: 8443, protocol: "TCP" },
  ]);
  assert.deepEqual(c.volumeMounts, [
    { name: "tls", mountPath: "/tls", readOnly: true },
    { name: "tmp", mountPath: "/tmp" },
  ]);
  assert.equal(c.resources, undefined);
});

Deno.test("default CWS: probes (readiness, liveness, startup on /readyz 5s x 60), timeouts set", () => {
  const c = buildDeployment(cws(), SETTINGS).spec.template.spec.containers[0];
  const http = (path: string) => ({ path, port: 8443, scheme: "HTTP" });
  assert.deepEqual(c.readinessProbe, {
    httpGet: http("/readyz"),
    periodSeconds: 5,
    timeoutSeconds: 2,
    failureThreshold: 3,
  });
  assert.deepEqual(c.livenessProbe, {
    httpGet: http("/healthz"),
    periodSeconds: 10,
    timeoutSeconds: 5,
    failureThreshold: 3,
  });
  assert.deepEqual(c.startupProbe, {
    httpGet: http("/readyz"),
    periodSeconds: 5,
    timeoutSeconds: 2,
    failureThreshold: 60,
  });
});

Deno.test("default CWS: preStop sleep 5, grace 45, env = downward API only", () => {
  const d = buildDeployment(cws(), SETTINGS);
  const pod = d.spec.template.spec;
  const c = pod.containers[0];
  assert.deepEqual(c.lifecycle, { preStop: { sleep: { seconds: 5 } } });
  assert.equal(pod.terminationGracePeriodSeconds, 45);
  const field = (fieldPath: string) => ({ fieldRef: { apiVersion: "v1", fieldPath } });
  assert.deepEqual(c.env, [
    { name: "POD_NAME", valueFrom: field("metadata.name") },
    { name: "POD_NAMESPACE", valueFrom: field("metadata.namespace") },
    { name: "POD_UID", valueFrom: field("metadata.uid") },
  ]);
});

Deno.test("default CWS: pod spec, volumes, default topology spread", () => {
  const pod = buildDeployment(cws(), SETTINGS).spec.template.spec;
  assert.equal(pod.serviceAccountName, "declarative-conversion-webhook-server");
  assert.deepEqual(pod.volumes, [
    { name: "tls", secret: { secretName: "alpha-webhook-server-tls" } },
    { name: "tmp", emptyDir: {} },
  ]);
  assert.deepEqual(pod.topologySpreadConstraints, [{
    maxSkew: 1,
    topologyKey: "kubernetes.io/hostname",
    whenUnsatisfiable: "ScheduleAnyway",
    labelSelector: { matchLabels: LABELS },
  }]);
  for (const k of ["nodeSelector", "tolerations", "affinity", "priorityClassName"] as const) {
    assert.equal(pod[k], undefined, k);
  }
});

Deno.test("security context is PSS restricted", () => {
  for (const server of [cws(), cws(FULL_SPEC)]) {
    const pod = buildDeployment(server, SETTINGS).spec.template.spec;
    assert.deepEqual(pod.securityContext, {
      runAsNonRoot: true,
      seccompProfile: { type: "RuntimeDefault" },
    });
    assert.deepEqual(pod.containers[0].securityContext, {
      runAsNonRoot: true,
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ["ALL"] },
      seccompProfile: { type: "RuntimeDefault" },
    });
    assert.ok(!("runAsUser" in pod.securityContext));
    assert.ok(!("runAsGroup" in pod.containers[0].securityContext));
  }
});

/** The metadata every child of `alpha` carries in the operator namespace. */
function meta(name: string, namespace = "dco-system") {
  return { name, namespace, labels: LABELS, ownerReferences: [OWNER] };
}

/** `got` is exactly the child `apiVersion`/`kind` named `name` of `alpha`, with this spec. */
function assertChild(
  got: unknown,
  type: { apiVersion: string; kind: string },
  name: string,
  spec: unknown,
): void {
  assert.deepEqual(got, { ...type, metadata: meta(name), spec });
}

Deno.test("default CWS: Service", () => {
  const type = { apiVersion: "v1", kind: "Service" };
  assertChild(buildService(cws(), SETTINGS), type, "alpha-webhook-server", {
    type: "ClusterIP",
    selector: LABELS,
    ports: [
      { name: "conversion", port: 443, targetPort: 9443, protocol: "TCP" },
      { name: "metrics", port: 8443, targetPort: 8443, protocol: "TCP" },
    ],
  });
});

Deno.test("default CWS: Certificate with the four default dnsNames", () => {
  const type = { apiVersion: "cert-manager.io/v1", kind: "Certificate" };
  assertChild(buildCertificate(cws(), SETTINGS), type, "alpha-webhook-server-cert", {
    secretName: "alpha-webhook-server-tls",
    dnsNames: [
      "alpha-webhook-server",
      "alpha-webhook-server.dco-system",
      "alpha-webhook-server.dco-system.svc",
      "alpha-webhook-server.dco-system.svc.cluster.local",
    ],
    issuerRef: { name: "ca", kind: "ClusterIssuer" },
  });
});

Deno.test("default CWS: no HPA, no PDB; serverChildren in apply order", () => {
  assert.equal(buildHPA(cws(), SETTINGS), undefined);
  assert.equal(buildPDB(cws(), SETTINGS), undefined);
  const all = serverChildren(cws(), SETTINGS);
  assert.deepEqual(Object.keys(all), ["namespace", "service", "deployment", "certificate"]);
  assert.equal(all.namespace, "dco-system");
  assert.deepEqual(all.deployment, buildDeployment(cws(), SETTINGS));
});

Deno.test("ExistingSecret cert mode renders no Certificate but mounts the same Secret", () => {
  const settings: ServerChildSettings = { ...SETTINGS, certMode: "ExistingSecret" };
  assert.equal(buildCertificate(cws(), settings), undefined);
  const all = serverChildren(cws(), settings);
  assert.equal(all.certificate, undefined);
  assert.deepEqual(all.deployment.spec.template.spec.volumes[0], {
    name: "tls",
    secret: { secretName: "alpha-webhook-server-tls" },
  });
});

Deno.test("Builtin cert mode renders no Certificate; dnsNames default or from the spec", () => {
  const settings: ServerChildSettings = { ...SETTINGS, certMode: "Builtin" };
  assert.equal(buildCertificate(cws(), settings), undefined);
  assert.equal(serverChildren(cws(), settings).certificate, undefined);
  assert.deepEqual(servingDnsNames(cws({ namespace: "wh" }), settings), [
    "alpha-webhook-server",
    "alpha-webhook-server.wh",
    "alpha-webhook-server.wh.svc",
    "alpha-webhook-server.wh.svc.cluster.local",
  ]);
  assert.deepEqual(
    servingDnsNames(cws({ certificate: { dnsNames: ["a.example", "b.example"] } }), settings),
    ["a.example", "b.example"],
  );
  assert.deepEqual(
    servingDnsNames(cws({ certificate: { dnsNames: [] } }), settings)[0],
    "alpha-webhook-server",
  );
});

Deno.test("a CWS without certificate (or issuerRef) decodes; CertManager mode renders none", () => {
  for (const spec of [{ certificate: undefined }, { certificate: { dnsNames: ["x.example"] } }]) {
    const server = ConversionWebhookServerSchema.parse({
      apiVersion: "terasky.com/v1alpha1",
      kind: "ConversionWebhookServer",
      metadata: { name: "alpha", uid: "uid-1" },
      spec,
    });
    assert.equal(buildCertificate(server, SETTINGS), undefined);
    assert.equal(serverChildren(server, SETTINGS).certificate, undefined);
  }
  assert.match(MISSING_ISSUER_MESSAGE, /spec\.certificate\.issuerRef/);
});

Deno.test("feature toggles and the default image come from the operator settings", () => {
  const settings: ServerChildSettings = {
    ...SETTINGS,
    enableXrdSupport: false,
    defaultImage: "reg.local/ws:dev",
  };
  const c = buildDeployment(cws(), settings).spec.template.spec.containers[0];
  assert.equal(c.image, "reg.local/ws:dev");
  assert.ok(c.args.includes("--enable-xrd-support=false"));
  assert.ok(c.args.includes("--enable-crd-support=true"));
});

Deno.test("secure metrics: --metrics-secure and HTTPS probes, from the manager default or the spec", () => {
  const secure: ServerChildSettings = { ...SETTINGS, metricsSecure: true };
  const plain = buildDeployment(cws(), SETTINGS).spec.template.spec.containers[0];
  const cases: Array<[string, ConversionWebhookServer, ServerChildSettings, boolean]> = [
    ["manager default on", cws(), secure, true],
    ["spec on, manager default off", cws({ metrics: { secure: true } }), SETTINGS, true],
    ["spec off wins over the manager default", cws({ metrics: { secure: false } }), secure, false],
    ["spec block without secure: the manager default", cws({ metrics: {} }), secure, true],
    ["neither", cws({ metrics: {} }), SETTINGS, false],
  ];
  for (const [what, server, settings, on] of cases) {
    const c = buildDeployment(server, settings).spec.template.spec.containers[0];
    const scheme = on ? "HTTPS" : "HTTP";
    assert.deepEqual(c.args, on ? [...MANAGED_ARGS, "--metrics-secure=true"] : MANAGED_ARGS, what);
    assert.equal(parseWebhookServerFlags(c.args).metricsSecure, on, what);
    for (const p of [c.readinessProbe, c.livenessProbe, c.startupProbe!]) {
      assert.equal(p.httpGet.scheme, scheme, what);
    }
    // Only the scheme changes: paths, port and timings stay.
    const withScheme = (p: typeof c.readinessProbe) => ({
      ...p,
      httpGet: { ...p.httpGet, scheme },
    });
    assert.deepEqual(c.readinessProbe, withScheme(plain.readinessProbe), what);
    assert.deepEqual(c.livenessProbe, withScheme(plain.livenessProbe), what);
    assert.deepEqual(c.startupProbe, withScheme(plain.startupProbe!), what);
  }
  // The secure flag goes before extraArgs, which may not set it.
  const args = buildDeployment(cws({ extraArgs: ["--request-timeout=5s"] }), secure)
    .spec.template.spec.containers[0].args;
  assert.deepEqual(args.slice(-2), ["--metrics-secure=true", "--request-timeout=5s"]);
  assert.throws(
    () => buildDeployment(cws({ extraArgs: ["--metrics-secure"] }), SETTINGS),
    (e: unknown) => e instanceof ServerSpecError && /--metrics-secure/.test(e.message),
  );
});

Deno.test("the rendered args parse with the webhook server's own flag parser", () => {
  for (const server of [cws(), cws(FULL_SPEC)]) {
    const args = buildDeployment(server, SETTINGS).spec.template.spec.containers[0].args;
    const flags = parseWebhookServerFlags(args);
    assert.equal(flags.webhookServerName, "alpha");
    assert.equal(flags.tlsCertDir, "/tls");
    assert.equal(flags.conversionBindAddress, ":9443");
    assert.equal(flags.metricsBindAddress, ":8443");
  }
  const flags = parseWebhookServerFlags(
    buildDeployment(cws(FULL_SPEC), SETTINGS).spec.template.spec.containers[0].args,
  );
  assert.equal(flags.cacheLabelSelector, "dco=yes,tier=b,env in (prod)");
  assert.equal(flags.maxRequestBytes, 1048576);
  assert.equal(flags.requestTimeoutMs, 10_000);
  assert.equal(flags.shutdownTimeoutMs, 20_000);
});

// ---------------------------------------------------------------------------------------------
// Every option set

Deno.test("full CWS: Deployment metadata, namespace, no replicas under autoscaling, strategy", () => {
  const d = buildDeployment(cws(FULL_SPEC), SETTINGS);
  assert.equal(d.metadata.namespace, "webhooks");
  assert.deepEqual(d.metadata.labels, LABELS);
  assert.deepEqual(d.metadata.ownerReferences, [OWNER]);
  assert.ok(!("replicas" in d.spec));
  assert.deepEqual(d.spec.strategy.rollingUpdate, { maxUnavailable: "25%", maxSurge: 2 });
  assert.deepEqual(d.spec.selector.matchLabels, LABELS);
  assert.deepEqual(d.spec.template.metadata, {
    labels: { ...LABELS, team: "platform" },
    annotations: { "prometheus.io/scrape": "true" },
  });
});

Deno.test("full CWS: container", () => {
  const c = buildDeployment(cws(FULL_SPEC), SETTINGS).spec.template.spec.containers[0];
  assert.equal(c.image, "reg.example/dco-ws:v1.2.3");
  assert.equal(c.imagePullPolicy, "Always");
  assert.deepEqual(c.args, [
    ...MANAGED_ARGS,
    '--cache-label-selector={"matchLabels":{"dco":"yes","tier":"b"},' +
    '"matchExpressions":[{"key":"env","operator":"In","values":["prod"]}]}',
    "--max-request-bytes=1048576",
    "--request-timeout",
    "10s",
    "--shutdown-timeout=20s",
  ]);
  assert.deepEqual(c.resources, FULL_SPEC.resources);
  assert.deepEqual(c.volumeMounts, [
    { name: "tls", mountPath: "/tls", readOnly: true },
    { name: "tmp", mountPath: "/tmp" },
    { name: "extra", mountPath: "/extra", readOnly: true },
  ]);
  assert.deepEqual(c.startupProbe, {
    httpGet: { path: "/readyz", port: 8443, scheme: "HTTP" },
    periodSeconds: 2,
    timeoutSeconds: 2,
    failureThreshold: 90,
  });
  assert.deepEqual(c.lifecycle, { preStop: { sleep: { seconds: 10 } } });
  assert.deepEqual(c.env.map((e) => e.name), [
    "POD_NAME",
    "POD_NAMESPACE",
    "POD_UID",
    "DENO_V8_FLAGS",
    "LOG_LEVEL",
  ]);
  assert.deepEqual(c.env[3], {
    name: "DENO_V8_FLAGS",
    value: "--max-old-space-size=384,--max-semi-space-size=4,--initial-old-space-size=24",
  });
  assert.deepEqual(c.env[4], { name: "LOG_LEVEL", value: "debug" });
});

Deno.test("full CWS: pod spec", () => {
  const pod = buildDeployment(cws(FULL_SPEC), SETTINGS).spec.template.spec;
  assert.equal(pod.serviceAccountName, "custom-sa");
  assert.equal(pod.terminationGracePeriodSeconds, 60);
  assert.deepEqual(pod.nodeSelector, FULL_SPEC.nodeSelector);
  assert.deepEqual(pod.tolerations, FULL_SPEC.tolerations);
  assert.deepEqual(pod.affinity, FULL_SPEC.affinity);
  assert.equal(pod.priorityClassName, "system-cluster-critical");
  // User constraints replace the default spread; never merged.
  assert.deepEqual(pod.topologySpreadConstraints, FULL_SPEC.topologySpreadConstraints);
  assert.deepEqual(pod.volumes, [
    { name: "tls", secret: { secretName: "alpha-webhook-server-tls" } },
    { name: "tmp", emptyDir: {} },
    { name: "extra", configMap: { name: "cm" } },
  ]);
});

Deno.test("full CWS: Service, Certificate, HPA, PDB", () => {
  const all = serverChildren(cws(FULL_SPEC), SETTINGS);
  assert.equal(all.namespace, "webhooks");
  assert.deepEqual(all.service.metadata, {
    ...meta("alpha-webhook-server", "webhooks"),
    annotations: { "a/b": "c" },
  });
  assert.equal(all.service.spec.type, "NodePort");
  assert.deepEqual(all.service.spec.ports[0], {
    name: "conversion",
    port: 8444,
    targetPort: 9443,
    protocol: "TCP",
  });
  assert.deepEqual(all.certificate, {
    apiVersion: "cert-manager.io/v1",
    kind: "Certificate",
    metadata: meta("alpha-webhook-server-cert", "webhooks"),
    spec: {
      secretName: "alpha-webhook-server-tls",
      dnsNames: ["alpha.example"],
      issuerRef: { name: "corp-ca", kind: "Issuer" },
      duration: "2160h",
      renewBefore: "360h",
    },
  });
  assert.deepEqual(all.hpa, {
    apiVersion: "autoscaling/v2",
    kind: "HorizontalPodAutoscaler",
    metadata: meta("alpha-webhook-server", "webhooks"),
    spec: {
      scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: "alpha-webhook-server" },
      minReplicas: 3,
      maxReplicas: 9,
      metrics: [{
        type: "Resource",
        resource: { name: "cpu", target: { type: "Utilization", averageUtilization: 60 } },
      }],
    },
  });
  assert.deepEqual(all.pdb, {
    apiVersion: "policy/v1",
    kind: "PodDisruptionBudget",
    metadata: meta("alpha-webhook-server", "webhooks"),
    spec: { selector: { matchLabels: LABELS }, minAvailable: 1 },
  });
});

Deno.test("HPA target defaults to 75 %; PDB maxUnavailable passes through", () => {
  const server = cws({
    autoscaling: { minReplicas: 2, maxReplicas: 4 },
    podDisruptionBudget: { maxUnavailable: "50%" },
  });
  assert.equal(buildHPA(server, SETTINGS)?.spec.metrics[0].resource.target.averageUtilization, 75);
  assert.deepEqual(buildPDB(server, SETTINGS)?.spec, {
    selector: { matchLabels: LABELS },
    maxUnavailable: "50%",
  });
});

Deno.test("startup probe disabled, preStop 0, no default spread", () => {
  const d = buildDeployment(
    cws({
      startupProbe: { enabled: false },
      rollout: { preStopSleepSeconds: 0, defaultTopologySpread: false },
    }),
    SETTINGS,
  );
  const c = d.spec.template.spec.containers[0];
  assert.ok(!("startupProbe" in c));
  assert.ok(!("lifecycle" in c));
  assert.equal(d.spec.template.spec.terminationGracePeriodSeconds, 45);
  assert.ok(!("topologySpreadConstraints" in d.spec.template.spec));
});

Deno.test("replicas: spec value, 0 allowed; empty selector and empty dnsNames mean unset", () => {
  assert.equal(buildDeployment(cws({ replicas: 0 }), SETTINGS).spec.replicas, 0);
  assert.equal(buildDeployment(cws({ replicas: 7 }), SETTINGS).spec.replicas, 7);
  assert.equal(cacheSelectorJSON(cws({ cacheSelector: {} }).spec), undefined);
  assert.equal(
    cacheSelectorJSON(cws({ cacheSelector: { matchLabels: {}, matchExpressions: [] } }).spec),
    undefined,
  );
  const cert = buildCertificate(
    cws({ certificate: { issuerRef: { name: "x" }, dnsNames: [] } }),
    SETTINGS,
  );
  assert.equal(cert?.spec.dnsNames.length, 4);
});

Deno.test("image resolution: digest wins, then tag, repository alone keeps the default", () => {
  const spec = (image: Record<string, string>) => cws({ image }).spec;
  assert.equal(
    resolveImage(spec({ repository: "r", tag: "t", digest: "sha256:ab" })),
    "r@sha256:ab",
  );
  assert.equal(resolveImage(spec({ repository: "r", tag: "t" })), "r:t");
  assert.equal(resolveImage(spec({ repository: "r" })), DEFAULT_WEBHOOK_SERVER_IMAGE);
  assert.equal(resolveImage(spec({ repository: "r" }), "op/default:1"), "op/default:1");
  assert.equal(resolveImage(spec({ tag: "t" })), DEFAULT_WEBHOOK_SERVER_IMAGE);
});

Deno.test("managed flags in extraArgs are found in every form and refuse to render", () => {
  assert.deepEqual(managedFlagsIn(["--webhook-server-name=x"]), ["webhook-server-name"]);
  assert.deepEqual(managedFlagsIn(["--tls-cert-dir", "/x"]), ["tls-cert-dir"]);
  assert.deepEqual(managedFlagsIn(["-enable-xrd-support=false"]), ["enable-xrd-support"]);
  assert.deepEqual(managedFlagsIn(["--enable-crd-support"]), ["enable-crd-support"]);
  // The value of a preceding flag is not a flag name.
  assert.deepEqual(managedFlagsIn(["--request-timeout", "10s", "--max-request-bytes=1"]), []);
  assert.deepEqual(
    managedFlagsIn(["--cache-label-selector={}", "--metrics-bind-address", ":1"]),
    ["cache-label-selector", "metrics-bind-address"],
  );
  assert.deepEqual(managedFlagsIn(undefined), []);
  assert.throws(
    () => buildDeployment(cws({ extraArgs: ["--conversion-bind-address=:1"] }), SETTINGS),
    (e: unknown) => e instanceof ServerSpecError && /--conversion-bind-address/.test(e.message),
  );
});

Deno.test("owner reference needs the CWS name and uid", () => {
  const noUid = cws();
  delete noUid.metadata!.uid;
  assert.throws(() => serverChildren(noUid, SETTINGS), ServerSpecError);
  const children = serverChildren(cws(FULL_SPEC), SETTINGS);
  for (const obj of [children.certificate!, children.service, children.deployment, children.hpa!]) {
    assert.deepEqual(obj.metadata.ownerReferences, [OWNER], obj.kind);
    assert.deepEqual(obj.metadata.labels, LABELS, obj.kind);
  }
});

Deno.test("builders do not alias the input spec", () => {
  const server = cws(FULL_SPEC);
  const before = structuredClone(server);
  const d = buildDeployment(server, SETTINGS);
  d.spec.template.spec.containers[0].env[4].value = "changed";
  (d.spec.template.spec.tolerations![0] as Record<string, unknown>).key = "changed";
  d.spec.template.spec.containers[0].args.push("--x");
  assert.deepEqual(server, before);
});

// ---------------------------------------------------------------------------------------------
// V8 heap limit

Deno.test("heap limit: 0.75 of the memory limit in MiB", () => {
  assert.equal(V8_HEAP_LIMIT_FRACTION, 0.75);
  assert.equal(heapLimitMiB("256Mi"), 192);
  assert.equal(heapLimitMiB("512Mi"), 384);
  assert.equal(heapLimitMiB("1Gi"), 768);
  assert.equal(heapLimitMiB("1G"), 715); // 10^9 × 0.75 / 2^20 = 715.26
  assert.equal(heapLimitMiB(536870912), 384); // plain bytes, as a number
  assert.equal(heapLimitMiB("536870912"), 384);
  assert.equal(heapLimitMiB(undefined), undefined);
  assert.equal(heapLimitMiB("1Ki"), undefined); // < 1 MiB: no flag rather than 0
  assert.equal(heapLimitMiB("garbage"), undefined);
});

Deno.test("heap limit: rendered after the identity env, before extraEnv", () => {
  const env = containerEnv(
    cws({ resources: { limits: { memory: "256Mi" } }, extraEnv: [{ name: "A", value: "1" }] })
      .spec,
  );
  assert.deepEqual(env.slice(3), [
    {
      name: "DENO_V8_FLAGS",
      value: "--max-old-space-size=192,--max-semi-space-size=4,--initial-old-space-size=24",
    },
    { name: "A", value: "1" },
  ]);
});

Deno.test("heap limit: the first old-space limit is split over the listener Workers the pod runs", () => {
  const flags = (spec: Parameters<typeof cws>[0]) =>
    containerEnv(cws(spec).spec).find((e) => e.name === "DENO_V8_FLAGS")?.value;
  // No CPU limit: as many listeners as the heap allows (one per 96 MiB of ceiling), a quarter
  // of the ceiling split over them.
  assert.equal(expectedListeners(cws({}).spec, 192), 2);
  assert.match(
    flags({ resources: { limits: { memory: "256Mi" } } }) ?? "",
    /initial-old-space-size=24$/,
  );
  // A CPU limit: one listener per CPU (rounded up), never more than the heap allows.
  const oneCpu = { resources: { limits: { memory: "256Mi", cpu: "1" } } };
  assert.equal(expectedListeners(cws(oneCpu).spec, 192), 1);
  assert.match(flags(oneCpu) ?? "", /initial-old-space-size=48$/);
  const halfCpu = { resources: { limits: { memory: "256Mi", cpu: "500m" } } };
  assert.equal(expectedListeners(cws(halfCpu).spec, 192), 1);
  const manyCpus = { resources: { limits: { memory: "1Gi", cpu: "16" } } };
  assert.equal(expectedListeners(cws(manyCpus).spec, 768), 8);
  assert.match(flags(manyCpus) ?? "", /initial-old-space-size=24$/);
  // `--conversion-listeners` in extraArgs is what the server runs.
  const flagged = {
    resources: { limits: { memory: "256Mi" } },
    extraArgs: ["--conversion-listeners=1"],
  };
  assert.equal(expectedListeners(cws(flagged).spec, 192), 1);
  assert.match(flags(flagged) ?? "", /initial-old-space-size=48$/);
  assert.equal(derivedV8Flags(192, 4).at(-1), "--initial-old-space-size=12");
});

Deno.test("heap limit: no memory limit → no flag (requests alone do not count)", () => {
  const env = containerEnv(cws({ resources: { requests: { memory: "256Mi" } } }).spec);
  assert.deepEqual(env.map((e) => e.name), ["POD_NAME", "POD_NAMESPACE", "POD_UID"]);
});

Deno.test("heap limit: a user DENO_V8_FLAGS with --max-old-space-size wins", () => {
  const user = { name: "DENO_V8_FLAGS", value: "--max-old-space-size=100" };
  const env = containerEnv(
    cws({ resources: { limits: { memory: "512Mi" } }, extraEnv: [{ name: "A", value: "1" }, user] })
      .spec,
  );
  assert.deepEqual(env.slice(3), [{ name: "A", value: "1" }, user]);
  assert.equal(env.filter((e) => e.name === "DENO_V8_FLAGS").length, 1);
});

Deno.test("heap limit: a user DENO_V8_FLAGS from valueFrom is left alone", () => {
  const user = { name: "DENO_V8_FLAGS", valueFrom: { configMapKeyRef: { name: "c", key: "k" } } };
  const env = containerEnv(
    cws({ resources: { limits: { memory: "512Mi" } }, extraEnv: [user] }).spec,
  );
  assert.deepEqual(env.slice(3), [user]);
});

Deno.test("heap limit: user V8 flags without a heap size keep theirs and gain the limit", () => {
  const env = containerEnv(
    cws({
      resources: { limits: { memory: "512Mi" } },
      extraEnv: [{ name: "DENO_V8_FLAGS", value: "--expose-gc" }],
    }).spec,
  );
  assert.deepEqual(env.slice(3), [
    {
      name: "DENO_V8_FLAGS",
      value:
        "--expose-gc,--max-old-space-size=384,--max-semi-space-size=4,--initial-old-space-size=24",
    },
  ]);
  // Without a memory limit the user's value is untouched.
  const plain = containerEnv(
    cws({ extraEnv: [{ name: "DENO_V8_FLAGS", value: "--expose-gc" }] }).spec,
  );
  assert.deepEqual(plain.slice(3), [{ name: "DENO_V8_FLAGS", value: "--expose-gc" }]);
});

Deno.test("heap limit: a young-generation size of the user's is kept, the rest derived", () => {
  const env = containerEnv(
    cws({
      resources: { limits: { memory: "256Mi" } },
      extraEnv: [{ name: "DENO_V8_FLAGS", value: "--max_semi_space_size=16" }],
    }).spec,
  );
  assert.deepEqual(env.slice(3), [{
    name: "DENO_V8_FLAGS",
    value: "--max_semi_space_size=16,--max-old-space-size=192,--initial-old-space-size=24",
  }]);
});

Deno.test("heap limit: a limit among comma-separated user flags counts as the user's", () => {
  const user = { name: "DENO_V8_FLAGS", value: "--expose-gc,--max-old-space-size=100" };
  const env = containerEnv(
    cws({ resources: { limits: { memory: "512Mi" } }, extraEnv: [user] }).spec,
  );
  assert.deepEqual(env.slice(3), [user]);
});

Deno.test("heap limit: the extended DENO_V8_FLAGS is one Deno accepts and applies", async () => {
  const env = containerEnv(
    cws({
      resources: { limits: { memory: "512Mi" } },
      extraEnv: [{ name: "DENO_V8_FLAGS", value: "--expose-gc" }],
    }).spec,
  );
  const value = env.find((e) => e.name === "DENO_V8_FLAGS")?.value ?? "";
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["eval", "console.log(typeof gc, Deno.memoryUsage().heapTotal >= 0)"],
    env: { DENO_V8_FLAGS: value },
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(out.success, true, new TextDecoder().decode(out.stderr));
  assert.equal(new TextDecoder().decode(out.stdout).trim(), "function true");
});

// ---------------------------------------------------------------------------------------------
// Readiness

function obj(kind: string, name: string, rest: Record<string, unknown> = {}): KubeObject {
  return { kind, metadata: { name, namespace: "dco-system" }, ...rest };
}

const AVAILABLE_DEPLOYMENT = obj("Deployment", "alpha-webhook-server", {
  status: {
    replicas: 3,
    readyReplicas: 2,
    conditions: [{ type: "Progressing", status: "True" }, { type: "Available", status: "True" }],
  },
});
const SERVICE = buildService(cws(), SETTINGS);
const SECRET = obj("Secret", "alpha-webhook-server-tls", {
  data: { "tls.crt": "LS0t", "ca.crt": "LS0t" },
});

/** The counts, the endpoint and each condition's `[type, status, reason]`, in order. */
function assertReadiness(
  r: ServerReadiness,
  want: { replicas: number; ready: number; endpoint?: string; conditions: string[][] },
): void {
  assert.equal(r.replicas, want.replicas);
  assert.equal(r.readyReplicas, want.ready);
  assert.equal(r.endpoint, want.endpoint);
  assert.deepEqual(r.conditions.map((c) => [c.type, c.status, c.reason]), want.conditions);
}

Deno.test("readiness: everything present and ready", () => {
  assertReadiness(serverReadiness(AVAILABLE_DEPLOYMENT, SERVICE, SECRET), {
    replicas: 3,
    ready: 2,
    endpoint: "https://alpha-webhook-server.dco-system.svc:443",
    conditions: [
      ["Available", "True", "DeploymentAvailable"],
      ["ServiceReady", "True", "ServiceReady"],
      ["CertificateReady", "True", "CertificateReady"],
    ],
  });
});

Deno.test("readiness: a Secret without ca.crt is not ready (the leaf is never the caBundle)", () => {
  const leafOnly = obj("Secret", "alpha-webhook-server-tls", { data: { "tls.crt": "LS0t" } });
  const c = serverReadiness(AVAILABLE_DEPLOYMENT, SERVICE, leafOnly).conditions[2];
  assert.deepEqual([c.type, c.status, c.reason], [
    "CertificateReady",
    "False",
    "CertificateNotReady",
  ]);
  assert.match(c.message, /has no ca\.crt: the caBundle must be the CA that signed tls\.crt/);
});

Deno.test("readiness: nothing exists yet", () => {
  assertReadiness(serverReadiness(undefined, undefined, undefined), {
    replicas: 0,
    ready: 0,
    conditions: [
      ["Available", "False", "DeploymentNotAvailable"],
      ["ServiceReady", "False", "ServiceMissing"],
      ["CertificateReady", "False", "CertificateNotReady"],
    ],
  });
});

Deno.test("readiness: Deployment not available carries its message; lookup errors surface", () => {
  const dep = obj("Deployment", "d", {
    status: {
      replicas: 2,
      conditions: [{ type: "Available", status: "False", message: "min replicas unavailable" }],
    },
  });
  const r = serverReadiness(dep, new Error("forbidden"), new Error("timeout"));
  assert.equal(r.replicas, 2);
  assert.equal(r.readyReplicas, 0);
  assert.equal(r.conditions[0].status, "False");
  assert.match(r.conditions[0].message, /min replicas unavailable/);
  assert.equal(r.conditions[1].reason, "ServiceMissing");
  assert.match(r.conditions[1].message, /forbidden/);
  assert.equal(r.conditions[2].reason, "CertificateNotReady");
  assert.match(r.conditions[2].message, /timeout/);
  assert.equal(r.endpoint, undefined);

  const err = serverReadiness(new Error("boom"), SERVICE, SECRET);
  assert.equal(err.conditions[0].reason, "DeploymentNotAvailable");
  assert.match(err.conditions[0].message, /boom/);
  // A Deployment without conditions (just created) is not available.
  const fresh = serverReadiness(obj("Deployment", "d"), SERVICE, SECRET);
  assert.equal(fresh.conditions[0].status, "False");
});

Deno.test("readiness: Secret without tls.crt, or with an empty one, is not ready", () => {
  for (const data of [undefined, {}, { "tls.crt": "" }, { "tls.key": "x" }]) {
    const secret = obj("Secret", "s", data === undefined ? {} : { data });
    const r = serverReadiness(AVAILABLE_DEPLOYMENT, SERVICE, secret);
    assert.equal(r.conditions[2].status, "False", JSON.stringify(data));
  }
});

Deno.test("readiness: a cert-manager Certificate is judged by its Ready condition", () => {
  const cert = (status: string) =>
    obj("Certificate", "c", {
      status: { conditions: [{ type: "Ready", status, message: "issuing" }] },
    });
  assert.equal(serverReadiness(undefined, SERVICE, cert("True")).conditions[2].status, "True");
  const no = serverReadiness(undefined, SERVICE, cert("False")).conditions[2];
  assert.equal(no.reason, "CertificateNotReady");
  assert.match(no.message, /issuing/);
});

Deno.test("readiness: ServiceReady means the Service exists; endpoint uses its conversion port", () => {
  const svc = buildService(cws({ namespace: "webhooks", service: { port: 8444 } }), SETTINGS);
  const r = serverReadiness(undefined, svc, undefined);
  assert.equal(r.conditions[1].status, "True");
  assert.equal(r.endpoint, "https://alpha-webhook-server.webhooks.svc:8444");
});
