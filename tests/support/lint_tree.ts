/**
 * A throwaway tree of config/schema pairs for `convctl lint` (its test and hack/lint_bench.ts):
 * pair `i` is the widget example of docs/examples/cli with its API group renamed to
 * `demo<i>.example.com`, the config in `configs/`, the CRD in `crds/`.
 */
const EXAMPLES = new URL("../../docs/examples/cli/", import.meta.url);

/** `widgets.demo<i>.example.com`: the target name of pair `i`. */
export function lintTreeTarget(i: number): string {
  return `widgets.demo${i}.example.com`;
}

/** Writes `count` pairs under a new temporary directory and returns its path. */
export async function writeLintTree(count: number): Promise<string> {
  const config = await Deno.readTextFile(new URL("widget-config.yaml", EXAMPLES));
  const crd = await Deno.readTextFile(new URL("widget-crd.yaml", EXAMPLES));
  const dir = await Deno.makeTempDir({ prefix: "dco-lint-tree-" });
  await Deno.mkdir(`${dir}/configs`);
  await Deno.mkdir(`${dir}/crds`);
  const pad = (i: number) => String(i).padStart(3, "0");
  for (let i = 0; i < count; i++) {
    const rename = (text: string) => text.replaceAll("demo.example.com", `demo${i}.example.com`);
    await Deno.writeTextFile(`${dir}/configs/widget-${pad(i)}.yaml`, rename(config));
    await Deno.writeTextFile(`${dir}/crds/widget-${pad(i)}.yaml`, rename(crd));
  }
  return dir;
}
