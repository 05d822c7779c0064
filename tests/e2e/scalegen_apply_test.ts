/**
 * The manifests `hack/scalegen.ts --out` writes apply to a real kube-apiserver with kubectl, in
 * the documented order: the CRDs are accepted and become Established, the conversion configs pass
 * the CRDConversionConfig schema, and the instances are accepted at v1 and listed by category.
 * (No operator runs here: the configs are stored, not applied.)
 */
import assert from "node:assert/strict";
import { type ControlPlane, e2eTest } from "../support/control_plane.ts";
import { CRD_DIR } from "../../src/api/crds.ts";

const REPO = new URL("../../", import.meta.url).pathname;

async function kubectlOk(cp: ControlPlane, ...args: string[]): Promise<string> {
  const r = await cp.kubectl(...args);
  assert.equal(r.code, 0, `kubectl ${args.join(" ")}: ${r.stderr}`);
  return r.stdout;
}

e2eTest("scalegen manifests apply with kubectl", async (cp) => {
  const dir = await Deno.makeTempDir();
  try {
    const gen = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        `${REPO}hack/scalegen.ts`,
        "--targets",
        "3",
        "--instances",
        "2",
        "--out",
        dir,
      ],
    }).output();
    assert.equal(gen.code, 0, new TextDecoder().decode(gen.stderr));

    await kubectlOk(cp, "apply", "-f", `${REPO}${CRD_DIR}`);
    await kubectlOk(cp, "apply", "-f", `${dir}/00-namespace.yaml`, "-f", `${dir}/01-crds.yaml`);
    await kubectlOk(
      cp,
      "wait",
      "--for",
      "condition=Established",
      "--timeout",
      "60s",
      "-f",
      `${dir}/01-crds.yaml`,
      "-f",
      `${REPO}${CRD_DIR}`,
    );
    await kubectlOk(cp, "apply", "-f", `${dir}/02-configs.yaml`);
    await kubectlOk(cp, "apply", "-f", `${dir}/03-instances.yaml`);

    const configs = JSON.parse(await kubectlOk(cp, "get", "crdconversionconfigs", "-o", "json"));
    assert.deepEqual(
      configs.items.map((c: { metadata: { name: string } }) => c.metadata.name).sort(),
      [1, 2, 3].map((i) => `widget00${i}s.scale.dco.example.org-conversion`),
    );
    const widgets = JSON.parse(
      await kubectlOk(cp, "get", "widgets", "-n", "dco-scale", "-o", "json"),
    );
    assert.equal(widgets.items.length, 6);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
