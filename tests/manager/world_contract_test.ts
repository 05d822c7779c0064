/**
 * The in-memory World meets the contract of ConfigReconcileDeps (tests/manager/_deps_contract.ts);
 * tests/e2e/config_deps_contract_test.ts holds the real adapter to the same expectations.
 */
import { OPERATOR_NAMESPACE, World } from "./_world.ts";
import { CONFIG_DEPS_CONTRACT, type ContractCluster } from "./_deps_contract.ts";

/** An empty World (no servers, no Secrets) behind the contract's setup calls. */
function worldCluster(): ContractCluster {
  const w = new World();
  w.servers = [];
  w.tlsSecrets.clear();
  return {
    deps: w,
    namespace: OPERATOR_NAMESPACE,
    putConfig: (cfg) => Promise.resolve(w.putConfig(cfg)),
    deleteConfig(kind, name) {
      if (w.cfg?.kind !== kind || w.cfg.metadata?.name !== name) return Promise.resolve();
      if ((w.cfg.metadata?.finalizers ?? []).length > 0) w.markDeleted();
      else w.cfg = undefined;
      return Promise.resolve();
    },
    putTarget: (obj) => Promise.resolve(w.putTarget(obj)),
    putServer(server) {
      w.servers = [...w.servers.filter((s) => s.metadata?.name !== server.metadata?.name), server];
      return Promise.resolve();
    },
    putTLSSecret: (ns, server, data) => Promise.resolve(w.putTLSSecret(ns, server, data)),
    putLease(lease) {
      w.leases.push(lease);
      return Promise.resolve();
    },
    eventually: (check) => check(),
  };
}

for (const c of CONFIG_DEPS_CONTRACT) {
  Deno.test(`World contract: ${c.name}`, () => c.run(worldCluster()));
}
