/**
 * `convctl migrate-storage --via-kube-migrator`: instead of rewriting the objects itself, create a
 * StorageVersionMigration (`storagemigration.k8s.io`) for the CRD's resource and wait until the
 * storage-version-migrator controller of kube-controller-manager marks it Succeeded or Failed.
 * The controller reports no per-object results, so the report's object counts stay unknown.
 */
import { isJsonObject } from "../lib/json.ts";
import type { KubeClient, KubeObject } from "../kube/mod.ts";
import { CliError } from "./args.ts";
import { clusterError } from "./cluster.ts";
import type { MigrationTarget } from "./migrate_target.ts";

/** The API versions whose spec (`resource: {group, resource}`) this command writes. */
const KNOWN_VERSIONS = ["storagemigration.k8s.io/v1"];
const POLL_MS = 500;

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
 * Creates the StorageVersionMigration for `target` and polls it until Succeeded or Failed;
 * `onPoll` gets the seconds waited so far.
 */
export async function runViaMigrator(
  on: { client: KubeClient; cluster: string; apiVersion: string },
  target: MigrationTarget,
  onPoll: (seconds: number) => void,
): Promise<MigratorResult> {
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
    onPoll((Date.now() - started) / 1000);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}
