/** Shared helpers of the framework's unit tests (no cluster). */
import type { Registry } from "prom-client";
import { metricsResponse } from "../../src/obs/metrics.ts";

/** Lets pending promise chains run (real macrotask turns; no fake time passes). */
export async function settle(turns = 5): Promise<void> {
  for (let i = 0; i < turns; i++) await new Promise((r) => setTimeout(r, 0));
}

/** Scrapes `registry` exactly as `/metrics` does and returns the exposition text. */
export async function scrape(registry: Registry): Promise<string> {
  const res = await metricsResponse(registry);
  if (res.status !== 200) throw new Error(`scrape failed: ${await res.text()}`);
  return await res.text();
}

/**
 * The value of series `name{labels}` in an exposition text (labels must match exactly, in any
 * order); undefined when absent.
 */
export function sample(
  text: string,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  const want = Object.entries(labels).sort(([a], [b]) => a.localeCompare(b));
  for (const line of text.split("\n")) {
    if (line.startsWith("#")) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (!m || m[1] !== name) continue;
    const got = [...(m[2] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)]
      .map((x) => [x[1], x[2]] as [string, string])
      .sort(([a], [b]) => a.localeCompare(b));
    if (JSON.stringify(got) === JSON.stringify(want)) return Number(m[3]);
  }
  return undefined;
}

/** A promise with its resolve function exposed. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (v: T) => void } {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}
