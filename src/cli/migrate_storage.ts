/**
 * `convctl migrate-storage`: rewrites every object of a CRD (or of an XRD's generated CRD) in a
 * live cluster so etcd holds it at the current storage version, then — on request, and only when
 * every write succeeded — trims the CRD's `status.storedVersions` to that version, so an older
 * version can be removed from the CRD. An XRD offering claims has two generated CRDs: both are
 * rewritten, and a failure on either blocks the prune of both. The writes are in migrate_run.ts.
 */
import { isJsonObject } from "../lib/json.ts";
import type { KubeClient, KubeObject } from "../kube/mod.ts";
import { CRD_RESOURCE } from "../kube/resources.ts";
import { CliError, FLAGS, type FlagSpec, outputFlag, type ParsedFlags } from "./args.ts";
import { CLUSTER_FLAGS, clusterError, clusterTargetOf, openCluster } from "./cluster.ts";
import { defineCommand } from "./command.ts";
import { type MigratedObject, writeAll } from "./migrate_run.ts";
import { migratorAPI, type MigratorResult, runViaMigrator, timeoutOf } from "./migrate_migrator.ts";
import {
  type MigrationCRD,
  type MigrationTarget,
  resolveMigrationTarget,
} from "./migrate_target.ts";
import { type Io, progressLine, renderTable, toJson } from "./output.ts";

/** Objects per LIST request. */
const PAGE_SIZE = 200;

export interface MigrationReport {
  resourceKind: MigrationTarget["resourceKind"];
  resource: string;
  crd: string;
  group: string;
  kind: string;
  plural: string;
  storageVersion: string;
  storedVersions?: string[];
  namespaced: boolean;
  dryRun: boolean;
  fieldManager: string;
  /** Each object written; `crd` names its CRD when an XRD offers claims. */
  objects: (MigratedObject & { crd?: string })[];
  /** null with `--via-kube-migrator`: the migrator reports no per-object results. */
  succeeded: number | null;
  failed: number | null;
  /** With `--via-kube-migrator`: the StorageVersionMigration and how it ended. */
  migration?: MigratorResult;
  pruned: boolean;
  pruneError?: string;
  warnings?: string[];
  /** An XRD offering claims: each generated CRD and its own counts (composite first). */
  crds?: MigrationCRDResult[];
}

/** One CRD of an XRD offering claims, as migrated. */
export interface MigrationCRDResult {
  crd: string;
  role: MigrationCRD["role"];
  kind: string;
  storageVersion: string;
  storedVersions?: string[];
  namespaced: boolean;
  succeeded: number | null;
  failed: number | null;
  migration?: MigratorResult;
  pruned: boolean;
  pruneError?: string;
}

interface MigrateOptions {
  concurrency: number;
  fieldManager: string;
  dryRun: boolean;
  prune: boolean;
  namespace?: string;
  viaMigrator: boolean;
  /** `--timeout` of the wait for the StorageVersionMigration; none when undefined. */
  timeoutMs?: number;
}

/** `--concurrency`: any integer; zero or less means one write at a time. */
export function concurrencyOf(raw: string | undefined): number {
  if (raw === undefined) return 1;
  if (!/^-?\d+$/.test(raw.trim())) {
    throw new CliError(
      `invalid value ${JSON.stringify(raw)} for --concurrency: expected an integer`,
    );
  }
  return Math.max(1, Number(raw.trim()));
}

/** `1m05s`-style remaining time for the progress line. */
function duration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  return s >= 60 ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s` : `${s}s`;
}

/** `migrated N/M objects (R/s, ETA T)`. */
export function progressText(done: number, total: number, elapsedMs: number): string {
  const rate = elapsedMs > 0 ? (done * 1000) / elapsedMs : 0;
  const eta = rate > 0 ? `, ETA ${duration((total - done) / rate)}` : "";
  return `migrated ${done}/${total} objects (${rate.toFixed(1)}/s${eta})`;
}

async function prune(
  on: { client: KubeClient; cluster: string },
  crdName: string,
  storage: string,
): Promise<string | undefined> {
  try {
    const crd = await on.client.get(CRD_RESOURCE, crdName);
    const status = isJsonObject(crd.status) ? crd.status : {};
    await on.client.update(CRD_RESOURCE, {
      ...crd,
      status: { ...status, storedVersions: [storage] },
    }, {
      subresource: "status",
    });
    return undefined;
  } catch (e) {
    return clusterError(on.cluster, e, `updating the status of CRD ${crdName}`).message;
  }
}

function planLine(t: MigrationCRD, count: number, o: MigrateOptions, cluster: string): string {
  const where = o.namespace !== undefined && t.namespaced ? ` in namespace ${o.namespace}` : "";
  const verb = o.dryRun ? "would rewrite (server-side dry run)" : "rewriting";
  const then = o.prune && !o.dryRun
    ? `, then set status.storedVersions of CRD ${t.crd} to [${t.storageVersion}] if all succeed`
    : "";
  return `migrate-storage: ${verb} ${count} ${t.kind} object(s)${where} on cluster ${cluster} ` +
    `at ${t.group}/${t.storageVersion} (field manager ${o.fieldManager}, ` +
    `concurrency ${Math.min(o.concurrency, Math.max(count, 1))})${then}\n`;
}

/**
 * The preferred version of `storagemigration.k8s.io` (the StorageVersionMigration API) when the
 * cluster serves it; undefined when not, or when discovery cannot tell (a hint is not worth a
 * failure).
 */
async function storageMigrationAPI(client: KubeClient): Promise<string | undefined> {
  try {
    const group = await client.call<{ preferredVersion?: { groupVersion?: string } }>(
      "GET",
      "/apis/storagemigration.k8s.io",
    );
    return group.preferredVersion?.groupVersion;
  } catch {
    return undefined;
  }
}

/** The CRDs to rewrite: the target's, then (an XRD offering claims) the claim CRD. */
const crdsOf = (t: MigrationTarget): MigrationCRD[] => t.claim ? [t, t.claim] : [t];

/** One CRD's outcome, before the report sums them up. */
interface Done {
  crd: MigrationCRD;
  objects: MigratedObject[];
  failed: number;
  migration?: MigratorResult;
  pruned: boolean;
  pruneError?: string;
}

async function migrate(flags: ParsedFlags, io: Io, o: MigrateOptions) {
  using cluster = await openCluster(clusterTargetOf(flags));
  const crdFlag = flags.string("crd");
  const target = await resolveMigrationTarget(
    cluster.client,
    cluster.name,
    crdFlag !== undefined ? { crd: crdFlag } : { xrd: flags.string("xrd")! },
  );
  const crds = crdsOf(target);
  const warnings = [...target.warnings];
  let namespace = o.namespace;
  if (namespace !== undefined && !crds.some((c) => c.namespaced)) {
    warnings.push(
      `--namespace ${namespace} ignored: ${crds.map((c) => c.crd).join(" and ")} ` +
        `${crds.length > 1 ? "are" : "is"} cluster-scoped`,
    );
    namespace = undefined;
  }
  if (namespace !== undefined && o.viaMigrator) {
    throw new CliError(
      "--via-kube-migrator migrates every object of the resource: drop --namespace",
    );
  }
  if (namespace !== undefined && o.prune) {
    throw new CliError(
      "--prune-stored-versions needs every object of the CRD migrated: drop --namespace",
    );
  }
  if (o.viaMigrator) return await viaMigrator(cluster, target, warnings, flags, io, o);
  // `--namespace` narrows the namespaced CRDs only (an XRD's claims, beside cluster-scoped XRs).
  const listed: { crd: MigrationCRD; items: KubeObject[]; namespace?: string }[] = [];
  for (const crd of crds) {
    const ns = crd.namespaced ? namespace : undefined;
    const ref = {
      group: crd.group,
      version: crd.storageVersion,
      plural: crd.plural,
      namespace: ns,
    };
    try {
      listed.push({
        crd,
        items: (await cluster.client.listAll(ref, { limit: PAGE_SIZE })).items,
        namespace: ns,
      });
    } catch (e) {
      throw clusterError(cluster.name, e, `listing ${crd.plural}.${crd.group}`);
    }
  }
  for (const l of listed) {
    io.err(planLine(l.crd, l.items.length, { ...o, namespace: l.namespace }, cluster.name));
  }
  const svm = await storageMigrationAPI(cluster.client);
  if (svm !== undefined) {
    io.err(
      `NOTE: cluster ${cluster.name} serves ${svm} (StorageVersionMigration): where ` +
        "kube-controller-manager runs its storage-version-migrator controller, it can do this " +
        "rewrite instead (--via-kube-migrator)\n",
    );
  }
  const progress = progressLine(io, !flags.bool("quiet"));
  const started = Date.now();
  const total = listed.reduce((n, l) => n + l.items.length, 0);
  let before = 0;
  const done: Done[] = [];
  for (const l of listed) {
    const objects = await writeAll(
      {
        client: cluster.client,
        ref: {
          group: l.crd.group,
          version: l.crd.storageVersion,
          plural: l.crd.plural,
          namespace: l.namespace,
        },
        namespaced: l.crd.namespaced,
        fieldManager: o.fieldManager,
        dryRun: o.dryRun,
        concurrency: o.concurrency,
      },
      l.items,
      (n) => progress.update(progressText(before + n, total, Date.now() - started)),
    );
    before += l.items.length;
    const failed = objects.filter((r) => r.error !== undefined).length;
    done.push({ crd: l.crd, objects, failed, pruned: false });
  }
  progress.done();
  const failing = done.filter((d) => d.failed > 0);
  if (o.prune) {
    if (o.dryRun) warnings.push("--prune-stored-versions skipped: dry run");
    else if (failing.length > 0) {
      const n = failing.reduce((k, d) => k + d.failed, 0);
      warnings.push(
        `--prune-stored-versions skipped: ${n} object(s) ${
          crds.length > 1 ? `of ${failing.map((d) => d.crd.crd).join(" and ")} ` : ""
        }failed and may still be stored at an older version`,
      );
    } else await pruneAll(cluster, done);
  }
  return report(target, o, done, warnings);
}

/** Prunes `status.storedVersions` of every CRD in `done`, recording each result. */
async function pruneAll(cluster: { client: KubeClient; name: string }, done: Done[]) {
  for (const d of done) {
    d.pruneError = await prune(
      { client: cluster.client, cluster: cluster.name },
      d.crd.crd,
      d.crd.storageVersion,
    );
    d.pruned = d.pruneError === undefined;
  }
}

/** The report: the first CRD's identity, the counts summed, and per CRD with claims. */
function report(
  target: MigrationTarget,
  o: MigrateOptions,
  done: Done[],
  warnings: string[],
): MigrationReport {
  const viaMigrator = done.some((d) => d.migration !== undefined);
  const objects = done.flatMap((d) =>
    target.claim !== undefined ? d.objects.map((x) => ({ crd: d.crd.crd, ...x })) : d.objects
  );
  const failed = done.reduce((n, d) => n + d.failed, 0);
  const pruneError = done.find((d) => d.pruneError !== undefined)?.pruneError;
  const migration = done.find((d) => d.migration?.condition === "Failed")?.migration ??
    done[0].migration;
  const out: MigrationReport = {
    ...reportBase(target, o),
    objects,
    succeeded: viaMigrator ? null : objects.length - failed,
    failed: viaMigrator ? null : failed,
    ...(migration !== undefined ? { migration } : {}),
    pruned: done.every((d) => d.pruned),
    ...(pruneError !== undefined ? { pruneError } : {}),
    ...(warnings.length > 0 ? { warnings } : {}),
  };
  if (target.claim !== undefined) {
    out.crds = done.map((d): MigrationCRDResult => ({
      crd: d.crd.crd,
      role: d.crd.role,
      kind: d.crd.kind,
      storageVersion: d.crd.storageVersion,
      ...(d.crd.storedVersions !== undefined ? { storedVersions: d.crd.storedVersions } : {}),
      namespaced: d.crd.namespaced,
      succeeded: viaMigrator ? null : d.objects.length - d.failed,
      failed: viaMigrator ? null : d.failed,
      ...(d.migration !== undefined ? { migration: d.migration } : {}),
      pruned: d.pruned,
      ...(d.pruneError !== undefined ? { pruneError: d.pruneError } : {}),
    }));
  }
  return out;
}

async function viaMigrator(
  cluster: { client: KubeClient; name: string },
  target: MigrationTarget,
  warnings: string[],
  flags: ParsedFlags,
  io: Io,
  o: MigrateOptions,
): Promise<MigrationReport> {
  const apiVersion = await migratorAPI(cluster.client, cluster.name);
  const done: Done[] = [];
  for (const crd of crdsOf(target)) {
    io.err(
      `migrate-storage: creating a ${apiVersion} StorageVersionMigration for ` +
        `${crd.plural}.${crd.group} on cluster ${cluster.name} (storage version ` +
        `${crd.storageVersion})${
          o.prune
            ? `, then set status.storedVersions of CRD ${crd.crd} to ` +
              `[${crd.storageVersion}] if it succeeds`
            : ""
        }\n`,
    );
    const progress = progressLine(io, !flags.bool("quiet"));
    const migration = await runViaMigrator(
      { client: cluster.client, cluster: cluster.name, apiVersion },
      crd,
      (seconds) =>
        progress.update(`waiting for the StorageVersionMigration (${duration(seconds)})`),
      { timeoutMs: o.timeoutMs },
    ).finally(() => progress.done());
    done.push({ crd, objects: [], failed: 0, migration, pruned: false });
  }
  if (o.prune) {
    const failing = done.filter((d) => d.migration?.condition !== "Succeeded");
    if (failing.length === 0) await pruneAll(cluster, done);
    else {
      warnings.push(
        `--prune-stored-versions skipped: the StorageVersionMigration ${
          done.length > 1 ? `of ${failing.map((d) => d.crd.crd).join(" and ")} ` : ""
        }failed`,
      );
    }
  }
  return report(target, o, done, warnings);
}

function reportBase(target: MigrationTarget, o: MigrateOptions) {
  return {
    resourceKind: target.resourceKind,
    resource: target.resource,
    crd: target.crd,
    group: target.group,
    kind: target.kind,
    plural: target.plural,
    storageVersion: target.storageVersion,
    ...(target.storedVersions !== undefined ? { storedVersions: target.storedVersions } : {}),
    namespaced: target.namespaced,
    dryRun: o.dryRun,
    fieldManager: o.fieldManager,
  };
}

function objectsLine(r: MigrationReport): string {
  if (r.migration !== undefined) {
    const m = r.migration;
    return `unknown (StorageVersionMigration ${m.name}: ${m.condition}` +
      `${m.message ? `: ${m.message}` : ""})`;
  }
  return `${r.objects.length} (${r.succeeded} ok, ${r.failed} failed)`;
}

function pruneStatus(r: MigrationReport): string {
  if (r.pruned) return `storedVersions set to [${r.storageVersion}]`;
  if (r.pruneError !== undefined) return `FAILED: ${r.pruneError}`;
  return "not pruned";
}

export function migrationTable(r: MigrationReport): string {
  const lines = [
    `MODE:     ${r.dryRun ? "dry-run" : "applied"}`,
    `TARGET:   ${r.resourceKind} ${r.resource}`,
    `CRD:      ${r.crd}`,
    `GVK:      ${r.group}/${r.storageVersion}, Kind=${r.kind} (${r.plural})`,
    `STORED:   ${(r.storedVersions ?? []).join(", ") || "-"}`,
    `OBJECTS:  ${objectsLine(r)}`,
    `PRUNE:    ${pruneStatus(r)}`,
  ];
  // An XRD offering claims: each CRD on its own line, and a CRD column in the object table.
  for (const c of r.crds ?? []) {
    const counts = c.migration !== undefined
      ? `StorageVersionMigration ${c.migration.name}: ${c.migration.condition}`
      : `${(c.succeeded ?? 0) + (c.failed ?? 0)} (${c.succeeded} ok, ${c.failed} failed)`;
    const pruned = c.pruned
      ? `, storedVersions set to [${c.storageVersion}]`
      : c.pruneError !== undefined
      ? `, prune FAILED: ${c.pruneError}`
      : "";
    lines.push(
      `  ${c.role} ${c.crd} at ${c.storageVersion} (stored ${
        (c.storedVersions ?? []).join(", ") || "-"
      }): ${counts}${pruned}`,
    );
  }
  let text = `${lines.join("\n")}\n`;
  if (r.objects.length > 0) {
    const result = (o: MigratedObject) => o.error ?? "ok";
    const claims = r.crds !== undefined;
    const namespaced = r.namespaced || (r.crds ?? []).some((c) => c.namespaced);
    const head = [...(claims ? ["CRD"] : []), ...(namespaced ? ["NAMESPACE"] : []), "NAME"];
    text += "\n" + renderTable(
      [...head, "RESULT"],
      r.objects.map((o) => [
        ...(claims ? [o.crd ?? ""] : []),
        ...(namespaced ? [o.namespace ?? ""] : []),
        o.name,
        result(o),
      ]),
    );
  }
  for (const w of r.warnings ?? []) text += `WARNING: ${w}\n`;
  return text;
}

const NAME_FLAGS: readonly FlagSpec[] = [
  {
    ...FLAGS.xrd,
    value: "NAME",
    help: "the XRD (a cluster resource name) whose generated CRDs to migrate",
  },
  { ...FLAGS.crd, value: "NAME", help: "the CRD (a cluster resource name) to migrate" },
];

export const migrateStorageCommand = defineCommand({
  name: "migrate-storage",
  usage: "convctl migrate-storage (-x NAME | --crd NAME) [--kubeconfig F] [--context C] [-n NS] " +
    "[--dry-run] [--via-kube-migrator [--timeout D]] [--concurrency N] [--field-manager M] [--prune-stored-versions] " +
    "[-o table|json] [--quiet]",
  summary: "Rewrite a CRD's objects in a cluster so etcd stores them at the storage version.",
  target: "none",
  flags: [
    ...NAME_FLAGS,
    ...CLUSTER_FLAGS,
    {
      name: "namespace",
      short: "n",
      kind: "string",
      value: "NS",
      help: "only this namespace (default: all; ignored for cluster-scoped targets)",
    },
    {
      name: "dry-run",
      kind: "bool",
      help: "send the writes as a server-side dry run (dryRun=All)",
    },
    {
      name: "concurrency",
      kind: "string",
      value: "N",
      help: "writes in flight (0 or less: 1)",
      default: "1",
    },
    {
      name: "field-manager",
      kind: "string",
      value: "M",
      help: "the field manager of the writes",
      default: "convctl",
    },
    {
      name: "via-kube-migrator",
      kind: "bool",
      help: "create a StorageVersionMigration and wait for kube-controller-manager to do it",
    },
    {
      name: "timeout",
      kind: "string",
      value: "D",
      help: "with --via-kube-migrator: stop waiting after D (e.g. 90s, 10m; 0: no bound)",
      default: "0",
    },
    {
      name: "prune-stored-versions",
      kind: "bool",
      help: "when every object succeeded, set the CRD's status.storedVersions to [storage]",
    },
    outputFlag("table or json", "table"),
    FLAGS.quiet,
  ],
  groups: [{ exactlyOne: ["xrd", "crd"] }],
  requires: { timeout: "via-kube-migrator" },
  options: (flags): MigrateOptions => {
    if (flags.bool("via-kube-migrator") && flags.bool("dry-run")) {
      throw new CliError(
        "--dry-run cannot be combined with --via-kube-migrator: a StorageVersionMigration has " +
          "no dry run (run --dry-run without --via-kube-migrator to check the writes)",
      );
    }
    return {
      concurrency: concurrencyOf(flags.string("concurrency")),
      fieldManager: flags.string("field-manager") ?? "convctl",
      dryRun: flags.bool("dry-run"),
      prune: flags.bool("prune-stored-versions"),
      namespace: flags.string("namespace"),
      viaMigrator: flags.bool("via-kube-migrator"),
      timeoutMs: timeoutOf(flags.string("timeout")),
    };
  },
  run: ({ flags, io, options }) => migrate(flags, io, options),
  output: {
    formats: { table: migrationTable, json: (r) => toJson(r) },
    default: "table",
  },
  exitCode: (r) =>
    (r.failed ?? 0) > 0 || r.migration?.condition === "Failed" || r.pruneError !== undefined
      ? 1
      : 0,
});
