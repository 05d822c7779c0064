/**
 * Configuration mistakes end a role with one line `error: <reason>` on stderr and exit 1 — no JSON,
 * no JS stack: a bad flag value (logging flags included), a missing kubeconfig, an unreadable TLS
 * pair (webhook server), tracing asked for in a process whose Deno OpenTelemetry is off.
 */
import assert from "node:assert/strict";
import { type RoleRun, runRole as run } from "./_role_run.ts";

/**
 * Exit 1 and exactly one `error: ` line on stderr matching `want`, no stack anywhere, nothing on
 * stdout; `alone`: nothing else on stderr either (mistakes found before anything started).
 */
function assertOneErrorLine(r: RoleRun, want: RegExp, alone = true): void {
  assert.equal(r.code, 1, r.stderr);
  const lines = r.stderr.split("\n").filter((l) => l !== "");
  const errors = lines.filter((l) => l.startsWith("error: "));
  assert.equal(errors.length, 1, r.stderr);
  assert.match(errors[0], want);
  if (alone) assert.equal(lines.length, 1, r.stderr);
  assert.doesNotMatch(r.stderr, /\bat .*\.ts:\d+/, "no stack");
  assert.equal(r.stdout, "");
}

const SERVER = ["--webhook-server-name=dco"];

for (const [file, base] of [["manager.ts", []], ["webhook_server.ts", SERVER]] as const) {
  Deno.test(`${file}: a bad flag value is one error line`, async () => {
    assertOneErrorLine(
      await run(file, [...base, "--metrics-secure=maybe"]),
      /^error: invalid flags: invalid argument "maybe" for --metrics-secure/,
    );
    assertOneErrorLine(
      await run(file, [...base, "--zap-time-encoding=unix"]),
      /invalid --zap-time-encoding "unix"/,
    );
  });

  Deno.test(`${file}: a missing kubeconfig is one error line`, async () => {
    const missing = `/nonexistent-${crypto.randomUUID()}/kubeconfig`;
    assertOneErrorLine(
      await run(file, [...base, `--kubeconfig=${missing}`]),
      new RegExp(`^error: cannot load Kubernetes client configuration: .*${missing}`),
    );
  });
}

Deno.test("webhook_server.ts: an unreadable TLS pair is one error line", async () => {
  const dir = await Deno.makeTempDir();
  const kubeconfig = `${dir}/kubeconfig`;
  // A syntactically valid kubeconfig: the role gets as far as its TLS check without a cluster.
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
  try {
    assertOneErrorLine(
      await run("webhook_server.ts", [
        ...SERVER,
        `--kubeconfig=${kubeconfig}`,
        `--tls-cert-dir=${dir}/none`,
        "--metrics-bind-address=127.0.0.1:0",
      ]),
      /^error: cannot load the TLS certificate: cannot read .*tls\.(crt|key)/,
      false, // the caches and controllers were set up before the check, and log their stop
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("webhook_server.ts: tracing without Deno's OpenTelemetry on is one error line", async () => {
  // This test process (and so the child) runs without OTEL_DENO: the flag cannot be honoured.
  assertOneErrorLine(
    await run("webhook_server.ts", [
      ...SERVER,
      "--otel-exporter-otlp-endpoint=127.0.0.1:4318",
      "--otel-exporter-otlp-insecure",
    ]),
    /^error: invalid flags: --otel-exporter-otlp-endpoint needs Deno's OpenTelemetry, which is off: .*OTEL_DENO=true .*OTEL_EXPORTER_OTLP_ENDPOINT=http:\/\/127\.0\.0\.1:4318/,
  );
});
