/**
 * The first live conversion: a two-version CRD whose conversion webhook is a TLS endpoint in this
 * test answering ConversionReviews with the engine. Objects are created at one version and read,
 * listed and watched at the other THROUGH a real kube-apiserver; a misbehaving webhook must show
 * up as an error at the client, which proves the conversion really goes through the apiserver.
 */
import assert from "node:assert/strict";
import * as k8s from "@kubernetes/client-node";
import {
  analyze,
  type ConversionConfigSpec,
  convertObject,
  createRouter,
  type JsonObject,
  type Router,
  schemaSourceFromCRD,
} from "../../src/engine/mod.ts";
import { createCA } from "../support/certs.ts";
import { fieldRenameSpec, twoVersionCRD, urlWebhookConversion } from "../support/dco_stack.ts";
import { type ControlPlane, e2eTest, waitFor } from "../support/control_plane.ts";
import {
  FAILURE_MESSAGE,
  type Obj,
  startConversionWebhook,
} from "../support/conversion_webhook.ts";

const GROUP = "e2e.dco.test";
const PLURAL = "widgets";
const CRD_NAME = `${PLURAL}.${GROUP}`;
const V1 = `${GROUP}/v1`;
const V2 = `${GROUP}/v2`;

function widgetCRD(url: string, caPEM: string): JsonObject {
  return twoVersionCRD({
    group: GROUP,
    plural: PLURAL,
    kind: "Widget",
    conversion: urlWebhookConversion(`${url}/${CRD_NAME}`, caPEM),
  }) as unknown as JsonObject;
}

const CONFIG: ConversionConfigSpec = fieldRenameSpec({
  kind: "CRDConversionConfig",
  target: CRD_NAME,
  spokePath: "spec.capacity",
});

function buildRouter(crd: JsonObject): Router {
  const result = analyze(schemaSourceFromCRD(crd), CONFIG);
  if (result.hasErrors) {
    const diags = [...result.hardErrors, ...result.spokes.flatMap((s) => s.errors)];
    throw new Error(`analysis failed: ${diags.map((d) => d.message).join("; ")}`);
  }
  return createRouter(result);
}

/** The apiserver's error as "<code> <Status.message>" (or the raw body / error text). */
function apiErrorText(e: unknown): string {
  if (!(e instanceof k8s.ApiException)) return String(e);
  let body: unknown = e.body;
  if (typeof body === "string") {
    try {
      body = JSON.parse(body);
    } catch {
      return `${e.code} ${body}`;
    }
  }
  const message = (body as { message?: unknown } | null)?.message;
  return `${e.code} ${typeof message === "string" ? message : JSON.stringify(body)}`;
}

async function expectApiError(p: Promise<unknown>, pattern: RegExp): Promise<string> {
  let text: string | undefined;
  try {
    await p;
  } catch (e) {
    text = apiErrorText(e);
  }
  assert.ok(
    text !== undefined,
    `expected the apiserver to answer with an error matching ${pattern}`,
  );
  assert.match(text, pattern);
  return text;
}

type Widget = { apiVersion: string; metadata: { name: string }; spec: Record<string, unknown> };

e2eTest("live conversion through a real kube-apiserver", async (cp: ControlPlane, t) => {
  const pki = await cp.makeTempDir("webhook-pki");
  const ca = await createCA(pki, "dco-e2e-webhook-ca");
  const tls = await ca.issue({
    commonName: "dco-e2e-webhook",
    hosts: [cp.webhookHost, "localhost"],
  });
  let router: Router | undefined;
  await using hook = startConversionWebhook({
    tls,
    hostname: cp.external ? "0.0.0.0" : "127.0.0.1",
    publicHost: cp.webhookHost,
    convert: (obj, desired) => {
      if (!router) throw new Error("router not ready");
      return convertObject(router, obj as JsonObject, desired) as Obj;
    },
  });
  const crd = widgetCRD(hook.url, ca.cert);
  router = buildRouter(crd);
  await cp.apply(crd as unknown as k8s.KubernetesObject);
  await cp.waitForCRD(CRD_NAME);
  const ns = await cp.createNamespace("e2e-conversion");
  const co = cp.api(k8s.CustomObjectsApi);
  const at = (version: string) => ({ group: GROUP, version, namespace: ns, plural: PLURAL });
  const get = async (version: string, name: string) =>
    await co.getNamespacedCustomObject({ ...at(version), name }) as Widget;
  const create = async (apiVersion: string, name: string, spec: Record<string, unknown>) =>
    await co.createNamespacedCustomObject({
      ...at(apiVersion.split("/")[1]),
      body: { apiVersion, kind: "Widget", metadata: { name }, spec },
    }) as Widget;
  const reviewsTo = (v: string) => hook.reviews.filter((r) => r.desiredAPIVersion === v).length;

  await t.step("created at v1, read at v2", async () => {
    const before = reviewsTo(V2);
    await create(V1, "alpha", { size: 3, color: "red" });
    const w = await get("v2", "alpha");
    assert.equal(w.apiVersion, V2);
    assert.deepEqual(w.spec, { capacity: 3, color: "red" });
    assert.ok(reviewsTo(V2) > before, "the apiserver asked the webhook for v2");
    // Reading at the storage version needs no webhook and shows the stored field.
    assert.deepEqual((await get("v1", "alpha")).spec, { size: 3, color: "red" });
  });

  await t.step("created at v2, stored at v1 through the webhook", async () => {
    const before = reviewsTo(V1);
    const created = await create(V2, "bravo", { capacity: 5, color: "blue" });
    assert.equal(created.apiVersion, V2);
    assert.deepEqual(created.spec, { capacity: 5, color: "blue" });
    assert.ok(
      reviewsTo(V1) > before,
      "the apiserver asked the webhook for the storage version",
    );
    const stored = await get("v1", "bravo");
    assert.equal(stored.apiVersion, V1);
    assert.deepEqual(stored.spec, { size: 5, color: "blue" });
  });

  await t.step("list at v2 converts every item, in order", async () => {
    // Served from the apiserver's v2 watch cache, filled by converting each write via the webhook.
    await create(V1, "charlie", { size: 7, color: "green" });
    await create(V1, "delta", { size: 11 });
    const list = await co.listNamespacedCustomObject(at("v2")) as { items: Widget[] };
    assert.deepEqual(
      list.items.map((w) => [w.apiVersion, w.metadata.name, w.spec]),
      [
        [V2, "alpha", { capacity: 3, color: "red" }],
        [V2, "bravo", { capacity: 5, color: "blue" }],
        [V2, "charlie", { capacity: 7, color: "green" }],
        [V2, "delta", { capacity: 11 }],
      ],
    );
    const v1List = await co.listNamespacedCustomObject(at("v1")) as { items: Widget[] };
    assert.deepEqual(v1List.items.map((w) => w.spec.size), [3, 5, 7, 11]);
  });

  await t.step("watch at v2 sees v1 writes converted", async () => {
    const list = await co.listNamespacedCustomObject(at("v2")) as {
      metadata: { resourceVersion: string };
    };
    const events: { type: string; obj: Widget }[] = [];
    let watchError: unknown;
    const watch = await new k8s.Watch(cp.kubeConfig).watch(
      `/apis/${GROUP}/v2/namespaces/${ns}/${PLURAL}`,
      { resourceVersion: list.metadata.resourceVersion },
      (type, obj) => events.push({ type, obj: obj as Widget }),
      (err) => (watchError = err),
    );
    try {
      const seen = (type: string, name: string) => () =>
        events.find((e) => e.type === type && e.obj.metadata.name === name)?.obj;
      await create(V1, "echo", { size: 13, color: "white" });
      const added = await waitFor("ADDED echo at v2", seen("ADDED", "echo"), {
        timeoutMs: 30_000,
      });
      assert.equal(added.apiVersion, V2);
      assert.deepEqual(added.spec, { capacity: 13, color: "white" });

      await co.patchNamespacedCustomObject(
        { ...at("v1"), name: "echo", body: { spec: { size: 17 } } },
        k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
      );
      const modified = await waitFor("MODIFIED echo at v2", seen("MODIFIED", "echo"), {
        timeoutMs: 30_000,
      });
      assert.equal(modified.apiVersion, V2);
      assert.deepEqual(modified.spec, { capacity: 17, color: "white" });

      await co.deleteNamespacedCustomObject({ ...at("v1"), name: "echo" });
      const deleted = await waitFor("DELETED echo at v2", seen("DELETED", "echo"), {
        timeoutMs: 30_000,
      });
      assert.equal(deleted.apiVersion, V2);
      assert.equal(deleted.spec.capacity, 17);
      assert.equal(watchError, undefined, `watch ended with ${watchError}`);
    } finally {
      watch.abort();
    }
  });

  await t.step("a Failure review surfaces as an apiserver error", async () => {
    hook.mode = "failure";
    try {
      const prefix = String.raw`conversion webhook for ${GROUP}/v1, Kind=Widget failed: `;
      const msg = new RegExp(prefix + FAILURE_MESSAGE);
      await expectApiError(get("v2", "alpha"), msg);
      // (No list here: lists are served from the v2 watch cache, which holds objects the
      // apiserver converted when they were written; a GET without resourceVersion reads etcd.)
      // A create at v2 must be converted to storage first: refused, and nothing is stored.
      await expectApiError(create(V2, "foxtrot", { capacity: 1 }), new RegExp(FAILURE_MESSAGE));
    } finally {
      hook.mode = "ok";
    }
    await expectApiError(get("v1", "foxtrot"), /^404 /);
    assert.deepEqual((await get("v2", "alpha")).spec, { capacity: 3, color: "red" });
  });

  await t.step("an engine error becomes a Failure review and an apiserver error", async () => {
    const good = router;
    router = createRouter("v1", []); // no plan for v2: the engine throws ConversionError
    try {
      await expectApiError(get("v2", "alpha"), /failed: .*no compiled plan for version "v2"/);
    } finally {
      router = good;
    }
  });

  await t.step("wrong answers are rejected by the apiserver", async () => {
    const cases = [
      ["wrong-uid", /failed: expected response\.uid=/],
      ["drop-objects", /returned 0 objects, expected 1/],
      [
        "unconverted",
        /invalid groupVersion \(expected e2e\.dco\.test\/v2, received e2e\.dco\.test\/v1\)/,
      ],
    ] as const;
    try {
      for (const [mode, pattern] of cases) {
        hook.mode = mode;
        await expectApiError(get("v2", "alpha"), pattern);
      }
    } finally {
      hook.mode = "ok";
    }
    assert.deepEqual((await get("v2", "alpha")).spec, { capacity: 3, color: "red" });
  });
}, { name: "live-conversion" });
