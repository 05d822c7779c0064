/**
 * The Crossplane startup check: the decision over a discovery answer (pure), and the discovery
 * read behind it over a stub client — "not served" (404) is an answer, any other failure is
 * thrown as it is (after the retries), never reported as "Crossplane missing".
 */
import assert from "node:assert/strict";
import { KubeApiError, type KubeClient, KubeNetworkError } from "../../src/kube/mod.ts";
import {
  checkCrossplane,
  CROSSPLANE_GROUP_VERSION,
  crossplaneRequirement,
} from "../../src/manager/crossplane_check.ts";

const XRD = { name: "compositeresourcedefinitions", kind: "CompositeResourceDefinition" };

Deno.test("served with CompositeResourceDefinitions: the check passes", () => {
  assert.deepEqual(crossplaneRequirement([{ name: "compositions", kind: "Composition" }, XRD]), {
    ok: true,
  });
});

Deno.test("group-version not served: the message names the API and both ways to turn it off", () => {
  const r = crossplaneRequirement(undefined);
  assert.equal(r.ok, false);
  if (r.ok) return;
  assert.equal(r.missing, "apiextensions.crossplane.io/v2 (not served)");
  assert.match(r.message, /compositeresourcedefinitions\.apiextensions\.crossplane\.io/);
  assert.match(r.message, /Crossplane 2\.x/);
  assert.ok(r.message.includes("--enable-xrd-support=false"), r.message);
  assert.ok(r.message.includes("--set features.crossplane.enabled=false"), r.message);
  assert.doesNotMatch(r.message, /\n/, "one line");
});

Deno.test("group-version served without the XRD resource (subresources do not count)", () => {
  const r = crossplaneRequirement([
    { name: "compositions", kind: "Composition" },
    { name: "compositeresourcedefinitions/status", kind: "CompositeResourceDefinition" },
  ]);
  assert.equal(r.ok, false);
  if (r.ok) return;
  assert.match(r.missing, /^compositeresourcedefinitions\.apiextensions\.crossplane\.io in /);
  assert.match(r.message, /served without it/);
});

/** A client whose `call` answers from `answers` in turn, recording the paths it was asked. */
function stubClient(answers: Array<() => unknown>): KubeClient & { paths: string[] } {
  const paths: string[] = [];
  let i = 0;
  const client = {
    paths,
    call: (_method: string, path: string) => {
      paths.push(path);
      const answer = answers[Math.min(i++, answers.length - 1)];
      return Promise.resolve().then(answer);
    },
  };
  return client as unknown as KubeClient & { paths: string[] };
}

const notFound = () => {
  throw new KubeApiError(404, "NotFound", "the server could not find the requested resource");
};

Deno.test("discovery: 404 is 'not served', asked once at the v2 group-version path", async () => {
  const client = stubClient([notFound]);
  const r = await checkCrossplane(client, { retryMs: 0 });
  assert.equal(r.ok, false);
  assert.deepEqual(client.paths, [`/apis/${CROSSPLANE_GROUP_VERSION}`]);
});

Deno.test("discovery: a served document with the XRD resource passes", async () => {
  const client = stubClient([() => ({ kind: "APIResourceList", resources: [XRD] })]);
  assert.deepEqual(await checkCrossplane(client, { retryMs: 0 }), { ok: true });
});

Deno.test("discovery: a transient failure is retried, then the answer counts", async () => {
  const client = stubClient([
    () => {
      throw new KubeApiError(503, "ServiceUnavailable", "etcd leader changed");
    },
    () => ({ resources: [XRD] }),
  ]);
  assert.deepEqual(await checkCrossplane(client, { retryMs: 0 }), { ok: true });
  assert.equal(client.paths.length, 2);
});

Deno.test("discovery: any other failure is thrown as it is, never 'Crossplane missing'", async () => {
  const forbidden = new KubeApiError(403, "Forbidden", "discovery is forbidden");
  const client = stubClient([() => {
    throw forbidden;
  }]);
  await assert.rejects(
    checkCrossplane(client, { retryMs: 0, attempts: 3 }),
    (e) => e === forbidden,
  );
  assert.equal(client.paths.length, 3);
  const down = stubClient([() => {
    throw new KubeNetworkError("connect ECONNREFUSED 127.0.0.1:6443");
  }]);
  await assert.rejects(checkCrossplane(down, { retryMs: 0, attempts: 2 }), KubeNetworkError);
});
