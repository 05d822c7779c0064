/**
 * `convctl migrate-storage --via-kube-migrator`: instead of rewriting the objects itself, create a
 * StorageVersionMigration (`storagemigration.k8s.io`) for the CRD's resource and wait until the
 * storage-version-migrator controller of kube-controller-manager marks it Succeeded or Failed.
 * The controller reports no per-object results, so the report's object counts stay unknown.
 * `--timeout` bounds the wait: past it the command stops waiting (exit 2) and says where the
 * migration, which goes on in the cluster, can be followed.
 */
import { parseGoDuration } from "../engine/units.ts";
import { isJsonObject } from "../lib/json.ts";
import type { KubeClient, KubeObject } from "../kube/mod.ts";
import { CliError } from "./args.ts";
import { clusterError } from "./cluster.ts";
import type { MigrationTarget } from "./migrate_target.ts";

/** The API versions whose spec (`resource: {group, resource}`) this command writes. */
const KNOWN_VERSIONS = ["storagemigration.k8s.io/v1"];
const POLL_MS = 500;

/** How {@link runViaMigrator} waits: the bound (none when undefined) and the poll interval. */
export interface MigratorWait {
  timeoutMs?: number;
  pollMs?: number;
}

/** `--timeout`: a duration (`90s`, `10m`, `1h30m`); `0` or absent means no bound. */
export function timeoutOf(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const ns = parseGoDuration(raw.trim());
  if (ns === undefined || ns < 0n) {
    throw new CliError(
      `invalid value ${JSON.stringify(raw)} for --timeout: expected a duration such as 90s or 10m`,
    );
  }
  return ns === 0n ? undefined : Math.max(1, Number(ns / 1_000_000n));
}

export interface MigratorResult {
  /** `storagemigration.k8s.io/v1` */
  apiVersion: string;
  /** The StorageVersionMigration's name. */
  name: string;
  /** The condition that ended the wait. */
  condition: "Succeeded" | "Failed";
  message?: string;
}

interface Condition {
  type?: string;
  status?: string;
  message?: string;
}

function conditionsOf(obj: KubeObject): Condition[] {
  const status = isJsonObject(obj.status) ? obj.status : {};
  return Array.isArray(status.conditions) ? status.conditions as Condition[] : [];
}

/**
 * The served StorageVersionMigration API version; a CliError (exit 2) when the cluster does not
 * serve it, or serves only a version whose spec this command does not know.
 */
export async function migratorAPI(client: KubeClient, cluster: string): Promise<string> {
  let group: {
    versions?: { groupVersion?: string }[];
    preferredVersion?: { groupVersion?: string };
  };
  try {
    group = await client.call("GET", "/apis/storagemigration.k8s.io");
  } catch {
    throw new CliError(
      `--via-kube-migrator: cluster ${cluster} does not serve storagemigration.k8s.io ` +
        "(StorageVersionMigration)",
    );
  }
  const served = [
    group.preferredVersion?.groupVersion,
    ...(group.versions ?? []).map((v) => v.groupVersion),
  ];
  const version = served.find((v) => v !== undefined && KNOWN_VERSIONS.includes(v));
  if (version === undefined) {
    throw new CliError(
      `--via-kube-migrator: cluster ${cluster} serves storagemigration.k8s.io only as ` +
        `${served.filter((v) => v !== undefined).join(", ")}; supported: ${
          KNOWN_VERSIONS.join(", ")
        }`,
    );
  }
  return version;
}

/**
 * Creates the StorageVersionMigration for `target` and polls it until Succeeded or Failed, or
 * until `wait.timeoutMs` passed (a CliError naming it); `onPoll` gets the seconds waited so far.
 */
export async function runViaMigrator(
  on: { client: Pick<KubeClient, "create" | "get">; cluster: string; apiVersion: string },
  target: Pick<MigrationTarget, "group" | "plural">,
  onPoll: (seconds: number) => void,
  wait: MigratorWait = {},
): Promise<MigratorResult> {
  const pollMs = wait.pollMs ?? POLL_MS;
  const [group, version] = on.apiVersion.split("/");
  const ref = { group, version, plural: "storageversionmigrations" };
  let created: KubeObject;
  try {
    created = await on.client.create(ref, {
      apiVersion: on.apiVersion,
      kind: "StorageVersionMigration",
      metadata: { generateName: `convctl-${target.plural}.${target.group}-`.slice(0, 58) },
      spec: { resource: { group: target.group, resource: target.plural } },
    });
  } catch (e) {
    throw clusterError(on.cluster, e, "creating a StorageVersionMigration");
  }
  const name = created.metadata.name!;
  const started = Date.now();
  for (;;) {
    let current: KubeObject;
    try {
      current = await on.client.get(ref, name);
    } catch (e) {
      throw clusterError(on.cluster, e, `reading StorageVersionMigration ${name}`);
    }
    for (const type of ["Failed", "Succeeded"] as const) {
      const c = conditionsOf(current).find((c) => c.type === type && c.status === "True");
      if (c !== undefined) {
        return {
          apiVersion: on.apiVersion,
          name,
          condition: type,
          ...(c.message ? { message: c.message } : {}),
        };
      }
    }
    const waited = Date.now() - started;
    if (wait.timeoutMs !== undefined && waited >= wait.timeoutMs) {
      throw new CliError(
        `cluster ${on.cluster}: StorageVersionMigration ${name} did not end within ` +
          `${wait.timeoutMs / 1000}s (--timeout); it goes on in the cluster: ` +
          `kubectl get storageversionmigrations.${group} ${name}`,
      );
    }
    onPoll(waited / 1000);
    const left = wait.timeoutMs === undefined ? pollMs : Math.min(pollMs, wait.timeoutMs - waited);
    await new Promise((resolve) => setTimeout(resolve, left));
  }
}
