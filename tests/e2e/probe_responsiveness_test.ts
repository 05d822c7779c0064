/**
 * Probes tell busy from dead, at process level: the webhook-server role as a real process (its
 * documented permission flags, its listener Workers, one pool Worker), a target whose conversion
 * is a `ForEach` × `CEL` object sized to take seconds — which a listener hands to the pool — and,
 * while that review converts, `/healthz` and `/readyz` answer within the kubelet's 1 s timeout,
 * before the conversion's answer arrives. The probe client is this test process, so the role's
 * event loop is measured from outside.
 */
import assert from "node:assert/strict";
import type * as k8s from "@kubernetes/client-node";
import { installDcoCRDs } from "../support/dco_stack.ts";
import { type ControlPlane, e2eTest, freePort, waitFor } from "../support/control_plane.ts";
import { httpGet } from "../support/role_process.ts";
import { SLOW_TARGET, slowConfig, slowCRD, slowReview } from "../webhook/convert/_slow_target.ts";
import { defaultRoleServer, roleCertificate, startRole } from "./_gizmos.ts";
import { autoInlineMaxBytes } from "../../src/webhook/convert/inline_policy.ts";
import { availableCpus } from "../../src/webhook/cpu_limit.ts";

/** Seconds of CEL on this machine (each element is one costly evaluation). */
const SLOW_ELEMENTS = 8;
const PROBE_TIMEOUT_MS = 1_000;

e2eTest(
  "a slow conversion in the role's Worker does not hold /healthz or /readyz",
  async (cp: ControlPlane) => {
    await installDcoCRDs(cp);
    const { certDir, caPEM } = await roleCertificate(cp, "probe");
    await cp.apply(defaultRoleServer());
    await cp.apply(slowCRD() as unknown as k8s.KubernetesObject);
    await cp.waitForCRD(SLOW_TARGET);
    await cp.apply(
      {
        apiVersion: "terasky.com/v1alpha1",
        kind: "CRDConversionConfig",
        ...slowConfig(),
      } as unknown as k8s.KubernetesObject,
    );

    const port = freePort();
    await using role = startRole(cp, { certDir, port, args: ["--conversion-workers=1"] });
    const plain = role.metricsURL;
    await waitFor("readiness", async () => (await httpGet(`${plain}/readyz`)).status === 200, {
      timeoutMs: 90_000,
    });
    const metrics = (await httpGet(`${plain}/metrics`)).text;
    assert.match(metrics, /^dco_webhook_conversion_workers 0$/m, "the pool starts on demand");
    assert.match(role.output(), /"conversionWorkers":1/);
    // One listener per CPU the process may use (the role reads the same cgroup files), at most
    // one per 96 MiB of its heap ceiling.
    const listeners = Number(/"conversionListeners":(\d+)/.exec(role.output())?.[1]);
    assert.ok(listeners >= 1 && listeners <= await availableCpus(), role.output());
    assert.match(metrics, new RegExp(`^dco_webhook_conversion_listeners ${listeners}$`, "m"));
    const inlineMax = autoInlineMaxBytes(await availableCpus());
    assert.match(role.output(), new RegExp(`"conversionInlineMaxBytes":${inlineMax}[,}]`));

    const client = Deno.createHttpClient({ caCerts: [caPEM] });
    const arrivals: string[] = [];
    try {
      const slow = fetch(`https://127.0.0.1:${port}/convert/${SLOW_TARGET}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(slowReview("slow-e2e", SLOW_ELEMENTS)),
        client,
      }).then(async (res) => {
        const review = await res.json();
        assert.equal(res.status, 200);
        assert.equal(review.response.result.status, "Success", JSON.stringify(review.response));
        arrivals.push("conversion");
      });
      // Let the review reach its Worker and the CEL.
      await new Promise((r) => setTimeout(r, 500));
      const probe = async (path: string) => {
        const res = await fetch(`${plain}${path}`, {
          signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
        });
        await res.body?.cancel();
        arrivals.push(`${path} ${res.status}`);
      };
      await Promise.all([probe("/healthz"), probe("/readyz")]);
      await slow;
    } finally {
      client.close();
    }
    assert.deepEqual(arrivals.slice(0, 2).sort(), ["/healthz 200", "/readyz 200"]);
    assert.equal(arrivals[2], "conversion", JSON.stringify(arrivals));
    // The CEL review was converted in the pool, which started for it.
    assert.match((await httpGet(`${plain}/metrics`)).text, /^dco_webhook_conversion_workers 1$/m);
  },
);
