/**
 * The webhook-server role as a real process, under exactly its Deno permission flags, serving a
 * CRD's conversions through a real kube-apiserver: objects written at v1 are read, listed and
 * watched at v2; editing the config changes the next read; a config made invalid keeps the old
 * plan serving and shows the error in /debug/registry and the metrics; the CRD refuses a
 * `conversionReviewVersions` without v1, and a target listing v1beta1 first is served (the
 * apiserver then sends v1beta1 reviews); a reload to a mismatched key keeps the good pair serving
 * and is counted; an identity without RBAC makes the process exit non-zero instead of hanging.
 */
import assert from "node:assert/strict";
import type * as k8s from "@kubernetes/client-node";
import { createCA } from "../support/certs.ts";
import {
  assertStays,
  type ControlPlane,
  e2eTest,
  freePort,
  resolveAssets,
  waitFor,
} from "../support/control_plane.ts";
import {
  fieldRenameConfig,
  installDcoCRDs,
  type Obj,
  twoVersionCRD,
  urlWebhookConversion,
} from "../support/dco_stack.ts";
import { httpGet } from "../support/role_process.ts";
import { defaultRoleServer, type RoleCertificate, roleCertificate, startRole } from "./_gizmos.ts";

const GROUP = "ws.dco.test";
const PLURAL = "gadgets";
const TARGET = `${PLURAL}.${GROUP}`;

function gadgetCRD(url: string, caPEM: string) {
  return twoVersionCRD({
    group: GROUP,
    plural: PLURAL,
    kind: "Gadget",
    conversion: urlWebhookConversion(`${url}/convert/${TARGET}`, caPEM),
  });
}

/** A Gadget `name` in `namespace`, written at `version`. */
function gadget(version: string, name: string, namespace: string, spec: Record<string, unknown>) {
  return {
    apiVersion: `${GROUP}/${version}`,
    kind: "Gadget",
    metadata: { name, namespace },
    spec,
  } as k8s.KubernetesObject;
}

function config(spokePath: string, remapColors = false): Obj {
  const c: Obj = fieldRenameConfig({
    name: "gadgets",
    kind: "CRDConversionConfig",
    target: TARGET,
    spokePath,
  });
  if (remapColors) {
    c.spec.spokes[0].rules.push({
      strategy: "EnumRemap",
      enumRemap: {
        path: "spec.color",
        mapping: [{ hub: "red", spoke: "crimson" }, { hub: "blue", spoke: "navy" }],
      },
    });
  }
  return c;
}

const get = httpGet;

/** dco's CRDs, a serving certificate for 127.0.0.1 in a cert dir, and the TLS CA. */
async function prepare(cp: ControlPlane): Promise<RoleCertificate> {
  await installDcoCRDs(cp);
  return await roleCertificate(cp, "ws", ["127.0.0.1", "localhost"]);
}

/** The default ConversionWebhookServer, the Gadget CRD pointing at `port`, and its config. */
async function applyTarget(cp: ControlPlane, port: number, caPEM: string): Promise<void> {
  await cp.apply(defaultRoleServer());
  await cp.apply(gadgetCRD(`https://127.0.0.1:${port}`, caPEM) as k8s.KubernetesObject);
  await cp.waitForCRD(TARGET);
  await cp.apply(config("spec.capacity"));
}

/** The role as the tests here run it: two sync workers, a 1 s cert reload, debug logs. */
const ROLE_ARGS = [
  "--initial-sync-workers=2",
  "--cert-reload-interval=1s",
  "--zap-log-level=debug",
];

type Gadget = { apiVersion: string; metadata: { name: string }; spec: Record<string, unknown> };

e2eTest(
  "webhook-server process serves conversions through a real kube-apiserver",
  async (cp: ControlPlane, t) => {
    const { certDir, caPEM } = await prepare(cp);
    const port = freePort();
    await applyTarget(cp, port, caPEM);
    const ns = await cp.createNamespace("ws");

    await using role = startRole(cp, { certDir, port, args: ROLE_ARGS });
    const ready = () => get(`${role.metricsURL}/readyz`);

    await t.step("health answers before readiness; ready after the initial sync", async () => {
      await waitFor(
        "plain listener",
        async () => (await get(`${role.metricsURL}/healthz`)).status === 200,
      );
      await waitFor("readiness", async () => (await ready()).status === 200, { timeoutMs: 60_000 });
      assert.equal((await ready()).text.trim(), "ok");
      const metrics = (await get(`${role.metricsURL}/metrics`)).text;
      assert.match(metrics, /^dco_webhook_ready 1$/m);
      assert.match(metrics, /^dco_webhook_initial_sync_targets 1$/m);
      // The caches' families are wired in the process (docs/observability.md#informer-metrics).
      assert.match(
        metrics,
        /^dco_informer_last_sync_timestamp_seconds\{resource="conversionwebhookservers\.terasky\.com"\} \d/m,
      );
      assert.match(
        metrics,
        /^dco_watch_map_list_errors_total\{map_func="webhookserver\.mapCRDToConfigs"\} 0$/m,
      );
      assert.match(metrics, /^process_resident_memory_bytes \d+/m);
      assert.match(
        metrics,
        /^workqueue_adds_total\{name="webhookserver-registry-crd",controller="webhookserver-registry-crd"\} \d+/m,
      );
      assert.match(
        metrics,
        /^dco_operator_wake_total\{controller="webhookserver-registry-crd",cause="watch"\} \d+/m,
      );
      assert.match(role.output(), /registry synced, marking replica ready/);
    });

    const kubectl = async (...args: string[]) => {
      const r = await cp.kubectl(...args);
      assert.equal(
        r.code,
        0,
        `kubectl ${args.join(" ")}: ${r.stderr}\n${role.output().slice(-3000)}`,
      );
      return r.stdout;
    };
    const getAt = async (version: string, name: string): Promise<Gadget> =>
      JSON.parse(
        await kubectl("get", `${PLURAL}.${version}.${GROUP}`, name, "-n", ns, "-o", "json"),
      );

    await t.step("objects written at v1 are read, listed and watched at v2", async () => {
      const watcher = new Deno.Command((await resolveAssets()).kubectl, {
        args: [
          `--kubeconfig=${cp.kubeconfigPath}`,
          "get",
          `${PLURAL}.v2.${GROUP}`,
          "-n",
          ns,
          "--watch",
          "-o",
          "json",
        ],
        stdout: "piped",
        stderr: "null",
      }).spawn();
      let watched = "";
      const reading = (async () => {
        for await (const chunk of watcher.stdout) watched += new TextDecoder().decode(chunk);
      })();
      await cp.apply(gadget("v1", "g1", ns, { size: 7, color: "red" }));
      const v2 = await getAt("v2", "g1");
      assert.equal(v2.apiVersion, `${GROUP}/v2`);
      assert.deepEqual(v2.spec, { capacity: 7, color: "red" });
      const list = JSON.parse(
        await kubectl("get", `${PLURAL}.v2.${GROUP}`, "-n", ns, "-o", "json"),
      );
      assert.deepEqual(list.items.map((i: Gadget) => i.spec), [{ capacity: 7, color: "red" }]);
      await waitFor("watch event at v2", () => Promise.resolve(/"capacity": 7/.test(watched)));
      assert.match(watched, new RegExp(`"apiVersion": "${GROUP}/v2"`));
      watcher.kill("SIGTERM");
      await watcher.status;
      await reading;
      // A write at v2 is converted to the v1 storage version.
      await cp.apply(gadget("v2", "g2", ns, { capacity: 3, color: "blue" }));
      assert.deepEqual((await getAt("v1", "g2")).spec, { size: 3, color: "blue" });
      const metrics = (await get(`${role.metricsURL}/metrics`)).text;
      assert.match(
        metrics,
        /dco_webhook_conversion_review_requests_total\{target="gadgets\.ws\.dco\.test",result="success"\} [1-9]/,
      );
    });

    await t.step("editing the config changes the next read", async () => {
      await cp.apply(config("spec.capacity", true));
      await waitFor(
        "recompiled plan",
        async () => (await getAt("v2", "g1")).spec.color === "crimson",
        {
          timeoutMs: 30_000,
        },
      );
      assert.deepEqual((await getAt("v2", "g1")).spec, { capacity: 7, color: "crimson" });
      assert.deepEqual((await getAt("v2", "g2")).spec, { capacity: 3, color: "navy" });
    });

    await t.step(
      "an invalid config keeps the old plan serving and surfaces the error",
      async () => {
        await cp.apply(config("spec.doesNotExist"));
        await waitFor("registry error", async () => {
          const rows = JSON.parse((await get(`${role.metricsURL}/debug/registry`)).text || "[]");
          return rows.some((r: { lastError: string }) => /doesNotExist/.test(r.lastError ?? ""));
        }, { timeoutMs: 30_000 });
        const rows = JSON.parse((await get(`${role.metricsURL}/debug/registry`)).text);
        assert.equal(rows.length, 1);
        assert.equal(rows[0].ready, true, "the old plan is still loaded");
        assert.deepEqual((await getAt("v2", "g1")).spec, { capacity: 7, color: "crimson" });
        assert.equal((await ready()).status, 200, "a bad config never de-readies the replica");
        const metrics = (await get(`${role.metricsURL}/metrics`)).text;
        assert.match(
          metrics,
          /dco_webhook_registry_compile_errors_total\{target="gadgets\.ws\.dco\.test",reason="ValidationErrors"\} [1-9]/,
        );
        // Fixing it again recompiles.
        await cp.apply(config("spec.capacity"));
        await waitFor("error cleared", async () => {
          const r = JSON.parse((await get(`${role.metricsURL}/debug/registry`)).text || "[]");
          return r.length === 1 && !r[0].lastError;
        }, { timeoutMs: 30_000 });
      },
    );

    await t.step(
      "a config's conversionReviewVersions must contain v1 (the CRD's rule)",
      async () => {
        const bad = config("spec.capacity") as { spec: Record<string, unknown> };
        bad.spec.conversionReviewVersions = ["v1beta1"];
        const file = `${await cp.makeTempDir("ws-bad-config")}/config.json`;
        await Deno.writeTextFile(file, JSON.stringify(bad));
        const r = await cp.kubectl("apply", "-f", file);
        assert.notEqual(r.code, 0, "rejected by the apiserver");
        assert.match(r.stderr, /spec\.conversionReviewVersions/);
        assert.match(r.stderr, /must contain "v1"/);
      },
    );

    await t.step("a target listing v1beta1 first gets v1beta1 reviews, answered", async () => {
      const path = "/spec/conversion/webhook/conversionReviewVersions";
      const patch = (v: string[]) =>
        kubectl(
          "patch",
          "crd",
          TARGET,
          "--type=json",
          `-p=${JSON.stringify([{ op: "replace", path, value: v }])}`,
        );
      await patch(["v1beta1", "v1"]);
      try {
        // The apiserver picks up the new stanza shortly; every read must succeed meanwhile.
        for (let i = 0; i < 10; i++) {
          assert.deepEqual((await getAt("v2", "g1")).spec, { capacity: 7, color: "red" });
        }
        await cp.apply(gadget("v2", "g3", ns, { capacity: 5, color: "blue" }));
        assert.deepEqual((await getAt("v1", "g3")).spec, { size: 5, color: "blue" });
      } finally {
        await patch(["v1"]);
      }
    });

    await t.step(
      "a reload to a bad pair keeps the good one serving, ready, and counted",
      async () => {
        const failures = async () =>
          Number(
            /^dco_webhook_tls_reload_failures_total (\d+)/m.exec(
              (await get(`${role.metricsURL}/metrics`)).text,
            )?.[1] ?? "NaN",
          );
        assert.equal(await failures(), 0);
        const goodKey = await Deno.readTextFile(`${certDir}/tls.key`);
        const stray = await (await createCA(await cp.makeTempDir("ws-stray"), "stray-ca"))
          .issue({ commonName: "stray", hosts: ["127.0.0.1"] });
        await Deno.writeTextFile(`${certDir}/tls.key`, stray.key);
        try {
          await waitFor("a counted reload failure", async () => await failures() > 0);
          assert.match(
            role.output(),
            /reloading the TLS certificate failed; keeping the current one/,
          );
          assert.match(role.output(), /tls\.key does not match the certificate in tls\.crt/);
          assert.equal((await ready()).status, 200, "the last good pair is still usable");
          assert.equal((await getAt("v2", "g1")).apiVersion, `${GROUP}/v2`, "still converting");
          const metrics = (await get(`${role.metricsURL}/metrics`)).text;
          assert.match(metrics, /^dco_webhook_tls_certificate_expiry_timestamp_seconds \d{10}/m);
        } finally {
          await Deno.writeTextFile(`${certDir}/tls.key`, goodKey);
        }
      },
    );

    await t.step("SIGTERM turns /readyz off and exits cleanly", async () => {
      role.child.kill("SIGTERM");
      const status = await role.child.status;
      assert.equal(status.code, 0, role.output());
    });
  },
);

e2eTest(
  "webhook-server exits non-zero when its caches cannot sync (no RBAC)",
  async (cp: ControlPlane) => {
    const { certDir } = await prepare(cp);
    // A ServiceAccount with no permissions, through a token kubeconfig.
    const ns = await cp.createNamespace("norbac");
    await cp.kubectl("create", "serviceaccount", "nobody", "-n", ns);
    const token = (await cp.kubectl("create", "token", "nobody", "-n", ns)).stdout.trim();
    assert.ok(token.length > 20, "got a token");
    const caData = cp.kubeConfig.getCurrentCluster()!.caData!;
    const kubeconfig = `${certDir}/nobody.kubeconfig`;
    await Deno.writeTextFile(
      kubeconfig,
      JSON.stringify({
        apiVersion: "v1",
        kind: "Config",
        clusters: [{
          name: "c",
          cluster: { server: cp.server, "certificate-authority-data": caData },
        }],
        users: [{ name: "nobody", user: { token } }],
        contexts: [{ name: "c", context: { cluster: "c", user: "nobody" } }],
        "current-context": "c",
      }),
    );
    await using role = startRole(cp, { certDir, port: freePort(), kubeconfig, args: ROLE_ARGS });
    const status = await role.child.status;
    assert.notEqual(status.code, 0, "exits non-zero instead of hanging");
    assert.match(role.output(), /informer cache failed to sync/);
    assert.match(role.output(), /forbidden|403/i);
  },
);

/**
 * A TCP proxy to the apiserver that holds every connection until released: while it holds, the
 * role's caches cannot sync and its initial sync cannot read any target.
 */
function blockingProxy(upstream: URL) {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  let release!: () => void;
  const released = new Promise<void>((r) => release = r);
  const conns: Deno.Conn[] = [];
  (async () => {
    for await (const client of listener) {
      conns.push(client);
      (async () => {
        await released;
        const server = await Deno.connect({
          hostname: upstream.hostname,
          port: Number(upstream.port),
        });
        conns.push(server);
        await Promise.allSettled([
          client.readable.pipeTo(server.writable),
          server.readable.pipeTo(client.writable),
        ]);
      })().catch(() => {});
    }
  })().catch(() => {});
  return {
    port: (listener.addr as Deno.NetAddr).port,
    release,
    close() {
      release();
      listener.close();
      for (const c of conns) {
        try {
          c.close();
        } catch {
          // already closed
        }
      }
    },
  };
}

e2eTest(
  "webhook-server stays unready until its caches and initial sync complete",
  async (cp: ControlPlane) => {
    const { certDir, caPEM } = await prepare(cp);
    const port = freePort();
    await applyTarget(cp, port, caPEM);

    const proxy = blockingProxy(new URL(cp.server));
    try {
      const kc = JSON.parse(await Deno.readTextFile(cp.kubeconfigPath));
      kc.clusters[0].cluster.server = `https://127.0.0.1:${proxy.port}`;
      const kubeconfig = `${certDir}/proxied.kubeconfig`;
      await Deno.writeTextFile(kubeconfig, JSON.stringify(kc));
      await using role = startRole(cp, { certDir, port, kubeconfig, args: ROLE_ARGS });

      await waitFor(
        "plain listener",
        async () => (await get(`${role.metricsURL}/healthz`)).status === 200,
      );
      // While the apiserver is unreachable, health is fine and readiness is not — for as long as
      // it takes (there is no ready-anyway timeout).
      await assertStays(async () => {
        const r = await get(`${role.metricsURL}/readyz`);
        assert.equal(r.status, 503);
        assert.equal(r.text.trim(), "registry not yet fully synced");
      }, { forMs: 2_000, everyMs: 200, what: "unready while the apiserver is unreachable" });
      assert.match((await get(`${role.metricsURL}/metrics`)).text, /^dco_webhook_ready 0$/m);

      proxy.release();
      await waitFor(
        "readiness",
        async () => (await get(`${role.metricsURL}/readyz`)).status === 200,
        {
          timeoutMs: 60_000,
        },
      );
      const rows = JSON.parse((await get(`${role.metricsURL}/debug/registry`)).text);
      assert.equal(rows.length, 1, "ready only once the assigned target is in the registry");
      assert.equal(rows[0].ready, true);
    } finally {
      proxy.close();
    }
  },
);
