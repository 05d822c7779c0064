/**
 * `hack/scalegen.ts --out DIR` writes the fleet as YAML manifests (namespace, CRDs, configs,
 * instances) that match the generator, the same bytes for the same seed; bad flags exit 2.
 */
import assert from "node:assert/strict";
import { parseAllDocuments } from "yaml";
import { generateFleet } from "../../hack/scale/generate.ts";

const SCRIPT = new URL("../../hack/scalegen.ts", import.meta.url).pathname;

async function scalegen(
  ...args: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", SCRIPT, ...args],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

async function readDocs(path: string): Promise<unknown[]> {
  return parseAllDocuments(await Deno.readTextFile(path)).map((d) => d.toJS());
}

Deno.test("scalegen --out writes the namespace, CRDs, configs and instances", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const run = await scalegen("--targets", "3", "--instances", "2", "--seed", "5", "--out", dir);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /wrote 3 CRDs, 3 configs and 6 instances .* 29 strategies covered/);
    const names = [];
    for await (const e of Deno.readDir(dir)) names.push(e.name);
    assert.deepEqual(names.sort(), [
      "00-namespace.yaml",
      "01-crds.yaml",
      "02-configs.yaml",
      "03-instances.yaml",
    ]);
    const fleet = generateFleet({
      targets: 3,
      instances: 2,
      strategiesMin: 3,
      strategiesMax: 10,
      seed: 5,
      namespace: "dco-scale",
    });
    assert.deepEqual(await readDocs(`${dir}/00-namespace.yaml`), [
      { apiVersion: "v1", kind: "Namespace", metadata: { name: "dco-scale" } },
    ]);
    assert.deepEqual(await readDocs(`${dir}/01-crds.yaml`), fleet.targets.map((t) => t.crd));
    assert.deepEqual(await readDocs(`${dir}/02-configs.yaml`), fleet.targets.map((t) => t.config));
    assert.deepEqual(
      await readDocs(`${dir}/03-instances.yaml`),
      fleet.targets.flatMap((t) => t.instances),
    );

    const again = await Deno.makeTempDir();
    try {
      assert.equal(
        (await scalegen("--targets", "3", "--instances", "2", "--seed", "5", "--out", again)).code,
        0,
      );
      for (const name of names) {
        assert.equal(
          await Deno.readTextFile(`${again}/${name}`),
          await Deno.readTextFile(`${dir}/${name}`),
        );
      }
    } finally {
      await Deno.remove(again, { recursive: true });
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("scalegen refuses a missing --out, a bad number and a fleet that cannot cover", async () => {
  for (
    const [args, message] of [
      [[], /--out DIR is required/],
      [["--out", "/tmp/x", "--targets", "many"], /not an integer/],
      [["--out", "/tmp/x", "--targets", "1"], /must be at least 29/],
    ] as const
  ) {
    const run = await scalegen(...args);
    assert.equal(run.code, 2);
    assert.match(run.stderr, message);
  }
});
