/**
 * The paced CWS → configs fan-out (docs/design/manager.md#controllers-and-what-wakes-them):
 * adding a pool member wakes exactly the configs it now wins, removing one exactly the configs it
 * held — checked key by key over 200 targets against the resolver.
 */
import assert from "node:assert/strict";
import { resolveServer, type ServerInfo } from "../../src/assign/resolve.ts";
import { configsToWake } from "../../src/manager/config_controller.ts";
import type { KubeObject } from "../../src/kube/mod.ts";

function config(i: number, assigned?: string, pinned?: string): KubeObject {
  return {
    apiVersion: "terasky.com/v1alpha1",
    kind: "CRDConversionConfig",
    metadata: { name: `cfg${String(i).padStart(3, "0")}` },
    spec: {
      targetCRD: { name: `things${i}.example.com` },
      ...(pinned ? { webhookServerRef: { name: pinned } } : {}),
    },
    ...(assigned ? { status: { assignedWebhookServer: assigned } } : {}),
  } as KubeObject;
}

const before: ServerInfo[] = [
  { name: "a", default: true, sharding: {} },
  { name: "b", sharding: {} },
];
const after: ServerInfo[] = [...before, { name: "c", sharding: {} }];

function placed(servers: ServerInfo[], i: number): string {
  const r = resolveServer({ target: `things${i}.example.com` }, servers);
  assert.ok(r.ok);
  return r.server;
}

Deno.test("adding a pool member wakes exactly the configs it now wins", () => {
  // Configs as the manager left them before c joined: assigned by the old pool.
  const configs = Array.from({ length: 200 }, (_, i) => config(i, placed(before, i)));
  const woken = configsToWake("c", after, configs);
  const expected = configs.filter((_, i) => placed(after, i) === "c")
    .map((c) => c.metadata!.name!);
  assert.deepEqual(woken, expected);
  assert.ok(woken.length > 20 && woken.length < 120, `c wins a share: ${woken.length}`);
  // Disruption property: each of them moved to c, nothing else moved.
  for (let i = 0; i < 200; i++) {
    const moved = placed(before, i) !== placed(after, i);
    assert.equal(moved, placed(after, i) === "c", `things${i}`);
  }
});

Deno.test("removing a pool member wakes exactly the configs it held", () => {
  const configs = Array.from({ length: 200 }, (_, i) => config(i, placed(after, i)));
  // c leaves the pool (deleted, or sharding.enabled: false): the event is c's.
  const woken = configsToWake("c", before, configs);
  const held = configs.filter((_, i) => placed(after, i) === "c").map((c) => c.metadata!.name!);
  assert.deepEqual(woken, held);
});

Deno.test("an explicit pin wins over the pool, and the old holder is woken too", () => {
  const configs = [config(1, "a", "b"), config(2, "b"), config(3, "a")];
  assert.deepEqual(configsToWake("b", before, configs).includes("cfg001"), true);
  assert.deepEqual(configsToWake("a", before, configs).includes("cfg001"), true, "it held it");
});
