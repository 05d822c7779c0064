/** The CPUs a process may use: cgroup v2 `cpu.max`, else cgroup v1 CFS quota, else the cores. */
import assert from "node:assert/strict";
import {
  availableCpus,
  CGROUP_V1_PERIOD,
  CGROUP_V1_QUOTA,
  CGROUP_V2_CPU_MAX,
  cgroupCpuQuota,
} from "../../src/webhook/cpu_limit.ts";

const files = (m: Record<string, string>) => (path: string) =>
  path in m ? Promise.resolve(m[path]) : Promise.reject(new Deno.errors.NotFound(path));

Deno.test("cgroup v2: a quota over its period, `max` = none", async () => {
  assert.equal(await cgroupCpuQuota(files({ [CGROUP_V2_CPU_MAX]: "150000 100000\n" })), 1.5);
  assert.equal(await cgroupCpuQuota(files({ [CGROUP_V2_CPU_MAX]: "max 100000\n" })), undefined);
  assert.equal(await cgroupCpuQuota(files({ [CGROUP_V2_CPU_MAX]: "garbage" })), undefined);
});

Deno.test("cgroup v1: cfs_quota_us over cfs_period_us, -1 = none", async () => {
  const v1 = (quota: string, period = "100000") =>
    files({ [CGROUP_V1_QUOTA]: quota, [CGROUP_V1_PERIOD]: period });
  assert.equal(await cgroupCpuQuota(v1("50000\n")), 0.5);
  assert.equal(await cgroupCpuQuota(v1("200000", "50000")), 4);
  assert.equal(await cgroupCpuQuota(v1("-1")), undefined);
  // v2 wins when both are visible.
  assert.equal(
    await cgroupCpuQuota(files({
      [CGROUP_V2_CPU_MAX]: "100000 100000",
      [CGROUP_V1_QUOTA]: "400000",
      [CGROUP_V1_PERIOD]: "100000",
    })),
    1,
  );
});

Deno.test("available CPUs: the quota rounded up, capped by the cores, at least 1", async () => {
  const cores = Math.max(1, navigator.hardwareConcurrency);
  assert.equal(await availableCpus(files({})), cores, "no cgroup: the cores");
  assert.equal(await availableCpus(files({ [CGROUP_V2_CPU_MAX]: "10000 100000" })), 1);
  assert.equal(
    await availableCpus(files({ [CGROUP_V2_CPU_MAX]: "150000 100000" })),
    Math.min(cores, 2),
  );
  assert.equal(await availableCpus(files({ [CGROUP_V2_CPU_MAX]: "6400000 100000" })), cores);
});
