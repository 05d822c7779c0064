/** `dco_build_info` is one series, value 1, labelled with the build and the runtime's versions. */
import assert from "node:assert/strict";
import { Registry } from "prom-client";
import { BUILD_COMMIT, BUILD_VERSION } from "../../src/lib/build.ts";
import { registerBuildInfo } from "../../src/obs/build_info.ts";

Deno.test("dco_build_info{version, commit, deno, v8, typescript} is 1", async () => {
  const registry = new Registry();
  registerBuildInfo(registry);
  const lines = (await registry.metrics()).split("\n").filter((l) =>
    l.startsWith("dco_build_info")
  );
  assert.deepEqual(lines, [
    `dco_build_info{version="${BUILD_VERSION}",commit="${BUILD_COMMIT}",deno="${Deno.version.deno}",` +
    `v8="${Deno.version.v8}",typescript="${Deno.version.typescript}"} 1`,
  ]);
});
