/** The JSON-lines logger: line shape, levels, error serialization, zap-compatible flags. */
import assert from "node:assert/strict";
import {
  configureLogging,
  createLogger,
  encodeTime,
  formatDuration,
  getLogLevel,
  type LogLevel,
  serializeError,
  setLogFormat,
  setLogLevel,
  setLogSink,
} from "../../src/obs/log.ts";

/** Runs `fn` with lines captured and the global level/format restored afterwards. */
function capture(fn: () => void): string[] {
  const lines: string[] = [];
  const level: LogLevel = getLogLevel();
  setLogSink((l) => lines.push(l));
  try {
    fn();
  } finally {
    setLogSink(undefined);
    setLogLevel(level);
    setLogFormat("json");
  }
  return lines;
}

Deno.test("one JSON object per line: ts (RFC 3339), level, logger, msg, fields", () => {
  const lines = capture(() => createLogger("kube.test").info("hello", { key: "ns/a", n: 2 }));
  assert.equal(lines.length, 1);
  assert.ok(!lines[0].includes("\n"));
  const rec = JSON.parse(lines[0]);
  assert.deepEqual(Object.keys(rec).slice(0, 4), ["ts", "level", "logger", "msg"]);
  assert.match(rec.ts, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
  assert.equal(rec.level, "info");
  assert.equal(rec.logger, "kube.test");
  assert.equal(rec.msg, "hello");
  assert.equal(rec.key, "ns/a");
  assert.equal(rec.n, 2);
});

Deno.test("levels below the global level are dropped", () => {
  const lines = capture(() => {
    setLogLevel("warn");
    const log = createLogger("x");
    log.debug("d");
    log.info("i");
    log.warn("w");
    log.error("e");
    assert.equal(log.enabled("info"), false);
    assert.equal(log.enabled("error"), true);
  });
  assert.deepEqual(lines.map((l) => JSON.parse(l).level), ["warn", "error"]);
});

Deno.test("errors are serialized with name, message, stack, cause and own fields", () => {
  class ApiErr extends Error {
    override name = "KubeApiError";
    status = 403;
    reason = "Forbidden";
  }
  const err = new ApiErr("configmaps is forbidden", { cause: new Error("root") });
  const lines = capture(() => createLogger("x").error("failed", { error: err }));
  const rec = JSON.parse(lines[0]);
  assert.equal(rec.error.name, "KubeApiError");
  assert.equal(rec.error.message, "configmaps is forbidden");
  assert.equal(rec.error.status, 403);
  assert.equal(rec.error.reason, "Forbidden");
  assert.match(rec.error.stack, /configmaps is forbidden/);
  assert.equal(rec.error.cause.message, "root");
  assert.deepEqual(serializeError("plain"), { message: "plain" });
});

Deno.test("unserializable values do not lose the line", () => {
  const cyclic: Record<string, unknown> = { a: 1 };
  cyclic.self = cyclic;
  const lines = capture(() => createLogger("x").info("m", { cyclic, big: 10n }));
  const rec = JSON.parse(lines[0]);
  assert.equal(rec.cyclic.self, "[Circular]");
  assert.equal(rec.big, "10");
});

Deno.test("reserved keys in fields do not overwrite the line's own", () => {
  const lines = capture(() => createLogger("x").info("m", { msg: "other", level: "x" }));
  const rec = JSON.parse(lines[0]);
  assert.equal(rec.msg, "m");
  assert.equal(rec.level, "info");
  assert.equal(rec["field.msg"], "other");
});

Deno.test("with() and child() carry fields and names", () => {
  const lines = capture(() => {
    const log = createLogger("kube").with({ controller: "c" });
    log.child("queue").info("m", { key: "k" });
  });
  const rec = JSON.parse(lines[0]);
  assert.equal(rec.logger, "kube.queue");
  assert.equal(rec.controller, "c");
  assert.equal(rec.key, "k");
});

Deno.test("zap flags: level names and verbosity numbers; the rest is left in order", () => {
  const before = getLogLevel();
  try {
    let r = configureLogging(["--leader-elect", "--zap-log-level=debug", "--metrics=:8080"]);
    assert.deepEqual(r.config, {
      level: "debug",
      format: "json",
      timeEncoding: "iso8601",
      stacktraceLevel: "panic",
    });
    assert.deepEqual(r.rest, ["--leader-elect", "--metrics=:8080"]);
    assert.equal(getLogLevel(), "debug");
    r = configureLogging(["--zap-log-level", "error"]);
    assert.equal(r.config.level, "error");
    assert.deepEqual(r.rest, []);
    assert.equal(configureLogging(["--zap-log-level=3"]).config.level, "debug");
    assert.equal(configureLogging(["--zap-log-level=info"]).config.level, "info");
    assert.equal(configureLogging([]).config.level, "info");
    assert.throws(() => configureLogging(["--zap-log-level=loud"]), /invalid --zap-log-level/);
    assert.throws(() => configureLogging(["--zap-log-level=0"]), /invalid --zap-log-level/);
    assert.throws(() => configureLogging(["--zap-log-level"]), /needs a value/);
  } finally {
    setLogLevel(before);
    setLogFormat("json");
  }
});

Deno.test("--zap-devel: human-readable lines at debug unless a level is given", () => {
  try {
    const levelAndFormat = (args: string[]) => {
      const { level, format } = configureLogging(args).config;
      return { level, format };
    };
    assert.deepEqual(levelAndFormat(["--zap-devel"]), { level: "debug", format: "console" });
    assert.deepEqual(
      levelAndFormat(["--zap-devel=true", "--zap-log-level=error"]),
      { level: "error", format: "console" },
    );
    assert.deepEqual(levelAndFormat(["--zap-devel=false"]), { level: "info", format: "json" });
    assert.equal(configureLogging(["--zap-encoder=console"]).config.format, "console");
    configureLogging(["--zap-devel"]);
    const lines: string[] = [];
    setLogSink((l) => lines.push(l));
    createLogger("kube").info("started", { workers: 2 });
    setLogSink(undefined);
    assert.match(lines[0], /^\S+Z\tINFO\tkube\tstarted\t\{"workers":2\}$/);
  } finally {
    setLogSink(undefined);
    setLogLevel("info");
    setLogFormat("json");
  }
});

Deno.test("formatDuration prints Go durations", () => {
  assert.equal(formatDuration(300_000), "5m0s");
  assert.equal(formatDuration(15_000), "15s");
  assert.equal(formatDuration(1_500), "1.5s");
  assert.equal(formatDuration(5), "5ms");
  assert.equal(formatDuration(3_725_000), "1h2m5s");
  assert.equal(formatDuration(0), "0s");
});

Deno.test("--zap-time-encoding writes ts as zap's encoders do", () => {
  const ms = Date.UTC(2026, 11, 2, 1, 2, 3, 450);
  assert.equal(encodeTime(ms, "epoch"), "1796173323.45");
  assert.equal(encodeTime(ms, "millis"), "1796173323450");
  assert.equal(encodeTime(ms, "nano"), "1796173323450000000");
  assert.equal(encodeTime(ms, "iso8601"), '"2026-12-02T01:02:03.450Z"');
  assert.equal(encodeTime(ms, "rfc3339"), '"2026-12-02T01:02:03Z"');
  assert.equal(encodeTime(ms, "rfc3339nano"), '"2026-12-02T01:02:03.45Z"');
  assert.equal(encodeTime(ms - 450, "rfc3339nano"), '"2026-12-02T01:02:03Z"');
  try {
    assert.equal(configureLogging(["--zap-time-encoding=nanos"]).config.timeEncoding, "nano");
    const lines = capture(() => {
      configureLogging(["--zap-time-encoding", "millis"]);
      createLogger("t").info("x");
    });
    const rec = JSON.parse(lines[0]);
    assert.equal(typeof rec.ts, "number");
    assert.ok(Math.abs(rec.ts - Date.now()) < 60_000);
    assert.throws(
      () => configureLogging(["--zap-time-encoding=unix"]),
      /invalid --zap-time-encoding "unix"/,
    );
  } finally {
    configureLogging([]);
  }
});

Deno.test("--zap-stacktrace-level: lines at or above it carry the caller's stack", () => {
  try {
    const lines = capture(() => {
      configureLogging(["--zap-stacktrace-level=error"]);
      const log = createLogger("t");
      log.info("plain");
      log.error("failed");
    });
    const [info, error] = lines.map((l) => JSON.parse(l));
    assert.equal(info.stacktrace, undefined);
    assert.match(error.stacktrace, /log_test\.ts/);
    assert.doesNotMatch(error.stacktrace, /src\/obs\/log\.ts/);
    const none = capture(() => {
      configureLogging([]);
      createLogger("t").error("failed");
    });
    assert.equal(JSON.parse(none[0]).stacktrace, undefined, "default panic: no stack");
    assert.throws(() => configureLogging(["--zap-stacktrace-level=warn"]), /info, error or panic/);
  } finally {
    configureLogging([]);
  }
});
