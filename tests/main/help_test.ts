/**
 * `--help` on each role binary prints its flags and exits 0 (controller-runtime binaries do), and a
 * wrong flag still exits 1 with one line naming it.
 */
import assert from "node:assert/strict";
import { runRole as run } from "./_role_run.ts";

const ROLES = [
  { file: "manager.ts", flag: "--leader-elect" },
  { file: "webhook_server.ts", flag: "--request-timeout (default 30s)" },
];

for (const { file, flag } of ROLES) {
  Deno.test(`${file} --help prints the flags and exits 0`, async () => {
    const r = await run(file, ["--help"]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^usage: /);
    assert.ok(r.stdout.includes(flag), r.stdout);
    assert.ok(r.stdout.includes("--zap-log-level"), r.stdout);
    assert.equal(r.stderr, "");
  });

  Deno.test(`${file} with an unknown flag exits 1 naming it`, async () => {
    const r = await run(file, ["--no-such-flag"]);
    assert.equal(r.code, 1);
    assert.match(r.stdout + r.stderr, /no-such-flag/);
  });
}
