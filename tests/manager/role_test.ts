/**
 * The role runtime both mains run on (src/main/_role.ts): readiness false first, components in
 * reverse order of registration, one deadline for the whole stop, the exit code of the shutdown
 * request. Runs a small role as a child process and signals it.
 */
import assert from "node:assert/strict";

const FIXTURE = new URL("./testdata/role_fixture.ts", import.meta.url).pathname;

async function runRole(mode: string, signal?: Deno.Signal) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-env", FIXTURE, mode],
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).spawn();
  const decoder = new TextDecoder();
  let out = "";
  const reader = child.stdout.getReader();
  while (!out.includes("started\n")) {
    const { value, done } = await reader.read();
    if (done) break;
    out += decoder.decode(value);
  }
  const signalled = performance.now();
  if (signal) child.kill(signal);
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    out += decoder.decode(value);
  }
  const [status, stderr] = await Promise.all([child.status, new Response(child.stderr).text()]);
  return {
    code: status.code,
    lines: out.trim().split("\n"),
    stderr,
    stopMs: performance.now() - signalled,
  };
}

Deno.test("SIGTERM: readiness false first, then the components in reverse order, exit 0", async () => {
  const r = await runRole("", "SIGTERM");
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(r.lines, ["started", "stop c ready=false", "stop b", "stop a"]);
  assert.match(r.stderr, /shutting down/);
  assert.match(r.stderr, /received SIGTERM/);
});

Deno.test("a shutdown request decides the exit code (a lost leader election exits 1)", async () => {
  const r = await runRole("lost");
  assert.equal(r.code, 1, r.stderr);
  assert.deepEqual(r.lines, ["started", "stop c ready=false", "stop b", "stop a"]);
});

Deno.test("one deadline: a component that never stops holds the rest only until it", async () => {
  const r = await runRole("hang", "SIGTERM");
  assert.equal(r.code, 0, r.stderr);
  // b's stop is asynchronous and past the deadline, so it is told to stop but not waited for;
  // a's is synchronous and still runs.
  assert.deepEqual(r.lines, ["started", "stop c ready=false", "stop a"]);
  assert.match(r.stderr, /shutdown deadline passed while stopping/);
  assert.ok(r.stopMs >= 450 && r.stopMs < 5_000, `stopped after ${Math.round(r.stopMs)} ms`);
});
