/**
 * The manager's owned-children caches follow `--webhook-server-namespaces`: one Deployment, Service,
 * HPA, PDB and served-target Lease informer per allowed namespace (the chart's Roles grant
 * list/watch only there), or one cluster-wide of each when no namespaces are given; the
 * cluster-scoped kinds stay cluster-wide. The Lease cache holds only Leases that are owned and name
 * an instance.
 */
import assert from "node:assert/strict";
import { createManagerCaches, SERVED_LEASE_CACHE_SELECTOR } from "../../src/manager/caches.ts";
import { createLogger } from "../../src/obs/log.ts";

const client = {} as never; // informers only talk to it once started
const logger = createLogger("test");

Deno.test("caches: the owned children and served-target Leases are watched per allowed namespace", () => {
  const c = createManagerCaches({
    client,
    kinds: ["CRDConversionConfig"],
    logger,
    namespaces: ["dco-system", "team-a"],
  });
  for (
    const [list, plural] of [[c.deployments, "deployments"], [c.services, "services"]] as const
  ) {
    assert.deepEqual(list.map((i) => i.resource.namespace), ["dco-system", "team-a"]);
    for (const i of list) {
      assert.equal(i.resource.plural, plural);
      assert.ok(c.informers.includes(i), "started and synced with the rest");
    }
  }
  // Distinct names: the informer metrics tell the namespaces apart.
  assert.deepEqual(c.deployments.map((i) => i.name), [
    "deployments.apps/dco-system",
    "deployments.apps/team-a",
  ]);
  assert.deepEqual(c.services.map((i) => i.name), ["services/dco-system", "services/team-a"]);
  assert.equal(c.servers.resource.namespace, undefined);
  assert.match(c.description, /in namespace\(s\) dco-system, team-a/);
  const scoped = [
    [c.hpas, "horizontalpodautoscalers.autoscaling"],
    [c.pdbs, "poddisruptionbudgets.policy"],
    [c.leases, "leases.coordination.k8s.io"],
  ] as const;
  for (const [list, kind] of scoped) {
    assert.deepEqual(list.map((i) => i.name), [`${kind}/dco-system`, `${kind}/team-a`]);
    for (const i of list) assert.ok(c.informers.includes(i), "started and synced with the rest");
  }
  assert.equal(
    SERVED_LEASE_CACHE_SELECTOR,
    "app.kubernetes.io/managed-by=declarative-conversion-operator," +
      "conversion.terasky.com/webhook-server",
  );
  assert.ok(
    c.description.includes(`served-target Leases only with ${SERVED_LEASE_CACHE_SELECTOR}`),
  );
});

Deno.test("caches: without namespaces, one cluster-wide informer of each", () => {
  const c = createManagerCaches({ client, kinds: ["CRDConversionConfig"], logger });
  assert.deepEqual(c.deployments.map((i) => i.resource.namespace), [undefined]);
  assert.deepEqual(c.services.map((i) => i.name), ["services"]);
  assert.match(c.description, /cluster-wide; Secrets never cached/);
  for (const list of [c.hpas, c.pdbs, c.leases]) {
    assert.deepEqual(list.map((i) => i.resource.namespace), [undefined]);
  }
});
