/**
 * The metrics listener of both roles with `--metrics-secure`: TLS (the role's serving pair from
 * its directory, else a self-signed one made at start), `/metrics` answering 401 without or with
 * a bad token, 403 for a user not allowed, the exposition for one who is, and the probes open;
 * without the flag, plain HTTP as before.
 */
import assert from "node:assert/strict";
import https from "node:https";
import { createCA } from "../support/certs.ts";
import type { KubeObject, ResourceRef } from "../../src/kube/objects.ts";
import { TOKEN_REVIEWS } from "../../src/kube/delegated_auth.ts";
import { validateKeyPair } from "../../src/net/mod.ts";
import { createLogger } from "../../src/obs/log.ts";
import { selfSignedPair, startMetricsListener } from "../../src/main/_metrics.ts";

/** Tokens "admin" (allowed) and "viewer" (not allowed); anything else unauthenticated. */
const reviews = {
  create<T extends KubeObject>(ref: ResourceRef, obj: T): Promise<T> {
    const spec = obj.spec as Record<string, string>;
    if (ref === TOKEN_REVIEWS) {
      const known = spec.token === "admin" || spec.token === "viewer";
      return Promise.resolve({
        ...obj,
        status: known ? { authenticated: true, user: { username: spec.token } } : {},
      });
    }
    return Promise.resolve({ ...obj, status: { allowed: spec.user === "admin" } });
  },
};

const routes = {
  readiness: { ready: true },
  registry: { snapshot: () => [] },
  metrics: () =>
    Promise.resolve(new Response("up 1\n", { headers: { "content-type": "text/plain" } })),
};

/** GET over TLS; `ca` is trusted, or (undefined) any certificate is accepted. */
function get(
  port: number,
  path: string,
  token: string | undefined,
  ca?: string,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = https.get({
      host: "127.0.0.1",
      port,
      path,
      servername: "localhost",
      ...(ca === undefined ? { rejectUnauthorized: false } : { ca }),
      headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
    }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => body += c);
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
  });
}

Deno.test("selfSignedPair is a usable serving pair for localhost", async () => {
  const pair = await selfSignedPair();
  const info = validateKeyPair(pair);
  assert.ok(info.notAfter.getTime() - Date.now() > 300 * 86_400_000);
});

Deno.test("--metrics-secure with no serving pair: self-signed TLS, 401/403/200 on /metrics", async () => {
  const server = await startMetricsListener({
    address: "127.0.0.1:0",
    secure: true,
    certDir: "/nonexistent-dir",
    client: reviews,
    routes,
    log: createLogger("test"),
  });
  try {
    const port = server.addr.port;
    assert.deepEqual(
      [(await get(port, "/metrics", undefined)).status, (await get(port, "/metrics", "x")).status],
      [401, 401],
    );
    const denied = await get(port, "/metrics", "viewer");
    assert.equal(denied.status, 403);
    assert.equal(denied.body, "Authorization denied for user viewer\n");
    const ok = await get(port, "/metrics", "admin");
    assert.deepEqual([ok.status, ok.body], [200, "up 1\n"]);
    assert.equal((await get(port, "/debug/registry", undefined)).status, 401);
    assert.equal((await get(port, "/healthz", undefined)).status, 200);
    assert.equal((await get(port, "/readyz", undefined)).status, 200);
  } finally {
    await server.shutdown();
  }
});

Deno.test("--metrics-secure serves the role's pair from its directory", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const ca = await createCA(dir, "metrics-ca");
    const leaf = await ca.issue({ commonName: "localhost", hosts: ["localhost", "127.0.0.1"] });
    await Deno.writeTextFile(`${dir}/tls.crt`, leaf.cert);
    await Deno.writeTextFile(`${dir}/tls.key`, leaf.key);
    const server = await startMetricsListener({
      address: "127.0.0.1:0",
      secure: true,
      certDir: dir,
      client: reviews,
      routes,
      log: createLogger("test"),
    });
    try {
      // Verified against the CA: the served certificate is the directory's.
      const ok = await get(server.addr.port, "/metrics", "admin", ca.cert);
      assert.equal(ok.status, 200);
    } finally {
      await server.shutdown();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("without --metrics-secure the listener is plain HTTP and /metrics is open", async () => {
  const server = await startMetricsListener({
    address: "127.0.0.1:0",
    secure: false,
    client: reviews,
    routes,
    log: createLogger("test"),
  });
  try {
    const res = await fetch(`http://127.0.0.1:${server.addr.port}/metrics`);
    assert.deepEqual([res.status, await res.text()], [200, "up 1\n"]);
  } finally {
    await server.shutdown();
  }
});
