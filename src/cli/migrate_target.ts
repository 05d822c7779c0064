/**
 * What `convctl migrate-storage` rewrites: a CRD read from the cluster by name (`--crd`), or the
 * CRDs Crossplane generated for an XRD (`--xrd`: the composite CRD, and the claim CRD when the XRD
 * offers claims): each one's group, kind, plural, scope, its one storage version and the versions
 * etcd may still hold (`status.storedVersions`).
 */
import { xrdResource } from "../api/resources.ts";
import { isJsonObject } from "../lib/json.ts";
import type { KubeClient, KubeObject } from "../kube/mod.ts";
import { CRD_RESOURCE } from "../kube/resources.ts";
import { CliError } from "./args.ts";
import { clusterError } from "./cluster.ts";

/** One CRD to rewrite. */
export interface MigrationCRD {
  crd: string;
  /** For an XRD: its composite CRD, or its claim CRD. */
  role: "composite" | "claim";
  group: string;
  kind: string;
  plural: string;
  storageVersion: string;
  storedVersions?: string[];
  namespaced: boolean;
}

/** The CRD (or an XRD's composite CRD) and, for an XRD offering claims, its claim CRD. */
export interface MigrationTarget extends MigrationCRD {
  resourceKind: "CustomResourceDefinition" | "CompositeResourceDefinition";
  /** The name given on the command line. */
  resource: string;
  warnings: string[];
  claim?: MigrationCRD;
}

interface Version {
  name?: string;
  storage?: boolean;
  referenceable?: boolean;
}

interface DefinitionSpec {
  group?: string;
  scope?: string;
  names?: { kind?: string; plural?: string };
  claimNames?: { kind?: string; plural?: string };
  versions?: Version[];
}

function specOf(o: KubeObject): DefinitionSpec {
  return isJsonObject(o.spec) ? o.spec as DefinitionSpec : {};
}

/** The one version flagged `flag`, or an error naming the definition. */
function flaggedVersion(what: string, spec: DefinitionSpec, flag: "storage" | "referenceable") {
  const flagged = (spec.versions ?? []).filter((v) => v[flag] === true && v.name);
  if (flagged.length !== 1) {
    throw new CliError(`${what}: expected exactly one ${flag} version, found ${flagged.length}`);
  }
  return flagged[0].name!;
}

function identity(what: string, spec: DefinitionSpec) {
  const { group } = spec;
  const { kind, plural } = spec.names ?? {};
  if (!group || !kind || !plural) throw new CliError(`${what}: needs spec.group and spec.names`);
  return { group, kind, plural };
}

async function read(client: KubeClient, cluster: string, ref: typeof CRD_RESOURCE, name: string) {
  try {
    return await client.get(ref, name);
  } catch (e) {
    throw clusterError(cluster, e, `reading ${ref.plural} ${name}`);
  }
}

/** A CRD read from the cluster: what rewriting its objects needs. */
async function migrationCRD(
  client: KubeClient,
  cluster: string,
  crdName: string,
  role: MigrationCRD["role"],
): Promise<MigrationCRD> {
  const crd = await read(client, cluster, CRD_RESOURCE, crdName);
  const what = `CRD ${crdName}`;
  const spec = specOf(crd);
  const { group, kind, plural } = identity(what, spec);
  const storageVersion = flaggedVersion(what, spec, "storage");
  const status = isJsonObject(crd.status) ? crd.status : {};
  const stored = Array.isArray(status.storedVersions)
    ? status.storedVersions.filter((v): v is string => typeof v === "string")
    : undefined;
  return {
    crd: crdName,
    role,
    group,
    kind,
    plural,
    storageVersion,
    ...(stored !== undefined ? { storedVersions: stored } : {}),
    namespaced: spec.scope === "Namespaced",
  };
}

/** Reads the target's definition(s) and resolves what to rewrite. */
export async function resolveMigrationTarget(
  client: KubeClient,
  cluster: string,
  by: { crd: string } | { xrd: string },
): Promise<MigrationTarget> {
  if ("crd" in by) {
    const crd = await migrationCRD(client, cluster, by.crd, "composite");
    return { ...crd, resourceKind: "CustomResourceDefinition", resource: by.crd, warnings: [] };
  }
  const xrd = await read(client, cluster, xrdResource("v1"), by.xrd);
  const what = `XRD ${by.xrd}`;
  const spec = specOf(xrd);
  const { group, plural } = identity(what, spec);
  const referenceable = flaggedVersion(what, spec, "referenceable");
  const composite = await migrationCRD(client, cluster, `${plural}.${group}`, "composite");
  const target: MigrationTarget = {
    ...composite,
    resourceKind: "CompositeResourceDefinition",
    resource: by.xrd,
    warnings: [],
  };
  const claimPlural = spec.claimNames?.plural;
  if (claimPlural) {
    target.claim = await migrationCRD(client, cluster, `${claimPlural}.${group}`, "claim");
  }
  for (const c of [composite, target.claim]) {
    if (c !== undefined && c.storageVersion !== referenceable) {
      target.warnings.push(
        `the XRD's referenceable version is ${referenceable} but CRD ${c.crd} stores ` +
          `${c.storageVersion} (Crossplane has not updated the CRD yet?); migrating to ` +
          c.storageVersion,
      );
    }
  }
  return target;
}
