/**
 * Every story under examples/ (found by listing the directory, so a new one is covered without
 * editing this file) passes `convctl test` over its samples and `convctl fuzz`, run as CI runs
 * them; and has a README, samples at every served version, and a place in the story order of
 * `deno task demo` and examples/README.md.
 */
import assert from "node:assert/strict";
import { parse, parseAllDocuments } from "yaml";
import { convctl } from "../cli/_convctl.ts";
import { STORY_ORDER } from "../../hack/demo/examples.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

const names: string[] = [];
for (const e of Deno.readDirSync(`${ROOT}examples`)) if (e.isDirectory) names.push(e.name);
names.sort();

/** `--crd crd.yaml` or `-x xrd.yaml`, whichever the example has. */
function schemaArgs(dir: string): string[] {
  try {
    Deno.statSync(`${ROOT}${dir}/xrd.yaml`);
    return ["-x", `${dir}/xrd.yaml`];
  } catch {
    return ["--crd", `${dir}/crd.yaml`];
  }
}

Deno.test("examples: at least five stories, each in the story order", () => {
  assert.ok(names.length >= 5, names.join(", "));
  assert.deepEqual([...names].sort(), [...STORY_ORDER].sort());
  const index = Deno.readTextFileSync(`${ROOT}examples/README.md`);
  const positions = STORY_ORDER.map((n) => index.indexOf(`(${n}/)`));
  assert.ok(positions.every((p) => p >= 0), "examples/README.md links every story");
  assert.deepEqual(positions, [...positions].sort((a, b) => a - b), "in story order");
});

for (const name of names) {
  const dir = `examples/${name}`;

  Deno.test(`examples/${name}: README, and samples at every served version`, async () => {
    const readme = await Deno.readTextFile(`${ROOT}${dir}/README.md`);
    assert.match(readme, /\*\*Story\.\*\*/);
    const [flag, file] = schemaArgs(dir);
    const schema = parse(await Deno.readTextFile(`${ROOT}${file}`));
    const served: string[] = schema.spec.versions
      .filter((v: { served: boolean }) => v.served)
      .map((v: { name: string }) => v.name);
    const seen = new Set<string>();
    for (const e of Deno.readDirSync(`${ROOT}${dir}/samples`)) {
      const text = await Deno.readTextFile(`${ROOT}${dir}/samples/${e.name}`);
      for (const d of parseAllDocuments(text)) {
        const doc = (d as { toJS(): { kind?: string; apiVersion?: string } }).toJS();
        if (doc?.kind === schema.spec.names.kind) seen.add(String(doc.apiVersion).split("/")[1]);
      }
    }
    assert.deepEqual([...seen].sort(), [...served].sort(), `${flag}: samples per version`);
  });

  Deno.test(`examples/${name}: convctl test passes`, async () => {
    const r = await convctl(
      "test",
      "-c",
      `${dir}/config.yaml`,
      ...schemaArgs(dir),
      "-s",
      `${dir}/samples`,
      "--quiet",
    );
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /SUMMARY: \d+ samples/);
  });

  Deno.test(`examples/${name}: convctl fuzz finds nothing`, async () => {
    const r = await convctl(
      "fuzz",
      "-c",
      `${dir}/config.yaml`,
      ...schemaArgs(dir),
      "--count",
      "300",
      "--seed",
      "7",
      "--quiet",
    );
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /no findings/);
  });
}

Deno.test("examples/xrd-hub-promotion: before the promotion valid; old config vs new XRD not", async () => {
  const dir = "examples/xrd-hub-promotion";
  const before = await convctl(
    "validate",
    "-c",
    `${dir}/before-promotion/config.yaml`,
    "-x",
    `${dir}/before-promotion/xrd.yaml`,
  );
  assert.equal(before.code, 0, before.stdout + before.stderr);
  const mixed = await convctl(
    "validate",
    "-c",
    `${dir}/before-promotion/config.yaml`,
    "-x",
    `${dir}/xrd.yaml`,
  );
  assert.equal(mixed.code, 1, mixed.stdout + mixed.stderr);
  assert.match(
    mixed.stdout,
    /\[hub-version\] hub version "v1beta1" is not the referenceable version/,
  );
});
