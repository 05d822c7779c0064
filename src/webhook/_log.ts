/**
 * The part of the shared logger (src/obs/log.ts) the serving half uses, so tests and tools can
 * pass a silent or capturing logger without implementing `with`/`child`/`enabled`.
 */
import type { Logger } from "../obs/log.ts";

export type WebhookLogger = Pick<Logger, "info" | "warn" | "error">;

/** A logger that drops everything (benchmarks, the load tool). */
export const SILENT: WebhookLogger = { info() {}, warn() {}, error() {} };
