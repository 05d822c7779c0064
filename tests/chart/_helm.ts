/**
 * The chart tests' one way to render the chart (`helm template`, parsed to objects), over the
 * harness's helm runner (tests/support/helm.ts).
 */
import assert from "node:assert/strict";
import { parseAllDocuments } from "yaml";
import { CHART, helm, type Run, setArgs } from "../support/helm.ts";

export { CHART, FULLNAME, helm, type Run, setArgs } from "../support/helm.ts";
export const KUBE_VERSION = "1.31.0";

/**
 * The API versions `helm template` reports as served, i.e. the cluster the chart's `auto` values
 * detect: {@link FULL_CLUSTER} serves cert-manager and Crossplane 2.x (what most tests assert
 * about), {@link BARE_CLUSTER} neither.
 */
export const FULL_CLUSTER = ["cert-manager.io/v1", "apiextensions.crossplane.io/v2"];
export const BARE_CLUSTER: string[] = [];
const apiVersionArgs = (versions: readonly string[]) =>
  versions.flatMap((v) => ["--api-versions", v]);

// deno-lint-ignore no-explicit-any
export type Obj = Record<string, any>;

/** `helm template rel <chart>` with `sets` and `extra` flags, as it ran (it may fail). */
export function template(
  sets: Record<string, string> = {},
  extra: string[] = [],
  apiVersions: readonly string[] = FULL_CLUSTER,
): Promise<Run> {
  return helm(
    "template",
    "rel",
    CHART,
    "--kube-version",
    KUBE_VERSION,
    ...apiVersionArgs(apiVersions),
    ...setArgs(sets),
    ...extra,
  );
}

/**
 * `helm template rel <chart>` with `sets` (and `extra` flags) on a cluster serving `apiVersions`,
 * parsed; asserts it succeeds.
 */
export async function render(
  sets: Record<string, string> = {},
  namespace = "dco-system",
  extra: string[] = [],
  apiVersions: readonly string[] = FULL_CLUSTER,
): Promise<Obj[]> {
  const r = await template(sets, ["--namespace", namespace, ...extra], apiVersions);
  assert.equal(r.code, 0, `helm template failed:\n${r.stderr}`);
  const objs: Obj[] = [];
  for (const d of parseAllDocuments(r.stdout)) {
    assert.deepEqual(d.errors, [], "rendered YAML must parse");
    const o = d.toJS() as Obj | null;
    if (o !== null) objs.push(o);
  }
  return objs;
}
