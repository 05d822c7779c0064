/**
 * dco next to real Crossplane: `crossplane core init` + `core start` (v2, built by
 * hack/testenv.sh; tests/support/crossplane.ts) run against the control plane, with
 * kube-controller-manager and the test kubelet running the webhook-server Pods. No stand-in:
 * Crossplane's own CRDs, its XRD controller rendering the composite (and claim) CRDs, its
 * composite and claim controllers writing XRs.
 *
 * Two XRDs with versions v1 (referenceable, so the generated CRD's storage version: `spec.size`)
 * and v2 (`spec.capacity`): a modern Namespaced one (apiextensions.crossplane.io/v2) and a legacy
 * one offering claims (apiextensions.crossplane.io/v1). Steps:
 * - Crossplane establishes both and generates their CRDs (with its injected schema);
 * - the manager patches each XRD's `spec.conversion`, Crossplane copies it into the generated
 *   CRDs (ConversionPropagated=True: the copy is Crossplane's, as in a cluster);
 * - XRs and claims convert on read through the webhook-server Pods, including what Crossplane
 *   wrote into them (`spec.crossplane.compositionRef` from a Composition it selected, the
 *   composite its claim controller made from a claim, status conditions);
 * - Crossplane's own reconciles do not undo the conversion: a schema change of the XRD makes
 *   Crossplane re-render the generated CRD, and watches on the XRDs and generated CRDs count the
 *   conversion-strategy flips (one each: None → Webhook), with no guard restore and no revert;
 * - a full-object XRD write without the stanza (what a package establisher or a GitOps apply
 *   does) is put back by dco's XRD conversion guard at admission, so Crossplane never copies a
 *   stanza-less XRD: the generated CRD still flipped once.
 * - `convctl crossplane status` reads the real objects, and after `convctl retarget` Crossplane
 *   selects through the new selector and pins the XRs again;
 * - deleting the configs completes (the legacy XRD too, written at v1, whose schema admits no
 *   stanza but a Webhook one): the stanza is removed from each XRD and Crossplane puts the
 *   generated CRDs back to `None`.
 *
 * What Crossplane cannot do here (nothing can be fetched from a package registry): install
 * packages, so no Composition function runs (the XRs stay Synced=False) and no package
 * establisher rewrites an XRD — the guard step plays that write.
 */
import assert from "node:assert/strict";
import type * as k8s from "@kubernetes/client-node";

import { assertStays, e2eTest, waitFor } from "../support/control_plane.ts";
import {
  createObject,
  fieldRenameConfig,
  findCondition as cond,
  installDco,
  kubectlFor,
  type Obj,
  readyWebhookServer,
  startDcoManager,
  tryGetJSON,
  twoVersionXRD,
  WEBHOOK_SERVER_SA,
  webhookServer,
  webhookServerKubelet,
  writeObjectFile,
  xrdGuardWebhookConfiguration,
} from "../support/dco_stack.ts";
import { httpGet } from "../support/role_process.ts";
import { convctl } from "../cli/_convctl.ts";
import { recordWatch, type WatchRecorder } from "../support/watch_recorder.ts";
import { MANAGED_BY, PLAN_HASH } from "./_targets.ts";

const GROUP = "xp.dco.test";
const CWS = "dco";
const SVC = `${CWS}-webhook-server`;
const IMAGE = "dco.test/webhook-server:xp";
const WIDGETS = `xwidgets.${GROUP}`; // modern, Namespaced
const NETS = `xnets.${GROUP}`; // legacy, offers claims
const CLAIMS = `nets.${GROUP}`;
const TITLE = "real Crossplane: dco propagates, converts and keeps its stanza next to it";
const XRD_RESOURCE = "compositeresourcedefinitions.v2.apiextensions.crossplane.io";

/** The strategies `events` show for object `name`, consecutive repeats collapsed. */
function strategyHistory(w: WatchRecorder, name: string): string[] {
  const out: string[] = [];
  for (const e of w.events) {
    if (e.object.metadata?.name !== name) continue;
    const s = e.object.spec?.conversion?.strategy ?? "None";
    if (out.at(-1) !== s) out.push(s);
  }
  return out;
}

/**
 * `xrd` with a `status` object (unknown fields kept) declared in every version, so conversion
 * carries the whole `status`; an XRD without one keeps only Crossplane's own status fields.
 */
function withStatus(xrd: k8s.KubernetesObject): k8s.KubernetesObject {
  const out = structuredClone(xrd) as Obj;
  for (const v of out.spec.versions) {
    v.schema.openAPIV3Schema.properties.status = {
      type: "object",
      "x-kubernetes-preserve-unknown-fields": true,
    };
  }
  return out;
}

/** Two reads of one object (at two versions) that saw the same revision. */
function oneRevision(a: () => Promise<Obj>, b: () => Promise<Obj>): Promise<[Obj, Obj]> {
  return waitFor("two reads of the same revision", async () => {
    const [x, y] = [await a(), await b()];
    return x.metadata.resourceVersion === y.metadata.resourceVersion ? [x, y] : undefined;
  }, { timeoutMs: 60_000 });
}

/** How many events `w` saw for object `name` (ADDED and MODIFIED). */
function eventCount(w: WatchRecorder, name: string): number {
  return w.events.filter((e) => e.object.metadata?.name === name).length;
}

e2eTest(TITLE, async (cp, t) => {
  assert.ok(cp.crossplane, "Crossplane runs");
  const ns = await installDco(cp, { rbac: { crossplane: true } });
  const { kubectl, getJSON } = kubectlFor(cp);
  const xrd = (name: string) => getJSON(XRD_RESOURCE, name);

  const xrdWatch = await recordWatch(
    cp,
    "/apis/apiextensions.crossplane.io/v2/compositeresourcedefinitions",
  );
  const crdWatch = await recordWatch(
    cp,
    "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
  );
  const configWatch = await recordWatch(cp, "/apis/terasky.com/v1alpha1/xrdconversionconfigs");
  await using _watches = {
    async [Symbol.asyncDispose]() {
      await xrdWatch[Symbol.asyncDispose]();
      await crdWatch[Symbol.asyncDispose]();
      await configWatch[Symbol.asyncDispose]();
    },
  };

  await t.step("Crossplane establishes the XRDs and generates their CRDs", async () => {
    await cp.apply(withStatus(twoVersionXRD({
      group: GROUP,
      plural: "xwidgets",
      kind: "XWidget",
      referenceable: "v1",
    })));
    await cp.apply(twoVersionXRD({
      group: GROUP,
      plural: "xnets",
      kind: "XNet",
      referenceable: "v1",
      claimNames: { plural: "nets", kind: "Net" },
    }));
    for (const [name, offered] of [[WIDGETS, false], [NETS, true]] as const) {
      await waitFor(`${name} Established`, async () => {
        const x = await xrd(name);
        return cond(x, "Established")?.status === "True" &&
          (!offered || cond(x, "Offered")?.status === "True");
      }, { timeoutMs: 60_000 });
    }
    for (const name of [WIDGETS, NETS, CLAIMS]) await cp.waitForCRD(name);
    const generated = await getJSON("crd", WIDGETS);
    const owner = generated.metadata.ownerReferences[0];
    assert.equal(owner.kind, "CompositeResourceDefinition");
    assert.equal(owner.uid, (await xrd(WIDGETS)).metadata.uid);
    assert.equal(generated.spec.conversion.strategy, "None");
    assert.deepEqual(
      generated.spec.versions.map((v: Obj) => [v.name, v.served, v.storage]),
      [["v1", true, true], ["v2", true, false]],
    );
    // Crossplane's schema, injected into every version (what the stand-in never rendered).
    for (const v of generated.spec.versions) {
      const spec = v.schema.openAPIV3Schema.properties.spec.properties;
      assert.ok(spec.crossplane?.properties?.compositionRef, `${v.name}: spec.crossplane`);
    }
    assert.ok(
      (await getJSON("crd", NETS)).spec.versions[0].schema.openAPIV3Schema.properties.spec
        .properties.claimRef,
      "legacy composite: spec.claimRef",
    );
  });

  await using manager = await startDcoManager(cp, {
    caName: "dco-xp-ca",
    namespace: ns,
    webhookServerImage: IMAGE,
    features: { xrd: true, crd: true },
  });
  const { admissionPort, ca, failing } = manager;
  const config = (name: string, target: string) =>
    fieldRenameConfig({ kind: "XRDConversionConfig", name, target, spokePath: "spec.capacity" });
  const getConfig = (name: string) => getJSON("xrdconversionconfigs.terasky.com", name);
  const metrics = async () => (await httpGet(`${manager.metricsURL}/metrics`)).text;
  const reverts = (target: string) =>
    new RegExp(
      `^dco_manager_conversion_reverts_total\\{config_kind="xrd",target="${
        target.replaceAll(".", "\\.")
      }"\\} (\\S+)$`,
      "m",
    );
  const guardRestores = () =>
    manager.output().split("\n").filter((l) =>
      l.includes("XRD conversion guard restored the conversion stanza")
    ).length;

  await cp.apply(webhookServer(CWS, {
    default: true,
    replicas: 1,
    serviceAccountName: WEBHOOK_SERVER_SA,
    certificate: { issuerRef: { name: "unused" } },
    rollout: { preStopSleepSeconds: 1, terminationGracePeriodSeconds: 5 },
  }));
  await cp.apply(config("widgets", WIDGETS));
  await cp.apply(config("nets", NETS));

  await t.step("the manager patches the XRDs; Crossplane copies the stanza", async () => {
    await waitFor("CWS ready", () => readyWebhookServer(cp, CWS, 1), { timeoutMs: 120_000 })
      .catch(failing);
    for (const [name, target] of [["widgets", WIDGETS], ["nets", NETS]]) {
      const c = await waitFor(`${name} Propagated`, async () => {
        const c = await getConfig(name);
        return c.status?.phase === "Applied" &&
            cond(c, "ConversionPropagated")?.status === "True"
          ? c
          : undefined;
      }, { timeoutMs: 60_000 }).catch(failing);
      const x = await xrd(target);
      assert.equal(x.spec.conversion.strategy, "Webhook");
      assert.deepEqual(x.spec.conversion.webhook.clientConfig.service, {
        name: SVC,
        namespace: ns,
        path: `/convert/${target}`,
        port: 443,
      });
      assert.equal(x.metadata.annotations[MANAGED_BY], name);
      // Crossplane's XRD controller rendered the stanza into every CRD it generates.
      const roles = target === NETS ? [[NETS, "composite"], [CLAIMS, "claim"]] : [[
        WIDGETS,
        "composite",
      ]];
      assert.deepEqual(
        c.status.generatedCRDs.map((g: Obj) => [g.name, g.role, g.propagated]),
        roles.map(([n, r]) => [n, r, true]),
      );
      for (const [crd] of roles) {
        assert.deepEqual((await getJSON("crd", crd)).spec.conversion, x.spec.conversion, crd);
      }
    }
  });

  const objNs = await cp.createNamespace("objects");
  await t.step(
    "XRs convert on read through the webhook-server Pod, Crossplane's fields too",
    async () => {
      // A Composition for XWidget: Crossplane selects it and writes spec.crossplane.compositionRef
      // into the XR (its function cannot run here, so the XR stays Synced=False).
      await cp.apply({
        apiVersion: "apiextensions.crossplane.io/v1",
        kind: "Composition",
        metadata: { name: "xwidgets-noop", labels: { "xrd-api-version": "v1" } },
        spec: {
          compositeTypeRef: { apiVersion: `${GROUP}/v1`, kind: "XWidget" },
          mode: "Pipeline",
          pipeline: [{ step: "noop", functionRef: { name: "function-noop" } }],
        },
      } as never);
      await createObject(cp, {
        apiVersion: `${GROUP}/v1`,
        kind: "XWidget",
        metadata: { name: "w1" },
        spec: { size: 3, color: "red" },
      }, objNs);
      await createObject(cp, {
        apiVersion: `${GROUP}/v2`,
        kind: "XWidget",
        metadata: { name: "w2" },
        spec: { capacity: 7, color: "blue" },
      }, objNs);
      const at = (v: string, name: string) => getJSON(`xwidgets.${v}.${GROUP}`, name, "-n", objNs);
      // Crossplane's writes, read at the storage version v1.
      await waitFor("Crossplane selected the Composition", async () => {
        const o = await at("v1", "w1");
        return o.spec.crossplane?.compositionRef?.name === "xwidgets-noop" &&
          cond(o, "Synced") !== undefined;
      }, { timeoutMs: 60_000 }).catch(failing);
      // Crossplane keeps writing the XR's status: compare a v1 and a v2 read of one revision.
      const [v1, v2] = await oneRevision(() => at("v1", "w1"), () => at("v2", "w1"));

      assert.equal(v2.apiVersion, `${GROUP}/v2`);
      assert.equal(v2.spec.capacity, 3);
      assert.equal(v2.spec.size, undefined);
      assert.equal(v2.spec.color, "red");
      assert.deepEqual(v2.spec.crossplane, v1.spec.crossplane, "Crossplane's spec survives");
      // XWidget's schema declares `status`, so Crossplane's conditions are carried.
      assert.equal(cond(v1, "Synced").status, "False");
      assert.deepEqual(v2.status, v1.status, "Crossplane's status survives");
      // Written at v2, stored at v1.
      const w2 = await at("v1", "w2");
      assert.equal(w2.spec.size, 7);
      assert.equal(w2.spec.color, "blue");

      // A claim: Crossplane's claim controller makes its composite (cluster scoped, at v1).
      await createObject(cp, {
        apiVersion: `${GROUP}/v2`,
        kind: "Net",
        metadata: { name: "n1" },
        spec: { capacity: 5, color: "green" },
      }, objNs);
      const claim = await waitFor("the claim is bound to a composite", async () => {
        const c = await tryGetJSON(cp, `nets.v1.${GROUP}`, "n1", "-n", objNs);
        return c?.spec?.resourceRef?.name ? c : undefined;
      }, { timeoutMs: 60_000 }).catch(failing);
      assert.equal(claim.spec.size, 5);
      const composite = claim.spec.resourceRef.name;
      const xnetV1 = await waitFor(
        "the composite",
        () => tryGetJSON(cp, `xnets.v1.${GROUP}`, composite),
        { timeoutMs: 30_000 },
      );
      assert.equal(xnetV1.spec.size, 5, "Crossplane copied the claim's spec");
      assert.equal(xnetV1.spec.claimRef.name, "n1");
      const xnetV2 = await getJSON(`xnets.v2.${GROUP}`, composite);
      assert.equal(xnetV2.spec.capacity, 5);
      assert.deepEqual(xnetV2.spec.claimRef, xnetV1.spec.claimRef);
      // XNet's schema declares no `status`: Crossplane's status fields (conditions, …) still
      // pass through conversion, on the composite and on the claim.
      await waitFor("Crossplane's conditions on the composite", async () => {
        const o = await getJSON(`xnets.v1.${GROUP}`, composite);
        return cond(o, "Synced") ? o : undefined;
      }, { timeoutMs: 30_000 });
      const [xv1, xv2] = await oneRevision(
        () => getJSON(`xnets.v1.${GROUP}`, composite),
        () => getJSON(`xnets.v2.${GROUP}`, composite),
      );
      assert.ok(xv1.status.conditions.length > 0);
      assert.deepEqual(xv2.status, xv1.status, "Crossplane's status survives without a schema");
      await waitFor("Crossplane's conditions on the claim", async () => {
        const o = await getJSON(`nets.v1.${GROUP}`, "n1", "-n", objNs);
        return cond(o, "Synced") ? o : undefined;
      }, { timeoutMs: 30_000 });
      const [cv1, cv2] = await oneRevision(
        () => getJSON(`nets.v1.${GROUP}`, "n1", "-n", objNs),
        () => getJSON(`nets.v2.${GROUP}`, "n1", "-n", objNs),
      );
      assert.ok(cv1.status.conditions.length > 0);
      assert.deepEqual(cv2.status, cv1.status, "the claim's status survives too");
      assert.deepEqual(cv2.spec.resourceRef, claim.spec.resourceRef);
    },
  );

  await t.step("Crossplane's reconciles do not undo the conversion (counted)", async () => {
    const generationBefore = (await getJSON("crd", WIDGETS)).metadata.generation;
    const eventsBefore = eventCount(crdWatch, WIDGETS);
    // A schema change of the XRD (a description on both versions): Crossplane re-renders the
    // generated CRD from the XRD, stanza included.
    const x = await xrd(WIDGETS);
    const versions = x.spec.versions.map((v: Obj) => {
      const copy = structuredClone(v);
      copy.schema.openAPIV3Schema.properties.spec.properties.color.description = "the color";
      return copy;
    });
    await kubectl(
      "patch",
      XRD_RESOURCE,
      WIDGETS,
      "--type=merge",
      "-p",
      JSON.stringify({ spec: { versions } }),
    );
    const rerendered = await waitFor("Crossplane re-rendered the CRD", async () => {
      const g = await getJSON("crd", WIDGETS);
      return g.metadata.generation > generationBefore &&
          g.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.color
              .description === "the color"
        ? g
        : undefined;
    }, { timeoutMs: 30_000 }).catch(failing);
    assert.equal(rerendered.spec.conversion.strategy, "Webhook");
    await assertStays(async () => {
      assert.equal((await getJSON("crd", WIDGETS)).spec.conversion.strategy, "Webhook");
      assert.equal(cond(await getConfig("widgets"), "ConversionPropagated")?.status, "True");
    }, { forMs: 2_000, everyMs: 500, what: "the generated CRD converting" });
    const counts = {
      xrdFlips: strategyHistory(xrdWatch, WIDGETS),
      crdFlips: strategyHistory(crdWatch, WIDGETS),
      claimCRDFlips: strategyHistory(crdWatch, CLAIMS),
      crdEventsSinceChange: eventCount(crdWatch, WIDGETS) - eventsBefore,
      guardRestores: guardRestores(),
      reverts: (await metrics()).match(reverts(WIDGETS))?.[1] ?? "0",
    };
    console.log(`real Crossplane, after a re-render: ${JSON.stringify(counts)}`);
    assert.deepEqual(counts.xrdFlips, ["None", "Webhook"]);
    assert.deepEqual(counts.crdFlips, ["None", "Webhook"]);
    assert.deepEqual(counts.claimCRDFlips, ["None", "Webhook"]);
    assert.ok(counts.crdEventsSinceChange >= 1, "Crossplane wrote the generated CRD");
    assert.equal(counts.guardRestores, 0, "nothing for the guard to restore");
    assert.equal(counts.reverts, "0", "no out-of-band revert");
  });

  await t.step(
    "the guard puts back a stanza-less full-object XRD write; the CRD never flips",
    async () => {
      await cp.apply(xrdGuardWebhookConfiguration(admissionPort, ca.cert));
      const planHash = (await xrd(WIDGETS)).metadata.annotations[PLAN_HASH];
      /** A PUT of the stored XRD without our stanza and annotations (a package's copy of it). */
      const replaceStripped = async (dryRun: boolean): Promise<Obj> => {
        const x = await xrd(WIDGETS);
        delete x.spec.conversion;
        delete x.metadata.annotations?.[MANAGED_BY];
        delete x.metadata.annotations?.[PLAN_HASH];
        delete x.metadata.managedFields;
        const file = await writeObjectFile(cp, x);
        const dry = dryRun ? ["--dry-run=server"] : [];
        return JSON.parse(await kubectl("replace", ...dry, "-o", "json", "-f", file));
      };
      // The apiserver picks the registration up asynchronously: probe with server dry runs.
      await waitFor(
        "guard live",
        async () => (await replaceStripped(true)).spec.conversion?.strategy === "Webhook",
        { timeoutMs: 30_000 },
      ).catch(failing);
      // Retried: Crossplane's status writes move the resourceVersion (a conflict is no answer).
      const stored = await waitFor("the stripped write", () => replaceStripped(false), {
        timeoutMs: 15_000,
      });
      assert.equal(stored.spec.conversion.strategy, "Webhook", "restored at admission");
      assert.equal(stored.metadata.annotations[MANAGED_BY], "widgets");
      assert.equal(stored.metadata.annotations[PLAN_HASH], planHash);
      await waitFor("Applied and Propagated", async () => {
        const c = await getConfig("widgets");
        return c.status.phase === "Applied" && cond(c, "ConversionPropagated")?.status === "True";
      }, { timeoutMs: 30_000 }).catch(failing);
      const counts = {
        xrdFlips: strategyHistory(xrdWatch, WIDGETS),
        crdFlips: strategyHistory(crdWatch, WIDGETS),
        guardRestores: guardRestores(),
        reverts: (await metrics()).match(reverts(WIDGETS))?.[1] ?? "0",
      };
      console.log(`real Crossplane, after a stanza-less write: ${JSON.stringify(counts)}`);
      assert.deepEqual(
        counts.xrdFlips,
        ["None", "Webhook"],
        "the XRD was never stored without it",
      );
      assert.deepEqual(counts.crdFlips, ["None", "Webhook"], "so Crossplane never copied None");
      assert.ok(counts.guardRestores >= 1, "the guard restored it");
      assert.equal(counts.reverts, "0", "a guarded write is no revert");
    },
  );

  await t.step("convctl crossplane status and retarget against real Crossplane", async () => {
    const kube = ["--kubeconfig", cp.kubeconfigPath];
    const st = await convctl("crossplane", "status", WIDGETS, ...kube, "-o", "json");
    assert.equal(st.code, 0, st.stderr);
    const status = JSON.parse(st.stdout);
    assert.equal(status.scope, "Namespaced");
    // Both XRs pinned by Crossplane itself to the one Composition it selected.
    assert.deepEqual(status.compositions, [{ name: "xwidgets-noop", version: "v1", pinnedBy: 2 }]);
    assert.equal(status.unpinned, 0);
    assert.equal(status.xrdConversionStrategy, "Webhook");
    assert.deepEqual(status.versions.map((v: Obj) => [v.name, v.ruleSet]), [["v1", "hub"], [
      "v2",
      "spoke",
    ]]);
    const g = status.generatedCRDs[0];
    assert.deepEqual(
      [g.name, g.found, g.conversionStrategy, g.storageVersion, g.objects, g.propagationGap],
      [WIDGETS, true, "Webhook", "v1", 2, false],
    );
    assert.equal(status.config.phase, "Applied");
    // retarget: the pins are nulled and a selector set; Crossplane then selects through the
    // selector and pins the XRs again.
    const r = await convctl(
      "retarget",
      "-x",
      WIDGETS,
      "--to",
      "v1",
      ...kube,
      "-o",
      "json",
      "--quiet",
    );
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(
      JSON.parse(r.stdout).objects.map((o: Obj) => [o.name, o.action, o.result]),
      [["w1", "patch", "patched"], ["w2", "patch", "patched"]],
    );
    const repinned = await waitFor("Crossplane re-pinned w1 through the selector", async () => {
      const o = await getJSON(`xwidgets.v2.${GROUP}`, "w1", "-n", objNs);
      return o.spec.crossplane?.compositionRef?.name === "xwidgets-noop" ? o : undefined;
    }, { timeoutMs: 30_000 }).catch(failing);
    assert.deepEqual(repinned.spec.crossplane.compositionSelector, {
      matchLabels: { "xrd-api-version": "v1" },
    });
    assert.equal(repinned.spec.capacity, 3, "still converted at v2");
  });

  await t.step(
    "deleting the configs removes the XRDs' stanza; Crossplane reverts the generated CRDs",
    async () => {
      // Both XRDs serve two versions, so the storage guard holds each delete: break glass.
      for (const name of ["widgets", "nets"]) {
        await kubectl(
          "annotate",
          "xrdconversionconfigs.terasky.com",
          name,
          "conversion.terasky.com/allow-unsafe-delete=true",
        );
        await kubectl("delete", "xrdconversionconfigs.terasky.com", name, "--wait=false");
      }
      // The legacy XRD is written at v1, whose schema refuses any stanza but a Webhook one: the
      // revert must remove the stanza, or the finalizer stays for ever.
      for (const name of ["widgets", "nets"]) {
        await waitFor(`config ${name} gone`, async () => {
          const r = await cp.kubectl("get", "xrdconversionconfigs.terasky.com", name);
          return r.code !== 0 && /NotFound/.test(r.stderr);
        }, { timeoutMs: 60_000 }).catch(failing);
      }
      for (const name of [WIDGETS, NETS]) {
        const x = await xrd(name);
        assert.equal(x.spec.conversion, undefined, `${name}: no stanza`);
        assert.equal(x.metadata.annotations?.[MANAGED_BY], undefined, name);
        assert.equal(x.metadata.annotations?.[PLAN_HASH], undefined, name);
      }
      // Crossplane renders an XRD without a stanza into CRDs without one, which the apiserver
      // defaults to None; each config (and the plan its webhook serves) went only after that, so
      // no generated CRD pointed at a webhook that no longer served it. Etcd revisions order it.
      const deletedAt = (config: string) =>
        configWatch.events.find((e) => e.type === "DELETED" && e.object.metadata?.name === config)
          ?.rv;
      const noneAt = (crd: string) =>
        crdWatch.events.findLast((e) =>
          e.object.metadata?.name === crd && e.object.spec?.conversion?.strategy === "None"
        )?.rv;
      for (const [config, crds] of [["widgets", [WIDGETS]], ["nets", [NETS, CLAIMS]]] as const) {
        const gone = await waitFor(`${config}'s DELETED event`, () => deletedAt(config));
        for (const name of crds) {
          const g = await getJSON("crd", name);
          assert.deepEqual(g.spec.conversion, { strategy: "None" }, name);
          const none = noneAt(name) ?? Infinity;
          assert.ok(
            none < gone,
            `${name} None at revision ${none}, config ${config} gone at ${gone}`,
          );
        }
      }
      const counts = {
        xrdFlips: [WIDGETS, NETS].map((n) => strategyHistory(xrdWatch, n)),
        crdFlips: [WIDGETS, NETS, CLAIMS].map((n) => strategyHistory(crdWatch, n)),
      };
      console.log(`real Crossplane, after the deletes: ${JSON.stringify(counts)}`);
      for (const flips of [...counts.xrdFlips, ...counts.crdFlips]) {
        assert.deepEqual(flips, ["None", "Webhook", "None"]);
      }
    },
  );

  await t.step(
    "Crossplane's XRD controllers: established, no error but retried races",
    async () => {
      for (const name of [WIDGETS, NETS]) {
        const x = await xrd(name);
        assert.equal(cond(x, "Established")?.status, "True", name);
      }
      assert.equal(cond(await xrd(NETS), "Offered")?.status, "True");
      // Their only errors are optimistic-concurrency races (a conflict, or a create whose object
      // the cache did not show yet), each retried.
      const log = await Deno.readTextFile(cp.crossplane!.log);
      const errors = log.split("\n").filter((l) =>
        /\tERROR\t/.test(l) && /"controller": "(defined|offered)\//.test(l) &&
        !/the object has been modified|already exists/.test(l)
      );
      assert.deepEqual(errors, []);
    },
  );
}, { name: "crossplane-real", kubelet: webhookServerKubelet(IMAGE), crossplane: true });
