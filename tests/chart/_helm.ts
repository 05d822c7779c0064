/**
 * The chart tests' one way to run helm and render the chart (`helm template`, parsed to objects).
 * helm comes from hack/testenv.sh through the harness's binary resolution; its cache, config and
 * data dirs are a throwaway directory per test process.
 */
import assert from "node:assert/strict";
import { parseAllDocuments } from "yaml";
import { resolveAssets } from "../support/control_plane.ts";

export const CHART =
  new URL("../../charts/declarative-conversion-operator", import.meta.url).pathname;
export const FULLNAME = "declarative-conversion-operator";
export const KUBE_VERSION = "1.31.0";

// deno-lint-ignore no-explicit-any
export type Obj = Record<string, any>;

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

let helmHome: string | undefined;

/** Runs helm with `args`. */
export async function helm(...args: string[]): Promise<Run> {
  const bin = (await resolveAssets()).helm;
  if (bin === undefined) {
    throw new Error(
      "no helm binary: run hack/testenv.sh (or set KUBEBUILDER_ASSETS/TEST_ASSET_HELM)",
    );
  }
  if (helmHome === undefined) {
    const dir = await Deno.makeTempDir({ prefix: "dco-helm-" });
    helmHome = dir;
    globalThis.addEventListener("unload", () => Deno.removeSync(dir, { recursive: true }));
  }
  const out = await new Deno.Command(bin, {
    args,
    env: {
      HELM_CACHE_HOME: `${helmHome}/cache`,
      HELM_CONFIG_HOME: `${helmHome}/config`,
      HELM_DATA_HOME: `${helmHome}/data`,
    },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

/** `--set k=v` for each entry. */
export function setArgs(sets: Record<string, string>): string[] {
  return Object.entries(sets).flatMap(([k, v]) => ["--set", `${k}=${v}`]);
}

/** `helm template rel <chart>` with `sets` (and `extra` flags), parsed; asserts it succeeds. */
export async function render(
  sets: Record<string, string> = {},
  namespace = "dco-system",
  extra: string[] = [],
): Promise<Obj[]> {
  const r = await helm(
    "template",
    "rel",
    CHART,
    "--namespace",
    namespace,
    "--kube-version",
    KUBE_VERSION,
    ...setArgs(sets),
    ...extra,
  );
  assert.equal(r.code, 0, `helm template failed:\n${r.stderr}`);
  const objs: Obj[] = [];
  for (const d of parseAllDocuments(r.stdout)) {
    assert.deepEqual(d.errors, [], "rendered YAML must parse");
    const o = d.toJS() as Obj | null;
    if (o !== null) objs.push(o);
  }
  return objs;
}
