/**
 * The informer families (docs/observability.md#informer-metrics) against a fake client: every
 * failed LIST or WATCH is counted by reason — after the first sync too (a 403 on a re-list) — and
 * the last-sync timestamp moves only when the cache is known current.
 */
import assert from "node:assert/strict";
import { Registry } from "prom-client";
import {
  FakeClock,
  Informer,
  KubeApiError,
  type KubeClient,
  KubeNetworkError,
  type KubeObject,
  watchErrorReason,
} from "../../src/kube/mod.ts";
import { sample, scrape } from "./_helpers.ts";

const RESOURCE = { group: "", version: "v1", plural: "configmaps" };
const cm = (name: string, rv: string): KubeObject =>
  ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, resourceVersion: rv } }) as KubeObject;

/** Polls (real turns, no time asserted) until `cond` holds. */
async function until(cond: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 1000 && !cond(); i++) await new Promise((r) => setTimeout(r, 5));
  assert.ok(cond(), `timed out waiting for ${what}`);
}

/** A watch that stays open without events until the informer stops. */
// deno-lint-ignore require-yield
async function* openUntilAborted(signal: AbortSignal): AsyncGenerator<never> {
  await new Promise<void>((r) =>
    signal.aborted ? r() : signal.addEventListener("abort", () => r())
  );
}

Deno.test("informer metrics: a 403 on a re-list after the first sync is counted, the timestamp holds", async () => {
  const clock = new FakeClock(1_000_000);
  const registry = new Registry();
  const at: Record<string, number> = {};
  let lists = 0;
  let watches = 0;
  const fake = {
    list: () => {
      lists++;
      clock.advance(1_000);
      if (lists === 1) {
        at.sync = clock.now();
        return Promise.resolve({ metadata: { resourceVersion: "1" }, items: [cm("a", "1")] });
      }
      if (lists === 2) {
        return Promise.reject(new KubeApiError(403, "Forbidden", "configmaps is forbidden"));
      }
      at.relist = clock.now();
      return Promise.resolve({ metadata: { resourceVersion: "5" }, items: [] });
    },
    watch: async function* (_r: unknown, o: { signal: AbortSignal }) {
      watches++;
      if (watches === 1) {
        clock.advance(1_000);
        at.event = clock.now();
        yield { type: "ADDED", object: cm("b", "2") };
        clock.advance(1_000);
        // The resourceVersion is compacted away: the informer must re-list.
        yield {
          type: "ERROR",
          object: { kind: "Status", code: 410, reason: "Expired", message: "too old" },
        };
      }
      yield* openUntilAborted(o.signal);
    },
  } as unknown as KubeClient;
  const informer = new Informer({
    client: fake,
    resource: RESOURCE,
    registry,
    clock,
    backoff: { initialMs: 5, maxMs: 5, jitter: 0 },
  });
  const created = clock.now();
  assert.equal(
    sample(await scrape(registry), "dco_informer_last_sync_timestamp_seconds", {
      resource: "configmaps",
    }),
    created / 1000,
    "set at creation, so a cache that never syncs ages too",
  );
  informer.start();
  await informer.waitForSync();
  await until(() => lists >= 2 && informer.status().phase === "backoff", "the failed re-list");
  let text = await scrape(registry);
  const errors = (reason: string) =>
    sample(text, "dco_informer_watch_errors_total", { resource: "configmaps", reason });
  assert.equal(errors("Expired"), 1);
  assert.equal(errors("Forbidden"), 1, "a failure after the first sync is not only logged");
  assert.equal(
    sample(text, "dco_informer_last_sync_timestamp_seconds", { resource: "configmaps" }),
    at.event / 1000,
    "failures do not move the timestamp: it stays at the last delivered event",
  );
  assert.equal(informer.hasSynced(), true, "the cache keeps serving after the first sync");

  await until(() => lists >= 3 && informer.status().phase === "watching", "the next re-list");
  text = await scrape(registry);
  assert.equal(
    sample(text, "dco_informer_last_sync_timestamp_seconds", { resource: "configmaps" }),
    at.relist / 1000,
  );
  assert.equal(errors("Forbidden"), 1);
  await informer.stop();
});

Deno.test("informer metrics: a failure before the first sync and a dropped stream are counted", async () => {
  const registry = new Registry();
  let lists = 0;
  let watches = 0;
  const fake = {
    list: () => {
      lists++;
      if (lists === 1) return Promise.reject(new KubeApiError(500, undefined, "etcd is down"));
      return Promise.resolve({ metadata: { resourceVersion: "1" }, items: [] });
    },
    watch: async function* (_r: unknown, o: { signal: AbortSignal }) {
      watches++;
      if (watches === 1) throw new KubeNetworkError("connection reset");
      yield* openUntilAborted(o.signal);
    },
  } as unknown as KubeClient;
  const informer = new Informer({
    client: fake,
    resource: { group: "example.com", version: "v1", plural: "things" },
    registry,
    backoff: { initialMs: 5, maxMs: 5, jitter: 0 },
  });
  informer.start();
  await informer.waitForSync();
  await until(() => watches >= 2, "the second watch");
  const text = await scrape(registry);
  const errors = (reason: string) =>
    sample(text, "dco_informer_watch_errors_total", { resource: "things.example.com", reason });
  assert.equal(errors("InternalError"), 1);
  assert.equal(errors("NetworkError"), 1);
  await informer.stop();
});

Deno.test("informer metrics: reasons come from the Status reason, else the error's kind", () => {
  assert.equal(watchErrorReason(new KubeApiError(403, undefined, "")), "Forbidden");
  assert.equal(
    watchErrorReason(new KubeApiError(429, "TooManyRequests", "slow down")),
    "TooManyRequests",
  );
  assert.equal(watchErrorReason(new KubeNetworkError("reset")), "NetworkError");
  assert.equal(watchErrorReason(new Error("bug")), "Unknown");
});
