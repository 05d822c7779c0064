/**
 * The chart's RBAC, rendered by the real helm binary, against the rights the code needs.
 *
 * {@link NEEDS} is the table of every client call the manager and the webhook server make, with
 * the source line that makes it; each row checks that its call is still in that file, so the table
 * follows the code. For several value sets the test collects every rule bound to the two
 * ServiceAccounts (through ClusterRoleBindings and RoleBindings) as (scope, group, resource, verb,
 * resourceNames) and fails on a wildcard, on a cluster-wide rule for a namespaced kind (Secrets
 * above all), on a granted right no row needs, and on a needed right the chart does not grant.
 */
import assert from "node:assert/strict";
import { CA_SECRET_NAME } from "../../src/manager/builtin_certs.ts";
import { MANAGER_LEASE_NAME } from "../../src/kube/leader.ts";
import { SERVED_LEASE_PREFIX } from "../../src/api/served_lease.ts";
import { FULLNAME, type Obj, render } from "./_helm.ts";

const all = (objs: Obj[], kind: string): Obj[] => objs.filter((o) => o.kind === kind);

const REPO = new URL("../../", import.meta.url);
const RELEASE_NS = "dco-system";
const MANAGER_SA = `${FULLNAME}-manager`;
const WEBHOOK_SA = `${FULLNAME}-webhook-server`;
const VWC = `${FULLNAME}-validating-webhook-configuration`;
const MWC = `${FULLNAME}-mutating-webhook-configuration`;
const ADMISSION_SECRET = `${FULLNAME}-webhook-cert`;

/** What a value set turns on. */
interface Features {
  xrd: boolean;
  crd: boolean;
  leader: boolean;
  /** certificates.mode auto/builtin: the manager writes Secrets. */
  builtinCA: boolean;
  /** certificates.mode auto/cert-manager: the manager applies Certificates. */
  certManager: boolean;
  /** cert-manager off, builtin CA: the manager issues its admission certificate. */
  selfIssued: boolean;
  /** selfIssued and the XRD guard's MutatingWebhookConfiguration rendered. */
  guard: boolean;
  /** metrics.secure: the manager reviews scrapers' tokens and access. */
  metricsSecure: boolean;
  /** webhookServers.metrics.secure: the webhook servers review them. */
  serverMetricsSecure?: boolean;
}

/**
 * Where a right applies: cluster-wide, the release namespace, every webhook-server namespace, or
 * `default` (where the Events of cluster-scoped objects live).
 */
type Scope = "cluster" | "release" | "servers" | "default";

interface Need {
  who: "manager" | "webhook";
  scope: Scope;
  group: string;
  resource: string;
  verbs: string[];
  names?: (f: Features) => string[];
  when?: (f: Features) => boolean;
  /** The file and a text of the call that needs it. */
  source: [string, string];
}

const CONFIGS = ["xrdconversionconfigs", "crdconversionconfigs"];
const T = "terasky.com";

/** Every right the code needs, with the call that needs it. */
const NEEDS: Need[] = [
  // -- manager, --metrics-secure: every scrape's token and access reviewed
  {
    who: "manager",
    scope: "cluster",
    group: "authentication.k8s.io",
    resource: "tokenreviews",
    verbs: ["create"],
    when: (f) => f.metricsSecure,
    source: ["src/kube/delegated_auth.ts", "create<TokenReview>(TOKEN_REVIEWS"],
  },
  {
    who: "manager",
    scope: "cluster",
    group: "authorization.k8s.io",
    resource: "subjectaccessreviews",
    verbs: ["create"],
    when: (f) => f.metricsSecure,
    source: ["src/kube/delegated_auth.ts", "create<SubjectAccessReview>(SUBJECT_ACCESS_REVIEWS"],
  },
  // -- webhook server, --metrics-secure (the manager's --webhook-server-metrics-secure): the same
  // reviews, from every webhook-server namespace's ServiceAccount
  {
    who: "webhook",
    scope: "cluster",
    group: "authentication.k8s.io",
    resource: "tokenreviews",
    verbs: ["create"],
    when: (f) => f.serverMetricsSecure === true,
    source: ["src/main/webhook_server.ts", "secure: flags.metricsSecure"],
  },
  {
    who: "webhook",
    scope: "cluster",
    group: "authorization.k8s.io",
    resource: "subjectaccessreviews",
    verbs: ["create"],
    when: (f) => f.serverMetricsSecure === true,
    source: ["src/main/webhook_server.ts", "secure: flags.metricsSecure"],
  },
  // -- manager, cluster-scoped kinds
  ...CONFIGS.flatMap((resource): Need[] => [
    {
      who: "manager",
      scope: "cluster",
      group: T,
      resource,
      verbs: ["get"],
      source: ["src/manager/config/adapter.ts", "client.get(CONFIG_RESOURCES[kind], name)"],
    },
    {
      who: "manager",
      scope: "cluster",
      group: T,
      resource,
      verbs: ["list", "watch"],
      source: ["src/manager/caches.ts", "informer(CONFIG_RESOURCES[kind])"],
    },
    {
      who: "manager",
      scope: "cluster",
      group: T,
      resource,
      verbs: ["patch"],
      source: ["src/manager/config/adapter.ts", "const updated = await client.patch("],
    },
    {
      who: "manager",
      scope: "cluster",
      group: T,
      resource: `${resource}/status`,
      verbs: ["patch"],
      source: ["src/manager/config/adapter.ts", "patchStatus(client, CONFIG_RESOURCES[kind]"],
    },
  ]),
  {
    who: "manager",
    scope: "cluster",
    group: T,
    resource: "conversionwebhookservers",
    verbs: ["get"],
    source: ["src/manager/server/reconcile_deps.ts", "client.get(SERVER_RESOURCE, name)"],
  },
  {
    who: "manager",
    scope: "cluster",
    group: T,
    resource: "conversionwebhookservers",
    verbs: ["list", "watch"],
    source: ["src/manager/caches.ts", "informer(SERVER_RESOURCE)"],
  },
  {
    who: "manager",
    scope: "cluster",
    group: T,
    resource: "conversionwebhookservers",
    verbs: ["patch"],
    source: ["src/manager/server/reconcile_deps.ts", "return await client.patch("],
  },
  {
    who: "manager",
    scope: "cluster",
    group: T,
    resource: "conversionwebhookservers",
    verbs: ["delete"],
    source: ["src/manager/uninstall.ts", "client.delete(SERVER_RESOURCE, name)"],
  },
  {
    who: "manager",
    scope: "cluster",
    group: T,
    resource: "conversionwebhookservers/status",
    verbs: ["patch"],
    source: ["src/manager/server/reconcile_deps.ts", "patchStatus(client, SERVER_RESOURCE"],
  },
  {
    // The children's owner reference blocks the owner's deletion: the apiserver's
    // OwnerReferencesPermissionEnforcement asks for update on the owner's finalizers.
    who: "manager",
    scope: "cluster",
    group: T,
    resource: "conversionwebhookservers/finalizers",
    verbs: ["update"],
    source: ["src/manager/server/settings.ts", "blockOwnerDeletion: true"],
  },
  {
    who: "manager",
    scope: "cluster",
    group: "apiextensions.k8s.io",
    resource: "customresourcedefinitions",
    verbs: ["get"],
    when: (f) => f.crd || f.xrd,
    source: ["src/manager/config/adapter.ts", "client.get(CRD_RESOURCE, name)"],
  },
  {
    who: "manager",
    scope: "cluster",
    group: "apiextensions.k8s.io",
    resource: "customresourcedefinitions",
    verbs: ["list", "watch"],
    when: (f) => f.crd || f.xrd,
    source: ["src/manager/caches.ts", "informer(CRD_RESOURCE)"],
  },
  {
    who: "manager",
    scope: "cluster",
    group: "apiextensions.k8s.io",
    resource: "customresourcedefinitions",
    verbs: ["patch"],
    when: (f) => f.crd,
    source: ["src/manager/config/adapter.ts", "await applyObject(client, ref, obj"],
  },
  {
    who: "manager",
    scope: "cluster",
    group: "apiextensions.crossplane.io",
    resource: "compositeresourcedefinitions",
    verbs: ["get", "list", "watch", "patch"],
    when: (f) => f.xrd,
    source: [
      "src/manager/config/adapter.ts",
      "client.get(TARGET_RESOURCES[configKindOfTarget(kind)]",
    ],
  },
  {
    who: "manager",
    scope: "cluster",
    group: "admissionregistration.k8s.io",
    resource: "validatingwebhookconfigurations",
    verbs: ["get", "patch"],
    names: () => [VWC],
    when: (f) => f.selfIssued,
    source: [
      "src/manager/admission_setup.ts",
      'client.patch(resource, name, patch, { type: "strategic" })',
    ],
  },
  {
    who: "manager",
    scope: "cluster",
    group: "admissionregistration.k8s.io",
    resource: "mutatingwebhookconfigurations",
    verbs: ["get", "patch"],
    names: () => [MWC],
    when: (f) => f.guard,
    source: [
      "src/manager/admission_setup.ts",
      "webhookConfigStore(MUTATING_WEBHOOK_CONFIGURATIONS)",
    ],
  },
  // -- manager, Events on the three (cluster-scoped) kinds
  {
    who: "manager",
    scope: "default",
    group: "events.k8s.io",
    resource: "events",
    verbs: ["create"],
    source: ["src/kube/events.ts", "client.create<EventObject>(eventsResource("],
  },
  {
    who: "manager",
    scope: "default",
    group: "events.k8s.io",
    resource: "events",
    verbs: ["patch"],
    source: ["src/kube/events.ts", "client.patch<EventObject>("],
  },
  // -- manager, release namespace
  {
    who: "manager",
    scope: "release",
    group: "events.k8s.io",
    resource: "events",
    verbs: ["create", "patch"],
    when: (f) => f.builtinCA,
    source: ["src/manager/ca_rotation_setup.ts", "o.events?.record({"],
  },
  {
    who: "manager",
    scope: "release",
    group: "coordination.k8s.io",
    resource: "leases",
    verbs: ["get", "update"],
    names: () => [MANAGER_LEASE_NAME],
    when: (f) => f.leader,
    source: ["src/kube/leader.ts", "this.#client.update<Lease>(this.#ref"],
  },
  {
    who: "manager",
    scope: "release",
    group: "coordination.k8s.io",
    resource: "leases",
    verbs: ["create"],
    when: (f) => f.leader,
    source: ["src/kube/leader.ts", "this.#client.create<Lease>(this.#ref"],
  },
  {
    who: "manager",
    scope: "release",
    group: "",
    resource: "secrets",
    verbs: ["get", "update"],
    names: (f) => [CA_SECRET_NAME, ...(f.selfIssued ? [ADMISSION_SECRET] : [])],
    when: (f) => f.builtinCA,
    source: ["src/manager/builtin_certs.ts", "this.#store.get(this.#namespace, CA_SECRET_NAME)"],
  },
  {
    who: "manager",
    scope: "release",
    group: "",
    resource: "secrets",
    verbs: ["create"],
    when: (f) => f.builtinCA,
    source: ["src/manager/secret_store.ts", "client.create(SECRETS(namespace), secret)"],
  },
  // -- manager, every webhook-server namespace: the children it caches and applies; the optional
  // ones (HPA, PDB) are deleted again when their block leaves a server's spec
  ...([
    ["apps", "deployments", "DEPLOYMENTS", false],
    ["", "services", "SERVICES", false],
    ["autoscaling", "horizontalpodautoscalers", "HPAS", true],
    ["policy", "poddisruptionbudgets", "PDBS", true],
  ] as const).flatMap(([group, resource, ref, pruned]): Need[] => [
    {
      who: "manager",
      scope: "servers",
      group,
      resource,
      verbs: ["list", "watch"],
      source: ["src/manager/caches.ts", `informer(${ref}(ns), OWNED_SELECTOR)`],
    },
    {
      who: "manager",
      scope: "servers",
      group,
      resource,
      verbs: ["create", "patch"],
      source: ["src/manager/server/reconcile.ts", `deps.apply(${ref}(ns)`],
    },
    ...(pruned
      ? [{
        who: "manager" as const,
        scope: "servers" as const,
        group,
        resource,
        verbs: ["delete"],
        source: [
          "src/manager/server/reconcile_deps.ts",
          "client.delete(ref, name, { preconditions: { uid } })",
        ] as [string, string],
      }]
      : []),
  ]),
  {
    who: "manager",
    scope: "servers",
    group: "cert-manager.io",
    resource: "certificates",
    verbs: ["create", "patch"],
    when: (f) => f.certManager,
    source: [
      "src/manager/server/reconcile.ts",
      "deps.apply(CERTIFICATES(ns), children.certificate)",
    ],
  },
  {
    who: "manager",
    scope: "servers",
    group: "coordination.k8s.io",
    resource: "leases",
    verbs: ["list"],
    source: ["src/manager/caches.ts", "client.list(LEASES(serverNamespace)"],
  },
  {
    who: "manager",
    scope: "servers",
    group: "coordination.k8s.io",
    resource: "leases",
    verbs: ["list", "watch"],
    source: ["src/manager/caches.ts", "informer(LEASES(ns), SERVED_LEASE_CACHE_SELECTOR)"],
  },
  {
    who: "manager",
    scope: "servers",
    group: "",
    resource: "secrets",
    verbs: ["get"],
    source: [
      "src/manager/config/adapter.ts",
      "client.get(SECRETS(namespace), tlsSecretName(serverName))",
    ],
  },
  {
    who: "manager",
    scope: "servers",
    group: "",
    resource: "secrets",
    verbs: ["create", "update"],
    when: (f) => f.builtinCA,
    source: ["src/manager/secret_store.ts", "client.update(SECRETS(namespace), secret)"],
  },
  // -- webhook server
  ...[...CONFIGS, "conversionwebhookservers"].map((resource): Need => ({
    who: "webhook",
    scope: "cluster",
    group: T,
    resource,
    verbs: ["list", "watch"],
    source: ["src/webhook/cluster.ts", "new Informer({"],
  })),
  {
    who: "webhook",
    scope: "cluster",
    group: "apiextensions.k8s.io",
    resource: "customresourcedefinitions",
    verbs: ["list", "watch"],
    when: (f) => f.crd,
    source: ["src/webhook/cluster.ts", "resource: TARGET_RESOURCES[kind]"],
  },
  {
    who: "webhook",
    scope: "cluster",
    group: "apiextensions.crossplane.io",
    resource: "compositeresourcedefinitions",
    verbs: ["list", "watch"],
    when: (f) => f.xrd,
    source: ["src/webhook/cluster.ts", "resource: TARGET_RESOURCES[kind]"],
  },
  {
    who: "webhook",
    scope: "servers",
    group: "coordination.k8s.io",
    resource: "leases",
    verbs: ["get", "create", "update"],
    source: ["src/webhook/served_lease.ts", "client.update<Lease>(ref, stamp(current))"],
  },
];

/** Kinds that are namespaced: never granted by a ClusterRole. */
const NAMESPACED = new Set([
  "secrets",
  "configmaps",
  "leases",
  "deployments",
  "services",
  "horizontalpodautoscalers",
  "poddisruptionbudgets",
  "certificates",
  "pods",
  "events",
  "serviceaccounts",
]);

interface ValueSet {
  name: string;
  sets: Record<string, string>;
  features: Features;
  /** The webhook-server namespaces the values name. */
  serverNamespaces: string[];
}

const VALUE_SETS: ValueSet[] = [
  {
    name: "defaults",
    sets: {},
    features: {
      xrd: true,
      crd: true,
      leader: true,
      builtinCA: true,
      certManager: true,
      selfIssued: false,
      guard: false,
      metricsSecure: false,
    },
    serverNamespaces: [RELEASE_NS],
  },
  {
    name: "builtin, no cert-manager (self-issued admission), XRD guard",
    sets: { "certificates.mode": "builtin", "certManager.enabled": "false" },
    features: {
      xrd: true,
      crd: true,
      leader: true,
      builtinCA: true,
      certManager: false,
      selfIssued: true,
      guard: true,
      metricsSecure: false,
    },
    serverNamespaces: [RELEASE_NS],
  },
  {
    name: "cert-manager, no leader election, CRDs only, servers in two other namespaces",
    sets: {
      "certificates.mode": "cert-manager",
      "manager.leaderElection.enabled": "false",
      "features.crossplane.enabled": "false",
      "conversionWebhookServer.namespace": "webhooks",
      "webhookServers.namespaces[0]": "team-a",
    },
    features: {
      xrd: false,
      crd: true,
      leader: false,
      builtinCA: false,
      certManager: true,
      selfIssued: false,
      guard: false,
      metricsSecure: false,
    },
    serverNamespaces: ["webhooks", "team-a"],
  },
  {
    name: "existing-secret, XRDs only, servers outside the release namespace",
    sets: {
      "certificates.mode": "existing-secret",
      "features.nativeCRD.enabled": "false",
      "conversionWebhookServer.namespace": "webhooks",
    },
    features: {
      xrd: true,
      crd: false,
      leader: true,
      builtinCA: false,
      certManager: false,
      selfIssued: false,
      guard: false,
      metricsSecure: false,
    },
    serverNamespaces: ["webhooks"],
  },
  {
    name: "secure metrics",
    sets: { "metrics.secure": "true" },
    features: {
      xrd: true,
      crd: true,
      leader: true,
      builtinCA: true,
      certManager: true,
      selfIssued: false,
      guard: false,
      metricsSecure: true,
    },
    serverNamespaces: [RELEASE_NS],
  },
  {
    name: "secure webhook-server metrics, servers in two namespaces",
    sets: {
      "webhookServers.metrics.secure": "true",
      "webhookServers.namespaces[0]": "team-a",
    },
    features: {
      xrd: true,
      crd: true,
      leader: true,
      builtinCA: true,
      certManager: true,
      selfIssued: false,
      guard: false,
      metricsSecure: false,
      serverMetricsSecure: true,
    },
    serverNamespaces: [RELEASE_NS, "team-a"],
  },
];

/** One granted or needed right; `names` is "" when not limited by name. */
const key = (who: string, ns: string, group: string, resource: string, verb: string, names = "") =>
  `${who} ${ns || "<cluster>"} ${group || "core"}/${resource} ${verb}${names ? ` [${names}]` : ""}`;

function needed(v: ValueSet): Set<string> {
  const out = new Set<string>();
  for (const n of NEEDS) {
    if (n.when && !n.when(v.features)) continue;
    const names = (n.names?.(v.features) ?? []).slice().sort().join(",");
    const namespaces = n.scope === "cluster"
      ? [""]
      : n.scope === "default"
      ? ["default"]
      : n.scope === "release"
      ? [RELEASE_NS]
      : v.serverNamespaces;
    for (const ns of namespaces) {
      for (const verb of n.verbs) out.add(key(n.who, ns, n.group, n.resource, verb, names));
    }
  }
  return out;
}

/** Every rule bound to the manager or webhook-server ServiceAccount, flattened. */
function granted(objs: Obj[]): { rights: Set<string>; rules: Array<{ where: string; rule: Obj }> } {
  const rights = new Set<string>();
  const rules: Array<{ where: string; rule: Obj }> = [];
  const who = (s: Obj): string | undefined =>
    s.kind !== "ServiceAccount"
      ? undefined
      : s.name === MANAGER_SA && s.namespace === RELEASE_NS
      ? "manager"
      : s.name === WEBHOOK_SA
      ? "webhook"
      : undefined;
  for (const b of objs.filter((o) => o.kind === "ClusterRoleBinding" || o.kind === "RoleBinding")) {
    const ns = b.kind === "RoleBinding" ? b.metadata.namespace : "";
    const roleKind = b.roleRef.kind;
    const role = objs.find((o) =>
      o.kind === roleKind && o.metadata.name === b.roleRef.name &&
      (roleKind === "ClusterRole" || o.metadata.namespace === ns)
    );
    assert.ok(role, `${b.kind} ${b.metadata.name} refers to a rendered ${roleKind}`);
    for (const s of b.subjects ?? []) {
      const w = who(s);
      if (w === undefined) continue;
      if (w === "webhook" && b.kind === "RoleBinding") {
        assert.equal(s.namespace, ns, "a replica's Lease Role binds its own namespace's SA");
      }
      for (const rule of role.rules ?? []) {
        rules.push({ where: `${w} via ${b.kind} ${ns}/${b.metadata.name}`, rule });
        const names = (rule.resourceNames ?? []).slice().sort().join(",");
        for (const g of rule.apiGroups ?? []) {
          for (const r of rule.resources ?? []) {
            for (const v of rule.verbs ?? []) rights.add(key(w, ns, g, r, v, names));
          }
        }
      }
    }
  }
  return { rights, rules };
}

Deno.test("chart RBAC: every needed call is still in the code the table names", async () => {
  for (const n of NEEDS) {
    const [file, text] = n.source;
    const src = await Deno.readTextFile(new URL(file, REPO));
    assert.ok(src.includes(text), `${file} no longer contains ${JSON.stringify(text)}`);
  }
});

for (const v of VALUE_SETS) {
  Deno.test(`chart RBAC (${v.name}): exactly the needed rights, no wildcard, no cluster-wide Secrets`, async () => {
    const objs = await render(v.sets, RELEASE_NS);
    const { rights, rules } = granted(objs);
    for (const { where, rule } of rules) {
      for (const field of ["apiGroups", "resources", "verbs", "resourceNames"]) {
        assert.ok(!(rule[field] ?? []).includes("*"), `${where}: wildcard in ${field}`);
      }
      assert.equal(rule.nonResourceURLs, undefined, `${where}: nonResourceURLs`);
      if (where.includes("ClusterRoleBinding")) {
        for (const r of rule.resources ?? []) {
          assert.ok(!NAMESPACED.has(r), `${where}: cluster-wide rule on namespaced ${r}`);
        }
      }
    }
    const need = needed(v);
    const extra = [...rights].filter((r) => !need.has(r)).sort();
    const missing = [...need].filter((r) => !rights.has(r)).sort();
    assert.deepEqual(extra, [], "granted, but no code path needs it");
    assert.deepEqual(missing, [], "needed by the code, but not granted");
  });
}

Deno.test("chart RBAC: the webhook-server ServiceAccount exists in every server namespace", async () => {
  const v = VALUE_SETS[2];
  const objs = await render(v.sets, RELEASE_NS);
  const sas = all(objs, "ServiceAccount").filter((s) => s.metadata.name === WEBHOOK_SA)
    .map((s) => s.metadata.namespace).sort();
  assert.deepEqual(sas, [...v.serverNamespaces].sort());
  const binding = objs.find((o) =>
    o.kind === "ClusterRoleBinding" && o.metadata.name === `${FULLNAME}-webhook-server-rolebinding`
  )!;
  assert.deepEqual(
    binding.subjects.map((s: Obj) => s.namespace).sort(),
    [...v.serverNamespaces].sort(),
  );
});

Deno.test("chart RBAC: a ValidatingAdmissionPolicy keeps each replica to its own Lease", async () => {
  const v = VALUE_SETS[2];
  const objs = await render(v.sets, RELEASE_NS);
  const vap = objs.find((o) => o.kind === "ValidatingAdmissionPolicy")!;
  assert.ok(vap, "rendered");
  assert.equal(vap.spec.failurePolicy, "Fail");
  const match = vap.spec.matchConditions[0].expression as string;
  for (const ns of v.serverNamespaces) {
    assert.ok(match.includes(`'system:serviceaccount:${ns}:${WEBHOOK_SA}'`), match);
  }
  assert.ok(!match.includes(MANAGER_SA), "the manager is not matched");
  const rule = vap.spec.validations[0];
  assert.equal(rule.reason, "Forbidden");
  assert.ok(
    (rule.expression as string).includes(
      `request.name == '${SERVED_LEASE_PREFIX}' + request.userInfo.extra['authentication.kubernetes.io/pod-name'][0]`,
    ),
    rule.expression,
  );
  const binding = objs.find((o) => o.kind === "ValidatingAdmissionPolicyBinding")!;
  assert.equal(binding.spec.policyName, vap.metadata.name);
  assert.deepEqual(binding.spec.validationActions, ["Deny"]);
});
