import assert from "node:assert/strict";
import { assertToolError, convctl } from "./_convctl.ts";

Deno.test("version prints dev", async () => {
  const r = await convctl("version");
  assert.equal(r.code, 0);
  assert.equal(r.stdout, "dev\n");
  assert.equal(r.stderr, "");
});

Deno.test("version -o table|json: the build information", async () => {
  const json = await convctl("version", "-o", "json");
  assert.equal(json.code, 0, json.stderr);
  const info = JSON.parse(json.stdout);
  assert.deepEqual(Object.keys(info), ["version", "commit", "deno", "v8", "typescript", "target"]);
  assert.equal(info.version, "dev");
  assert.equal(info.commit, "unknown");
  assert.equal(info.deno, Deno.version.deno);
  assert.equal(info.target, Deno.build.target);
  const table = await convctl("version", "-o", "table");
  assert.equal(table.code, 0);
  assert.match(table.stdout, /^version: +dev\ncommit: +unknown\ndeno: +\S+\nv8: +\S+\n/);
  assertToolError(
    await convctl("version", "-o", "yaml"),
    'unknown output format "yaml" (use short|table|json)',
  );
});

Deno.test("no subcommand prints help and exits 0", async () => {
  const r = await convctl();
  assert.equal(r.code, 0);
  assert.match(r.stdout, /^Usage:\n {2}convctl <command> \[flags\]$/m);
  const commands = [
    "validate",
    "analyze",
    "test",
    "convert",
    "suggest",
    "generate",
    "patch-preview",
    "lint",
    "completion",
    "version",
  ];
  commands.push("diff", "rehub", "plan", "versions", "compat", "retarget");
  for (const command of commands) {
    assert.match(r.stdout, new RegExp(`^ {2}${command} +\\S`, "m"));
  }
});

Deno.test("command help lists the flags with short and long forms", async () => {
  const r = await convctl("test", "--help");
  assert.equal(r.code, 0);
  assert.match(r.stdout, /^ {2}-c, --config FILE +/m);
  assert.match(r.stdout, /^ {2}-s, --samples DIR +/m);
  assert.match(r.stdout, /^ {2}--fail-on LEVEL +none, warn or loss \(default loss\)$/m);
  assert.equal((await convctl("help", "convert")).stdout, (await convctl("convert", "-h")).stdout);
});

Deno.test("unknown commands, subcommands and flags exit 2", async () => {
  const unknown = await convctl("frobnicate");
  assertToolError(unknown, 'unknown command "frobnicate" for "convctl" (run "convctl help")');
  assert.equal(unknown.stdout, "");
  const typo = await convctl("valdate");
  assertToolError(
    typo,
    'unknown command "valdate" for "convctl" (did you mean "validate"?) (run "convctl help")',
  );

  const subcommand = await convctl("crossplane", "foo");
  assertToolError(subcommand, 'unknown subcommand "foo" for "convctl crossplane" (use status)');

  const flag = await convctl("version", "--verbose");
  assertToolError(flag, "unknown flag: --verbose");
  const flagTypo = await convctl("convert", "--sampel", "x");
  assertToolError(flagTypo, "unknown flag: --sampel (did you mean --sample?)");

  const shorthand = await convctl("validate", "-z");
  assertToolError(shorthand, 'unknown shorthand flag: "z" in -z');

  const missing = await convctl("validate", "-c");
  assertToolError(missing, 'flag needs an argument: "c" in -c');

  const extra = await convctl("version", "now");
  assertToolError(extra, 'unexpected argument "now" for "convctl version"');
});
