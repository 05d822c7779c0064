/**
 * The Crossplane startup check: with XRD support on (`--enable-xrd-support`, the default), the
 * manager asks API discovery for `apiextensions.crossplane.io/v2` before it builds any cache. When
 * that group-version is not served, or serves no `compositeresourcedefinitions`, the manager could
 * never sync its XRD cache; it says so in one line — the API that is missing and how to turn XRD
 * support off — and exits 1 (docs/operations.md#crossplane-startup-check). A discovery failure
 * other than "not served" is reported as that failure, never as "Crossplane missing".
 *
 * {@link crossplaneRequirement} is the pure decision over the discovery answer;
 * {@link checkCrossplane} asks the apiserver.
 */
import { XRD_RESOURCE } from "../api/resources.ts";
import {
  type DiscoveredResource,
  discoverGroupVersion,
  type DiscoveryOptions,
  type KubeClient,
} from "../kube/mod.ts";

/** The group-version XRD support needs (Crossplane 2.x). */
export const CROSSPLANE_GROUP_VERSION = `${XRD_RESOURCE.group}/${XRD_RESOURCE.version}`;
/** The flag that turns XRD support off, as it is passed. */
export const XRD_SUPPORT_OFF_FLAG = "--enable-xrd-support=false";
/** The chart value that renders {@link XRD_SUPPORT_OFF_FLAG}. */
export const XRD_SUPPORT_OFF_HELM_VALUE = "features.crossplane.enabled=false";

/** What the check decided. */
export type CrossplaneCheck =
  | { ok: true }
  | {
    ok: false;
    /** The one log line. */
    message: string;
    /** What is missing: the whole group-version, or the resource inside it. */
    missing: string;
  };

/**
 * The decision over the discovery answer of {@link CROSSPLANE_GROUP_VERSION}: `undefined` is
 * "not served" (404); a served group-version must list `compositeresourcedefinitions`.
 */
export function crossplaneRequirement(
  served: readonly DiscoveredResource[] | undefined,
): CrossplaneCheck {
  const resource = `${XRD_RESOURCE.plural}.${XRD_RESOURCE.group}`;
  let missing: string;
  if (served === undefined) {
    missing = `${CROSSPLANE_GROUP_VERSION} (not served)`;
  } else if (!served.some((r) => r.name === XRD_RESOURCE.plural)) {
    missing = `${resource} in ${CROSSPLANE_GROUP_VERSION} (the group-version is served without it)`;
  } else {
    return { ok: true };
  }
  return {
    ok: false,
    missing,
    message: "XRD support is on but the cluster does not serve Crossplane 2.x's " +
      `CompositeResourceDefinition API (${resource}, version ${XRD_RESOURCE.version}): ` +
      `missing ${missing}. Install Crossplane 2.x, or turn XRD support off with ` +
      `${XRD_SUPPORT_OFF_FLAG} (Helm: --set ${XRD_SUPPORT_OFF_HELM_VALUE}); exiting`,
  };
}

/** Asks discovery and decides; a failure other than "not served" is thrown as it is. */
export async function checkCrossplane(
  client: KubeClient,
  opts: DiscoveryOptions = {},
): Promise<CrossplaneCheck> {
  return crossplaneRequirement(await discoverGroupVersion(client, CROSSPLANE_GROUP_VERSION, opts));
}
