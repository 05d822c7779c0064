/**
 * Tracing end to end: the webhook-server process (its exact permission flags, `--otel-*` flags and
 * the OpenTelemetry environment they map onto) exports to a real OpenTelemetry Collector, and the
 * assertions are on what the collector received. kube-apiserver traces too (every request, into
 * the same collector), so the conversion calls it makes carry its `traceparent`: the webhook's
 * `ConversionReview` span continues the apiserver's trace, with a `Convert` child per object
 * (`target`, `from_version`, `to_version`). The server's own ratio is 0, so only a sampled
 * `traceparent` gets a request traced: a direct request with one yields spans in that trace, one
 * without yields none; a failed conversion is recorded on both spans. Every review goes through
 * the conversion Workers (`--conversion-inline-max-bytes=0`), so the spans cross threads.
 */
import assert from "node:assert/strict";
import type * as k8s from "@kubernetes/client-node";
import { otelEnv, WEBHOOK_SERVICE_NAME } from "../../src/obs/tracing.ts";
import {
  type ControlPlane,
  freePort,
  waitFor,
  withControlPlane,
} from "../support/control_plane.ts";
import { type Collector, type ReceivedSpan, startCollector } from "../support/otel_collector.ts";
import { httpGet } from "../support/role_process.ts";
import { applyGizmoTarget, startGizmoServer } from "./_gizmos.ts";

const GROUP = "trace.dco.test";
const PLURAL = "gizmos";
const TARGET = `${PLURAL}.${GROUP}`;

// kube-apiserver reads its tracing configuration at start: the collector's gRPC port and the
// file are fixed before the control plane starts.
const DIR = Deno.makeTempDirSync({ prefix: "dco-tracing-e2e-" });
const APISERVER_OTLP_PORT = freePort();
Deno.writeTextFileSync(
  `${DIR}/apiserver-tracing.yaml`,
  `apiVersion: apiserver.config.k8s.io/v1
kind: TracingConfiguration
endpoint: 127.0.0.1:${APISERVER_OTLP_PORT}
samplingRatePerMillion: 1000000
`,
);

function gizmo(name: string, namespace: string, size: number): k8s.KubernetesObject {
  return {
    apiVersion: `${GROUP}/v1`,
    kind: "Gizmo",
    metadata: { name, namespace },
    spec: { size },
  } as k8s.KubernetesObject;
}

const isReview = (s: ReceivedSpan) =>
  s.name === "ConversionReview" && s.service === WEBHOOK_SERVICE_NAME;
const childrenOf = (spans: ReceivedSpan[], parent: ReceivedSpan) =>
  spans.filter((s) => s.name === "Convert" && s.parentSpanId === parent.spanId);

// The collector listens before kube-apiserver starts: an exporter that cannot connect fills its
// queue, drops new spans and backs off its reconnects.
const tracedControlPlane = (
  fn: (cp: ControlPlane, t: Deno.TestContext, collector: Collector) => Promise<void>,
) =>
async (t: Deno.TestContext) => {
  await using collector = await startCollector(DIR, { grpcPort: APISERVER_OTLP_PORT });
  await withControlPlane((cp, t) => fn(cp, t, collector), {
    apiServerArgs: [`--tracing-config-file=${DIR}/apiserver-tracing.yaml`],
  })(t);
};

Deno.test({
  name: "tracing: the collector receives ConversionReview and Convert spans for real conversions",
  // As in every e2e test: the k8s client leaves keep-alive timers and pooled sockets behind.
  sanitizeResources: false,
  sanitizeOps: false,
  fn: tracedControlPlane(async (cp, t, collector) => {
    const gizmos = await applyGizmoTarget(cp, GROUP);
    const { port } = gizmos;
    const ns = await cp.createNamespace("trace");

    const tracing = { endpoint: collector.httpEndpoint, insecure: true, sampleRatio: 0 };
    await using role = startGizmoServer(
      cp,
      gizmos,
      [
        "--conversion-workers=1",
        "--conversion-inline-max-bytes=0",
        `--otel-exporter-otlp-endpoint=${tracing.endpoint}`,
        "--otel-exporter-otlp-insecure",
        "--otel-trace-sample-ratio=0",
      ],
      // What the manager sets for the Pod, plus a short export delay for the test.
      { ...otelEnv(tracing), OTEL_BSP_SCHEDULE_DELAY: "200" },
    );
    await waitFor(
      "webhook server ready",
      async () => (await httpGet(`${role.metricsURL}/readyz`)).status === 200,
      { timeoutMs: 60_000 },
    );
    assert.match(role.output(), /tracing on/);

    await t.step(
      "conversions kube-apiserver makes continue its trace: a review span, a Convert per object",
      async () => {
        for (const [i, name] of ["a", "b", "c"].entries()) await cp.apply(gizmo(name, ns, i + 1));
        const readAtV2 = async () => {
          const r = await cp.kubectl("get", `${PLURAL}.v2.${GROUP}`, "-n", ns, "-o", "json");
          assert.equal(r.code, 0, r.stderr);
          assert.deepEqual(
            JSON.parse(r.stdout).items.map((o: { spec: unknown }) => o.spec),
            [{ capacity: 1 }, { capacity: 2 }, { capacity: 3 }],
          );
        };
        // The server's ratio is 0: what it traced, it traced because kube-apiserver sampled it.
        const fromApiserver = (spans: ReceivedSpan[]) =>
          spans.filter((s) =>
            isReview(s) &&
            spans.some((p) =>
              p.spanId === s.parentSpanId && p.traceId === s.traceId && p.service === "apiserver"
            )
          );
        // kube-apiserver exports in batches and may drop a span while its queue is full (the
        // control plane's start fills it): the read is repeated until one's trace arrives whole.
        const reviews = await waitFor(
          "a read whose trace arrives whole",
          async () => {
            await readAtV2();
            return await collector.waitFor(
              "review spans under kube-apiserver's calls, with a Convert span per object sent",
              (spans) => {
                const rs = fromApiserver(spans);
                return rs.flatMap((s) => childrenOf(spans, s)).length >= 3 ? rs : undefined;
              },
              { timeoutMs: 20_000 },
            );
          },
          { timeoutMs: 150_000 },
        );
        for (const review of reviews) {
          assert.equal(review.attributes.target, TARGET);
          assert.equal(review.attributes.result, "success");
          assert.equal(review.kind, 2, "a server span");
          assert.equal(review.status.code, 0);
          const converts = childrenOf(collector.spans(), review);
          assert.ok(converts.length >= 1, "a review the apiserver sent converted objects");
          for (const c of converts) {
            assert.equal(c.traceId, review.traceId);
            assert.deepEqual(
              [c.attributes.target, c.attributes.from_version, c.attributes.to_version],
              [TARGET, "v1", "v2"],
            );
          }
        }
      },
    );

    const client = Deno.createHttpClient({ caCerts: [gizmos.caPEM] });
    const post = async (objects: unknown[], traceparent?: string) => {
      const res = await fetch(`https://127.0.0.1:${port}/convert/${TARGET}`, {
        method: "POST",
        client,
        headers: { "content-type": "application/json", ...(traceparent ? { traceparent } : {}) },
        body: JSON.stringify({
          apiVersion: "apiextensions.k8s.io/v1",
          kind: "ConversionReview",
          request: { uid: crypto.randomUUID(), desiredAPIVersion: `${GROUP}/v2`, objects },
        }),
      });
      assert.equal(res.status, 200);
      return (await res.json()).response.result;
    };
    const obj = (version: string, size: number) => ({
      apiVersion: `${GROUP}/${version}`,
      kind: "Gizmo",
      metadata: { name: `d${size}` },
      spec: version === "v1" ? { size } : { capacity: size },
    });

    await t.step(
      "a request's traceparent: spans in that trace; none without one (ratio 0)",
      async () => {
        const traceId = crypto.randomUUID().replaceAll("-", "");
        const parentId = traceId.slice(0, 16);
        const untracedAt = collector.spans().filter(isReview).length;
        assert.equal(
          (await post([obj("v1", 7)])).status,
          "Success",
          "sent first, without traceparent",
        );
        assert.equal(
          (await post([obj("v1", 8), obj("v1", 9)], `00-${traceId}-${parentId}-01`)).status,
          "Success",
        );
        const review = await collector.waitFor(
          "the review span in the given trace",
          (spans) =>
            spans.find((s) =>
              isReview(s) && s.traceId === traceId && childrenOf(spans, s).length === 2
            ),
        );
        assert.equal(review.parentSpanId, parentId);
        const reviews = collector.spans().filter(isReview).slice(untracedAt);
        const ours = reviews.filter((s) => s.traceId === traceId);
        const fromApiserver = reviews.filter((s) =>
          collector.spans().some((p) => p.spanId === s.parentSpanId && p.service === "apiserver")
        );
        assert.deepEqual(
          reviews.filter((s) => !ours.includes(s) && !fromApiserver.includes(s)),
          [],
          "the request without traceparent left no span",
        );
      },
    );

    await t.step(
      "a failed conversion is recorded on the review and on the object's span",
      async () => {
        const traceId = crypto.randomUUID().replaceAll("-", "");
        const result = await post(
          [obj("v1", 1), obj("v9", 2)],
          `00-${traceId}-${traceId.slice(16)}-01`,
        );
        assert.equal(result.status, "Failure");
        const review = await collector.waitFor(
          "the failed review's span",
          (spans) =>
            spans.find((s) =>
              isReview(s) && s.traceId === traceId && childrenOf(spans, s).length === 2
            ),
        );
        assert.equal(review.status.code, 2, "ERROR");
        assert.equal(review.status.message, result.message);
        assert.equal(review.attributes.result, "error");
        const [ok, bad] = childrenOf(collector.spans(), review);
        assert.equal(ok.status.code, 0);
        assert.equal(bad.attributes.from_version, "v9");
        assert.equal(bad.status.code, 2);
        assert.deepEqual(bad.events, ["exception"]);
      },
    );
    client.close();
    await Deno.remove(DIR, { recursive: true });
  }),
});
