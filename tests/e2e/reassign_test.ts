/**
 * Runs hack/e2e-reassign.ts (two instances, real webhook-server Pods, sustained reads and writes
 * through the apiserver, three verified moves, a crash during a fourth) as part of the suite and
 * checks its summary: ≥ 20 000 requests, no failure or wrong value over the three moves, every
 * move verified by the handover gate, placement by the hash, and the pool rule enforced.
 */
import assert from "node:assert/strict";

const SCRIPT = new URL("../../hack/e2e-reassign.ts", import.meta.url).pathname;

Deno.test({
  name: "reassignment under load: three verified moves, zero failed requests",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--allow-all", SCRIPT, "--min-requests=20000"],
      stdout: "piped",
      stderr: "piped",
      env: { NO_COLOR: "1" },
    }).output();
    const stdout = new TextDecoder().decode(out.stdout);
    const stderr = new TextDecoder().decode(out.stderr);
    const progress = stdout.split("\n").filter((l) => l.startsWith("[reassign")).join("\n");
    console.log(progress);
    const line = stdout.split("\n").find((l) => l.startsWith("reassign-summary "));
    assert.ok(
      line,
      `no summary (exit ${out.code}):\n${stdout.slice(-3000)}\n${stderr.slice(-3000)}`,
    );
    const summary = JSON.parse(line.slice("reassign-summary ".length));
    assert.deepEqual(summary.problems, [], stderr.slice(-3000));
    assert.equal(out.code, 0);
    assert.ok(summary.requests >= 20_000, `${summary.requests} requests`);
    assert.equal(summary.failuresBeforeKill, 0);
    assert.equal(summary.wrong, 0);
    assert.deepEqual(
      summary.moves.map((m: { move: string; verdict: string }) => m.verdict),
      ["True/HandoverReady", "True/HandoverReady", "True/HandoverReady", "True/HandoverReady"],
    );
    assert.ok(summary.killPhase.restartCount >= 1, "the killed replica was restarted");
  },
});
