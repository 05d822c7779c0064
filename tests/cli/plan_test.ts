import assert from "node:assert/strict";
import { parse, stringify } from "yaml";
import { assertToolError, convctl, FIELD_RENAME } from "./_convctl.ts";
import { tempFiles } from "./_fixtures.ts";

const BEFORE = {
  config: "examples/xrd-hub-promotion/before-promotion/config.yaml",
  xrd: "examples/xrd-hub-promotion/before-promotion/xrd.yaml",
};
const AFTER = {
  config: "examples/xrd-hub-promotion/config.yaml",
  xrd: "examples/xrd-hub-promotion/xrd.yaml",
};

interface Step {
  step: number;
  id: string;
  status: string;
  blockedBy?: number;
  run: string;
}

const statuses = (steps: Step[]) =>
  steps.map((s) => `${s.id} ${s.status}${s.blockedBy ? ` ${s.blockedBy}` : ""}`);

Deno.test("plan: a CRD promotion from the files — one step ready, cluster steps unknown", async () => {
  const r = await convctl("plan", ...FIELD_RENAME.flags, "--to", "v1", "-o", "json");
  assert.equal(r.code, 0, r.stderr);
  const plan = JSON.parse(r.stdout);
  assert.equal(plan.from, "v2");
  assert.equal(plan.next, 3);
  assert.deepEqual(plan.needCluster, [4, 5]);
  assert.deepEqual(statuses(plan.steps), [
    "serve DONE",
    "wire DONE",
    "promote READY",
    "migrate-storage UNKNOWN",
    "prune-stored-versions UNKNOWN",
    "unserve-v2 BLOCKED 3",
    "drop-v2 BLOCKED 3",
  ]);
  assert.equal(
    plan.steps[2].run,
    `convctl rehub -c ${FIELD_RENAME.config} --crd ${FIELD_RENAME.crd} --to v1, then set ` +
      "storage: true on v1 (and false on v2) and apply both",
  );
  const table = await convctl("plan", ...FIELD_RENAME.flags, "--to", "v1");
  assert.match(table.stdout, /^▶ 3\. promote v1 to hub {2}\[NEXT\]$/m);
  assert.match(table.stdout, /^ {5}blocked: by step 3$/m);
  assert.match(table.stdout, /^NEXT: step 3$/m);
});

Deno.test("plan: after the promotion only cluster steps remain; retirement waits for them", async () => {
  const dir = await tempFiles({});
  // The XRD after promotion, with v1alpha1 deprecated: it is retired, behind the cluster steps.
  const xrd = await Deno.readTextFile(AFTER.xrd);
  const deprecated = xrd.replace(/(- name: v1alpha1\n)(\s+)/, "$1$2deprecated: true\n$2");
  assert.notEqual(deprecated, xrd);
  await Deno.writeTextFile(`${dir}/xrd.yaml`, deprecated);
  const args = ["plan", "-c", AFTER.config, "-x", `${dir}/xrd.yaml`, "--to", "v1", "-o", "json"];
  const plan = JSON.parse((await convctl(...args)).stdout);
  assert.equal(plan.next, null);
  assert.deepEqual(statuses(plan.steps), [
    "serve DONE",
    "wire DONE",
    "promote DONE",
    "retarget UNKNOWN",
    "migrate-storage UNKNOWN",
    "prune-stored-versions UNKNOWN",
    "unserve-v1alpha1 BLOCKED 4",
    "drop-v1alpha1 BLOCKED 4",
  ]);
  const assumed = JSON.parse((await convctl(...args, "--assume-verified")).stdout);
  assert.equal(assumed.next, 7);
  assert.deepEqual(statuses(assumed.steps).slice(6), [
    "unserve-v1alpha1 READY",
    "drop-v1alpha1 BLOCKED 7",
  ]);
  const table = await convctl(...args.slice(0, -2));
  assert.match(
    table.stdout,
    /^no step is ready: 3 step\(s\) need a cluster to check \(4, 5, 6\)$/m,
  );
});

Deno.test("plan: a package-managed XRD applies the config first", async () => {
  const args = ["plan", "-c", BEFORE.config, "-x", AFTER.xrd, "--to", "v1"];
  const plain = JSON.parse((await convctl(...args, "-o", "json")).stdout);
  assert.equal(plain.packageManaged, false);
  const managed = await convctl(...args, "--package-managed");
  assert.equal(managed.code, 0, managed.stderr);
  assert.match(managed.stdout, /^PACKAGE-MANAGED: /m);
  const json = JSON.parse((await convctl(...args, "--package-managed", "-o", "json")).stdout);
  assert.deepEqual(json.steps.slice(0, 3).map((s: Step) => s.id), ["wire", "serve", "promote"]);
  // Detected from the owner reference as well.
  const xrd = parse(await Deno.readTextFile(AFTER.xrd));
  xrd.metadata.ownerReferences = [{
    apiVersion: "pkg.crossplane.io/v1",
    kind: "ConfigurationRevision",
    name: "platform-abc",
    uid: "1",
  }];
  const dir = await tempFiles({ "xrd.yaml": stringify(xrd) });
  const owned = JSON.parse(
    (await convctl(
      "plan",
      "-c",
      BEFORE.config,
      "-x",
      `${dir}/xrd.yaml`,
      "--to",
      "v1",
      "-o",
      "json",
    ))
      .stdout,
  );
  assert.equal(owned.packageManaged, true);
});

Deno.test("plan: a version the schema does not declare exits 1; bad input exits 2", async () => {
  const r = await convctl("plan", ...FIELD_RENAME.flags, "--to", "v9");
  assert.equal(r.code, 1);
  assert.match(r.stdout, /^v9 is not declared by CRD widgets\.demo\.example\.com$/m);
  assertToolError(await convctl("plan", "--to", "v1"), "one of the flags --xrd, --crd is required");
  assertToolError(
    await convctl("plan", "--crd", "missing.yaml", "--to", "v1"),
    /^error: cannot read CRD file missing\.yaml: /,
  );
  assertToolError(
    await convctl("plan", "--crd", FIELD_RENAME.config, "--to", "v1"),
    `CRD file ${FIELD_RENAME.config} has kind "CRDConversionConfig", expected CustomResourceDefinition`,
  );
});
