/**
 * The informer across a real kube-apiserver restart (the process is SIGKILLed and started again
 * on the same port and etcd): the watch drops, reconnects fail while nothing serves the API, and
 * the informer keeps retrying with backoff, surfaces every failure (onError, status), serves its
 * last state meanwhile, and afterwards reflects every change made during the outage or right
 * after it — in the cache and through the handlers. A second case removes an object in etcd
 * while the apiserver is down and compacts etcd past the informer's resourceVersion, so the
 * resume is answered 410 Gone and the informer must relist and emit the delete.
 *
 * No fault is simulated in the client: the outage is the real apiserver going away.
 */
import assert from "node:assert/strict";
import {
  Informer,
  type InformerErrorInfo,
  KubeApiError,
  type KubeClient,
  KubeNetworkError,
  type KubeObject,
  objectKey,
  type ResourceRef,
} from "../../../src/kube/mod.ts";
import { type ControlPlane, waitFor, withControlPlane } from "../../support/control_plane.ts";
import { adminClient, CONFIGMAPS, quietLogger } from "./_support.ts";

interface ConfigMap extends KubeObject {
  data?: Record<string, string>;
}

const cm = (name: string, v: string): ConfigMap => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name },
  data: { v },
});

const FAST = { initialMs: 50, maxMs: 500 };

/** A copy of the store kept only through the handlers: it must end equal to the cache. */
function mirror(inf: Informer<ConfigMap>): Map<string, string | undefined> {
  const m = new Map<string, string | undefined>();
  inf.addEventHandler({
    add: (o) => m.set(objectKey(o), o.data?.v),
    update: (_old, o) => m.set(objectKey(o), o.data?.v),
    delete: (o) => m.delete(objectKey(o)),
  });
  return m;
}

/**
 * ConfigMaps `names` (each `v: "1"`) in a fresh namespace, and a fast-retrying informer on them
 * (not started) whose failures and handler-built mirror are recorded.
 */
async function watched(cp: ControlPlane, admin: KubeClient, prefix: string, names: string[]) {
  const ns = await cp.createNamespace(prefix);
  const ref: ResourceRef = CONFIGMAPS(ns);
  for (const n of names) await admin.create(ref, cm(n, "1"));
  const inf = new Informer<ConfigMap>({
    client: admin,
    resource: ref,
    backoff: FAST,
    logger: quietLogger(),
  });
  const errors: Array<[Error, InformerErrorInfo]> = [];
  inf.onError((e, info) => errors.push([e, info]));
  return { ns, ref, inf, errors, seen: mirror(inf) };
}

/** `key → data.v` of the informer's cache. */
function cached(inf: Informer<ConfigMap>): Map<string, string | undefined> {
  return new Map(inf.list().map((o) => [objectKey(o), o.data?.v]));
}

/** Retries `fn` until the apiserver answers it (it may be down or starting); `ok` ends it too. */
function untilServed(
  what: string,
  fn: () => Promise<unknown>,
  ok: (e: unknown) => boolean = () => false,
): Promise<unknown> {
  return waitFor(what, async () => {
    try {
      await fn();
    } catch (e) {
      if (!ok(e)) throw e;
    }
    return true;
  }, { timeoutMs: 120_000 });
}

const status = (code: number) => (e: unknown) => e instanceof KubeApiError && e.status === code;

/** etcd v3 JSON gateway call. */
async function etcd<T>(cp: ControlPlane, path: string, body: unknown): Promise<T> {
  const res = await fetch(`${cp.etcdURL}/v3/${path}`, {
    method: "POST",
    body: JSON.stringify(body),
  });
  const text = await res.text();
  assert.ok(res.ok, `etcd ${path}: ${res.status} ${text}`);
  return JSON.parse(text) as T;
}

Deno.test(
  "informer across a kube-apiserver restart",
  withControlPlane(async (cp, t) => {
    using admin = await adminClient(cp);

    await t.step({
      name: "reconnects with backoff; changes made during the outage or right after arrive",
      ignore: cp.external, // restarts the local apiserver
      fn: async () => {
        const w = await watched(cp, admin, "restart", ["keep", "upd", "del"]);
        const { ns, ref, errors, seen } = w;
        await using inf = w.inf;
        await inf.start().waitForSync();
        const before = new Map([[`${ns}/keep`, "1"], [`${ns}/upd`, "1"], [`${ns}/del`, "1"]]);
        assert.deepEqual(cached(inf), before);

        let writes: Promise<unknown> | undefined;
        await cp.restartApiServer({
          whileDown: async () => {
            // The dropped watch is noticed and retried, loudly, while nothing answers.
            await waitFor("the informer to report the outage", () => {
              const s = inf.status();
              return s.consecutiveFailures >= 2 && s.lastError instanceof KubeNetworkError;
            });
            // Meanwhile the cache keeps serving its last state and the informer is not done.
            assert.deepEqual(cached(inf), before);
            assert.ok(inf.hasSynced());
            assert.ok(!["failed", "stopped"].includes(inf.status().phase), inf.status().phase);
            // Writes issued now land as soon as the apiserver serves again (each is retried;
            // the informer may resume before, between or after them).
            writes = Promise.all([
              untilServed("create new", () => admin.create(ref, cm("new", "1")), status(409)),
              untilServed(
                "update upd",
                () => admin.patch(ref, "upd", { data: { v: "2" } }, { type: "merge" }),
              ),
              untilServed("delete del", () => admin.delete(ref, "del"), status(404)),
            ]);
          },
        });
        await writes;

        const want = new Map([[`${ns}/keep`, "1"], [`${ns}/upd`, "2"], [`${ns}/new`, "1"]]);
        await waitFor("the cache to reflect the outage's writes", () => {
          const c = cached(inf);
          return c.size === want.size && [...want].every(([k, v]) => c.get(k) === v);
        });
        assert.deepEqual(cached(inf), want);
        assert.deepEqual(seen, want, "the handlers saw every change");
        // The apiserver agrees.
        const listed = await admin.list<ConfigMap>(ref);
        assert.deepEqual(
          new Map(listed.items.map((o) => [`${ns}/${o.metadata.name}`, o.data?.v])),
          want,
        );

        // Every failure was surfaced as a retry of the watch; none was terminal.
        const watchDrops = errors.filter(([e, info]) =>
          info.operation === "watch" && e instanceof KubeNetworkError
        );
        assert.ok(watchDrops.length >= 2, `reported watch failures: ${watchDrops.length}`);
        assert.ok(watchDrops.every(([, info]) => info.retryInMs !== undefined));
        assert.ok(errors.every(([, info]) => !info.terminal));
        // Back to normal: later changes still arrive, and the informer reports itself healthy
        // while its watch runs (not only once that watch ends, minutes later).
        await admin.create(ref, cm("later", "1"));
        await waitFor("a change after the restart", () => inf.get(`${ns}/later`));
        assert.equal(seen.get(`${ns}/later`), "1");
        await waitFor("the informer to be healthy again", () => {
          const s = inf.status();
          return s.phase === "watching" && s.consecutiveFailures === 0;
        });
        assert.ok(inf.hasSynced());
      },
    });

    await t.step({
      name: "deleted in etcd and compacted while the apiserver is down: 410 on resume, relist",
      ignore: cp.external, // needs the local etcd and apiserver
      fn: async () => {
        const w = await watched(cp, admin, "restart410", ["a", "b", "c"]);
        const { ns, ref, errors, seen } = w;
        await using inf = w.inf;
        const deleted: string[] = [];
        inf.addEventHandler({ delete: (o) => deleted.push(objectKey(o)) });
        await inf.start().waitForSync();
        const oldRV = Number(inf.status().resourceVersion);
        assert.equal(inf.status().lists, 1);

        await cp.restartApiServer({
          whileDown: async () => {
            await waitFor("the informer to notice the outage", () => {
              return inf.status().lastError instanceof KubeNetworkError;
            });
            // Nothing serves the API: remove "b" straight from storage (the apiserver will list
            // it as gone) and compact past the informer's resourceVersion.
            const key = btoa(`/registry/configmaps/${ns}/b`);
            const del = await etcd<{ deleted?: string; header: { revision: string } }>(
              cp,
              "kv/deleterange",
              { key },
            );
            assert.equal(del.deleted, "1", "setup: b was in etcd");
            assert.ok(Number(del.header.revision) > oldRV);
            await etcd(cp, "kv/compaction", { revision: del.header.revision, physical: true });
          },
        });

        await waitFor("the relist to drop b", () => inf.get(`${ns}/b`) === undefined);
        const want = new Map([[`${ns}/a`, "1"], [`${ns}/c`, "1"]]);
        assert.deepEqual(cached(inf), want);
        assert.deepEqual(seen, want);
        assert.deepEqual(deleted, [`${ns}/b`], "the handlers saw the delete");
        const s = inf.status();
        assert.ok(s.expired >= 1, `expired: ${s.expired}`);
        assert.ok(s.lists >= 2, `lists: ${s.lists}`);
        assert.ok(
          errors.some(([e]) => e instanceof KubeApiError && e.status === 410),
          "the 410 was surfaced",
        );
        assert.ok(errors.every(([, info]) => !info.terminal));
        // And it keeps watching after the relist.
        await admin.patch(ref, "c", { data: { v: "2" } }, { type: "merge" });
        await waitFor("a change after the relist", () => inf.get(`${ns}/c`)?.data?.v === "2");
        assert.equal(seen.get(`${ns}/c`), "2");
      },
    });
  }, { name: "kube-informer-restart" }),
);
