/**
 * The chart tests' one way to render the chart (`helm template`, parsed to objects), over the
 * harness's helm runner (tests/support/helm.ts).
 */
import assert from "node:assert/strict";
import { parseAllDocuments } from "yaml";
import { CHART, helm, type Run, setArgs } from "../support/helm.ts";

export { CHART, FULLNAME, helm, type Run, setArgs } from "../support/helm.ts";
export const KUBE_VERSION = "1.31.0";

// deno-lint-ignore no-explicit-any
export type Obj = Record<string, any>;

/** `helm template rel <chart>` with `sets` and `extra` flags, as it ran (it may fail). */
export function template(sets: Record<string, string> = {}, extra: string[] = []): Promise<Run> {
  return helm("template", "rel", CHART, "--kube-version", KUBE_VERSION, ...setArgs(sets), ...extra);
}

/** `helm template rel <chart>` with `sets` (and `extra` flags), parsed; asserts it succeeds. */
export async function render(
  sets: Record<string, string> = {},
  namespace = "dco-system",
  extra: string[] = [],
): Promise<Obj[]> {
  const r = await template(sets, ["--namespace", namespace, ...extra]);
  assert.equal(r.code, 0, `helm template failed:\n${r.stderr}`);
  const objs: Obj[] = [];
  for (const d of parseAllDocuments(r.stdout)) {
    assert.deepEqual(d.errors, [], "rendered YAML must parse");
    const o = d.toJS() as Obj | null;
    if (o !== null) objs.push(o);
  }
  return objs;
}
