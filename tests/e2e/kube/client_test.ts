/**
 * The REST client against a real kube-apiserver: CRUD, paging, label selectors, merge/JSON
 * patches and server-side apply, watch streams with bookmarks, KubeApiError fields, deadlines
 * and aborts; both credential kinds (client certificate via kubeconfig, ServiceAccount token
 * in-cluster style) including token rotation; and the permission claim of the module doc, by
 * running a child process under exactly the flags the operator is given.
 */
import assert from "node:assert/strict";
import {
  isAlreadyExists,
  isConflict,
  isNotFound,
  KubeApiError,
  KubeClient,
  KubeNetworkError,
  type KubeObject,
  loadConfig,
} from "../../../src/kube/mod.ts";
import { setTimeout as delay } from "node:timers/promises";
import { waitFor, withControlPlane } from "../../support/control_plane.ts";
import {
  adminClient,
  CONFIGMAPS,
  grant,
  rejects,
  SECRETS,
  serviceAccountClient,
  serviceAccountToken,
  serviceEnv,
  writeServiceAccountDir,
} from "./_support.ts";

interface ConfigMap extends KubeObject {
  data?: Record<string, string>;
}

const cm = (name: string, data: Record<string, string> = {}, labels?: Record<string, string>) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, labels },
  data,
});

Deno.test(
  "kube client against a real apiserver",
  withControlPlane(async (cp, t) => {
    using admin = await adminClient(cp);
    const ns = await cp.createNamespace("client");
    const ref = CONFIGMAPS(ns);

    await t.step("kubeconfig loading: client certificate, namespace, server", () => {
      assert.equal(admin.server, cp.server);
      assert.equal(admin.namespace, "default");
      assert.match(admin.connection.description, /^kubeconfig /);
      assert.ok(admin.connection.clientCert, "the admin identity is a client certificate");
    });

    await t.step("create, get, update, merge patch, JSON patch, delete", async () => {
      const created = await admin.create<ConfigMap>(ref, cm("a", { k: "1" }));
      assert.equal(created.metadata.namespace, ns);
      assert.ok(created.metadata.uid && created.metadata.resourceVersion);
      const got = await admin.get<ConfigMap>(ref, "a");
      assert.deepEqual(got.data, { k: "1" });
      got.data = { k: "2" };
      const updated = await admin.update<ConfigMap>(ref, got);
      assert.equal(updated.data?.k, "2");
      const merged = await admin.patch<ConfigMap>(ref, "a", { data: { m: "x" } }, {
        type: "merge",
      });
      assert.deepEqual(merged.data, { k: "2", m: "x" });
      const jp = await admin.patch<ConfigMap>(ref, "a", [{ op: "remove", path: "/data/k" }], {
        type: "json",
      });
      assert.deepEqual(jp.data, { m: "x" });
      await admin.delete(ref, "a");
      assert.ok(isNotFound(await rejects(admin.get(ref, "a"))));
    });

    await t.step("errors carry status, reason and the apiserver's message", async () => {
      const e = await rejects(admin.get(ref, "missing"));
      assert.ok(e instanceof KubeApiError);
      assert.equal(e.status, 404);
      assert.equal(e.reason, "NotFound");
      assert.equal(e.message, 'configmaps "missing" not found');
      assert.equal(e.details?.name, "missing");
      assert.match(e.request ?? "", /^GET \/api\/v1\/namespaces\/.+\/configmaps\/missing$/);

      await admin.create(ref, cm("dup"));
      const dup = await rejects(admin.create(ref, cm("dup")));
      assert.ok(isAlreadyExists(dup), String(dup));

      const stale = await admin.get<ConfigMap>(ref, "dup");
      await admin.patch(ref, "dup", { data: { x: "1" } }, { type: "merge" });
      const conflict = await rejects(admin.update(ref, { ...stale, data: { y: "2" } }));
      assert.ok(isConflict(conflict) && (conflict as KubeApiError).reason === "Conflict");

      const invalid = await rejects(admin.create(ref, cm("Not_A_Valid_Name")));
      assert.equal((invalid as KubeApiError).status, 422);
      assert.equal((invalid as KubeApiError).reason, "Invalid");

      const badSel = await rejects(admin.list(ref, { labelSelector: "a in (" }));
      assert.equal((badSel as KubeApiError).status, 400);
    });

    await t.step("list: label selector, limit/continue paging, listAll", async () => {
      for (let i = 0; i < 5; i++) {
        await admin.create(ref, cm(`page-${i}`, {}, { set: "paged", odd: String(i % 2) }));
      }
      const sel = await admin.list(ref, { labelSelector: "set=paged,odd=1" });
      assert.deepEqual(sel.items.map((o) => o.metadata.name).sort(), ["page-1", "page-3"]);
      const p1 = await admin.list(ref, { labelSelector: "set=paged", limit: 2 });
      assert.equal(p1.items.length, 2);
      assert.ok(p1.metadata.continue, "a continue token for the next page");
      const p2 = await admin.list(ref, {
        labelSelector: "set=paged",
        limit: 2,
        continue: p1.metadata.continue,
      });
      assert.equal(p2.items.length, 2);
      const all = await admin.listAll(ref, { labelSelector: "set=paged", limit: 2 });
      assert.deepEqual(
        all.items.map((o) => o.metadata.name),
        ["page-0", "page-1", "page-2", "page-3", "page-4"],
      );
      assert.ok(all.metadata.resourceVersion);
      // All namespaces: a namespaced resource without a namespace.
      const everywhere = await admin.list(CONFIGMAPS(), { labelSelector: "set=paged" });
      assert.equal(everywhere.items.length, 5);
    });

    await t.step("a large gzip-compressed list arrives intact", async () => {
      const big = "x".repeat(64 * 1024);
      for (let i = 0; i < 40; i++) {
        await admin.create(ref, cm(`big-${i}`, { big, i: String(i) }, { set: "big" }));
      }
      const raw = await admin.request("GET", `/api/v1/namespaces/${ns}/configmaps`, {
        query: { labelSelector: "set=big" },
      });
      assert.equal(raw.headers.get("content-encoding"), "gzip", "the list really is compressed");
      const list = JSON.parse(await raw.text()) as { items: ConfigMap[] };
      assert.equal(list.items.length, 40);
      assert.ok(list.items.every((o) => o.data?.big === big));
      const viaList = await admin.list<ConfigMap>(ref, { labelSelector: "set=big" });
      assert.equal(viaList.items.length, 40);
    });

    await t.step("server-side apply: field manager, force, conflicts", async () => {
      const applied = await admin.apply<ConfigMap>(ref, cm("ssa", { owned: "a" }), {
        fieldManager: "dco-test",
      });
      assert.equal(applied.data?.owned, "a");
      const mf = applied.metadata.managedFields as Array<{ manager: string; operation: string }>;
      assert.ok(mf.some((f) => f.manager === "dco-test" && f.operation === "Apply"));
      // Another manager claiming the same field without force conflicts…
      const conflict = await rejects(
        admin.apply(ref, cm("ssa", { owned: "b" }), { fieldManager: "other", force: false }),
      );
      assert.ok(isConflict(conflict), String(conflict));
      // …and wins with force (the default, as the operator uses it).
      const forced = await admin.apply<ConfigMap>(ref, cm("ssa", { owned: "b" }), {
        fieldManager: "other",
      });
      assert.equal(forced.data?.owned, "b");
      assert.throws(
        () => admin.patch(ref, "ssa", {}, { type: "apply" }),
        /needs a fieldManager/,
      );
    });

    await t.step("watch: ordered events from a resourceVersion; break closes it", async () => {
      const start = await admin.list(ref);
      const events: Array<[string, string | undefined, string | undefined]> = [];
      const done = (async () => {
        for await (
          const ev of admin.watch<ConfigMap>(ref, {
            resourceVersion: start.metadata.resourceVersion,
          })
        ) {
          if (ev.type === "ERROR") throw new Error(`watch error ${ev.object.message}`);
          if (ev.type === "BOOKMARK") continue;
          events.push([ev.type, ev.object.metadata.name, ev.object.data?.v]);
          if (ev.type === "DELETED") break;
        }
      })();
      await admin.create(ref, cm("w", { v: "1" }));
      await admin.patch(ref, "w", { data: { v: "2" } }, { type: "merge" });
      await admin.delete(ref, "w");
      await done;
      assert.deepEqual(events, [["ADDED", "w", "1"], ["MODIFIED", "w", "2"], [
        "DELETED",
        "w",
        "2",
      ]]);
    });

    await t.step(
      "watch: a filtered watch gets bookmarks; the server ends it at timeoutSeconds",
      async () => {
        // The apiserver's cacher bookmarks a watcher only when it has processed something newer
        // than what that watcher has seen — a write its label selector filters out, after the
        // watch started, is exactly what bookmarks are for. Keep writing until the stream ends.
        const start = await admin.list(ref);
        let writing = true;
        let n = 0;
        const writer = (async () => {
          while (writing) {
            await admin.create(ref, cm(`unselected-${n++}`, {}, { bookmark: "no" }));
            await delay(200);
          }
        })();
        const types: string[] = [];
        let bookmarkRV = 0;
        try {
          for await (
            const ev of admin.watch(ref, {
              resourceVersion: start.metadata.resourceVersion,
              labelSelector: "bookmark=wanted",
              timeoutSeconds: 5,
            })
          ) {
            types.push(ev.type);
            if (ev.type === "BOOKMARK") bookmarkRV = Number(ev.object.metadata.resourceVersion);
          }
        } finally {
          writing = false;
          await writer;
        }
        // The loop ended: the server closed the stream at timeoutSeconds, having sent bookmarks only.
        assert.ok(types.length > 0 && types.every((x) => x === "BOOKMARK"), `got ${types}`);
        assert.ok(bookmarkRV > Number(start.metadata.resourceVersion), `bookmark at ${bookmarkRV}`);
      },
    );

    await t.step("a deadline turns a hanging request into KubeNetworkError", async () => {
      // A watch never answers completely: call() must give up at its deadline.
      const e = await rejects(
        admin.call("GET", `/api/v1/namespaces/${ns}/configmaps`, {
          query: { watch: true },
          timeoutMs: 300,
        }),
      );
      assert.ok(e instanceof KubeNetworkError, String(e));
      assert.match((e as Error).message, /no answer within 300 ms/);
    });

    await t.step("an aborted signal rejects with its reason, also mid-watch", async () => {
      const ac = new AbortController();
      ac.abort(new Error("bye"));
      assert.equal(
        ((await rejects(admin.get(ref, "ssa", { signal: ac.signal }))) as Error).message,
        "bye",
      );
      const ac2 = new AbortController();
      const it = admin.watch(ref, { signal: ac2.signal });
      const next = it.next();
      setTimeout(() => ac2.abort(new Error("stop watching")), 50);
      // Objects exist, so the watch may yield ADDED events first; drain until it throws.
      const err = await rejects((async () => {
        await next;
        for (;;) if ((await it.next()).done) return;
      })());
      assert.equal((err as Error).message, "stop watching");
    });

    await t.step("unreachable server: KubeNetworkError", async () => {
      using c = new KubeClient({
        server: "https://127.0.0.1:1",
        namespace: "default",
        description: "nowhere",
      });
      const e = await rejects(c.list(ref));
      assert.ok(e instanceof KubeNetworkError, String(e));
    });

    await t.step(
      "ServiceAccount token (in-cluster layout): 403 without RBAC, OK with it",
      async () => {
        const { client, dir } = await serviceAccountClient(cp, admin, ns, "reader");
        using _c = client;
        assert.equal(client.namespace, ns);
        assert.equal(client.connection.description, `in-cluster (${dir})`);
        const e = await rejects(client.list(ref));
        assert.ok(e instanceof KubeApiError);
        assert.equal(e.status, 403);
        assert.equal(e.reason, "Forbidden");
        assert.match(
          e.message,
          /system:serviceaccount:.*:reader.*cannot list resource "configmaps"/,
        );
        await grant(admin, ns, "reader", "configmaps", ["get", "list", "watch"]);
        await waitFor(
          "RBAC to allow the reader",
          async () => (await client.list(ref)).items.length > 0,
        );
      },
    );

    await t.step("a rotated token file is picked up after a 401", async () => {
      // Tokens bound to a Secret die with it: a real, server-side invalidation.
      const secret = async (name: string) =>
        await admin.create(SECRETS(ns), { metadata: { name }, type: "Opaque" });
      const sA = await secret("token-a");
      const sB = await secret("token-b");
      const tokA = await serviceAccountToken(admin, ns, "rotor", {
        boundSecret: { name: "token-a", uid: sA.metadata.uid! },
      });
      const tokB = await serviceAccountToken(admin, ns, "rotor", {
        boundSecret: { name: "token-b", uid: sB.metadata.uid! },
      });
      await grant(admin, ns, "rotor", "configmaps", ["list"]);
      const dir = await writeServiceAccountDir(cp, tokA, ns);
      const env = serviceEnv(cp);
      using client = new KubeClient(
        await loadConfig({ serviceAccountDir: dir, env: (k) => env[k] }),
      );
      await waitFor("RBAC for rotor", async () => (await client.list(ref)).items.length > 0);
      // The kubelet rotates the file; the old token is then revoked.
      await Deno.writeTextFile(`${dir}/token`, tokB);
      await admin.delete(SECRETS(ns), "token-a");
      using raw = Deno.createHttpClient({ caCerts: client.connection.caCerts });
      await waitFor("token A to be rejected", async () => {
        const res = await fetch(`${cp.server}/api/v1/namespaces/${ns}/configmaps`, {
          headers: { authorization: `Bearer ${tokA}` },
          client: raw,
        });
        await res.body?.cancel();
        return res.status === 401;
      });
      // Within the 60 s re-read period the cached token A is used, answered 401, the file re-read.
      const list = await client.list(ref);
      assert.ok(list.items.length > 0);
    });

    await t.step(
      "runs under exactly --allow-net --allow-env --allow-read=<sa dir> (token)",
      async () => {
        const dir = await writeServiceAccountDir(
          cp,
          await serviceAccountToken(admin, ns, "reader"),
          ns,
        );
        const ok = await child(["--allow-net", "--allow-env", `--allow-read=${dir}`], dir, ns, {
          ...serviceEnv(cp),
        });
        assert.equal(ok.code, 0, ok.stderr);
        const out = JSON.parse(ok.stdout);
        assert.ok(out.items > 0 && out.watchEvents > 0, ok.stdout);
        assert.equal(out.source, `in-cluster (${dir})`);
        // …and each of those flags is needed.
        const noRead = await child(["--allow-net", "--allow-env"], dir, ns, serviceEnv(cp));
        assert.notEqual(noRead.code, 0);
        assert.match(noRead.stderr, /ca\.crt/);
        const noNet = await child(["--allow-env", `--allow-read=${dir}`], dir, ns, serviceEnv(cp));
        assert.notEqual(noNet.code, 0);
        assert.match(noNet.stderr, /net/i);
      },
    );

    await t.step(
      "runs under --allow-net --allow-env --allow-read=<kubeconfig> (client cert)",
      async () => {
        const res = await child(
          ["--allow-net", "--allow-env", `--allow-read=${cp.kubeconfigPath}`],
          "",
          ns,
          { KUBECONFIG: cp.kubeconfigPath },
        );
        assert.equal(res.code, 0, res.stderr);
        const out = JSON.parse(res.stdout);
        assert.ok(out.items > 0 && out.watchEvents > 0, res.stdout);
        assert.equal(
          out.source,
          `kubeconfig ${cp.kubeconfigPath} context ${cp.kubeConfig.getCurrentContext()}`,
        );
      },
    );
  }, { name: "kube-client" }),
);

/** Runs testdata/list_configmaps.ts under `flags` with only `env` (plus what deno itself needs). */
async function child(
  flags: string[],
  saDir: string,
  namespace: string,
  env: Record<string, string>,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const script = new URL("./testdata/list_configmaps.ts", import.meta.url).pathname;
  const keep: Record<string, string> = { NO_COLOR: "1" };
  for (const k of ["HOME", "DENO_DIR", "PATH", "XDG_CACHE_HOME"]) {
    const v = Deno.env.get(k);
    if (v) keep[k] = v;
  }
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--no-prompt", ...flags, script, saDir, namespace],
    env: { ...keep, ...env },
    clearEnv: true,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}
