/**
 * A `FailClosed` revert of an XRD with the XRD conversion guard registered, against a real
 * kube-apiserver and the manager as a real process (Crossplane's part played by `_crossplane.ts`).
 * The revert is itself an XRD write that passes the guard at admission; it must not be restored
 * there. Flow: an XRDConversionConfig with `driftPolicy: FailClosed` is `Applied`; the guard is
 * registered (and seen restoring a stripped write, so it is live); the XRD then drifts — its hub
 * loses the field the config renames and v1 is no longer served (one served version, nothing
 * stored elsewhere: the storage guard lets the revert go) — and the config ends
 * `Applied=False/Reverted` with the XRD's `spec.conversion` and dco's annotations gone and
 * staying gone; a later establisher-like full-object write is stored as written.
 */
import assert from "node:assert/strict";
import {
  assertStays,
  type ControlPlane,
  e2eTest,
  freePort,
  waitFor,
} from "../support/control_plane.ts";
import {
  admissionCertificate,
  fieldRenameConfig,
  findCondition as cond,
  installDcoCRDs,
  kubectlFor,
  type Obj,
  startManager,
  twoVersionXRD,
  webhookServer,
  xrdGuardWebhookConfiguration,
} from "../support/dco_stack.ts";
import { httpGet } from "../support/role_process.ts";
import { markServerAvailable, provideServingSecret } from "../support/server_stand_in.ts";
import { isConflict, KubeClient, loadKubeconfig } from "../../src/kube/mod.ts";
import { FakeCrossplane, XRDS } from "./_crossplane.ts";
import { MANAGED_BY, PLAN_HASH, xrdTarget } from "./_targets.ts";

const CWS = "dco";
const xrds = xrdTarget("fcguard.dco.test");
const GROUP = xrds.group;
const NETS = `xnets.${GROUP}`;

e2eTest("FailClosed revert of an XRD sticks with the XRD conversion guard registered", async (
  cp: ControlPlane,
  t,
) => {
  await installDcoCRDs(cp, xrds.extraCRDs);
  const ns = await cp.createNamespace("dco-system");
  const { certDir, ca } = await admissionCertificate(cp, "dco-mgr-ca");
  const client = new KubeClient(await loadKubeconfig([cp.kubeconfigPath]));
  const crossplane = new FakeCrossplane(client);
  try {
    const kubectlAt = kubectlFor(cp);
    const { getJSON } = kubectlAt;
    const getXRD = () => client.get(XRDS(), NETS) as Promise<Obj>;
    const xrdConfig = () => getJSON(xrds.configResource, "nets");
    /** A full-object UPDATE (PUT) of the stored XRD edited by `edit`, retried on a conflict. */
    const replace = async (edit: (x: Obj) => void, fieldManager: string, dryRun = false) => {
      for (let attempt = 0;; attempt++) {
        const x = await getXRD();
        delete x.metadata.managedFields;
        edit(x);
        try {
          return await client.update(XRDS(), x, { fieldManager, dryRun }) as Obj;
        } catch (e) {
          if (!isConflict(e) || attempt >= 5) throw e;
        }
      }
    };
    /** The package's copy of the XRD: no spec.conversion, none of our annotations. */
    const strip = (x: Obj) => {
      delete x.spec.conversion;
      delete x.metadata.annotations?.[MANAGED_BY];
      delete x.metadata.annotations?.[PLAN_HASH];
    };

    await cp.apply(
      twoVersionXRD({ group: GROUP, plural: "xnets", kind: "XNet", referenceable: "v2" }),
    );
    await crossplane.establish(NETS);
    await cp.apply(
      webhookServer(CWS, { default: true, certificate: { issuerRef: { name: "x" } } }),
    );
    await provideServingSecret(cp, ca, ns, CWS);
    const config = fieldRenameConfig({
      kind: "XRDConversionConfig",
      name: "nets",
      target: NETS,
      hubVersion: "v2",
      spokeVersion: "v1",
      hubPath: "spec.capacity",
      spokePath: "spec.size",
    }) as Obj;
    config.spec.driftPolicy = "FailClosed";
    await cp.apply(config);

    const admissionPort = freePort();
    await using role = startManager(cp, {
      certDir,
      namespace: ns,
      admissionPort,
      features: { xrd: true },
      leaderElect: true,
      logLevel: "debug",
    });
    crossplane.start();

    await t.step("Applied with FailClosed; the guard registered and live", async () => {
      await waitFor(
        "readyz",
        async () => (await httpGet(`${role.healthURL}/readyz`)).status === 200,
        {
          timeoutMs: 60_000,
        },
      );
      await waitFor(
        "server Deployment",
        () => getJSON("deployment", `${CWS}-webhook-server`, "-n", ns).catch(() => undefined),
        {
          timeoutMs: 60_000,
        },
      );
      await markServerAvailable(kubectlAt, ns, CWS);
      await waitFor("Applied", async () => {
        const c = await xrdConfig();
        const x = await getXRD();
        return c.status?.phase === "Applied" && x.spec.conversion?.strategy === "Webhook" &&
          c.status.observedXRDGeneration === x.metadata.generation;
      }, { timeoutMs: 60_000 });
      await cp.apply(xrdGuardWebhookConfiguration(admissionPort, ca.cert));
      // The apiserver picks the registration up asynchronously: probe with server dry runs.
      await waitFor(
        "guard live",
        async () =>
          (await replace(strip, "package-establisher", true)).spec.conversion?.strategy ===
            "Webhook",
        { timeoutMs: 30_000 },
      );
    });

    const restores = () =>
      role.output().match(/XRD conversion guard restored the conversion stanza/g)?.length ?? 0;
    await t.step(
      "the XRD drifts: reverted, and the guard does not put the stanza back",
      async () => {
        const restoresBefore = restores();
        await replace((x) => {
          const [v1, v2] = x.spec.versions;
          v1.served = false;
          const props = v2.schema.openAPIV3Schema.properties.spec.properties;
          delete props.capacity;
          props.volume = { type: "integer" };
        }, "platform-team");
        const c = await waitFor("Reverted", async () => {
          const c = await xrdConfig();
          return cond(c, "Applied")?.reason === "Reverted" ? c : undefined;
        }, { timeoutMs: 60_000 });
        // (The phase moves on from Failed to Invalid as later reconciles find the config invalid
        // against the XRD; the Applied condition keeps saying what happened.)
        assert.equal(cond(c, "Applied").status, "False");
        assert.match(
          cond(c, "Applied").message,
          /FailClosed: conversion of XRD ".*" reverted to strategy None/,
        );
        await assertStays(async () => {
          const x = await getXRD();
          assert.equal(x.spec.conversion, undefined, JSON.stringify(x.spec.conversion));
          assert.equal(x.metadata.annotations?.[MANAGED_BY], undefined);
          assert.equal(x.metadata.annotations?.[PLAN_HASH], undefined);
        }, { forMs: 3_000, what: "the XRD without dco's stanza" });
        assert.equal(restores(), restoresBefore, "the guard restored nothing");
        assert.match(role.output(), /"reason":"config nets is not Applied=True"/);
      },
    );

    await t.step("a later establisher write is stored as written", async () => {
      const stored = await replace(strip, "package-establisher");
      assert.equal(stored.spec.conversion, undefined);
      assert.equal(stored.metadata.annotations?.[MANAGED_BY], undefined);
      assert.equal(cond(await xrdConfig(), "Applied").status, "False");
    });

    await t.step("SIGTERM exits cleanly", async () => {
      await crossplane.stop();
      role.child.kill("SIGTERM");
      assert.equal((await role.child.status).code, 0, role.output().slice(-3000));
    });
  } finally {
    await crossplane.stop();
    client.close();
  }
});
