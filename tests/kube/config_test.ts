/**
 * Connection loading without a cluster: the precedence --kubeconfig > $KUBECONFIG (merged) >
 * in-cluster > $HOME/.kube/config, what each source yields, the unsupported kubeconfig settings,
 * and the rotating token file.
 */
import assert from "node:assert/strict";
import {
  loadConfig,
  loadInClusterConfig,
  resourcePath,
  TokenFileAuth,
} from "../../src/kube/mod.ts";

const CA = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";

function kubeconfig(
  server: string,
  opts: { token?: string; ns?: string; ctx?: string; skip?: boolean } = {},
): string {
  const ctx = opts.ctx ?? "main";
  return JSON.stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: [{
      name: `c-${ctx}`,
      cluster: opts.skip
        ? { server, "insecure-skip-tls-verify": true }
        : { server, "certificate-authority-data": btoa(CA) },
    }],
    users: [{ name: `u-${ctx}`, user: { token: opts.token ?? `tok-${ctx}` } }],
    contexts: [{
      name: ctx,
      context: { cluster: `c-${ctx}`, user: `u-${ctx}`, namespace: opts.ns },
    }],
    "current-context": ctx,
  });
}

async function fixture() {
  const dir = await Deno.makeTempDir({ prefix: "dco-config-" });
  const write = async (name: string, text: string) => {
    await Deno.writeTextFile(`${dir}/${name}`, text);
    return `${dir}/${name}`;
  };
  const sa = `${dir}/sa`;
  await Deno.mkdir(sa);
  await write("sa/ca.crt", CA);
  await write("sa/token", "sa-token\n");
  await write("sa/namespace", "operators");
  await Deno.mkdir(`${dir}/home/.kube`, { recursive: true });
  await write("home/.kube/config", kubeconfig("https://home.example:6443", { ctx: "home" }));
  const flag = await write("flag.yaml", kubeconfig("https://flag.example:6443", { ns: "dev" }));
  const envA = await write("a.yaml", kubeconfig("https://a.example:6443", { ctx: "a" }));
  const envB = await write("b.yaml", kubeconfig("https://b.example:6443", { ctx: "b" }));
  const env = (vars: Record<string, string>) => (k: string) => vars[k];
  const inCluster = { KUBERNETES_SERVICE_HOST: "10.0.0.1", KUBERNETES_SERVICE_PORT: "443" };
  const remove = () => Deno.remove(dir, { recursive: true });
  return { dir, sa, flag, envA, envB, env, inCluster, write, [Symbol.asyncDispose]: remove };
}

Deno.test("precedence: --kubeconfig, then KUBECONFIG, then in-cluster, then HOME", async () => {
  await using f = await fixture();
  const all = { ...f.inCluster, KUBECONFIG: f.envA, HOME: `${f.dir}/home` };
  const c1 = await loadConfig({ kubeconfig: f.flag, serviceAccountDir: f.sa, env: f.env(all) });
  assert.equal(c1.server, "https://flag.example:6443");
  assert.equal(c1.namespace, "dev");
  assert.deepEqual(c1.caCerts, [CA]);
  assert.equal(await c1.auth?.authorization({ refresh: false }), "Bearer tok-main");

  const c2 = await loadConfig({ serviceAccountDir: f.sa, env: f.env(all) });
  assert.equal(c2.server, "https://a.example:6443");
  assert.equal(c2.namespace, "default");

  const { KUBECONFIG: _, ...noKubeconfig } = all;
  const c3 = await loadConfig({ serviceAccountDir: f.sa, env: f.env(noKubeconfig) });
  assert.equal(c3.server, "https://10.0.0.1:443");
  assert.equal(c3.namespace, "operators");
  assert.equal(c3.description, `in-cluster (${f.sa})`);
  assert.equal(c3.context, undefined, "in-cluster has no context");
  assert.equal(await c3.auth?.authorization({ refresh: false }), "Bearer sa-token");

  const c4 = await loadConfig({ serviceAccountDir: f.sa, env: f.env({ HOME: `${f.dir}/home` }) });
  assert.equal(c4.server, "https://home.example:6443");

  await assert.rejects(
    loadConfig({ serviceAccountDir: f.sa, env: f.env({ HOME: `${f.dir}/nowhere` }) }),
    /no Kubernetes configuration/,
  );
});

Deno.test("KUBECONFIG with several files merges them; the context option selects", async () => {
  await using f = await fixture();
  const env = f.env({ KUBECONFIG: `${f.envA}:${f.envB}` });
  const first = await loadConfig({ env });
  assert.equal(first.server, "https://a.example:6443", "the first file's current-context");
  assert.equal(first.context, "a", "the connection names the current context");
  const b = await loadConfig({ env, context: "b" });
  assert.equal(b.server, "https://b.example:6443");
  assert.equal(b.context, "b");
  assert.equal(await b.auth?.authorization({ refresh: true }), "Bearer tok-b");
});

Deno.test("insecure-skip-tls-verify is refused with the reason", async () => {
  await using f = await fixture();
  const p = await f.write("skip.yaml", kubeconfig("https://x:1", { skip: true }));
  await assert.rejects(
    loadConfig({ kubeconfig: p }),
    /insecure-skip-tls-verify is not supported/,
  );
  await assert.rejects(
    loadConfig({ kubeconfig: `${f.dir}/missing.yaml` }),
    /cannot load kubeconfig/,
  );
});

Deno.test("in-cluster: IPv6 hosts are bracketed; a missing token fails at load time", async () => {
  await using f = await fixture();
  const env = f.env({ KUBERNETES_SERVICE_HOST: "fd00::1", KUBERNETES_SERVICE_PORT: "443" });
  const c = await loadInClusterConfig({ dir: f.sa, env });
  assert.equal(c.server, "https://[fd00::1]:443");
  await Deno.remove(`${f.sa}/token`);
  await assert.rejects(loadInClusterConfig({ dir: f.sa, env }), Deno.errors.NotFound);
  await assert.rejects(
    loadInClusterConfig({ dir: f.sa, env: f.env({}) }),
    /KUBERNETES_SERVICE_HOST/,
  );
});

Deno.test("TokenFileAuth caches within its period and re-reads on refresh or after it", async () => {
  await using f = await fixture();
  const path = `${f.sa}/token`;
  const cached = new TokenFileAuth(path);
  assert.equal(await cached.authorization({ refresh: false }), "Bearer sa-token");
  await Deno.writeTextFile(path, "rotated");
  assert.equal(await cached.authorization({ refresh: false }), "Bearer sa-token", "cached");
  assert.equal(await cached.authorization({ refresh: true }), "Bearer rotated", "after a 401");
  const eager = new TokenFileAuth(path, 0);
  await eager.authorization({ refresh: false });
  await Deno.writeTextFile(path, "again");
  assert.equal(await eager.authorization({ refresh: false }), "Bearer again", "period elapsed");
  await Deno.writeTextFile(path, "  \n");
  await assert.rejects(eager.authorization({ refresh: false }), /is empty/);
});

Deno.test("resourcePath covers core and named groups, namespaces, names and subresources", () => {
  const cm = { group: "", version: "v1", plural: "configmaps" };
  assert.equal(resourcePath(cm), "/api/v1/configmaps");
  assert.equal(resourcePath({ ...cm, namespace: "ns" }, "a"), "/api/v1/namespaces/ns/configmaps/a");
  const crd = { group: "apiextensions.k8s.io", version: "v1", plural: "customresourcedefinitions" };
  assert.equal(
    resourcePath(crd, "x.y", "status"),
    "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/x.y/status",
  );
  assert.throws(() => resourcePath(cm, ""), /empty name/);
});
