/**
 * The certificate gate: a pair is validated (PEM, matching key, validity) with a one-line reason;
 * the webhook-server process refuses to start on a bad pair; `/readyz` is 503 while the listener
 * holds no usable pair (none yet, or the served one expired); a reload to a bad pair keeps the good
 * one serving, keeps the replica ready and is counted in `dco_webhook_tls_reload_failures_total`,
 * while `dco_webhook_tls_certificate_expiry_timestamp_seconds` follows the served certificate.
 */
import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import {
  answerPlain,
  loadKeyPair,
  Readiness,
  type ReloadResult,
  type TlsState,
  validateKeyPair,
} from "../../src/net/mod.ts";
import { WebhookMetrics } from "../../src/webhook/metrics.ts";
import { PlanRegistry } from "../../src/webhook/registry.ts";
import { Registry } from "prom-client";
import { sampleValue, startConversion, testCerts, writePair } from "./_helpers.ts";

const DAY_MS = 24 * 3600 * 1000;
const REPO = new URL("../../", import.meta.url).pathname;

function notAfterOf(pem: string): Date {
  return new X509Certificate(pem).validToDate;
}

// --- validation -----------------------------------------------------------------------------------

Deno.test("validateKeyPair names what is wrong with a pair, in one line", async () => {
  const c = await testCerts();
  const info = validateKeyPair(c.first);
  assert.equal(info.notAfter.getTime(), notAfterOf(c.first.cert).getTime());
  assert.ok(info.serial.length > 0);
  const cases: [string, { cert: string; key: string }, RegExp, Date?][] = [
    ["not PEM", { cert: "hello", key: c.first.key }, /^tls\.crt is not a PEM certificate/],
    [
      "a broken PEM block",
      { cert: "-----BEGIN CERTIFICATE-----\nnot a cert\n", key: c.first.key },
      /^tls\.crt is not a PEM certificate/,
    ],
    [
      "a key that is no key",
      { cert: c.first.cert, key: "junk" },
      /^tls\.key is not a PEM private key/,
    ],
    [
      "the certificate as key",
      { cert: c.first.cert, key: c.first.cert },
      /^tls\.key is not a PEM private key/,
    ],
    [
      "a mismatched key",
      { cert: c.first.cert, key: c.strayKey },
      /^tls\.key does not match the certificate in tls\.crt$/,
    ],
    [
      "expired",
      c.first,
      /^the certificate in tls\.crt expired at \d{4}-\d\d-\d\dT/,
      new Date(Date.now() + 3 * DAY_MS),
    ],
    [
      "not yet valid",
      c.first,
      /^the certificate in tls\.crt is not valid before \d{4}-/,
      new Date(Date.now() - DAY_MS),
    ],
  ];
  for (const [name, pair, want, now] of cases) {
    assert.throws(() => validateKeyPair(pair, now), (e: Error) => {
      assert.match(e.message, want, name);
      assert.ok(!e.message.includes("\n"), `${name}: one line`);
      return true;
    });
  }
});

Deno.test("loadKeyPair names the file it cannot read", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/tls.crt`, (await testCerts()).first.cert);
    await assert.rejects(loadKeyPair(dir), new RegExp(`^Error: cannot read ${dir}/tls\\.key: `));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

// --- the process refuses to start -----------------------------------------------------------------

/** Runs the webhook-server main until it exits; it never reaches an apiserver. */
async function runWebhookServer(certDir: string): Promise<{ code: number; output: string }> {
  const kubeconfig = `${certDir}/kubeconfig`;
  await Deno.writeTextFile(
    kubeconfig,
    JSON.stringify({
      apiVersion: "v1",
      kind: "Config",
      clusters: [{ name: "c", cluster: { server: "https://127.0.0.1:1" } }],
      users: [{ name: "u", user: { token: "t" } }],
      contexts: [{ name: "x", context: { cluster: "c", user: "u" } }],
      "current-context": "x",
    }),
  );
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-net",
      "--allow-env",
      `--allow-read=${certDir},${REPO}src`,
      `${REPO}src/main/webhook_server.ts`,
      "--webhook-server-name=dco",
      `--tls-cert-dir=${certDir}`,
      `--kubeconfig=${kubeconfig}`,
      "--conversion-bind-address=127.0.0.1:0",
      "--metrics-bind-address=127.0.0.1:0",
      "--enable-xrd-support=false",
      "--initial-sync-workers=1",
    ],
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, output: dec.decode(out.stdout) + dec.decode(out.stderr) };
}

Deno.test("the webhook server exits 1 on a bad pair at startup, naming what is wrong", async () => {
  const c = await testCerts();
  const dir = await Deno.makeTempDir({ prefix: "dco-tls-gate-" });
  try {
    const cases: [string, () => Promise<void>, RegExp][] = [
      [
        "missing key",
        () => Deno.writeTextFile(`${dir}/tls.crt`, c.first.cert),
        /cannot read .*tls\.key/,
      ],
      [
        "mismatched",
        () => writePair(dir, { cert: c.first.cert, key: c.strayKey }),
        /tls\.key does not match the certificate in tls\.crt/,
      ],
      [
        "not PEM",
        () => writePair(dir, { cert: "nope", key: c.first.key }),
        /tls\.crt is not a PEM certificate/,
      ],
    ];
    for (const [name, setup, want] of cases) {
      await setup();
      const r = await runWebhookServer(dir);
      assert.equal(r.code, 1, `${name}: exit 1\n${r.output}`);
      const line = r.output.split("\n").find((l) => l.includes("cannot load the TLS certificate"));
      assert.ok(line !== undefined, `${name}: the reason is logged\n${r.output}`);
      assert.match(line, want, name);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

// --- readiness and the metrics ---------------------------------------------------------------------

/** A replica's gate as the role wires it: readiness, metrics and every reported state. */
function gateWiring() {
  const promRegistry = new Registry();
  const metrics = new WebhookMetrics(promRegistry);
  const readiness = new Readiness((ready) => metrics.setReady(ready));
  readiness.set(true); // the initial sync is done: only the certificate decides
  const states: [TlsState, ReloadResult][] = [];
  const onState = (state: TlsState, result: ReloadResult) => {
    states.push([state, result]);
    metrics.observeTls(state, result);
    readiness.gate("tls", state.problem);
  };
  const readyz = () => answerPlain({ readiness, registry: new PlanRegistry() }, "GET", "/readyz");
  const sample = async (name: string) => sampleValue(await promRegistry.metrics(), name);
  return { metrics, readiness, states, onState, readyz, sample };
}

Deno.test("/readyz is 503 while no usable pair is loaded, 200 once one is", async () => {
  const g = gateWiring();
  await using f = await startConversion({ pair: false, onState: g.onState });
  assert.equal(g.readiness.ready, false);
  const before = await g.readyz();
  assert.equal(before.status, 503);
  assert.match(String(before.body), /^no usable TLS certificate loaded from .*: cannot read /);
  assert.equal(await g.sample("dco_webhook_ready"), 0);
  assert.equal(await g.sample("dco_webhook_tls_certificate_expiry_timestamp_seconds"), 0);
  assert.equal(await g.sample("dco_webhook_tls_reload_failures_total"), 1);

  await writePair(f.dir, f.certs.first);
  assert.equal(await f.server.reloadNow(), "loaded");
  assert.equal(g.readiness.ready, true);
  assert.equal((await g.readyz()).status, 200);
  assert.equal(await g.sample("dco_webhook_ready"), 1);
  assert.equal(
    await g.sample("dco_webhook_tls_certificate_expiry_timestamp_seconds"),
    notAfterOf(f.certs.first.cert).getTime() / 1000,
  );
  await f.assertServing();
});

Deno.test("a reload to a bad pair keeps the good one, stays ready and is counted", async () => {
  const g = gateWiring();
  await using f = await startConversion({ onState: g.onState });
  assert.deepEqual(g.states.map(([, r]) => r), ["loaded"]);
  assert.equal(g.readiness.ready, true);
  const expiry = notAfterOf(f.certs.first.cert).getTime() / 1000;

  // A key that does not match, then a certificate that is not PEM.
  await Deno.writeTextFile(`${f.dir}/tls.key`, f.certs.strayKey);
  assert.equal(await f.server.reloadNow(), "failed");
  await writePair(f.dir, { cert: "garbage", key: f.certs.first.key });
  assert.equal(await f.server.reloadNow(), "failed");

  assert.equal(await g.sample("dco_webhook_tls_reload_failures_total"), 2);
  assert.equal(g.readiness.ready, true, "the last good pair is still usable");
  assert.equal((await g.readyz()).status, 200);
  assert.equal(await g.sample("dco_webhook_tls_certificate_expiry_timestamp_seconds"), expiry);
  assert.equal(g.states.at(-1)![0].problem, "");
  await f.assertServing();

  await writePair(f.dir, f.certs.second);
  assert.equal(await f.server.reloadNow(), "reloaded");
  assert.equal(await g.sample("dco_webhook_tls_reload_failures_total"), 2);
  assert.equal(
    await g.sample("dco_webhook_tls_certificate_expiry_timestamp_seconds"),
    notAfterOf(f.certs.second.cert).getTime() / 1000,
  );
});

Deno.test("a served certificate that expires turns the replica unready until a good pair lands", async () => {
  const g = gateWiring();
  let now = new Date();
  await using f = await startConversion({ onState: g.onState, now: () => now });
  assert.equal(g.readiness.ready, true);

  // Past notAfter: the unchanged pair is re-checked on the next poll.
  now = new Date(notAfterOf(f.certs.first.cert).getTime() + 60_000);
  assert.equal(await f.server.reloadNow(), "unchanged");
  assert.equal(g.readiness.ready, false);
  const res = await g.readyz();
  assert.equal(res.status, 503);
  assert.match(
    String(res.body),
    /^the served TLS certificate is unusable: the certificate in tls\.crt expired at /,
  );
  assert.equal(await g.sample("dco_webhook_ready"), 0);

  // A replacement expired as well is refused and counted; the replica stays unready.
  now = new Date(notAfterOf(f.certs.second.cert).getTime() + 60_000);
  await writePair(f.dir, f.certs.second);
  assert.equal(await f.server.reloadNow(), "failed");
  assert.equal(g.readiness.ready, false);
  assert.equal(await g.sample("dco_webhook_tls_reload_failures_total"), 1);

  // Back inside the validity (a renewed pair): ready again.
  now = new Date();
  assert.equal(await f.server.reloadNow(), "reloaded");
  assert.equal(g.readiness.ready, true);
  assert.equal((await g.readyz()).status, 200);
});

// --- the readiness gates --------------------------------------------------------------------------

Deno.test("Readiness: the role's own state and every gate must agree; transitions are reported", () => {
  const seen: boolean[] = [];
  const r = new Readiness((ready) => seen.push(ready), "not synced");
  assert.equal(r.reason, "not synced");
  r.gate("tls", "no pair");
  r.set(true);
  assert.equal(r.ready, false);
  assert.equal(r.reason, "no pair");
  r.gate("tls", "");
  assert.equal(r.ready, true);
  assert.equal(r.reason, "");
  r.gate("other", "busy");
  r.gate("other", "still busy");
  r.set(false);
  r.gate("other", "");
  assert.equal(r.reason, "not synced");
  assert.deepEqual(seen, [false, true, false]);
});
