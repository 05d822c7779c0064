/**
 * The real ConfigReconcileDeps adapter (src/manager/config/adapter.ts, over the manager's caches
 * and a client) against a real kube-apiserver, held to the same contract as the in-memory World
 * of the unit tests (tests/manager/_deps_contract.ts): so the fake cannot drift from the product.
 * Objects are written as a user would (field manager "dco-e2e"), never with dco's own manager.
 */
import type * as k8s from "@kubernetes/client-node";
import { CRD_CONFIG_KIND, XRD_CONFIG_KIND } from "../../src/api/mod.ts";
import { KubeClient, loadKubeconfig } from "../../src/kube/mod.ts";
import { textToBase64 } from "../../src/lib/base64.ts";
import { createLogger } from "../../src/obs/log.ts";
import { configReconcileDeps } from "../../src/manager/config/mod.ts";
import { CONFIG_RESOURCES, SERVER_RESOURCE } from "../../src/api/resources.ts";
import { createManagerCaches } from "../../src/manager/caches.ts";
import { tlsSecretName } from "../../src/manager/server/names.ts";
import { type ControlPlane, waitFor, withControlPlane } from "../support/control_plane.ts";
import { installDcoCRDs } from "../support/dco_stack.ts";
import { XRD_CRD } from "./_crossplane.ts";
import { CONFIG_DEPS_CONTRACT, type ContractCluster } from "../manager/_deps_contract.ts";

/** Retries a contract check until the caches have seen the writes (its last failure is shown). */
const eventually = (check: () => Promise<void>) =>
  waitFor("the cached reads to follow the writes", async () => (await check(), true), {
    timeoutMs: 20_000,
  });

/** The caches' informers outlive a test step; the control plane's processes are its own. */
const UNSANITIZED = { sanitizeResources: false, sanitizeOps: false };

Deno.test(
  "config deps contract: the real adapter on a real apiserver",
  UNSANITIZED,
  withControlPlane(async (cp: ControlPlane, t) => {
    await installDcoCRDs(cp, [XRD_CRD]);
    const namespace = await cp.createNamespace("dco-system");
    const client = new KubeClient(await loadKubeconfig([cp.kubeconfigPath]));
    const caches = createManagerCaches({
      client,
      kinds: [CRD_CONFIG_KIND, XRD_CONFIG_KIND],
      logger: createLogger("test.cache"),
    });
    caches.start();
    try {
      await caches.waitForSync();
      const apply = (obj: unknown) => cp.apply(obj as k8s.KubernetesObject);
      const cluster: ContractCluster = {
        deps: configReconcileDeps({ client, caches, operatorNamespace: namespace }),
        namespace,
        putConfig: async (cfg) => void await apply(cfg),
        deleteConfig: async (kind, name) => void await client.delete(CONFIG_RESOURCES[kind], name),
        putTarget: async (obj) => void await apply(obj),
        async putServer(server) {
          const { status, ...rest } = server;
          await apply(rest);
          await client.patch(SERVER_RESOURCE, server.metadata?.name ?? "", { status }, {
            type: "merge",
            subresource: "status",
          });
        },
        async putTLSSecret(ns, server, data) {
          const encoded = Object.fromEntries(
            Object.entries(data).map(([k, v]) => [k, textToBase64(v ?? "")]),
          );
          await apply({
            apiVersion: "v1",
            kind: "Secret",
            metadata: { name: tlsSecretName(server), namespace: ns },
            data: encoded,
          });
        },
        putLease: async (lease) =>
          void await apply({ apiVersion: "coordination.k8s.io/v1", kind: "Lease", ...lease }),
        eventually: async (check) => void await eventually(check),
      };
      for (const c of CONFIG_DEPS_CONTRACT) {
        await t.step(c.name, () => c.run(cluster));
      }
    } finally {
      await caches.stop();
      client.close();
    }
  }),
);
