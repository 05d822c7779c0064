/** The webhook server's flags: defaults, the tracing flags, validation (a FlagError). */
import assert from "node:assert/strict";
import {
  DEFAULT_FLAGS,
  FlagError,
  parseWebhookServerFlags,
  tracingSettingsOf,
} from "../../src/webhook/flags.ts";

const NAME = "--webhook-server-name=ws";

Deno.test("webhook flags: defaults, value forms and the --otel-* flags", () => {
  assert.deepEqual(parseWebhookServerFlags([NAME]), { ...DEFAULT_FLAGS, webhookServerName: "ws" });
  const f = parseWebhookServerFlags([
    "--webhook-server-name",
    "ws",
    "--otel-exporter-otlp-endpoint",
    "collector:4317",
    "--otel-exporter-otlp-insecure",
    "--otel-trace-sample-ratio=0.5",
    "--enable-xrd-support=false",
    "--request-timeout=1m",
    "--initial-sync-workers",
    "3",
    "--max-connections=64",
    "--max-requests-in-flight=8",
    "--max-request-bytes-in-flight=1048576",
    "--conversion-workers=4",
    "--conversion-listeners=3",
    "--conversion-inline-max-bytes=0",
  ]);
  assert.equal(f.conversionWorkers, 4);
  assert.equal(f.conversionListeners, 3);
  assert.equal(DEFAULT_FLAGS.conversionListeners, 0, "0 = one per CPU, within the heap");
  assert.equal(f.conversionInlineMaxBytes, 0);
  assert.equal(DEFAULT_FLAGS.conversionWorkers, 0, "0 = one per CPU, within the heap");
  assert.equal(DEFAULT_FLAGS.conversionInlineMaxBytes, "auto", "auto = 256 KiB");
  const inline = (v: string) =>
    parseWebhookServerFlags([NAME, `--conversion-inline-max-bytes=${v}`]).conversionInlineMaxBytes;
  assert.equal(inline("auto"), "auto");
  assert.equal(inline("262144"), 262_144);
  assert.equal(f.maxConnections, 64);
  assert.equal(f.maxRequestsInFlight, 8);
  assert.equal(f.maxRequestBytesInFlight, 1048576);
  assert.equal(f.webhookServerName, "ws");
  assert.equal(f.enableXrdSupport, false);
  assert.equal(f.requestTimeoutMs, 60_000);
  assert.equal(f.initialSyncWorkers, 3);
  assert.deepEqual(tracingSettingsOf(f), {
    endpoint: "collector:4317",
    sampleRatio: 0.5,
    insecure: true,
  });
  assert.deepEqual(tracingSettingsOf(DEFAULT_FLAGS), {
    endpoint: "",
    sampleRatio: 0.1,
    insecure: false,
  });
  const ratio = (v: string) =>
    parseWebhookServerFlags([NAME, `--otel-trace-sample-ratio=${v}`]).otelTraceSampleRatio;
  assert.equal(ratio("2"), 1, "clamped to [0, 1]");
  assert.equal(ratio("-0.5"), 0);
  assert.equal(ratio("1e-2"), 0.01);
});

Deno.test("webhook flags: invalid input is a FlagError", () => {
  const bad: [string[], RegExp][] = [
    [[], /--webhook-server-name is required/],
    [[NAME, "--no-such-flag"], /unknown flag: --no-such-flag/],
    [[NAME, "extra"], /unexpected argument "extra"/],
    [[NAME, "--request-timeout=soon"], /--request-timeout: "soon" is not a duration/],
    [[NAME, "--request-timeout=0s"], /--request-timeout must be > 0/],
    [[NAME, "--max-request-bytes=many"], /--max-request-bytes: "many" is not an integer/],
    [[NAME, "--max-connections=-1"], /--max-connections must be >= 0/],
    [[NAME, "--max-requests-in-flight=-2"], /--max-requests-in-flight must be >= 0/],
    [[NAME, "--max-request-bytes-in-flight=-1"], /--max-request-bytes-in-flight must be >= 0/],
    [[NAME, "--enable-crd-support=false", "--enable-xrd-support=false"], /at least one/],
    [[NAME, "--conversion-workers=-1"], /--conversion-workers must be >= 0/],
    [[NAME, "--conversion-listeners=-1"], /--conversion-listeners must be >= 0/],
    [
      [NAME, "--max-request-bytes-in-flight=2147483648"],
      /--max-request-bytes-in-flight must be <= 2147483647/,
    ],
    [
      [NAME, "--conversion-inline-max-bytes=-1"],
      /--conversion-inline-max-bytes must be auto or a byte count >= 0/,
    ],
    [[NAME, "--conversion-inline-max-bytes=1k"], /must be auto or a byte count >= 0 .*not "1k"/],
    [[NAME, "--tls-cert-dir"], /flag needs an argument: --tls-cert-dir/],
    [[NAME, "--otel-trace-sample-ratio=half"], /--otel-trace-sample-ratio: "half" is not a number/],
    [[NAME, "--otel-trace-sample-ratio="], /--otel-trace-sample-ratio: "" is not a number/],
  ];
  for (const [args, message] of bad) {
    assert.throws(() => parseWebhookServerFlags(args), (e: unknown) => {
      assert.ok(e instanceof FlagError, `${args}: ${e}`);
      assert.match(e.message, message);
      return true;
    });
  }
});
