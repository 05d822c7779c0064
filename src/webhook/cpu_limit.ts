/**
 * How many CPUs this process may use: the container's CPU limit when a cgroup quota is visible,
 * else `navigator.hardwareConcurrency`. Sizes the compile Workers (`--initial-sync-workers 0`) and
 * the conversion Workers (`--conversion-workers 0`).
 *
 * - cgroup v2: `/sys/fs/cgroup/cpu.max` is `<quota> <period>` or `max <period>` (no limit).
 * - cgroup v1: `/sys/fs/cgroup/cpu/cpu.cfs_quota_us` (−1 = no limit) over `cpu.cfs_period_us`.
 *
 * A quota is rounded up (a 1.5-CPU limit gives 2) and capped by the core count; an unreadable file
 * (no cgroup, or no read permission for it) counts as no limit.
 */

/** Reads one cgroup file's text; rejects when it is absent or unreadable. */
export type CgroupReader = (path: string) => Promise<string>;

export const CGROUP_V2_CPU_MAX = "/sys/fs/cgroup/cpu.max";
export const CGROUP_V1_QUOTA = "/sys/fs/cgroup/cpu/cpu.cfs_quota_us";
export const CGROUP_V1_PERIOD = "/sys/fs/cgroup/cpu/cpu.cfs_period_us";

const readText: CgroupReader = (path) => Deno.readTextFile(path);

async function tryRead(read: CgroupReader, path: string): Promise<string | undefined> {
  try {
    return (await read(path)).trim();
  } catch {
    return undefined;
  }
}

/** The quota in CPUs (fractional), or undefined when no quota is set or visible. */
export async function cgroupCpuQuota(read: CgroupReader = readText): Promise<number | undefined> {
  const v2 = await tryRead(read, CGROUP_V2_CPU_MAX);
  if (v2 !== undefined) {
    const [quota, period] = v2.split(/\s+/);
    if (quota === "max") return undefined;
    const q = Number(quota);
    const p = Number(period);
    return q > 0 && p > 0 ? q / p : undefined;
  }
  const quota = await tryRead(read, CGROUP_V1_QUOTA);
  if (quota === undefined) return undefined;
  const q = Number(quota);
  if (!(q > 0)) return undefined; // -1: no limit
  const p = Number(await tryRead(read, CGROUP_V1_PERIOD) ?? "100000");
  return p > 0 ? q / p : undefined;
}

/** The CPUs this process may use: `ceil(quota)` capped by the core count, at least 1. */
export async function availableCpus(read: CgroupReader = readText): Promise<number> {
  const cores = Math.max(1, navigator.hardwareConcurrency || 1);
  const quota = await cgroupCpuQuota(read);
  return quota === undefined ? cores : Math.max(1, Math.min(cores, Math.ceil(quota)));
}
