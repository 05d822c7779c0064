/**
 * The one way tests run helm: the binary hack/testenv.sh builds (through the harness's binary
 * resolution), with its cache, config and data dirs in a throwaway directory per test process.
 */
import { resolveAssets } from "./control_plane.ts";

/** The chart's directory. */
export const CHART =
  new URL("../../charts/declarative-conversion-operator", import.meta.url).pathname;
/** The chart's fullname for a release named like the chart's default. */
export const FULLNAME = "declarative-conversion-operator";

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
