/**
 * Request governance on the conversion port, with the webhook-server role as a real process under
 * a small V8 heap (`DENO_V8_FLAGS=--max-old-space-size=96`) serving a CRD through a real
 * kube-apiserver: the bounds it derived from that heap follow the documented formula; a review over
 * the derived body limit gets the too-large Failure and the process stays up; concurrent large
 * reviews beyond the byte budget get 429 with `Retry-After` and none takes the process down; and
 * what the apiserver does with a 429 (docs/operations.md#request-bounds-on-the-conversion-port).
 */
import assert from "node:assert/strict";
import type * as k8s from "@kubernetes/client-node";
import { e2eTest, waitFor } from "../support/control_plane.ts";
import { httpGet } from "../support/role_process.ts";
import { applyGizmoTarget, startGizmoServer } from "./_gizmos.ts";

const GROUP = "gov.dco.test";
const PLURAL = "gizmos";
const TARGET = `${PLURAL}.${GROUP}`;
const HEAP_MIB = 96;

/** A review of about `bytes` bytes: v1 Gizmos with a long string field. */
function bigReview(uid: string, bytes: number): string {
  const objects = [];
  const per = 16 * 1024;
  for (let i = 0; i * per < bytes; i++) {
    objects.push({
      apiVersion: `${GROUP}/v1`,
      kind: "Gizmo",
      metadata: { name: `g-${i}`, namespace: "default" },
      spec: { size: i, color: "x".repeat(per - 200) },
    });
  }
  return JSON.stringify({
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "ConversionReview",
    request: { uid, desiredAPIVersion: `${GROUP}/v2`, objects },
  });
}

function rejectedBytes(metrics: string): number {
  return sample(
    metrics,
    "dco_webhook_conversion_requests_rejected_total",
    '{reason="bytes_in_flight"}',
  ) ?? 0;
}

function sample(metrics: string, name: string, labels = ""): number | undefined {
  const line = metrics.split("\n").find((l) => l.startsWith(`${name}${labels} `));
  return line === undefined ? undefined : Number(line.split(" ")[1]);
}

e2eTest(
  "request governance on the conversion port, through a real kube-apiserver",
  async (cp, t) => {
    const gizmos = await applyGizmoTarget(cp, GROUP);
    const { port } = gizmos;
    const ca = { cert: gizmos.caPEM };
    const ns = await cp.createNamespace("gov");

    await using role = startGizmoServer(cp, gizmos, ["--initial-sync-workers=1"], {
      DENO_V8_FLAGS: `--max-old-space-size=${HEAP_MIB}`,
    });
    const base = role.metricsURL;
    await waitFor("ready", async () => (await httpGet(`${base}/readyz`)).status === 200);
    let exited = false;
    role.child.status.then(() => exited = true);
    const metrics = async () => (await httpGet(`${base}/metrics`)).text;
    const assertUp = async () => {
      assert.equal(exited, false, `the process exited:\n${role.output().slice(-3000)}`);
      assert.equal((await httpGet(`${base}/healthz`)).status, 200);
    };
    const client = Deno.createHttpClient({ caCerts: [ca.cert] });
    t.step; // (steps below)
    const post = (body: string) =>
      fetch(`https://127.0.0.1:${port}/convert/${TARGET}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
        client,
      });

    const limit = (name: string) =>
      sample(m0, "dco_webhook_conversion_limit", `{limit="${name}"}`)!;
    const m0 = await metrics();
    const heap = limit("heap_bytes");
    const byteBudget = limit("request_bytes_in_flight");
    const bodyLimit = limit("request_bytes");

    await t.step("the bounds follow the documented formula from the heap limit", () => {
      assert.equal(heap, HEAP_MIB * 1048576, "the old-space limit of DENO_V8_FLAGS");
      const requestHeap = (heap - limit("heap_used_bytes")) * 0.75;
      assert.equal(byteBudget, Math.max(65536, Math.floor(requestHeap / 4)));
      assert.equal(bodyLimit, Math.min(32 * 1048576, byteBudget));
      const count = Math.min(256, Math.max(4, Math.floor(requestHeap / 1048576)));
      assert.equal(limit("requests_in_flight"), count);
      assert.equal(limit("connections"), 4 * count);
      assert.match(role.output(), /conversion request bounds/);
    });

    await t.step(
      "a review over the derived body limit: the too-large Failure; the process stays up",
      async () => {
        const body = bigReview("uid-too-large", bodyLimit + 1048576);
        const res = await post(body);
        assert.equal(res.status, 200);
        const out = await res.json();
        assert.equal(out.response.uid, "uid-too-large");
        assert.equal(out.response.result.status, "Failure");
        assert.match(
          out.response.result.message,
          new RegExp(`exceeds the ${bodyLimit}-byte limit`),
        );
        await assertUp();
        const m = await metrics();
        assert.equal(
          sample(m, "dco_webhook_conversion_requests_rejected_total", '{reason="body_too_large"}'),
          1,
        );
      },
    );

    await t.step(
      "concurrent large reviews beyond the byte budget: 429 + Retry-After, no OOM",
      async () => {
        const each = Math.floor(bodyLimit * 0.6);
        const n = 8; // 8 × 0.6 = 4.8 byte budgets at once
        const bodies = Array.from({ length: n }, (_, i) => bigReview(`uid-c${i}`, each));
        const answers = await Promise.all(bodies.map(async (b) => {
          const res = await post(b);
          const text = await res.text();
          return { status: res.status, retryAfter: res.headers.get("retry-after"), text };
        }));
        const refused = answers.filter((a) => a.status === 429);
        const served = answers.filter((a) => a.status === 200);
        const statuses = JSON.stringify(answers.map((a) => a.status));
        assert.equal(refused.length + served.length, n, statuses);
        assert.ok(refused.length >= 1, `some are refused: ${statuses}`);
        assert.ok(served.length >= 1, `some are served: ${statuses}`);
        for (const a of refused) {
          assert.equal(a.retryAfter, "1");
          assert.match(a.text, /bytes in flight would exceed|requests in flight/);
        }
        for (const a of served) assert.equal(JSON.parse(a.text).response.result.status, "Success");
        await assertUp();
        const m = await metrics();
        assert.equal(rejectedBytes(m), refused.length);
        assert.equal(sample(m, "dco_webhook_conversion_request_bytes_in_flight"), 0);
      },
    );

    await cp.apply({
      apiVersion: `${GROUP}/v1`,
      kind: "Gizmo",
      metadata: { name: "one", namespace: ns },
      spec: { size: 3, color: "red" },
    } as k8s.KubernetesObject);
    const getV2 = () => cp.kubectl("get", `${PLURAL}.v2.${GROUP}`, "one", "-n", ns, "-o", "json");

    /** Holds the whole byte budget with a request whose body never completes. */
    const hold = async () => {
      const conn = await Deno.connectTls({ hostname: "127.0.0.1", port, caCerts: [ca.cert] });
      await conn.write(new TextEncoder().encode(
        `POST /convert/${TARGET} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: ${bodyLimit}\r\n\r\n{`,
      ));
      await waitFor(
        "the budget is held",
        async () =>
          sample(await metrics(), "dco_webhook_conversion_request_bytes_in_flight") === bodyLimit,
      );
      return conn;
    };

    await t.step(
      "the apiserver and a 429 while the port stays saturated: retried, then surfaced",
      async () => {
        assert.equal((await getV2()).code, 0, "a read converts while the port is free");
        const conn = await hold();
        const before = rejectedBytes(await metrics());
        const r = await getV2();
        const refusals = rejectedBytes(await metrics()) - before;
        conn.close();
        // The apiserver's webhook client honours Retry-After on a 429 (up to 10 retries, 1 s
        // apart), then the read fails with an InternalError naming the webhook.
        assert.notEqual(r.code, 0);
        assert.match(
          r.stderr,
          /Internal error occurred: .*conversion webhook for gov\.dco\.test\/v1, Kind=Gizmo failed: the server has received too many requests and has asked us to try again later/,
        );
        assert.ok(refusals >= 2 && refusals <= 11, `${refusals} refusals of one read`);
        await assertUp();
      },
    );

    await t.step(
      "the apiserver and a 429 released while it retries: the read succeeds",
      async () => {
        const conn = await hold();
        const before = rejectedBytes(await metrics());
        const reading = getV2();
        await waitFor(
          "the apiserver was refused",
          async () => rejectedBytes(await metrics()) > before,
        );
        conn.close();
        const r = await reading;
        assert.equal(r.code, 0, r.stderr);
        const got = JSON.parse(r.stdout);
        assert.equal(got.apiVersion, `${GROUP}/v2`);
        assert.equal(got.spec.capacity, 3);
        await assertUp();
      },
    );
    client.close();
  },
);
