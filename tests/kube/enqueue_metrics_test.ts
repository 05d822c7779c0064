/**
 * A watch-map function that cannot read what it maps through is counted in
 * `dco_watch_map_list_errors_total{map_func}` and enqueues nothing (never a partial or silent
 * empty result); a named map function's series exists at 0 from the moment it is wired.
 */
import assert from "node:assert/strict";
import { Registry } from "prom-client";
import {
  enqueueFor,
  type Informer,
  type InformerEventHandler,
  type KubeObject,
} from "../../src/kube/mod.ts";
import { sample, scrape } from "./_helpers.ts";

/** Just enough of an informer to drive its handlers. */
function fakeInformer(): { informer: Informer; handlers: InformerEventHandler<KubeObject>[] } {
  const handlers: InformerEventHandler<KubeObject>[] = [];
  const informer = {
    name: "things.example.com",
    addEventHandler(h: InformerEventHandler<KubeObject>) {
      handlers.push(h);
      return () => {};
    },
  } as unknown as Informer;
  return { informer, handlers };
}

const obj = (name: string): KubeObject => ({ metadata: { name } }) as KubeObject;

Deno.test("watch map: a mapper that fails is counted under its map_func and enqueues nothing", async () => {
  const registry = new Registry();
  const { informer, handlers } = fakeInformer();
  const added: string[] = [];
  const sink = { add: (k: string) => added.push(k) };
  enqueueFor(informer, sink, (o) => {
    if (o.metadata?.name === "bad") throw new Error("cache: no index target");
    return [`cfg-of-${o.metadata?.name}`];
  }, { mapFunc: "testcontroller.mapThingToConfigs", registry });
  // A lazy mapper that fails half-way through: none of its keys may be enqueued.
  enqueueFor(informer, sink, function* (o) {
    yield `first-of-${o.metadata?.name}`;
    if (o.metadata?.name === "bad") throw new Error("listing failed");
  }, { mapFunc: "testcontroller.mapLazily", registry });

  const count = async (mapFunc: string) =>
    sample(await scrape(registry), "dco_watch_map_list_errors_total", { map_func: mapFunc });
  assert.equal(await count("testcontroller.mapThingToConfigs"), 0, "created at 0 when wired");
  assert.equal(await count("testcontroller.mapLazily"), 0);

  for (const h of handlers) h.add?.(obj("good"));
  for (const h of handlers) h.add?.(obj("bad"));
  assert.deepEqual(added, ["cfg-of-good", "first-of-good"]);
  assert.equal(await count("testcontroller.mapThingToConfigs"), 1);
  assert.equal(await count("testcontroller.mapLazily"), 1);

  // An update maps both sides: each failing side counts once.
  for (const h of handlers) h.update?.(obj("bad"), obj("bad"));
  assert.equal(await count("testcontroller.mapThingToConfigs"), 3);
  assert.deepEqual(added, ["cfg-of-good", "first-of-good"]);
});

Deno.test("watch map: without a name the failure is still logged and nothing is registered", async () => {
  const registry = new Registry();
  const { informer, handlers } = fakeInformer();
  const added: string[] = [];
  enqueueFor(informer, { add: (k) => added.push(k) }, () => {
    throw new Error("boom");
  }, { registry });
  handlers[0].add?.(obj("x"));
  assert.deepEqual(added, []);
  assert.doesNotMatch(await scrape(registry), /dco_watch_map_list_errors_total/);
});
