/**
 * The whole product on a real control plane with real workloads, once for a CRD and once for a
 * Crossplane XRD (the `{crd, xrd}` adapter of `_targets.ts`): kube-apiserver + etcd +
 * kube-controller-manager, and the test kubelet running the webhook-server Pods as real
 * processes on a pod network (tests/support/kubelet.ts). The manager runs as a process with the
 * admin identity (for XRDs with `--enable-xrd-support=true`, CRD support on too); the
 * webhook-server Pods mirror its feature flags and run with the chart's ServiceAccount and RBAC.
 * The apiserver reaches them only through the conversion stanza the manager wrote (Service →
 * EndpointSlices → Pod IPs).
 *
 * Crossplane's own controller does not run here: for XRDs the test plays its part
 * (`_crossplane.ts`, which also lists what real Crossplane's generated CRDs carry and these do
 * not): it marks the XRD Established, renders the composite CRD `<plural>.<group>` from the XRD's
 * versions and schemas (storage = referenceable) and copies the XRD's `spec.conversion` into it
 * whenever it changes. It does not re-render the CRD's schemas when the XRD changes (the drift
 * step only changes the XRD). Only conversion of the XRD's own fields is exercised.
 *
 * Steps: the ConversionWebhookServer's Deployment becomes ready Pods; the config patches its
 * target only after the server is ready (proved by etcd revision order) — for an XRD the stanza
 * also reaches the generated CRD (ConversionPropagated=True); objects convert on read both ways
 * on path `/convert/<target name>` (for an XRD with the XRD-derived plan: there is no
 * CRDConversionConfig); an invalid config is Invalid with its target untouched; schema drift
 * makes a working config Stale while it keeps serving; deleting a config is blocked while the
 * target serves several versions, until the break-glass annotation, and then reverts the target
 * (and objects read unconverted); the admission webhook rejects an invalid config with the
 * engine's diagnostic; the manager's /metrics carry the workqueue, reconcile and wake families.
 */
import assert from "node:assert/strict";
import { type ControlPlane, e2eTest, waitFor } from "../support/control_plane.ts";
import {
  assertConvertsOnRead,
  assertPatchedAfterReady,
  assertWebhookServerPods,
  findCondition as cond,
  installDco,
  kubectlFor,
  type Obj,
  readyWebhookServer,
  startDcoManager,
  validatingWebhook,
  WEBHOOK_SERVER_SA,
  webhookServer,
  webhookServerKubelet,
  writeObjectFile,
} from "../support/dco_stack.ts";
import { recordWatch } from "../support/watch_recorder.ts";
import { crdTarget, MANAGED_BY, type TargetKind, xrdTarget } from "./_targets.ts";

const CWS = "dco";
const SVC = `${CWS}-webhook-server`;
const IMAGE = "dco.test/webhook-server:e2e";

function endToEnd(target: TargetKind, title: string, cpName: string): void {
  const { group, configResource } = target;
  const widgets = target.named("widgets", "Widget");
  const gizmos = target.named("gizmos", "Gizmo");
  const WIDGETS = `${widgets.plural}.${group}`;
  const GIZMOS = `${gizmos.plural}.${group}`;

  e2eTest(title, async (cp: ControlPlane, t) => {
    const ns = await installDco(cp, { extraCRDs: target.extraCRDs, rbac: target.rbac });
    await using targets = await target.open(cp);
    await targets.create(widgets, gizmos);

    // Watches from before anything of ours exists: the order proof below reads them.
    await using targetWatch = await recordWatch(cp, target.watchPath(WIDGETS));
    await using cwsWatch = await recordWatch(
      cp,
      "/apis/terasky.com/v1alpha1/conversionwebhookservers",
    );

    await using manager = await startDcoManager(cp, {
      caName: "dco-e2e-ca",
      namespace: ns,
      webhookServerImage: IMAGE,
      features: target.features,
      logLevel: "debug",
    });
    const { admissionPort, ca } = manager;
    const { kubectl, getJSON } = kubectlFor(cp);
    const getConfig = (name: string) => getJSON(configResource, name);
    const failing = (e: unknown): Promise<never> =>
      manager.failing(new Error(`${(e as Error).message}\n${targets.diagnostics()}`));
    const caBundle = async () =>
      (await getJSON("secret", "dco-webhook-ca", "-n", ns)).data["tls.crt"];

    await cp.apply(webhookServer(CWS, {
      default: true,
      replicas: 2,
      serviceAccountName: WEBHOOK_SERVER_SA,
      certificate: { issuerRef: { name: "unused" } },
      rollout: { preStopSleepSeconds: 1, terminationGracePeriodSeconds: 35 },
    }));
    await cp.apply(target.config("widgets", WIDGETS, "spec.capacity"));

    await t.step("the server's Deployment becomes two ready webhook-server Pods", async () => {
      const ready = await waitFor("CWS ready", () => readyWebhookServer(cp, CWS, 2), {
        timeoutMs: 120_000,
      }).catch(failing);
      assert.equal(cond(ready, "CertificateReady")?.status, "True");
      // Issued by the manager's own CA, whose Secret lives in the operator namespace.
      const tls = await getJSON("secret", `${SVC}-tls`, "-n", ns);
      assert.equal(tls.data["ca.crt"], await caBundle());
      const dep = await getJSON("deployment", SVC, "-n", ns);
      const args: string[] = dep.spec.template.spec.containers[0].args;
      assert.ok(args.includes(`--enable-xrd-support=${target.features.xrd}`), args.join(" "));
      if (target.features.crd) {
        assert.ok(args.includes("--enable-crd-support=true"), args.join(" "));
      }
      await assertWebhookServerPods(cp, ns, CWS, 2);
    });

    await t.step("the target is patched, and only after the server was ready", async () => {
      const cfg = await waitFor("widgets Applied", async () => {
        const c = await getConfig("widgets");
        return c.status?.phase === "Applied" ? c : undefined;
      }, { timeoutMs: 60_000 }).catch(failing);
      const conversion = (await targets.read(WIDGETS)).spec.conversion;
      assert.equal(conversion.strategy, "Webhook");
      assert.deepEqual(conversion.webhook.clientConfig.service, {
        name: SVC,
        namespace: ns,
        path: `/convert/${WIDGETS}`,
        port: 443,
      });
      assert.equal(cfg.status.webhookURL, `https://${SVC}.${ns}.svc/convert/${WIDGETS}`);
      assert.equal(conversion.webhook.clientConfig.caBundle, await caBundle());
      assertPatchedAfterReady(targetWatch, cwsWatch, target.kind === "crd" ? "target" : "XRD");
    });

    if (target.kind === "xrd") {
      await t.step("(XRD) the stanza propagates into the generated CRD", async () => {
        const cfg = await waitFor("widgets Propagated", async () => {
          const c = await getConfig("widgets");
          return cond(c, "ConversionPropagated")?.status === "True" ? c : undefined;
        }, { timeoutMs: 60_000 }).catch(failing);
        const x = await targets.read(WIDGETS);
        assert.deepEqual(x.spec.conversion, {
          strategy: "Webhook",
          webhook: {
            clientConfig: {
              service: { name: SVC, namespace: ns, path: `/convert/${WIDGETS}`, port: 443 },
              caBundle: await caBundle(),
            },
            conversionReviewVersions: ["v1"],
          },
        });
        assert.equal(x.metadata.annotations[MANAGED_BY], "widgets");
        assert.equal(cond(cfg, "ConversionPropagated").reason, "Propagated");
        assert.deepEqual(
          cfg.status.generatedCRDs.map((g: Obj) => [g.name, g.role, g.propagated]),
          [[WIDGETS, "composite", true]],
        );
        // The test's Crossplane copied the stanza into the generated CRD as written, and made
        // the referenceable version its storage version.
        const generated = await getJSON("crd", WIDGETS);
        assert.deepEqual(generated.spec.conversion, x.spec.conversion);
        assert.equal(
          generated.spec.versions.find((v: Obj) => v.storage).name,
          "v1",
          "the referenceable version is the generated CRD's storage version",
        );
      });
    }

    const objNs = await cp.createNamespace("objects");
    const readAt = (version: string) =>
      getJSON(`${widgets.plural}.${version}.${group}`, "w1", "-n", objNs);
    await t.step("objects convert on read through the webhook-server Pods", async () => {
      if (target.kind === "xrd") {
        // Only an XRDConversionConfig targets this group: the Pods convert with the plan they
        // derived from the XRD, on /convert/<xrd name>.
        assert.deepEqual((await getJSON("crdconversionconfigs.terasky.com")).items, []);
      }
      await assertConvertsOnRead(cp, {
        group,
        plural: widgets.plural,
        kind: widgets.kind,
        namespace: objNs,
        onTimeout: failing,
      });
    });

    await t.step("an invalid config is Invalid and leaves its target untouched", async () => {
      await cp.apply(target.config("gizmos", GIZMOS, "spec.nowhere"));
      const c = await waitFor("gizmos Invalid", async () => {
        const o = await getConfig("gizmos");
        return o.status?.phase === "Invalid" ? o : undefined;
      }, { timeoutMs: 60_000 }).catch(failing);
      assert.equal(cond(c, "Validated")?.status, "False");
      assert.match(c.status.message ?? cond(c, "Validated").message, /spec\.nowhere/);
      await targets.assertUntouched(GIZMOS);
    });

    await t.step("schema drift makes a working config Stale, and it keeps serving", async () => {
      // A new v1 field no rule covers: fail-closed validation fails against the live schema.
      await cp.apply(target.target(widgets, "shape"));
      const c = await waitFor("widgets Stale", async () => {
        const o = await getConfig("widgets");
        return o.status?.phase === "Stale" ? o : undefined;
      }, { timeoutMs: 60_000 }).catch(failing);
      assert.equal(cond(c, "Stale")?.status, "True");
      assert.equal((await targets.read(WIDGETS)).spec.conversion.strategy, "Webhook");
      assert.deepEqual((await readAt("v2")).spec, { capacity: 3, color: "red" });
    });

    await t.step("delete is blocked while the target serves two versions", async () => {
      await kubectl("delete", configResource, "widgets", "--wait=false");
      const c = await waitFor("DeletionBlocked", async () => {
        const o = await getConfig("widgets");
        return cond(o, "DeletionBlocked")?.status === "True" ? o : undefined;
      }, { timeoutMs: 60_000 }).catch(failing);
      assert.equal(cond(c, "DeletionBlocked").reason, "MultipleServedVersions");
      await targets.assertServing(WIDGETS);
      // Still converting while blocked.
      assert.equal((await readAt("v2")).spec.capacity, 3);
    });

    await t.step(
      "the break-glass annotation lets the delete through; the target reverts",
      async () => {
        await kubectl(
          "annotate",
          configResource,
          "widgets",
          "conversion.terasky.com/allow-unsafe-delete=true",
        );
        await waitFor("the config is gone", async () => {
          const r = await cp.kubectl("get", configResource, "widgets");
          return r.code !== 0 && /NotFound/.test(r.stderr);
        }, { timeoutMs: 60_000 }).catch(failing);
        await targets.assertReverted(WIDGETS);
        // For an XRD, the test's Crossplane copies strategy None into the generated CRD.
        await waitFor("served CRD None", async () => {
          const g = await getJSON("crd", WIDGETS);
          return g.spec.conversion.strategy === "None";
        }, { timeoutMs: 30_000 }).catch(failing);
        // No webhook any more: a v2 read is the stored v1 object relabelled and pruned to the
        // v2 schema (`size` dropped, no `capacity`): the rename was the webhook's doing.
        const v2 = await waitFor("unconverted read", async () => {
          const o = await readAt("v2");
          return o.spec.capacity === undefined ? o : undefined;
        }, { timeoutMs: 30_000 }).catch(failing);
        assert.deepEqual(v2.spec, { color: "red" });
        assert.deepEqual((await readAt("v1")).spec, { size: 3, color: "red" });
      },
    );

    await t.step(
      "the admission webhook rejects an invalid config with the diagnostic",
      async () => {
        await cp.apply(validatingWebhook({
          name: `dco-${target.kind}-e2e`,
          kind: target.controller,
          admissionPort,
          caPEM: ca.cert,
        }));
        const rejected = await waitFor("admission rejects", async () => {
          const file = await writeObjectFile(
            cp,
            target.config("rejected", WIDGETS, "spec.nowhere"),
          );
          const r = await cp.kubectl("create", "-f", file);
          return r.code !== 0 && /denied the request/.test(r.stderr) ? r.stderr : undefined;
        }, { timeoutMs: 30_000 });
        assert.match(rejected, /spec\.nowhere/);
        const r = await cp.kubectl("get", configResource, "rejected");
        assert.notEqual(r.code, 0, "nothing was stored");
      },
    );

    await t.step(
      "the manager's /metrics: workqueue, reconcile and wake-cause families",
      async () => {
        const res = await fetch(`${manager.metricsURL}/metrics`);
        const text = await res.text();
        assert.equal(res.status, 200);
        const controller = target.controller;
        for (
          const family of [
            new RegExp(`^workqueue_depth\\{[^}]*name="${controller}"[^}]*\\} \\d+`, "m"),
            /^workqueue_adds_total\{[^}]*name="conversionwebhookserver"[^}]*\} [1-9]/m,
            /^workqueue_work_duration_seconds_bucket\{/m,
            new RegExp(
              `^controller_runtime_reconcile_total\\{[^}]*controller="${controller}"` +
                `[^}]*result="success"[^}]*\\} [1-9]`,
              "m",
            ),
            /^controller_runtime_reconcile_time_seconds_bucket\{/m,
            /^dco_operator_wake_total\{[^}]*cause="watch"[^}]*\} [1-9]/m,
            /^dco_manager_phase_transitions_total\{/m,
          ]
        ) assert.match(text, family);
        // A sample for the record (the closing note shows one).
        const sample = text.split("\n").filter((l) =>
          /^(workqueue_(depth|adds_total)|controller_runtime_reconcile_total|dco_operator_wake_total)\{/
            .test(l)
        );
        console.log(`manager /metrics sample:\n${sample.join("\n")}`);
      },
    );

    if (targets.crossplane) {
      const crossplane = targets.crossplane;
      await t.step("(XRD) the Crossplane stand-in kept up without errors", async () => {
        await crossplane.stop();
        assert.deepEqual(crossplane.errors.filter((e) => !/conflict/i.test(e)), []);
      });
    }
  }, { name: cpName, kubelet: webhookServerKubelet(IMAGE) });
}

endToEnd(
  crdTarget("e2e.dco.test"),
  "end to end: manager, webhook-server Pods, conversion on read through the apiserver",
  "end-to-end",
);
endToEnd(
  xrdTarget("xe2e.dco.test"),
  "end to end (XRD): manager, webhook-server Pods, XRs converted through the apiserver",
  "xrd-end-to-end",
);
