/**
 * The built-in CA's rotation (src/manager/ca_rotation.ts) with a fake Secret store, a fake
 * cluster whose stragglers the test sets, and a fixed clock: when a rotation starts (schedule,
 * lowered `--ca-validity`, the annotation), that the new CA is trusted before it signs, that a
 * step waits for its condition to hold for the whole delay (and restarts the wait when it breaks),
 * that leaves are re-issued from the new CA only after the promotion, and that the old CA leaves
 * the bundle only after every pair moved — with the serving Secret's `ca.crt` following each step
 * while its pair is kept.
 */
import assert from "node:assert/strict";
import {
  BuiltinIssuer,
  CA_SECRET_NAME,
  DEFAULT_CA_VALIDITY_MS,
  type ServingCertRequest,
  x509,
} from "../../src/manager/builtin_certs.ts";
import { parseBundle } from "../../src/manager/ca_bundle.ts";
import {
  CARotator,
  phaseOf,
  ROTATE_CA_ANNOTATION,
  ROTATION_COMPLETED_ANNOTATION,
  ROTATION_SETTLED_ANNOTATION,
  ROTATION_WAITING_ANNOTATION,
  type RotationCluster,
  rotationDueAt,
  type RotationStep,
} from "../../src/manager/ca_rotation.ts";
import type { KubeObject } from "../../src/kube/mod.ts";
import { AlreadyExists, FakeSecretStore, OWNER, T0 } from "./fake_secrets.ts";

const NS = "dco-system";
const DAY = 86_400_000;
const DELAY = 120_000;

function request(): ServingCertRequest {
  return {
    namespace: "wh",
    secretName: "alpha-webhook-server-tls",
    dnsNames: ["alpha-webhook-server.wh.svc"],
    commonName: "alpha-webhook-server",
    owner: OWNER,
  };
}

function pem(secret: KubeObject | undefined, key: string): string {
  const v = (secret as { data?: Record<string, string> } | undefined)?.data?.[key];
  assert.ok(v, `secret has ${key}`);
  return atob(v);
}

function dataOf(secret: KubeObject): Record<string, string> {
  return (secret as unknown as { data: Record<string, string> }).data;
}

function serials(bundleText: string): string[] {
  return parseBundle(bundleText).map((c) => c.serialNumber);
}

class FakeCluster implements RotationCluster {
  untrustingNow: string[] = [];
  notServingNow: string[] = [];
  outdatedNow: string[] = [];
  nudges = 0;
  asked: string[] = [];
  untrusting(ca: x509.X509Certificate) {
    this.asked.push(`trusts ${ca.serialNumber}`);
    return Promise.resolve([...this.untrustingNow]);
  }
  notServingFrom(ca: x509.X509Certificate) {
    this.asked.push(`serves ${ca.serialNumber}`);
    return Promise.resolve([...this.notServingNow]);
  }
  outdated(bundle: readonly x509.X509Certificate[]) {
    this.asked.push(`outdated ${bundle.map((c) => c.serialNumber).join(",")}`);
    return Promise.resolve([...this.outdatedNow]);
  }
  nudge() {
    this.nudges++;
  }
}

function world(caValidityMs = DEFAULT_CA_VALIDITY_MS) {
  const store = new FakeSecretStore();
  const clock = { now: T0 };
  const issuer = new BuiltinIssuer({
    store,
    namespace: NS,
    now: () => clock.now,
    isAlreadyExists: (e) => e instanceof AlreadyExists,
    caValidityMs,
  });
  const cluster = new FakeCluster();
  const steps: RotationStep[] = [];
  const rotator = new CARotator({
    issuer,
    store,
    cluster,
    caValidityMs,
    checkIntervalMs: 60_000,
    propagationDelayMs: DELAY,
    retireDelayMs: DELAY,
    now: () => clock.now,
    reporter: { step: (s) => steps.push(s) },
  });
  const ca = () => store.objects.get(`${NS}/${CA_SECRET_NAME}`)!;
  /** An edit by hand: a new resourceVersion, as the apiserver would give it. */
  let edits = 0;
  const edit = (fn: (secret: KubeObject) => void) => {
    fn(ca());
    ca().metadata.resourceVersion = `edited-${++edits}`;
  };
  return { store, clock, issuer, cluster, rotator, steps, ca, edit };
}

Deno.test("CA rotation: not due, nothing changes; due at two thirds of the lifetime", async () => {
  const w = world();
  await w.issuer.ca();
  const rv = w.ca().metadata.resourceVersion;
  const first = await w.rotator.step();
  assert.equal(first.phase, "Idle");
  assert.equal(first.requeueAfter, 60_000);
  assert.equal(w.ca().metadata.resourceVersion, rv, "no write while not due");

  const cert = new x509.X509Certificate(pem(w.ca(), "tls.crt"));
  const due = rotationDueAt(cert, DEFAULT_CA_VALIDITY_MS);
  assert.ok(due > T0 + 240 * DAY && due < T0 + 245 * DAY, new Date(due).toISOString());
  w.clock.now = due;
  const started = await w.rotator.step();
  assert.equal(started.phase, "Trusting");
  assert.equal(phaseOf(w.ca()), "Trusting");
  assert.deepEqual(w.steps, ["started"]);
});

Deno.test("CA rotation: a lowered --ca-validity shortens an existing CA's schedule", async () => {
  const w = world();
  await w.issuer.ca();
  const cert = new x509.X509Certificate(pem(w.ca(), "tls.crt"));
  assert.equal(rotationDueAt(cert, 30 * DAY), T0 + 20 * DAY);
});

Deno.test("CA rotation: the whole rotation, step by step, with the serving Secret following", async () => {
  const w = world();
  // A server's pair from the first CA.
  await w.issuer.ensureServingCertificate(request());
  const caA = pem(w.ca(), "tls.crt");
  const leafA = pem(w.store.objects.get("wh/alpha-webhook-server-tls"), "tls.crt");

  // The annotation starts a rotation now (and is consumed).
  w.edit((s) => s.metadata.annotations = { [ROTATE_CA_ANNOTATION]: "now" });
  assert.equal((await w.rotator.step()).phase, "Trusting");
  assert.equal(w.ca().metadata.annotations?.[ROTATE_CA_ANNOTATION], undefined);
  assert.equal(pem(w.ca(), "tls.crt"), caA, "the old CA still signs");
  const caB = pem(w.ca(), "next.crt");
  const [serialA, serialB] = [caA, caB].map((p) => new x509.X509Certificate(p).serialNumber);
  assert.deepEqual(serials(pem(w.ca(), "ca.crt")), [serialA, serialB], "both trusted");
  assert.equal(w.cluster.nudges, 1);

  // The serving Secret gets the two-CA bundle; its pair is kept (still from A).
  const rebundled = await w.issuer.ensureServingCertificate(request());
  assert.equal(rebundled.issued, undefined);
  assert.equal(rebundled.bundleUpdated, true);
  const tls = () => w.store.objects.get("wh/alpha-webhook-server-tls");
  assert.equal(pem(tls(), "tls.crt"), leafA);
  assert.deepEqual(serials(pem(tls(), "ca.crt")), [serialA, serialB]);

  // Stragglers hold the promotion; they are named on the Secret.
  w.cluster.untrustingNow = ["CustomResourceDefinition widgets.example.com (caBundle)"];
  w.clock.now += 10 * 60_000;
  assert.equal((await w.rotator.step()).phase, "Trusting");
  assert.equal(
    w.ca().metadata.annotations?.[ROTATION_WAITING_ANNOTATION],
    "CustomResourceDefinition widgets.example.com (caBundle)",
  );
  assert.ok(w.cluster.asked.includes(`trusts ${serialB}`));

  // Every store trusts B: the delay starts; a straggler coming back restarts it.
  w.cluster.untrustingNow = [];
  await w.rotator.step();
  const settled = w.ca().metadata.annotations?.[ROTATION_SETTLED_ANNOTATION];
  assert.ok(settled);
  assert.equal(w.ca().metadata.annotations?.[ROTATION_WAITING_ANNOTATION], undefined);
  w.clock.now += DELAY - 1_000;
  assert.equal((await w.rotator.step()).phase, "Trusting", "not before the delay");
  w.cluster.untrustingNow = ["ValidatingWebhookConfiguration v webhook a (caBundle)"];
  await w.rotator.step();
  assert.equal(w.ca().metadata.annotations?.[ROTATION_SETTLED_ANNOTATION], undefined, "reset");
  w.cluster.untrustingNow = [];
  await w.rotator.step();
  w.clock.now += DELAY;
  assert.equal((await w.rotator.step()).phase, "Reissuing");

  // Promoted: B signs, the bundle keeps both, next.* is gone.
  assert.equal(pem(w.ca(), "tls.crt"), caB);
  assert.equal(dataOf(w.ca())["next.crt"], undefined);
  assert.equal(dataOf(w.ca())["next.key"], undefined);
  assert.deepEqual(serials(pem(w.ca(), "ca.crt")), [serialA, serialB]);
  assert.deepEqual(w.steps, ["started", "promoted"]);

  // The leaf is re-issued from B, with the two-CA bundle.
  const reissued = await w.issuer.ensureServingCertificate(request());
  assert.equal(reissued.issued, "it was signed by a different CA");
  const leafB = new x509.X509Certificate(pem(tls(), "tls.crt"));
  assert.ok(
    await leafB.verify({
      publicKey: new x509.X509Certificate(caB).publicKey,
      signatureOnly: true,
    }),
  );
  assert.deepEqual(serials(pem(tls(), "ca.crt")), [serialA, serialB]);

  // A replica still serving the old pair holds the retirement.
  w.cluster.notServingNow = ["Lease wh/dco-served-p1 reports serial 1, not 2"];
  w.clock.now += 10 * 60_000;
  assert.equal((await w.rotator.step()).phase, "Reissuing");
  assert.deepEqual(serials(pem(w.ca(), "ca.crt")), [serialA, serialB], "A still trusted");
  assert.ok(w.cluster.asked.includes(`serves ${serialB}`));
  w.cluster.notServingNow = [];
  await w.rotator.step();
  w.clock.now += DELAY - 1_000;
  assert.equal((await w.rotator.step()).phase, "Reissuing");
  w.clock.now += 1_000;
  assert.equal((await w.rotator.step()).phase, "Retiring");

  // Retired: only B is trusted; the serving Secret's ca.crt follows, its pair kept.
  assert.equal(phaseOf(w.ca()), "Retiring");
  assert.deepEqual(serials(pem(w.ca(), "ca.crt")), [serialB]);
  assert.deepEqual(w.steps, ["started", "promoted", "retired"]);
  const leafBPem = pem(tls(), "tls.crt");
  const after = await w.issuer.ensureServingCertificate(request());
  assert.equal(after.bundleUpdated, true);
  assert.equal(pem(tls(), "tls.crt"), leafBPem);
  assert.deepEqual(serials(pem(tls(), "ca.crt")), [serialB]);

  // Completed only once every store holds B alone; the writers are woken meanwhile.
  w.cluster.outdatedNow = ["CustomResourceDefinition widgets.example.com (caBundle)"];
  const nudges = w.cluster.nudges;
  assert.equal((await w.rotator.step()).phase, "Retiring");
  assert.ok(w.cluster.nudges > nudges);
  assert.ok(w.cluster.asked.includes(`outdated ${serialB}`));
  w.cluster.outdatedNow = [];
  await w.rotator.step(); // settled
  assert.equal((await w.rotator.step()).phase, "Idle");
  assert.equal(phaseOf(w.ca()), "Idle");
  assert.ok(w.ca().metadata.annotations?.[ROTATION_COMPLETED_ANNOTATION]);
  assert.deepEqual(w.steps, ["started", "promoted", "retired", "completed"]);

  // Idle again: the next rotation is scheduled from B.
  const next = await w.rotator.step();
  assert.equal(next.phase, "Idle");
});

Deno.test("CA rotation: a CA Secret whose bundle lacks its signing CA is an error", async () => {
  const w = world();
  await w.issuer.ca();
  const other = (await new BuiltinIssuer({
    store: new FakeSecretStore(),
    namespace: NS,
    now: () => T0,
  }).ca()).certPem;
  w.edit((s) => dataOf(s)["ca.crt"] = btoa(other));
  await assert.rejects(
    () => w.rotator.step(),
    /ca\.crt does not contain the CA in tls\.crt/,
  );
});
