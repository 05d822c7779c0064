import assert from "node:assert/strict";
import { CliError, type FlagSpec, parseFlags } from "../../src/cli/args.ts";

const FLAGS: FlagSpec[] = [
  { name: "config", short: "c", kind: "string", help: "" },
  { name: "strict", kind: "bool", help: "" },
  { name: "version-pair", kind: "list", help: "" },
];

Deno.test("args: every value spelling of a string flag", () => {
  for (const args of [["-c", "x"], ["-c=x"], ["-cx"], ["--config", "x"], ["--config=x"]]) {
    assert.equal(parseFlags(args, FLAGS).string("config"), "x", args.join(" "));
  }
  // The last occurrence wins; a value may start with a dash.
  assert.equal(parseFlags(["-c", "a", "--config", "-b"], FLAGS).string("config"), "-b");
});

Deno.test("args: booleans, lists, positionals and --", () => {
  const f = parseFlags(
    ["--strict=false", "--version-pair", "v1:v2,v3", "--version-pair=v4", "pos", "--", "-c"],
    FLAGS,
  );
  assert.equal(f.bool("strict"), false);
  assert.equal(f.has("strict"), true);
  assert.deepEqual(f.list("version-pair"), ["v1:v2", "v3", "v4"]);
  assert.deepEqual(f.positionals, ["pos", "-c"]);
  assert.equal(f.has("config"), false);
  assert.equal(parseFlags(["--strict"], FLAGS).bool("strict"), true);
});

Deno.test("args: errors", () => {
  assert.throws(() => parseFlags(["--nope"], FLAGS), new CliError("unknown flag: --nope"));
  assert.throws(
    () => parseFlags(["--config"], FLAGS),
    new CliError("flag needs an argument: --config"),
  );
  assert.throws(() => parseFlags(["--strict=maybe"], FLAGS), CliError);
  assert.equal(parseFlags(["-h"], FLAGS).bool("help"), true);
});
