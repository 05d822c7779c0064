import assert from "node:assert/strict";
import { stringify } from "yaml";
import { assertToolError, convctl, ROOT } from "./_convctl.ts";
import { conversionConfig, schemaDocument, specSchema, tempFiles } from "./_fixtures.ts";

async function git(dir: string, ...args: string[]): Promise<void> {
  const r = await new Deno.Command("git", {
    args: ["-c", "user.name=t", "-c", "user.email=t@example.com", ...args],
    cwd: dir,
    stdout: "null",
    stderr: "piped",
  }).output();
  assert.ok(r.success, new TextDecoder().decode(r.stderr));
}

/** A throwaway repository with one commit per file set, oldest first. */
async function repo(...commits: Record<string, unknown>[]): Promise<string> {
  const dir = await tempFiles({});
  await git(dir, "init", "-q");
  for (const [i, files] of commits.entries()) {
    for (const [name, content] of Object.entries(files)) {
      await Deno.writeTextFile(
        `${dir}/${name}`,
        typeof content === "string" ? content : stringify(content),
      );
    }
    await git(dir, "add", "-A");
    await git(dir, "commit", "-q", "-m", `commit ${i}`);
  }
  return dir;
}

const str = { type: "string" };
const crd = (extra: unknown[] = []) =>
  schemaDocument("CRD", "Thing", "things", [
    { name: "v1", served: true, storage: false, schema: specSchema({ p: str, q: str }) },
    { name: "v2", served: true, storage: true, schema: specSchema({ a: str, b: str }) },
    ...extra,
  ]);
const rename = (hubPath: string, spokePath: string) => ({
  strategy: "FieldRename",
  fieldRename: { hubPath, spokePath },
});
const config = (rules: unknown[]) =>
  conversionConfig("CRD", "things-conversion", "things.demo.example.com", {
    hubVersion: "v2",
    spokes: [{ version: "v1", rules }],
  });
const GOOD = config([rename("spec.a", "spec.p"), rename("spec.b", "spec.q")]);

async function compat(dir: string, ...args: string[]) {
  return await convctl(
    "compat",
    "--base",
    "HEAD~1",
    "--head",
    "HEAD",
    "-c",
    `${dir}/config.yaml`,
    "--crd",
    `${dir}/crd.yaml`,
    ...args,
  );
}

Deno.test("compat: a removed rule is breaking (exit 1) until its classes are allowed", async () => {
  const dir = await repo(
    { "config.yaml": GOOD, "crd.yaml": crd() },
    { "config.yaml": config([rename("spec.a", "spec.p")]) },
  );
  const r = await compat(dir, "-o", "json");
  assert.equal(r.code, 1, r.stderr);
  const report = JSON.parse(r.stdout);
  assert.deepEqual(
    report.findings.map((f: { class: string; severity: string }) => `${f.severity} ${f.class}`),
    [
      "breaking LosslessToLossy",
      "breaking LosslessToLossy",
      "breaking CoverageLost",
      "breaking CoverageLost",
      "breaking RuleRemoved",
    ],
  );
  assert.equal(report.notes.length, 1);
  assert.match(report.notes[0], /^head \(HEAD\) does not analyse cleanly: \[spoke v1\] /);

  const allowed = await compat(
    dir,
    "--allow",
    "LosslessToLossy,CoverageLost",
    "--allow",
    "RuleRemoved",
  );
  assert.equal(allowed.code, 0, allowed.stdout);
  assert.match(
    allowed.stdout,
    /^breaking \(allowed\) +RuleRemoved +v1 +FieldRename spec\.b ↔ spec\.q removed$/m,
  );
  assert.match(allowed.stdout, /^ALLOWED: CoverageLost \(2 finding\(s\)\)$/m);
  assert.match(allowed.stdout, /^SUMMARY: 0 breaking, 0 review, 0 safe \(5 acknowledged\)$/m);
});

Deno.test("compat: swapped renames, strategy changes, new and removed versions", async () => {
  const version = (name: string, served: boolean) => ({
    name,
    served,
    storage: false,
    schema: specSchema({ a: str, b: str }),
  });
  const dir = await repo(
    { "config.yaml": GOOD, "crd.yaml": crd([version("v0", true)]) },
    {
      "config.yaml": config([rename("spec.a", "spec.q"), rename("spec.b", "spec.p")]),
      "crd.yaml": crd([version("v0", false), version("v3", true)]),
    },
  );
  const r = await compat(dir, "-o", "markdown");
  assert.equal(r.code, 1, r.stderr);
  assert.equal(
    r.stdout,
    [
      "### CRD compatibility: `things.demo.example.com`",
      "",
      "`HEAD~1` → `HEAD`",
      "",
      "| Severity | Class | Version | Change |",
      "| --- | --- | --- | --- |",
      "| breaking | ServedVersionRemoved | v0 | v0 no longer served |",
      "| review | MappingChanged | v1 | FieldRename spec.a ↔ spec.p rewired |",
      "| review | MappingChanged | v1 | FieldRename spec.b ↔ spec.q rewired |",
      "| safe | NewVersion | v3 | v3 added |",
      "",
      "**SUMMARY: 1 breaking, 2 review, 1 safe**",
      "",
    ].join("\n"),
  );
  assert.equal((await compat(dir, "-o", "markdown")).stdout, r.stdout, "byte-stable");

  const changed = await repo(
    { "config.yaml": GOOD, "crd.yaml": crd() },
    {
      "config.yaml": config([
        { strategy: "Quantity", quantity: { hubPath: "spec.a", spokePath: "spec.p" } },
        rename("spec.b", "spec.q"),
      ]),
    },
  );
  const json = JSON.parse((await compat(changed, "-o", "json")).stdout);
  assert.deepEqual(json.findings.filter((f: { class: string }) => f.class === "StrategyChanged"), [{
    class: "StrategyChanged",
    severity: "review",
    version: "v1",
    detail: "FieldRename → Quantity on spec.a,spec.p",
    acknowledged: false,
  }]);
});

Deno.test("compat: a hub promotion is HubChanged, not a removed or new spoke", async () => {
  const promoted = schemaDocument("CRD", "Thing", "things", [
    { name: "v1", served: true, storage: true, schema: specSchema({ p: str, q: str }) },
    { name: "v2", served: true, storage: false, schema: specSchema({ a: str, b: str }) },
  ]);
  const rehubbed = conversionConfig("CRD", "things-conversion", "things.demo.example.com", {
    hubVersion: "v1",
    spokes: [{ version: "v2", rules: [rename("spec.p", "spec.a"), rename("spec.q", "spec.b")] }],
  });
  const dir = await repo(
    { "config.yaml": GOOD, "crd.yaml": crd() },
    { "config.yaml": rehubbed, "crd.yaml": promoted },
  );
  const r = await compat(dir, "-o", "json");
  assert.equal(r.code, 1, r.stderr);
  const report = JSON.parse(r.stdout);
  assert.deepEqual(report.notes, []);
  assert.deepEqual(report.findings, [{
    class: "HubChanged",
    severity: "breaking",
    version: "",
    detail: "hub v2 → v1",
    acknowledged: false,
  }]);
  assert.equal((await compat(dir, "--allow", "HubChanged")).code, 0);
});

Deno.test("compat: without --allow-run=git the error names the permission", async () => {
  const dir = await repo({ "config.yaml": GOOD, "crd.yaml": crd() }, { "README": "x" });
  const r = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--quiet",
      "--allow-read",
      "--allow-env",
      "--no-prompt",
      "src/main/convctl.ts",
      "compat",
      "--base",
      "HEAD~1",
      "--head",
      "HEAD",
      "-c",
      `${dir}/config.yaml`,
      "--crd",
      `${dir}/crd.yaml`,
    ],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(r.code, 2);
  assert.equal(
    new TextDecoder().decode(r.stderr),
    "error: reading git revisions needs the permission --allow-run=git\n",
  );
});

Deno.test("compat: no changes is exit 0", async () => {
  const dir = await repo({ "config.yaml": GOOD, "crd.yaml": crd() }, { "README": "x" });
  const r = await compat(dir);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^no differences$/m);
});

Deno.test("compat: bad input is a one-line error and exit 2", async () => {
  const dir = await repo({ "config.yaml": GOOD, "crd.yaml": crd() }, { "README": "x" });
  const run = (...args: string[]) =>
    convctl("compat", "-c", `${dir}/config.yaml`, "--crd", `${dir}/crd.yaml`, ...args);
  assertToolError(
    await run("--base", "no-such-rev", "--head", "HEAD"),
    /^error: cannot read .*config\.yaml at revision no-such-rev: fatal: /,
  );
  assertToolError(await run("--head", "HEAD"), "required flag(s) --base not set");
  assertToolError(
    await run("--base", "HEAD~1", "--head", "HEAD", "--allow", "Whatever"),
    /^error: invalid value "Whatever" for --allow: must be one of HubChanged, /,
  );
  const late = await repo({ "crd.yaml": crd() }, { "config.yaml": GOOD });
  assertToolError(
    await convctl(
      "compat",
      "--base",
      "HEAD~1",
      "--head",
      "HEAD",
      "-c",
      `${late}/config.yaml`,
      "--crd",
      `${late}/crd.yaml`,
    ),
    /^error: cannot read .*config\.yaml at revision HEAD~1: fatal: /,
  );
  const broken = await repo({ "config.yaml": GOOD, "crd.yaml": crd() }, {
    "config.yaml": "kind: [",
  });
  assertToolError(
    await convctl(
      "compat",
      "--base",
      "HEAD~1",
      "--head",
      "HEAD",
      "-c",
      `${broken}/config.yaml`,
      "--crd",
      `${broken}/crd.yaml`,
    ),
    /^error: HEAD:.*config\.yaml:\d+:\d+: /,
  );
});
