/**
 * A refused change leaves a trace on the object: with the manager's admission webhook registered
 * for ConversionWebhookServers, an UPDATE that names a managed flag in `extraArgs` is denied, and
 * the server gets a Warning Event (reason `Forbidden`, action `Update`, the denial's message).
 */
import assert from "node:assert/strict";
import { e2eTest, waitFor } from "../support/control_plane.ts";
import {
  admissionCertificate,
  getJSON,
  installDcoCRDs,
  startManager,
  validatingWebhook,
  webhookServer,
  writeObjectFile,
} from "../support/dco_stack.ts";
import { freePort } from "../support/control_plane.ts";
import { httpGet } from "../support/role_process.ts";

e2eTest(
  "a denied UPDATE of a ConversionWebhookServer records a Warning Event on it",
  async (cp) => {
    await installDcoCRDs(cp);
    const ns = await cp.createNamespace("dco-system");
    const { certDir, ca } = await admissionCertificate(cp, "dco-events-ca");
    const admissionPort = freePort();
    await using manager = startManager(cp, {
      certDir,
      namespace: ns,
      admissionPort,
      features: { xrd: false },
    });
    await waitFor(
      "readyz",
      async () => (await httpGet(`${manager.healthURL}/readyz`)).status === 200,
      { timeoutMs: 60_000 },
    ).catch((e) => {
      throw new Error(`${(e as Error).message}\n--- manager ---\n${manager.output()}`);
    });
    await cp.apply(validatingWebhook({
      name: "dco-cws-events-e2e",
      kind: "conversionwebhookserver",
      admissionPort,
      caPEM: ca.cert,
    }));
    const spec = { certificate: { issuerRef: { name: "x" } } };
    const created = await cp.kubectl(
      "create",
      "-f",
      await writeObjectFile(cp, webhookServer("s1", spec)),
    );
    assert.equal(created.code, 0, created.stderr);

    const bad = webhookServer("s1", { ...spec, extraArgs: ["--tls-cert-dir=/elsewhere"] });
    const message = await waitFor("the update is denied", async () => {
      const r = await cp.kubectl("apply", "--server-side", "-f", await writeObjectFile(cp, bad));
      return r.code !== 0 && /denied the request/.test(r.stderr) ? r.stderr : undefined;
    }, { timeoutMs: 30_000 });
    assert.match(message, /tls-cert-dir/);

    const uid = (await getJSON(cp, "conversionwebhookserver", "s1")).metadata.uid;
    const event = await waitFor("the Warning Event", async () => {
      const list = await getJSON(cp, "events.events.k8s.io", "-n", "default");
      return list.items.find((e: { regarding?: { uid?: string }; reason?: string }) =>
        e.regarding?.uid === uid && e.reason === "Forbidden"
      );
    }, { timeoutMs: 30_000 });
    assert.equal(event.type, "Warning");
    assert.equal(event.action, "Update");
    assert.equal(event.regarding.kind, "ConversionWebhookServer");
    assert.equal(event.regarding.name, "s1");
    assert.match(event.note, /tls-cert-dir/);
  },
);
