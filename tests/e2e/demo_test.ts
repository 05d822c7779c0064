/**
 * `deno task demo`, run as users run it (a subprocess of `deno task`): the live story on a local
 * control plane with `--once` — the default example and the native-CRD stashing story — exits 0
 * and shows the converted values; the XRD story explains why it does not run live; `--offline`
 * runs the engine over every example.
 */
import assert from "node:assert/strict";
import { resolveAssets } from "../support/control_plane.ts";

const REPO = new URL("../../", import.meta.url).pathname;

async function demo(...args: string[]): Promise<{ code: number; out: string }> {
  const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args: ["task", "-q", "demo", ...args],
    cwd: REPO,
    env: { NO_COLOR: "1", RUST_BACKTRACE: "0" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { code, out: dec.decode(stdout) + dec.decode(stderr) };
}

Deno.test({
  name: "demo --once: the default story converts on read through the webhook server",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    await resolveAssets(); // builds or reuses the binaries first, with its own error
    const { code, out } = await demo("--once");
    assert.equal(code, 0, out);
    // Created at v1 with storageSize, read at v2 as storageGB (and the reverse).
    assert.match(out, /storageSize: 20 +│ +storageGB: 20/);
    assert.match(out, /storageGB: 500 +│ +storageSize: 500/);
    assert.match(out, /phase Applied/);
    assert.match(out, /Available +True/);
    assert.match(out, /every sample read at every version through the apiserver matches/);
    assert.doesNotMatch(out, /✗/);
  },
});

Deno.test({
  name: "demo --once --example annotation-stash: hub-only fields stashed and restored live",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    await resolveAssets();
    const { code, out } = await demo("--once", "--example", "annotation-stash");
    assert.equal(code, 0, out);
    // The v2 object read at v1: its maintenance window and owner are in annotations.
    assert.match(out, /sessions-v2\.yaml: caches\/\w+, created at v2/);
    assert.match(out, /demo\.example\.com\/maintenance-window: '\{"day":"Sunday","startHour":3\}'/);
    assert.match(out, /demo\.example\.com\/owner: team-web@example\.com/);
    assert.match(out, /every sample read at every version through the apiserver matches/);
    assert.doesNotMatch(out, /✗/);
  },
});

Deno.test("demo --example <an XRD story>: says why it cannot run live (exit 2)", async () => {
  const { code, out } = await demo("--once", "--example", "xrd-hub-promotion");
  assert.equal(code, 2, out);
  assert.match(out, /Crossplane/);
  assert.match(out, /deno task demo --offline --example xrd-hub-promotion/);
});

Deno.test("demo --offline: the engine over every example, exit 0", async () => {
  const { code, out } = await demo("--offline");
  assert.equal(code, 0, out);
  assert.match(out, /all \d+ example\(s\) validate, convert and round-trip as declared/);
  assert.match(out, /━━ xrd-hub-promotion/);
});

Deno.test("demo: an unknown example or argument is a usage error (exit 2)", async () => {
  const a = await demo("--example", "nope");
  assert.equal(a.code, 2, a.out);
  assert.match(a.out, /no example "nope"; the examples are: field-rename, enum-remap/);
  const b = await demo("--bogus");
  assert.equal(b.code, 2, b.out);
  assert.match(b.out, /usage: deno task demo/);
});
