/** hack/upgrade-crds.sh as the tests run it: with the harness's helm and kubectl. */
import { resolveAssets } from "../support/control_plane.ts";

const SCRIPT = new URL("../../hack/upgrade-crds.sh", import.meta.url).pathname;

/** Runs the script with the harness's helm (and a kubectl that must not be called). */
export async function upgradeCrds(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const assets = await resolveAssets();
  const out = await new Deno.Command("bash", {
    args: [SCRIPT, ...args],
    env: {
      HELM: assets.helm!,
      KUBECTL: assets.kubectl,
      HELM_CACHE_HOME: await Deno.makeTempDir(),
      HELM_CONFIG_HOME: await Deno.makeTempDir(),
      ...env,
    },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}
