/**
 * The replica's per-config decisions (docs/design/webhook.md#the-per-config-reconcile) with a
 * fixed clock: what it serves, what
 * it drains for 30 s before forgetting, and — our change from the reference — that a deleting
 * config keeps being served while its target still points here, and a deleted one is drained.
 */
import assert from "node:assert/strict";
import type { JsonObject } from "../../src/engine/mod.ts";
import type { ServerInfo } from "../../src/assign/resolve.ts";
import type { CompileResult, ConfigKind } from "../../src/webhook/compiled.ts";
import {
  type CachedConfig,
  type ClusterView,
  RegistryController,
  type RegistryWriter,
} from "../../src/webhook/registry_controller.ts";

const TARGET = "widgets.example.com";

function crd(pointedAt: string | undefined): JsonObject {
  return {
    metadata: { name: TARGET, generation: 1 },
    spec: {
      group: "example.com",
      names: { kind: "Widget", plural: "widgets" },
      versions: [{ name: "v1", served: true, storage: true }],
      conversion: pointedAt === undefined ? { strategy: "None" } : {
        strategy: "Webhook",
        webhook: { clientConfig: { service: { name: pointedAt, namespace: "dco-system" } } },
      },
    },
  };
}

class Fixture implements ClusterView, RegistryWriter {
  config: CachedConfig | undefined = {
    metadata: { name: "widgets", generation: 1 },
    spec: { targetCRD: { name: TARGET }, hubVersion: "v1", spokes: [] },
  };
  servers: ServerInfo[] = [{ name: "dco", default: true }];
  target: JsonObject | undefined = crd("dco-webhook-server");
  readonly held = new Set<string>();
  compiles = 0;
  clock = 1_000_000;
  readonly controller = new RegistryController({
    serverName: "dco",
    view: this,
    registry: this,
    compile: () => {
      this.compiles++;
      return Promise.resolve({ target: TARGET } as unknown as CompileResult);
    },
    now: () => this.clock,
  });

  getConfig(_kind: ConfigKind, _name: string) {
    return this.config;
  }
  listConfigs() {
    return this.config ? [this.config] : [];
  }
  listServers() {
    return this.servers;
  }
  getTarget() {
    return this.target;
  }
  install(result: CompileResult) {
    this.held.add(result.target);
  }
  remove(target: string) {
    this.held.delete(target);
  }
  has(target: string) {
    return this.held.has(target);
  }
  reconcile() {
    return this.controller.reconcile("crd", "widgets");
  }
}

Deno.test("an assigned config is compiled and served", async () => {
  const f = new Fixture();
  assert.deepEqual(await f.reconcile(), {});
  assert.ok(f.held.has(TARGET));
  assert.equal(f.compiles, 1);
});

Deno.test("a target that moved away is drained for 30 s, then forgotten", async () => {
  const f = new Fixture();
  await f.reconcile();
  f.servers = [{ name: "dco", default: true }, { name: "other" }];
  f.config!.spec.webhookServerRef = { name: "other" };
  f.target = crd("other-webhook-server");
  assert.deepEqual(await f.reconcile(), { requeueAfter: 30_000 });
  assert.ok(f.held.has(TARGET), "kept during the drain");
  f.clock += 29_999;
  assert.deepEqual(await f.reconcile(), { requeueAfter: 1 });
  assert.ok(f.held.has(TARGET));
  f.clock += 1;
  assert.deepEqual(await f.reconcile(), {});
  assert.ok(!f.held.has(TARGET));
  assert.equal(f.compiles, 1, "not recompiled while draining");
});

Deno.test("a target still pointed here is served even when assigned elsewhere", async () => {
  const f = new Fixture();
  f.servers = [{ name: "dco", default: true }, { name: "other" }];
  f.config!.spec.webhookServerRef = { name: "other" };
  assert.deepEqual(await f.reconcile(), {});
  assert.ok(f.held.has(TARGET));
});

Deno.test("a deleting config keeps serving while its target points here", async () => {
  const f = new Fixture();
  await f.reconcile();
  // Delete blocked (several served versions): the finalizer holds it, the stanza stays.
  f.config!.metadata.deletionTimestamp = "2026-11-29T00:00:00Z";
  assert.deepEqual(await f.reconcile(), {});
  assert.ok(f.held.has(TARGET), "reads must keep converting while the delete is blocked");
  // The revert lands: the target no longer points here → drain, then forget.
  f.target = crd(undefined);
  assert.deepEqual(await f.reconcile(), { requeueAfter: 30_000 });
  assert.ok(f.held.has(TARGET));
  f.clock += 30_000;
  assert.deepEqual(await f.reconcile(), {});
  assert.ok(!f.held.has(TARGET));
});

Deno.test("a deleted config is drained for 30 s before its plan goes", async () => {
  const f = new Fixture();
  await f.reconcile();
  f.config = undefined;
  f.target = crd(undefined);
  assert.deepEqual(await f.reconcile(), { requeueAfter: 30_000 });
  assert.ok(f.held.has(TARGET), "the apiserver may still call right after the revert");
  f.clock += 10_000;
  assert.deepEqual(await f.reconcile(), { requeueAfter: 20_000 });
  f.clock += 20_000;
  assert.deepEqual(await f.reconcile(), {});
  assert.ok(!f.held.has(TARGET));
  // Nothing is left to drain: a further event is a no-op.
  assert.deepEqual(await f.reconcile(), {});
});

Deno.test("a deleted config that was never served leaves nothing behind", async () => {
  const f = new Fixture();
  f.config = undefined;
  assert.deepEqual(await f.reconcile(), {});
  assert.equal(f.held.size, 0);
});
