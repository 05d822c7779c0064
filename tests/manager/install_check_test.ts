/**
 * `manager --check-installation` (src/manager/install_check.ts): what it sends to which Service,
 * what counts as an answer, the retries within the timeout, and its flags.
 */
import assert from "node:assert/strict";
import {
  checkInstallation,
  type InstallCheckDeps,
  installProbes,
  parseWebhookServerRef,
} from "../../src/manager/install_check.ts";
import { parseManagerFlags } from "../../src/manager/flags.ts";

interface Sent {
  namespace: string;
  service: string;
  port: number;
  path: string;
  body: { request: { uid: string } };
}

/** Deps over a fake service proxy: `answer` decides each POST; time advances by the sleeps. */
function fakeDeps(answer: (sent: Sent, n: number) => unknown): {
  deps: InstallCheckDeps;
  sent: Sent[];
  logs: string[];
} {
  const sent: Sent[] = [];
  const logs: string[] = [];
  let now = 0;
  const deps: InstallCheckDeps = {
    servicePort: (_ns, service) =>
      service === "missing"
        ? Promise.reject(new Error('services "missing" not found'))
        : Promise.resolve(443),
    postThroughProxy(namespace, service, port, path, body) {
      const s = { namespace, service, port, path, body: body as Sent["body"] };
      sent.push(s);
      const a = answer(s, sent.length);
      return a instanceof Error ? Promise.reject(a) : Promise.resolve(a);
    },
    sleep: (ms) => {
      now += ms;
      return Promise.resolve();
    },
    now: () => now,
    logger: {
      info: (m) => void logs.push(`info ${m}`),
      warn: (m) => void logs.push(`warn ${m}`),
      error: (m, f) => void logs.push(`error ${m} ${JSON.stringify(f ?? {})}`),
    },
  };
  return { deps, sent, logs };
}

const echo = (s: Sent) => ({ response: { uid: s.body.request.uid, allowed: false } });
const probes = () =>
  installProbes(
    "dco-system",
    "dco-webhook-service",
    { namespace: "servers", name: "default" },
    (w) => `uid-${w}`,
  );

Deno.test("install check: an AdmissionReview to the admission Service, a ConversionReview to the server's", async () => {
  const { deps, sent, logs } = fakeDeps(echo);
  assert.equal(await checkInstallation(probes(), deps, { timeoutMs: 10_000 }), 0);
  assert.deepEqual(sent.map((s) => [s.namespace, s.service, s.port, s.path]), [
    [
      "dco-system",
      "dco-webhook-service",
      443,
      "/validate-terasky-com-v1alpha1-crdconversionconfig",
    ],
    ["servers", "default-webhook-server", 443, "/convert/installation-check.dco.invalid"],
  ]);
  const [admission, conversion] = sent.map((s) => s.body as unknown as Record<string, unknown>);
  assert.equal(admission.kind, "AdmissionReview");
  assert.equal(admission.apiVersion, "admission.k8s.io/v1");
  assert.equal(conversion.kind, "ConversionReview");
  assert.equal(conversion.apiVersion, "apiextensions.k8s.io/v1");
  assert.deepEqual(logs, ["info admission webhook answers", "info conversion webhook answers"]);
});

Deno.test("install check: only an answer carrying the request's uid counts; retried until the timeout", async () => {
  // Not an answer (wrong uid, not a review, an error) until the third try.
  const { deps, sent } = fakeDeps((s, n) =>
    n === 1 ? { response: { uid: "other" } } : n === 2 ? new Error("503 no endpoints") : echo(s)
  );
  assert.equal(await checkInstallation(probes(), deps, { timeoutMs: 10_000, pollMs: 1_000 }), 0);
  assert.equal(sent.length, 4);

  const never = fakeDeps(() => "<html>proxy error</html>");
  assert.equal(
    await checkInstallation(probes(), never.deps, { timeoutMs: 5_000, pollMs: 1_000 }),
    1,
  );
  assert.equal(never.sent.length, 6, "tries at 0..5 s, then gives up");
  assert.match(
    never.logs.at(-1)!,
    /^error admission webhook does not answer .*dco-webhook-service/,
  );
  assert.ok(!never.sent.some((s) => s.service === "default-webhook-server"), "stops at the first");

  const missing = fakeDeps(echo);
  const ps = installProbes("dco-system", "missing", undefined, (w) => w);
  assert.equal(await checkInstallation(ps, missing.deps, { timeoutMs: 0 }), 1);
  assert.match(missing.logs.at(-1)!, /services \\"missing\\" not found/);
});

Deno.test("install check: nothing to check is a failure, not a pass", async () => {
  const { deps, logs } = fakeDeps(echo);
  assert.equal(
    await checkInstallation(installProbes("ns", "", undefined, (w) => w), deps, { timeoutMs: 1 }),
    1,
  );
  assert.match(logs[0], /nothing to check/);
});

Deno.test("install check: flags", () => {
  const f = parseManagerFlags([
    "--check-installation",
    "--check-timeout=30s",
    "--check-admission-service=svc",
    "--check-webhook-server=servers/default",
  ]);
  assert.equal(f.checkInstallation, true);
  assert.equal(f.checkTimeoutMs, 30_000);
  assert.equal(f.checkAdmissionService, "svc");
  assert.equal(f.checkWebhookServer, "servers/default");
  assert.equal(parseManagerFlags([]).checkInstallation, false);
  assert.equal(parseManagerFlags([]).checkTimeoutMs, 120_000);
  assert.throws(() => parseManagerFlags(["--check-timeout=0s"]), /--check-timeout/);
  assert.deepEqual(parseWebhookServerRef("servers/default"), {
    namespace: "servers",
    name: "default",
  });
  assert.equal(parseWebhookServerRef(""), undefined);
  for (const bad of ["default", "a/b/c", "/x", "x/"]) {
    assert.throws(() => parseWebhookServerRef(bad), /not <namespace>\/<server>/, bad);
  }
});
