/**
 * The delegated authn/authz of `--metrics-secure`: what is sent in the TokenReview and the
 * SubjectAccessReview, the 401/403/500/200 decisions, and the caches (token 1 min, allow 5 min,
 * deny 30 s) on an injected clock.
 */
import assert from "node:assert/strict";
import {
  bearerToken,
  DelegatedAuth,
  type ReviewClient,
  SUBJECT_ACCESS_REVIEWS,
  TOKEN_REVIEWS,
} from "../../src/kube/delegated_auth.ts";
import type { KubeObject, ResourceRef } from "../../src/kube/objects.ts";

/** A fake apiserver: tokens → users, and the users allowed to get /metrics. */
function fakeReviews(users: Record<string, string>, allowed: Set<string>) {
  const sent: Array<{ plural: string; body: KubeObject }> = [];
  let failing = false;
  const client: ReviewClient = {
    create<T extends KubeObject>(ref: ResourceRef, obj: T): Promise<T> {
      sent.push({ plural: ref.plural, body: obj });
      if (failing) return Promise.reject(new Error("apiserver down"));
      const spec = obj.spec as Record<string, unknown>;
      if (ref === TOKEN_REVIEWS) {
        const user = users[spec.token as string];
        return Promise.resolve({
          ...obj,
          status: user === undefined
            ? { authenticated: false, error: "invalid bearer token" }
            : { authenticated: true, user: { username: user, uid: "u1", groups: ["g1"] } },
        });
      }
      assert.equal(ref, SUBJECT_ACCESS_REVIEWS);
      return Promise.resolve({
        ...obj,
        status: { allowed: allowed.has(spec.user as string) },
      });
    },
  };
  return { client, sent, fail: (on: boolean) => failing = on };
}

Deno.test("bearerToken reads only a Bearer header with one token", () => {
  assert.equal(bearerToken("Bearer abc.def"), "abc.def");
  assert.equal(bearerToken("bearer  xyz "), "xyz");
  assert.equal(bearerToken("Basic dXNlcjpwdw=="), undefined);
  assert.equal(bearerToken("Bearer "), undefined);
  assert.equal(bearerToken(undefined), undefined);
});

Deno.test("no token or an unknown one is 401 without any access review", async () => {
  const f = fakeReviews({}, new Set());
  const auth = new DelegatedAuth(f.client);
  assert.deepEqual(await auth.check(undefined, "GET", "/metrics"), {
    status: 401,
    message: "Unauthorized",
  });
  assert.equal(f.sent.length, 0);
  assert.equal((await auth.check("Bearer nope", "GET", "/metrics")).status, 401);
  assert.deepEqual(f.sent.map((s) => s.plural), ["tokenreviews"]);
  assert.deepEqual(f.sent[0].body.spec, { token: "nope" });
});

Deno.test("an authenticated user is reviewed for get on the nonResourceURL; 403 when denied", async () => {
  const f = fakeReviews({ t1: "alice", t2: "bob" }, new Set(["alice"]));
  const auth = new DelegatedAuth(f.client);
  assert.deepEqual(await auth.check("Bearer t1", "GET", "/metrics"), {
    status: 200,
    message: "",
    user: "alice",
  });
  const sar = f.sent.find((s) => s.plural === "subjectaccessreviews")!;
  assert.equal(sar.body.apiVersion, "authorization.k8s.io/v1");
  assert.deepEqual(sar.body.spec, {
    user: "alice",
    uid: "u1",
    groups: ["g1"],
    nonResourceAttributes: { path: "/metrics", verb: "get" },
  });
  assert.deepEqual(await auth.check("Bearer t2", "GET", "/metrics"), {
    status: 403,
    message: "Authorization denied for user bob",
    user: "bob",
  });
});

Deno.test("reviews are cached: token 1 min, allow 5 min, deny 30 s", async () => {
  let now = 0;
  const f = fakeReviews({ t1: "alice", t2: "bob" }, new Set(["alice"]));
  const auth = new DelegatedAuth(f.client, { now: () => now });
  const count = (plural: string) => f.sent.filter((s) => s.plural === plural).length;
  await auth.check("Bearer t1", "GET", "/metrics");
  await auth.check("Bearer t1", "GET", "/metrics");
  assert.equal(count("tokenreviews"), 1);
  assert.equal(count("subjectaccessreviews"), 1);
  now = 61_000; // token expired, allow still cached
  await auth.check("Bearer t1", "GET", "/metrics");
  assert.equal(count("tokenreviews"), 2);
  assert.equal(count("subjectaccessreviews"), 1);
  now = 301_000; // allow expired too
  await auth.check("Bearer t1", "GET", "/metrics");
  assert.equal(count("subjectaccessreviews"), 2);

  await auth.check("Bearer t2", "GET", "/metrics"); // bob denied at 301 s
  await auth.check("Bearer t2", "GET", "/metrics");
  assert.equal(count("subjectaccessreviews"), 3);
  now = 332_000; // deny expired (30 s), token still cached (1 min)
  assert.equal((await auth.check("Bearer t2", "GET", "/metrics")).status, 403);
  assert.equal(count("subjectaccessreviews"), 4);
});

Deno.test("a failing review is 500 and is not cached", async () => {
  const f = fakeReviews({ t1: "alice" }, new Set(["alice"]));
  const auth = new DelegatedAuth(f.client);
  f.fail(true);
  const d = await auth.check("Bearer t1", "GET", "/metrics");
  assert.equal(d.status, 500);
  assert.equal(d.message, "Authentication failed");
  f.fail(false);
  assert.equal((await auth.check("Bearer t1", "GET", "/metrics")).status, 200);
});
