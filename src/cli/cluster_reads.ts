/**
 * The reads the live commands share: a config of either kind by name (cluster-scoped; absent is
 * not an error), the target CRD or XRD as the schema the engine analyses, the CRDs generated from
 * an XRD and every object of a CRD. Each failure is one line naming the cluster
 * ({@link clusterError}).
 */
import {
  type ConfigKind,
  type ConversionConfig,
  CRD_CONFIG_KIND,
  parseConfig,
  XRD_CONFIG_KIND,
} from "../api/mod.ts";
import { CONFIG_RESOURCES, xrdResource } from "../api/resources.ts";
import type { JsonObject } from "../engine/mod.ts";
import { getOrUndefined } from "../kube/errors.ts";
import type { KubeObject, ResourceRef } from "../kube/objects.ts";
import { CRD_RESOURCE } from "../kube/resources.ts";
import { isJsonObject } from "../lib/json.ts";
import { CliError } from "./args.ts";
import { type Cluster, clusterError } from "./cluster.ts";
import { type LoadedSchema, schemaOfManifest } from "./load.ts";

/** Crossplane's XRDs at v2, the version dco reads. */
export const XRD_REF: ResourceRef = xrdResource();

/** What each config kind targets, as the cluster names it. */
const TARGET: Record<ConfigKind, { what: string; ref: ResourceRef }> = {
  [XRD_CONFIG_KIND]: { what: "XRD", ref: XRD_REF },
  [CRD_CONFIG_KIND]: { what: "CRD", ref: CRD_RESOURCE },
};

/** One object as JSON data, or undefined when the cluster has none of that name. */
export async function readObject(
  cluster: Cluster,
  ref: ResourceRef,
  name: string,
  what: string,
): Promise<JsonObject | undefined> {
  try {
    const found = await getOrUndefined(cluster.client.get(ref, name));
    return found as JsonObject | undefined;
  } catch (e) {
    throw clusterError(cluster.name, e, `reading ${what} ${name}`);
  }
}

/** The config of `kind` named `name` as the cluster stores it (status included), if any. */
export async function readClusterConfig(
  cluster: Cluster,
  kind: ConfigKind,
  name: string,
): Promise<ConversionConfig | undefined> {
  const raw = await readObject(cluster, CONFIG_RESOURCES[kind], name, kind);
  if (raw === undefined) return undefined;
  const parsed = parseConfig(raw);
  if (!parsed.ok) {
    throw new CliError(
      `cluster ${cluster.name}: ${kind} ${name} does not decode: ${parsed.errors.join("; ")}`,
    );
  }
  return parsed.config;
}

/** The target (a CRD, or an XRD) named `name` as the schema of a `kind` config; must exist. */
export async function readClusterSchema(
  cluster: Cluster,
  kind: ConfigKind,
  name: string,
): Promise<LoadedSchema> {
  const { what, ref } = TARGET[kind];
  const raw = await readObject(cluster, ref, name, what);
  if (raw === undefined) throw new CliError(`cluster ${cluster.name}: ${what} ${name} not found`);
  const shown = `cluster:${name}`;
  return schemaOfManifest(kind, raw, `${what} ${name} of cluster ${cluster.name}`, shown);
}

/** `group`, `version`, `plural` of a CRD's objects at `version` (namespace: all). */
export function objectsRef(crd: JsonObject, version: string): ResourceRef {
  const spec = isJsonObject(crd.spec) ? crd.spec : {};
  const names = isJsonObject(spec.names) ? spec.names : {};
  return { group: String(spec.group ?? ""), version, plural: String(names.plural ?? "") };
}

/** The version to list a CRD's objects at: its storage version when served, else a served one. */
export function listVersionOf(crd: JsonObject): string | undefined {
  const spec = isJsonObject(crd.spec) ? crd.spec : {};
  const versions = (Array.isArray(spec.versions) ? spec.versions : []).filter(isJsonObject);
  const served = versions.filter((v) => v.served === true);
  const pick = served.find((v) => v.storage === true) ?? served[0];
  return pick === undefined ? undefined : String(pick.name);
}

/** Every object of `ref` (all namespaces), in the apiserver's order, 500 per page. */
export async function listObjects(
  cluster: Cluster,
  ref: ResourceRef,
  what: string,
): Promise<JsonObject[]> {
  try {
    const list = await cluster.client.listAll<KubeObject>(ref, { limit: 500 });
    return list.items as unknown as JsonObject[];
  } catch (e) {
    throw clusterError(cluster.name, e, `listing ${what}`);
  }
}
