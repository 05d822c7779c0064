/**
 * `dco_build_info{version, commit, deno, v8, typescript}` = 1 on both roles (the `*_build_info`
 * convention: join it onto other series to see which build produced them).
 */
import { Gauge, type Registry } from "prom-client";
import { BUILD_COMMIT, BUILD_VERSION } from "../lib/build.ts";

/** The labels of this build and runtime. */
export function buildInfoLabels(): Record<
  "version" | "commit" | "deno" | "v8" | "typescript",
  string
> {
  return {
    version: BUILD_VERSION,
    commit: BUILD_COMMIT,
    deno: Deno.version.deno,
    v8: Deno.version.v8,
    typescript: Deno.version.typescript,
  };
}

/** Registers `dco_build_info` (value 1) into `registry`. */
export function registerBuildInfo(registry: Registry): void {
  const labels = buildInfoLabels();
  new Gauge({
    name: "dco_build_info",
    help: "A metric with a constant '1' value labeled by the dco version, commit and the Deno, " +
      "V8 and TypeScript versions it runs on.",
    labelNames: Object.keys(labels) as (keyof typeof labels)[],
    registers: [registry],
  }).set(labels, 1);
}
