/**
 * The webhook-server container's OpenTelemetry environment: the `--otel-*` flags of `extraArgs`
 * become what Deno's OpenTelemetry reads at process start, and the rendered Pod passes the
 * webhook server's own start-up check (flags and environment agree).
 */
import assert from "node:assert/strict";
import { ConversionWebhookServerSchema } from "../../src/api/mod.ts";
import { containerEnv, tracingEnvOf } from "../../src/manager/server/container_env.ts";
import { tracingEnvProblem } from "../../src/obs/tracing.ts";
import { parseWebhookServerFlags, tracingSettingsOf } from "../../src/webhook/flags.ts";

function spec(extra: Record<string, unknown>) {
  return ConversionWebhookServerSchema.parse({
    apiVersion: "terasky.com/v1alpha1",
    kind: "ConversionWebhookServer",
    metadata: { name: "a", uid: "u", generation: 1 },
    spec: { certificate: { issuerRef: { name: "ca" } }, ...extra },
  }).spec;
}

Deno.test("container env: no --otel-exporter-otlp-endpoint, no OpenTelemetry variables", () => {
  assert.deepEqual(tracingEnvOf(undefined), {});
  assert.deepEqual(
    tracingEnvOf(["--otel-trace-sample-ratio=1", "--otel-exporter-otlp-insecure"]),
    {},
  );
  const names = containerEnv(spec({ extraArgs: ["--max-connections=9"] })).map((e) => e.name);
  assert.equal(names.some((n) => n.startsWith("OTEL_")), false);
});

Deno.test("container env: the --otel-* flags of extraArgs become Deno's OpenTelemetry env", () => {
  const extraArgs = [
    "--otel-exporter-otlp-endpoint",
    "collector.obs:4318",
    "--otel-exporter-otlp-insecure",
    "--otel-trace-sample-ratio=0.5",
  ];
  const env = containerEnv(spec({ extraArgs }));
  const otel = Object.fromEntries(
    env.filter((e) => e.name.startsWith("OTEL_")).map((e) => [e.name, e.value]),
  );
  assert.deepEqual(otel, {
    OTEL_DENO: "true",
    OTEL_DENO_METRICS: "false",
    OTEL_DENO_CONSOLE: "ignore",
    OTEL_SERVICE_NAME: "declarative-conversion-webhook-server",
    OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector.obs:4318",
  });
  // What the Pod runs: these args with this env start (the process's own check passes).
  const flags = parseWebhookServerFlags(["--webhook-server-name=a", ...extraArgs]);
  assert.equal(
    tracingEnvProblem(
      tracingSettingsOf(flags),
      (n) => env.find((e) => e.name === n)?.value,
      otel.OTEL_DENO === "true", // what Deno makes of that environment
    ),
    undefined,
  );

  assert.equal(
    tracingEnvOf(["--otel-exporter-otlp-endpoint=c:4318", "--otel-exporter-otlp-insecure=false"])
      .OTEL_EXPORTER_OTLP_ENDPOINT,
    "https://c:4318",
  );
  assert.equal(
    tracingEnvOf(["--otel-exporter-otlp-endpoint=a:1", "--otel-exporter-otlp-endpoint=b:2"])
      .OTEL_EXPORTER_OTLP_ENDPOINT,
    "https://b:2",
    "the last occurrence wins, as in the flag parser",
  );
});

Deno.test("container env: a user extraEnv entry replaces the derived one", () => {
  const env = containerEnv(spec({
    extraArgs: ["--otel-exporter-otlp-endpoint=c:4318"],
    extraEnv: [{ name: "OTEL_SERVICE_NAME", value: "mine" }],
  }));
  assert.deepEqual(env.filter((e) => e.name === "OTEL_SERVICE_NAME"), [
    { name: "OTEL_SERVICE_NAME", value: "mine" },
  ]);
  assert.equal(env.at(-1)?.name, "OTEL_SERVICE_NAME", "extraEnv stays last");
});
