/**
 * Helpers of the cluster-backed framework tests: clients for the control plane's admin
 * (client certificate, through a kubeconfig file) and for ServiceAccount identities (real
 * tokens from the TokenRequest API, laid out like an in-cluster credentials directory), a quiet
 * logger and a rejection catcher.
 */
import assert from "node:assert/strict";
import {
  KubeClient,
  type KubeObject,
  loadInClusterConfig,
  loadKubeconfig,
  type ResourceRef,
} from "../../../src/kube/mod.ts";
import type { Logger } from "../../../src/obs/log.ts";
import type { ControlPlane } from "../../support/control_plane.ts";

export const CONFIGMAPS = (namespace?: string): ResourceRef => ({
  group: "",
  version: "v1",
  plural: "configmaps",
  namespace,
});

export const SECRETS = (namespace?: string): ResourceRef => ({
  group: "",
  version: "v1",
  plural: "secrets",
  namespace,
});

/** The admin identity (client certificate) loaded from the control plane's kubeconfig file. */
export async function adminClient(cp: ControlPlane): Promise<KubeClient> {
  return new KubeClient(await loadKubeconfig([cp.kubeconfigPath]));
}

/** PEM of the cluster CA, from the admin kubeconfig. */
export function clusterCA(cp: ControlPlane): string {
  const data = cp.kubeConfig.getCurrentCluster()?.caData;
  if (!data) throw new Error("control plane kubeconfig has no certificate-authority-data");
  return new TextDecoder().decode(Uint8Array.from(atob(data), (c) => c.charCodeAt(0)));
}

/** KUBERNETES_SERVICE_HOST/PORT for the control plane's apiserver. */
export function serviceEnv(cp: ControlPlane): Record<string, string> {
  const u = new URL(cp.server);
  return { KUBERNETES_SERVICE_HOST: u.hostname, KUBERNETES_SERVICE_PORT: u.port || "443" };
}

/** Creates ServiceAccount `name` in `namespace` (if missing) and returns a fresh token for it. */
export async function serviceAccountToken(
  admin: KubeClient,
  namespace: string,
  name: string,
  opts: { boundSecret?: { name: string; uid: string } } = {},
): Promise<string> {
  const sas: ResourceRef = { group: "", version: "v1", plural: "serviceaccounts", namespace };
  try {
    await admin.create(sas, { metadata: { name } });
  } catch (e) {
    if ((e as { status?: number }).status !== 409) throw e;
  }
  const tr = await admin.call<{ status: { token: string } }>(
    "POST",
    `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`,
    {
      body: {
        apiVersion: "authentication.k8s.io/v1",
        kind: "TokenRequest",
        spec: {
          expirationSeconds: 3600,
          boundObjectRef: opts.boundSecret
            ? { apiVersion: "v1", kind: "Secret", ...opts.boundSecret }
            : undefined,
        },
      },
    },
  );
  return tr.status.token;
}

/**
 * A kubeconfig file in `dir` for ServiceAccount `name` of `namespace` (created if missing, with a
 * fresh token), its context named `name`. What the identity may do is up to the caller's RBAC.
 */
export async function serviceAccountKubeconfig(
  cp: ControlPlane,
  admin: KubeClient,
  namespace: string,
  name: string,
  dir: string,
): Promise<string> {
  const token = await serviceAccountToken(admin, namespace, name);
  const path = `${dir}/${name}.kubeconfig`;
  await Deno.writeTextFile(
    path,
    JSON.stringify({
      apiVersion: "v1",
      kind: "Config",
      clusters: [{
        name: "cp",
        cluster: { server: cp.server, "certificate-authority-data": btoa(clusterCA(cp)) },
      }],
      users: [{ name, user: { token } }],
      contexts: [{ name, context: { cluster: "cp", user: name, namespace } }],
      "current-context": name,
    }),
  );
  return path;
}

/** Writes an in-cluster credentials directory (ca.crt, token, namespace) and returns it. */
export async function writeServiceAccountDir(
  cp: ControlPlane,
  token: string,
  namespace: string,
): Promise<string> {
  const dir = await cp.makeTempDir("sa");
  await Deno.writeTextFile(`${dir}/ca.crt`, clusterCA(cp));
  await Deno.writeTextFile(`${dir}/token`, token);
  await Deno.writeTextFile(`${dir}/namespace`, namespace);
  return dir;
}

/** A client for a ServiceAccount identity, configured exactly as in a pod. */
export async function serviceAccountClient(
  cp: ControlPlane,
  admin: KubeClient,
  namespace: string,
  name: string,
): Promise<{ client: KubeClient; dir: string }> {
  const dir = await writeServiceAccountDir(
    cp,
    await serviceAccountToken(admin, namespace, name),
    namespace,
  );
  const env = serviceEnv(cp);
  const conn = await loadInClusterConfig({ dir, env: (k) => env[k] });
  return { client: new KubeClient(conn), dir };
}

/** Grants `verbs` on `resource` (core group) in `namespace` to a ServiceAccount. */
export async function grant(
  admin: KubeClient,
  namespace: string,
  sa: string,
  resource: string,
  verbs: string[],
): Promise<{ role: KubeObject; binding: KubeObject }> {
  const rbac = (plural: string): ResourceRef => ({
    group: "rbac.authorization.k8s.io",
    version: "v1",
    plural,
    namespace,
  });
  const name = `${sa}-${resource}`;
  const role = await admin.apply(rbac("roles"), {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "Role",
    metadata: { name, namespace },
    rules: [{ apiGroups: [""], resources: [resource], verbs }],
  }, { fieldManager: "dco-test" });
  const binding = await admin.apply(rbac("rolebindings"), {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "RoleBinding",
    metadata: { name, namespace },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name },
    subjects: [{ kind: "ServiceAccount", name: sa, namespace }],
  }, { fieldManager: "dco-test" });
  return { role, binding };
}

/** A logger that drops everything (the failure paths log by design). */
export function quietLogger(): Logger {
  const l = {
    name: "quiet",
    debug() {},
    info() {},
    warn() {},
    error() {},
    enabled: () => false,
    with: () => l,
    child: () => l,
  };
  return l;
}

/** The reason `p` rejects with; fails the test when it resolves. */
export async function rejects<T>(p: Promise<T>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new assert.AssertionError({ message: "expected a rejection" });
}
