/**
 * The informer against a real kube-apiserver: list (paged) + watch of ConfigMaps with
 * add/update/delete handlers, label-selector scoping, the pre-store transform, watch resumption
 * across server-side timeouts with bookmarks, a genuine 410 (etcd compacted under a watch
 * resuming from an old resourceVersion, and under a paged LIST) that relists and keeps the
 * store right, fast failure of waitForSync for an identity without RBAC / a kind that is not
 * installed / a bad selector, loud retrying after a permission is lost post-sync, a CRD-backed
 * informer with an index, and informer → controller wiring.
 *
 * Fault injection is limited to the network path between informer and apiserver (a watch
 * connection is cut and held, or etcd is compacted at a chosen moment); every answer the informer
 * acts on comes from the real apiserver.
 */
import assert from "node:assert/strict";
import { setTimeout as delay } from "node:timers/promises";
import { Registry } from "prom-client";
import {
  Controller,
  enqueueFor,
  Informer,
  type InformerErrorInfo,
  KubeApiError,
  KubeClient,
  KubeNetworkError,
  type KubeObject,
  type ListOptions,
  loadKubeconfig,
  objectKey,
  type ObjectList,
  type ResourceRef,
  type WatchEvent,
  type WatchOptions,
} from "../../../src/kube/mod.ts";
import { type ControlPlane, waitFor, withControlPlane } from "../../support/control_plane.ts";
import { sample, scrape } from "../../kube/_helpers.ts";
import {
  adminClient,
  CONFIGMAPS,
  grant,
  quietLogger,
  rejects,
  SECRETS,
  serviceAccountClient,
} from "./_support.ts";

interface ConfigMap extends KubeObject {
  data?: Record<string, string>;
}

type Ev = [string, string, string?];

/** Records handler calls as [event, key, data.v] tuples. */
function recorder<T extends ConfigMap>(inf: Informer<T>): Ev[] {
  const events: Ev[] = [];
  inf.addEventHandler({
    add: (o) => events.push(["add", objectKey(o), o.data?.v]),
    update: (old, o) => events.push(["update", objectKey(o), `${old.data?.v}->${o.data?.v}`]),
    delete: (o) => events.push(["delete", objectKey(o), o.data?.v]),
  });
  return events;
}

const cm = (name: string, data: Record<string, string> = {}, labels?: Record<string, string>) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, labels },
  data,
});

const FAST = { initialMs: 50, maxMs: 500 };

/**
 * A real client whose watch connections can be cut and held (a network outage), and whose LIST
 * can run a hook before a given page (to compact etcd between pages).
 */
class FaultyClient extends KubeClient {
  #hold: PromiseWithResolvers<void> | undefined;
  #cut = new AbortController();
  held = 0;
  listCalls = 0;
  beforeList: ((call: number, opts: ListOptions) => Promise<void>) | undefined;

  /** Drops every open watch and holds new ones until {@link release}. */
  cutAndHold(): void {
    this.#hold = Promise.withResolvers<void>();
    this.#cut.abort(new KubeNetworkError("test: connection dropped"));
  }

  release(): void {
    const h = this.#hold;
    this.#hold = undefined;
    this.#cut = new AbortController();
    h?.resolve();
  }

  override async list<T extends KubeObject = KubeObject>(
    ref: ResourceRef,
    opts: ListOptions = {},
  ): Promise<ObjectList<T>> {
    await this.beforeList?.(++this.listCalls, opts);
    return await super.list<T>(ref, opts);
  }

  override async *watch<T extends KubeObject = KubeObject>(
    ref: ResourceRef,
    opts: WatchOptions = {},
  ): AsyncGenerator<WatchEvent<T>, void, undefined> {
    while (this.#hold) {
      this.held++;
      const stop = Promise.withResolvers<void>();
      opts.signal?.addEventListener("abort", () => stop.resolve(), { once: true });
      await Promise.race([this.#hold.promise, stop.promise]);
      this.held--;
      if (opts.signal?.aborted) throw opts.signal.reason;
    }
    const signal = opts.signal
      ? AbortSignal.any([opts.signal, this.#cut.signal])
      : this.#cut.signal;
    yield* super.watch<T>(ref, { ...opts, signal });
  }
}

/** Compacts etcd up to `revision` (the apiserver's resourceVersion is etcd's revision). */
async function compactEtcd(cp: ControlPlane, revision: string): Promise<void> {
  const res = await fetch(`${cp.etcdURL}/v3/kv/compaction`, {
    method: "POST",
    body: JSON.stringify({ revision, physical: true }),
  });
  const body = await res.text();
  assert.ok(res.ok, `etcd compaction failed: ${res.status} ${body}`);
}

Deno.test(
  "informer against a real apiserver",
  withControlPlane(async (cp, t) => {
    using admin = await adminClient(cp);

    await t.step("lists (paged), then receives add, update and delete", async () => {
      const ns = await cp.createNamespace("inf");
      for (let i = 0; i < 5; i++) await admin.create(CONFIGMAPS(ns), cm(`pre-${i}`, { v: "0" }));
      await using inf = new Informer<ConfigMap>({
        client: admin,
        resource: CONFIGMAPS(ns),
        pageSize: 2,
      });
      const events = recorder(inf);
      inf.start();
      await inf.waitForSync();
      assert.ok(inf.hasSynced());
      assert.deepEqual(inf.keys().sort(), [0, 1, 2, 3, 4].map((i) => `${ns}/pre-${i}`));
      assert.equal(events.filter(([e]) => e === "add").length, 5);
      const pre = inf.get(`${ns}/pre-0`)!;
      assert.equal(pre.kind, "ConfigMap", "list items get their kind filled in");
      assert.equal(pre.apiVersion, "v1");
      assert.equal(inf.status().lists, 1);

      events.length = 0;
      await admin.create(CONFIGMAPS(ns), cm("live", { v: "1" }));
      await admin.patch(CONFIGMAPS(ns), "live", { data: { v: "2" } }, { type: "merge" });
      await admin.delete(CONFIGMAPS(ns), "pre-3");
      await waitFor("three events", () => events.length >= 3);
      assert.deepEqual(events, [
        ["add", `${ns}/live`, "1"],
        ["update", `${ns}/live`, "1->2"],
        ["delete", `${ns}/pre-3`, "0"],
      ]);
      assert.equal(inf.get(`${ns}/live`)?.data?.v, "2");
      assert.equal(inf.get(`${ns}/pre-3`), undefined);
      assert.equal(inf.size, 5);
      assert.equal(inf.list().length, 5);
      // A handler added late is replayed the current objects.
      const late: string[] = [];
      inf.addEventHandler({ add: (o) => late.push(objectKey(o)) });
      assert.equal(late.length, 5);
      await inf.stop();
      assert.equal(inf.status().phase, "stopped");
    });

    await t.step(
      "a label selector scopes the cache; leaving the selector is a delete",
      async () => {
        const ns = await cp.createNamespace("sel");
        await admin.create(CONFIGMAPS(ns), cm("in", { v: "1" }, { app: "in" }));
        await admin.create(CONFIGMAPS(ns), cm("out", { v: "1" }, { app: "out" }));
        await using inf = new Informer<ConfigMap>({
          client: admin,
          resource: CONFIGMAPS(ns),
          labelSelector: "app=in",
        });
        const events = recorder(inf);
        await inf.start().waitForSync();
        assert.deepEqual(inf.keys(), [`${ns}/in`]);
        await admin.create(CONFIGMAPS(ns), cm("out2", {}, { app: "out" }));
        await admin.patch(CONFIGMAPS(ns), "in", { metadata: { labels: { app: "gone" } } }, {
          type: "merge",
        });
        await waitFor("the relabelled object to leave", () => inf.size === 0);
        await admin.patch(CONFIGMAPS(ns), "out", { metadata: { labels: { app: "in" } } }, {
          type: "merge",
        });
        await waitFor("the relabelled object to enter", () => inf.size === 1);
        assert.deepEqual(events, [
          ["add", `${ns}/in`, "1"],
          ["delete", `${ns}/in`, "1"],
          ["add", `${ns}/out`, "1"],
        ]);
      },
    );

    await t.step("transform runs before the store on listed and watched objects", async () => {
      const ns = await cp.createNamespace("xf");
      const LAST = "kubectl.kubernetes.io/last-applied-configuration";
      const annotated = (name: string) => ({
        ...cm(name, { v: "1" }),
        metadata: { name, annotations: { [LAST]: "{}", keep: "yes" } },
      });
      await admin.apply(CONFIGMAPS(ns), annotated("listed"), { fieldManager: "dco-test" });
      const seen: string[] = [];
      const strip = (o: ConfigMap) => {
        seen.push(`${o.metadata.name}`);
        delete o.metadata.managedFields;
        if (o.metadata.annotations) delete o.metadata.annotations[LAST];
      };
      await using inf = new Informer<ConfigMap>({
        client: admin,
        resource: CONFIGMAPS(ns),
        transform: strip,
      });
      const deleted: ConfigMap[] = [];
      inf.addEventHandler({ delete: (o) => deleted.push(o) });
      await inf.start().waitForSync();
      await admin.apply(CONFIGMAPS(ns), annotated("watched"), { fieldManager: "dco-test" });
      await waitFor("the watched object", () => inf.get(`${ns}/watched`));
      for (const key of [`${ns}/listed`, `${ns}/watched`]) {
        const o = inf.get(key)!;
        assert.equal(o.metadata.managedFields, undefined, key);
        assert.deepEqual(o.metadata.annotations, { keep: "yes" }, key);
      }
      // The apiserver really sent them: an untransformed read still has both.
      const raw = await admin.get(CONFIGMAPS(ns), "watched");
      assert.ok(raw.metadata.managedFields && raw.metadata.annotations?.[LAST]);
      await admin.delete(CONFIGMAPS(ns), "watched");
      await waitFor("the delete", () => deleted.length === 1);
      assert.equal(deleted[0].metadata.managedFields, undefined, "DELETED objects too");
      assert.deepEqual(seen, ["listed", "watched", "watched"]);
    });

    await t.step("a throwing transform never drops an object", async () => {
      const ns = await cp.createNamespace("xfbad");
      await admin.create(CONFIGMAPS(ns), cm("a"));
      await using inf = new Informer<ConfigMap>({
        client: admin,
        resource: CONFIGMAPS(ns),
        transform: () => {
          throw new Error("buggy transform");
        },
        logger: quietLogger(),
      });
      await inf.start().waitForSync();
      await admin.create(CONFIGMAPS(ns), cm("b"));
      await waitFor("both objects", () => inf.size === 2);
    });

    await t.step(
      "watches resume from their resourceVersion across timeouts; bookmarks advance it",
      async () => {
        const ns = await cp.createNamespace("bm");
        await admin.create(CONFIGMAPS(ns), cm("mine", {}, { bm: "yes" }));
        await using inf = new Informer<ConfigMap>({
          client: admin,
          resource: CONFIGMAPS(ns),
          labelSelector: "bm=yes",
          watchTimeoutSeconds: 3,
        });
        await inf.start().waitForSync();
        const rv0 = Number(inf.status().resourceVersion);
        // Writes the selector filters out: only bookmarks can tell the informer about them.
        let n = 0;
        await waitFor("bookmarks over several watches", async () => {
          await admin.create(CONFIGMAPS(ns), cm(`noise-${n++}`, {}, { bm: "no" }));
          const s = inf.status();
          return s.bookmarks >= 1 && s.watches >= 3;
        }, { intervalMs: 300 });
        const s = inf.status();
        assert.equal(s.lists, 1, "resumed without relisting");
        assert.equal(s.expired, 0);
        assert.ok(Number(s.resourceVersion) > rv0, "bookmarks moved the resourceVersion");
        assert.deepEqual(inf.keys(), [`${ns}/mine`]);
        await admin.create(CONFIGMAPS(ns), cm("mine2", {}, { bm: "yes" }));
        await waitFor("a new object after several watches", () => inf.size === 2);
      },
    );

    await t.step({
      name: "410 Gone from a compacted etcd: relist keeps the store right",
      ignore: cp.external, // needs the local etcd
      fn: async () => {
        const ns = await cp.createNamespace("gone");
        const secret = (name: string, v: string) => ({
          apiVersion: "v1",
          kind: "Secret",
          metadata: { name },
          stringData: { v },
        });
        for (const n of ["s1", "s2", "s3"]) await admin.create(SECRETS(ns), secret(n, "1"));
        using client = new FaultyClient(await loadKubeconfig([cp.kubeconfigPath]));
        const errors: Array<[Error, InformerErrorInfo]> = [];
        await using inf = new Informer<KubeObject & { data?: Record<string, string> }>({
          client,
          resource: SECRETS(ns),
          backoff: FAST,
          logger: quietLogger(),
        });
        inf.onError((e, info) => errors.push([e, info]));
        const events: Ev[] = [];
        inf.addEventHandler({
          add: (o) => events.push(["add", objectKey(o)]),
          update: (_old, o) => events.push(["update", objectKey(o)]),
          delete: (o) => events.push(["delete", objectKey(o)]),
        });
        await inf.start().waitForSync();
        const oldRV = inf.status().resourceVersion;

        // Outage: the watch drops and cannot reconnect while the world changes…
        client.cutAndHold();
        await waitFor("the informer to be held offline", () => client.held > 0);
        events.length = 0;
        await admin.delete(SECRETS(ns), "s1");
        await admin.patch(SECRETS(ns), "s2", { stringData: { v: "2" } }, { type: "merge" });
        const s4 = await admin.create(SECRETS(ns), secret("s4", "1"));
        // …and etcd compacts past the informer's resourceVersion.
        await compactEtcd(cp, s4.metadata.resourceVersion!);
        // Setup check: resuming from the old resourceVersion is really answered 410.
        const first = await (async () => {
          for await (const ev of admin.watch(SECRETS(ns), { resourceVersion: oldRV })) return ev;
        })();
        assert.equal(first?.type, "ERROR");
        assert.equal(first?.type === "ERROR" && first.object.code, 410);

        client.release();
        await waitFor("the relist", () => inf.status().lists >= 2);
        assert.deepEqual(inf.keys().sort(), [`${ns}/s2`, `${ns}/s3`, `${ns}/s4`]);
        assert.equal(atob(inf.get(`${ns}/s2`)!.data!.v), "2");
        assert.deepEqual(events.sort(), [
          ["add", `${ns}/s4`],
          ["delete", `${ns}/s1`],
          ["update", `${ns}/s2`],
        ]);
        const s = inf.status();
        assert.ok(s.expired >= 1);
        assert.ok(errors.some(([e]) => e instanceof KubeApiError && e.status === 410));
        assert.ok(errors.every(([, info]) => !info.terminal));
        // And it keeps watching after the relist.
        await admin.create(SECRETS(ns), secret("s5", "1"));
        await waitFor("a change after the relist", () => inf.get(`${ns}/s5`));
      },
    });

    await t.step({
      name: "410 on a LIST continue token: the list restarts unpaged",
      ignore: cp.external, // needs the local etcd
      fn: async () => {
        const ns = await cp.createNamespace("gonepage");
        for (let i = 0; i < 4; i++) {
          await admin.create(SECRETS(ns), { metadata: { name: `p${i}` }, stringData: { v: "1" } });
        }
        using client = new FaultyClient(await loadKubeconfig([cp.kubeconfigPath]));
        let compactedAt = "";
        client.beforeList = async (call, opts) => {
          if (call === 2 && opts.continue) {
            // Between the pages: a write, then compaction past the first page's snapshot.
            const w = await admin.create(SECRETS(ns), {
              metadata: { name: "written-between-pages" },
            });
            compactedAt = w.metadata.resourceVersion!;
            await compactEtcd(cp, compactedAt);
          }
        };
        await using inf = new Informer({
          client,
          resource: SECRETS(ns),
          pageSize: 1,
          logger: quietLogger(),
        });
        await inf.start().waitForSync();
        assert.ok(compactedAt, "the hook ran between pages");
        assert.equal(client.listCalls, 3, "page 1, the expired page 2, one unpaged list");
        assert.deepEqual(
          inf.keys().sort(),
          [...[0, 1, 2, 3].map((i) => `${ns}/p${i}`), `${ns}/written-between-pages`].sort(),
        );
      },
    });

    await t.step("waitForSync rejects at once with the cause: 403, 404, 400", async () => {
      const ns = await cp.createNamespace("denied");
      const { client } = await serviceAccountClient(cp, admin, ns, "nobody");
      using _c = client;
      const errors: InformerErrorInfo[] = [];
      await using inf = new Informer({
        client,
        resource: CONFIGMAPS(ns),
        logger: quietLogger(),
      });
      inf.onError((_e, info) => errors.push(info));
      const guard = AbortSignal.timeout(30_000); // only so a regression fails instead of hanging
      const e403 = await rejects(inf.start().waitForSync(guard));
      assert.ok(e403 instanceof KubeApiError, String(e403));
      assert.equal(e403.status, 403);
      assert.equal(e403.reason, "Forbidden");
      assert.match(e403.message, /cannot list resource "configmaps"/);
      assert.equal(inf.status().phase, "failed");
      assert.equal(inf.status().lastError, e403);
      assert.deepEqual(errors.map((i) => [i.operation, i.terminal]), [["list", true]]);
      assert.equal(await rejects(inf.waitForSync()), e403, "later waiters get the same cause");

      await using missing = new Informer({
        client: admin,
        resource: { group: "not-installed.dco.test", version: "v1", plural: "things" },
        logger: quietLogger(),
      });
      const e404 = await rejects(missing.start().waitForSync(guard));
      assert.equal((e404 as KubeApiError).status, 404);

      await using badSelector = new Informer({
        client: admin,
        resource: CONFIGMAPS(ns),
        labelSelector: "app in (",
        logger: quietLogger(),
      });
      const e400 = await rejects(badSelector.start().waitForSync(guard));
      assert.equal((e400 as KubeApiError).status, 400);
    });

    await t.step(
      "after sync, a lost permission is surfaced, counted and retried; the cache keeps serving",
      async () => {
        const ns = await cp.createNamespace("revoked");
        await admin.create(CONFIGMAPS(ns), cm("kept"));
        const { client } = await serviceAccountClient(cp, admin, ns, "watcher");
        using _c = client;
        const { binding } = await grant(admin, ns, "watcher", "configmaps", ["list", "watch"]);
        await waitFor("RBAC", async () => (await client.list(CONFIGMAPS(ns))).items.length > 0);
        const errors: Array<[Error, InformerErrorInfo]> = [];
        const registry = new Registry();
        await using inf = new Informer({
          client,
          resource: CONFIGMAPS(ns),
          watchTimeoutSeconds: 2,
          backoff: FAST,
          logger: quietLogger(),
          registry,
        });
        inf.onError((e, info) => errors.push([e, info]));
        await inf.start().waitForSync();
        const metric = async (name: string, labels: Record<string, string>) =>
          sample(await scrape(registry), name, { resource: "configmaps", ...labels });
        const lastSync = () => metric("dco_informer_last_sync_timestamp_seconds", {});
        const forbidden = () => metric("dco_informer_watch_errors_total", { reason: "Forbidden" });

        const rbac = {
          group: "rbac.authorization.k8s.io",
          version: "v1",
          plural: "rolebindings",
          namespace: ns,
        };
        await admin.delete(rbac, binding.metadata.name!);
        await waitFor(
          "a surfaced 403",
          () => errors.find(([e]) => e instanceof KubeApiError && e.status === 403),
        );
        assert.ok(
          errors.every(([, info]) => !info.terminal),
          "never terminal after sync",
        );
        assert.ok(inf.status().consecutiveFailures > 0);
        assert.ok(inf.status().lastError instanceof KubeApiError);
        assert.deepEqual(inf.keys(), [`${ns}/kept`], "the cache keeps its last state");
        assert.notEqual(inf.status().phase, "failed");
        // Counted, not only logged; and no progress is claimed while every attempt is refused.
        const stale = await lastSync();
        const counted = errors.length;
        await waitFor("two more refused attempts", () => errors.length >= counted + 2);
        assert.ok((await forbidden() ?? 0) >= 3, `Forbidden count ${await forbidden()}`);
        assert.equal(await lastSync(), stale, "failures do not move the last-sync timestamp");

        await grant(admin, ns, "watcher", "configmaps", ["list", "watch"]);
        await admin.create(CONFIGMAPS(ns), cm("after"));
        await waitFor("recovery", () => inf.get(`${ns}/after`));
        await waitFor("failures reset", () => inf.status().consecutiveFailures === 0);
        assert.ok((await lastSync())! > stale!, "progress after recovery moves the timestamp");
      },
    );

    await t.step("a CRD-backed informer with an index on spec.targetCRD.name", async () => {
      const group = "kube.dco.test";
      const crds = {
        group: "apiextensions.k8s.io",
        version: "v1",
        plural: "customresourcedefinitions",
      };
      await admin.apply(crds, {
        apiVersion: "apiextensions.k8s.io/v1",
        kind: "CustomResourceDefinition",
        metadata: { name: `gadgetconfigs.${group}` },
        spec: {
          group,
          scope: "Cluster",
          names: { plural: "gadgetconfigs", singular: "gadgetconfig", kind: "GadgetConfig" },
          versions: [{
            name: "v1",
            served: true,
            storage: true,
            schema: {
              openAPIV3Schema: {
                type: "object",
                properties: {
                  spec: {
                    type: "object",
                    properties: {
                      targetCRD: { type: "object", properties: { name: { type: "string" } } },
                    },
                  },
                },
              },
            },
          }],
        },
      }, { fieldManager: "dco-test" });
      await cp.waitForCRD(`gadgetconfigs.${group}`);
      const ref = { group, version: "v1", plural: "gadgetconfigs" };
      type Gadget = KubeObject & { spec?: { targetCRD?: { name?: string } } };
      const gadget = (name: string, target: string): Gadget => ({
        apiVersion: `${group}/v1`,
        kind: "GadgetConfig",
        metadata: { name },
        spec: { targetCRD: { name: target } },
      });
      await admin.create(ref, gadget("g1", "a.example.com"));
      await admin.create(ref, gadget("g2", "a.example.com"));
      await using inf = new Informer<Gadget>({ client: admin, resource: ref });
      inf.addIndex("target", (o) => o.spec?.targetCRD?.name);
      await inf.start().waitForSync();
      assert.deepEqual(inf.keys().sort(), ["g1", "g2"], "cluster-scoped keys are names");
      assert.equal(inf.get("g1")?.kind, "GadgetConfig");
      const byTarget = (v: string) => inf.byIndex("target", v).map((o) => o.metadata.name).sort();
      assert.deepEqual(byTarget("a.example.com"), ["g1", "g2"]);

      await admin.create(ref, gadget("g3", "b.example.com"));
      await admin.patch(ref, "g2", { spec: { targetCRD: { name: "b.example.com" } } }, {
        type: "merge",
      });
      await waitFor("index to follow", () => byTarget("b.example.com").length === 2);
      assert.deepEqual(byTarget("a.example.com"), ["g1"]);
      assert.deepEqual(byTarget("b.example.com"), ["g2", "g3"]);
      await admin.delete(ref, "g1");
      await waitFor("index to drop g1", () => byTarget("a.example.com").length === 0);
      assert.deepEqual(inf.indexKeys("target", "a.example.com"), []);
      // An index added after sync indexes what is already stored.
      inf.addIndex("name", (o) => o.metadata.name);
      assert.deepEqual(inf.indexKeys("name", "g3"), ["g3"]);
      assert.throws(() => inf.byIndex("nope", "x"), /no index nope/);
    });

    await t.step("enqueueFor wires informer events into a controller's queue", async () => {
      const ns = await cp.createNamespace("wired");
      await admin.create(CONFIGMAPS(ns), cm("existing"));
      await using inf = new Informer<ConfigMap>({ client: admin, resource: CONFIGMAPS(ns) });
      const seen: Array<[string, boolean]> = [];
      const registry = new Registry();
      const ctrl = new Controller({
        name: "wired",
        registry,
        workers: 2,
        logger: quietLogger(),
        reconcile: async (key) => {
          await Promise.resolve();
          seen.push([key, inf.get(key) !== undefined]);
        },
      });
      enqueueFor(inf, ctrl.queue);
      ctrl.start();
      await inf.start().waitForSync();
      await admin.create(CONFIGMAPS(ns), cm("new"));
      await waitFor("the new object reconciled", () => seen.some(([k]) => k === `${ns}/new`));
      await admin.delete(CONFIGMAPS(ns), "existing");
      await waitFor(
        "the deleted object reconciled as gone",
        () => seen.some(([k, present]) => k === `${ns}/existing` && !present),
      );
      assert.ok(seen.some(([k, present]) => k === `${ns}/existing` && present));
      await ctrl.stop();
    });

    await delay(0);
  }, {
    name: "kube-informer",
    // Secrets bypass the watch cache, so a watch resuming from a compacted revision reaches etcd
    // and is answered 410 (the cached kinds keep the default, with bookmarks).
    apiServerArgs: ["--watch-cache-sizes=secrets#0"],
  }),
);
