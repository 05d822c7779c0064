// Run by tests/obs/obs_test.ts with NO permissions: logging and a scrape must both work.
import { configureLogging, createLogger } from "../../../src/obs/log.ts";
import { createMetricsRegistry, metricsResponse } from "../../../src/obs/metrics.ts";

configureLogging(["--zap-log-level=debug"]);
const log = createLogger("probe");
log.debug("hello", { err: new Error("sample") });
const m = createMetricsRegistry({ lagSampleIntervalMs: 10 });
await new Promise((r) => setTimeout(r, 50));
const res = await metricsResponse(m.registry);
m.stop();
console.log(JSON.stringify({ status: res.status, body: await res.text() }));
