/**
 * The manager's owned-children caches follow `--webhook-server-namespaces`: one Deployment and one
 * Service informer per allowed namespace (the chart's Roles grant list/watch only there), or one
 * cluster-wide of each when no namespaces are given; the cluster-scoped kinds stay cluster-wide.
 */
import assert from "node:assert/strict";
import { createManagerCaches } from "../../src/manager/caches.ts";
import { createLogger } from "../../src/obs/log.ts";

const client = {} as never; // informers only talk to it once started
const logger = createLogger("test");

Deno.test("caches: Deployments and Services are watched per allowed namespace", () => {
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
});

Deno.test("caches: without namespaces, one cluster-wide informer of each", () => {
  const c = createManagerCaches({ client, kinds: ["CRDConversionConfig"], logger });
  assert.deepEqual(c.deployments.map((i) => i.resource.namespace), [undefined]);
  assert.deepEqual(c.services.map((i) => i.name), ["services"]);
  assert.match(c.description, /cluster-wide; Secrets never cached/);
});
