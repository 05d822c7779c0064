/**
 * What `convctl migrate-storage` rewrites: a CRD read from the cluster by name (`--crd`), or the
 * CRD Crossplane generated for an XRD (`--xrd`): its group, kind, plural, scope, its one storage
 * version and the versions etcd may still hold (`status.storedVersions`).
 */
import { xrdResource } from "../api/resources.ts";
import { isJsonObject } from "../lib/json.ts";
import type { KubeClient, KubeObject } from "../kube/mod.ts";
import { CRD_RESOURCE } from "../kube/resources.ts";
import { CliError } from "./args.ts";
import { clusterError } from "./cluster.ts";

export interface MigrationTarget {
  resourceKind: "CustomResourceDefinition" | "CompositeResourceDefinition";
  /** The name given on the command line. */
  resource: string;
  crd: string;
  group: string;
  kind: string;
  plural: string;
  storageVersion: string;
  storedVersions?: string[];
  namespaced: boolean;
  warnings: string[];
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

/** Reads the target's definition(s) and resolves what to rewrite. */
export async function resolveMigrationTarget(
  client: KubeClient,
  cluster: string,
  by: { crd: string } | { xrd: string },
): Promise<MigrationTarget> {
  const warnings: string[] = [];
  let crdName: string;
  let referenceable: string | undefined;
  if ("xrd" in by) {
    const xrd = await read(client, cluster, xrdResource("v1"), by.xrd);
    const what = `XRD ${by.xrd}`;
    const { group, plural } = identity(what, specOf(xrd));
    referenceable = flaggedVersion(what, specOf(xrd), "referenceable");
    crdName = `${plural}.${group}`;
  } else {
    crdName = by.crd;
  }
  const crd = await read(client, cluster, CRD_RESOURCE, crdName);
  const what = `CRD ${crdName}`;
  const spec = specOf(crd);
  const { group, kind, plural } = identity(what, spec);
  const storageVersion = flaggedVersion(what, spec, "storage");
  if (referenceable !== undefined && referenceable !== storageVersion) {
    warnings.push(
      `the XRD's referenceable version is ${referenceable} but CRD ${crdName} stores ` +
        `${storageVersion} (Crossplane has not updated the CRD yet?); migrating to ${storageVersion}`,
    );
  }
  const status = isJsonObject(crd.status) ? crd.status : {};
  const stored = Array.isArray(status.storedVersions)
    ? status.storedVersions.filter((v): v is string => typeof v === "string")
    : undefined;
  return {
    resourceKind: "xrd" in by ? "CompositeResourceDefinition" : "CustomResourceDefinition",
    resource: "xrd" in by ? by.xrd : by.crd,
    crd: crdName,
    group,
    kind,
    plural,
    storageVersion,
    ...(stored !== undefined ? { storedVersions: stored } : {}),
    namespaced: spec.scope === "Namespaced",
    warnings,
  };
}
