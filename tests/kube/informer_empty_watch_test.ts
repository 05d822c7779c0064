/**
 * A watch that ends at once with nothing delivered (a proxy answering 200 and closing) is a
 * failed watch with backoff, not a tight reconnect loop — against a fake client.
 */
import assert from "node:assert/strict";
import { Informer, type InformerErrorInfo, type KubeClient } from "../../src/kube/mod.ts";

Deno.test("informer: an empty watch that ends at once backs off and is reported", async () => {
  let watches = 0;
  const fake = {
    list: () => Promise.resolve({ metadata: { resourceVersion: "1" }, items: [] }),
    // deno-lint-ignore require-yield
    watch: async function* () {
      watches++;
      // One macrotask turn, so that a tight reconnect loop cannot starve this test's timers.
      await new Promise((r) => setTimeout(r, 0));
    },
  } as unknown as KubeClient;
  const informer = new Informer({
    client: fake,
    resource: { group: "", version: "v1", plural: "configmaps" },
    backoff: { initialMs: 200, maxMs: 200, jitter: 0 },
  });
  const errors: [string, InformerErrorInfo][] = [];
  informer.onError((e, info) => errors.push([e.message, info]));
  informer.start();
  await informer.waitForSync();
  for (let i = 0; i < 500 && errors.length < 3; i++) {
    await new Promise((r) => setTimeout(r, 20));
  }
  await informer[Symbol.asyncDispose]();
  // Every empty watch is a reported, backed-off failure: no silent tight loop.
  assert.ok(watches <= errors.length + 1, `${watches} watches, ${errors.length} failures`);
  assert.ok(errors.length >= 3, `${errors.length} failures reported over ${watches} watches`);
  assert.match(errors[0][0], /ended after \d+ ms without any event/);
  assert.equal(errors[0][1].terminal, false);
  assert.equal(errors[0][1].retryInMs, 200);
});
