/**
 * The harness must never leak: after dispose (normal or on a thrown test), after SIGINT/SIGTERM to
 * the test process and even after SIGKILL of it, no etcd/kube-apiserver of that instance is alive;
 * and its temp dir is gone (after SIGKILL, the guard shells around the binaries remove it).
 */
import assert from "node:assert/strict";
import * as k8s from "@kubernetes/client-node";
import {
  type ControlPlane,
  groupAlive,
  processesMentioning,
  startControlPlane,
  waitFor,
} from "../../support/control_plane.ts";

// These tests are about the local control plane; with an existing cluster there is none to check.
const external = Boolean(Deno.env.get("DCO_TEST_KUBECONFIG"));
const repoRoot = new URL("../../../", import.meta.url).pathname;

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return false;
    throw e;
  }
}

async function assertGone(dir: string, pgids: readonly number[], removeDir = true): Promise<void> {
  assert.deepEqual(await processesMentioning(dir), [], "no process of the instance is alive");
  for (const g of pgids) assert.equal(await groupAlive(g), false, `process group ${g} is empty`);
  if (removeDir) assert.equal(await exists(dir), false, `${dir} was removed`);
}

Deno.test({
  name: "control plane: serves the API, then dispose kills every process and removes its dir",
  ignore: external,
  fn: async () => {
    const cp = await startControlPlane({ name: "cleanup" });
    const dir = cp.dir!;
    const pgids = cp.pgids;
    try {
      assert.equal(pgids.length, 2);
      const names = (await processesMentioning(dir)).map((p) => p.cmdline).join("\n");
      assert.match(names, /etcd/);
      assert.match(names, /kube-apiserver/);
      const nsList = await cp.api(k8s.CoreV1Api).listNamespace();
      assert.ok(nsList.items.some((n) => n.metadata?.name === "default"));
      // The admin identity is cluster-admin (system:masters) and kubectl works with the kubeconfig.
      const can = await cp.kubectl("auth", "can-i", "*", "*");
      assert.equal(can.stdout.trim(), "yes", can.stderr);
    } finally {
      await cp.dispose();
    }
    await assertGone(dir, pgids);
    await cp.dispose(); // idempotent
  },
});

Deno.test({
  name: "control plane: `await using` tears down when the test body throws",
  ignore: external,
  fn: async () => {
    let seen: ControlPlane | undefined;
    await assert.rejects(async () => {
      await using cp = await startControlPlane({ name: "throwing" });
      seen = cp;
      throw new Error("boom");
    }, /boom/);
    assert.ok(seen);
    await assertGone(seen.dir!, seen.pgids);
  },
});

async function holdInChild(): Promise<{ child: Deno.ChildProcess; dir: string; pgids: number[] }> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", "tests/support/testdata/hold_control_plane.ts"],
    cwd: repoRoot,
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let buf = "";
  while (!buf.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) {
      throw new Error(
        `helper exited before reporting: ${JSON.stringify(buf)} ${(await child.status).code}`,
      );
    }
    buf += value;
  }
  await reader.cancel(); // the helper prints nothing else
  const info = JSON.parse(buf.split("\n")[0]) as { dir: string; pgids: number[] };
  assert.equal(info.pgids.length, 2);
  assert.notDeepEqual(await processesMentioning(info.dir), []);
  return { child, ...info };
}

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  Deno.test({
    name: `control plane: ${signal} to the test process cleans up and exits 130`,
    ignore: external,
    fn: async () => {
      const { child, dir, pgids } = await holdInChild();
      child.kill(signal);
      const status = await child.status;
      assert.equal(status.code, 130);
      // Killed processes can take a moment to be reaped after the holder exits (a busy machine).
      await waitFor(
        "the instance's processes to be gone",
        async () =>
          (await processesMentioning(dir)).length === 0 &&
          (await Promise.all(pgids.map(groupAlive))).every((alive) => !alive),
        { timeoutMs: 15_000 },
      );
      await assertGone(dir, pgids);
    },
  });
}

Deno.test({
  name: "control plane: SIGKILL of the test process still stops etcd and kube-apiserver",
  ignore: external,
  fn: async () => {
    const { child, dir, pgids } = await holdInChild();
    child.kill("SIGKILL");
    await child.status; // reaped, so the guards see their parent gone
    try {
      // The guard shells poll their parent every second, then stop the binaries.
      await waitFor("the guards to stop the orphaned binaries", async () => {
        return (await processesMentioning(dir)).length === 0 &&
          (await Promise.all(pgids.map(groupAlive))).every((alive) => !alive);
      }, { timeoutMs: 30_000 });
      // ... and remove the instance dir.
      await waitFor(`the guards to remove ${dir}`, async () => !await exists(dir), {
        timeoutMs: 30_000,
      });
      await assertGone(dir, pgids);
    } finally {
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  },
});

Deno.test({
  name: "control plane: restartApiServer replaces the apiserver process; dispose stops the new one",
  ignore: external,
  fn: async () => {
    const cp = await startControlPlane({ name: "restart" });
    const dir = cp.dir!;
    const before = cp.pgids;
    const core = cp.api(k8s.CoreV1Api);
    try {
      await core.createNamespace({ body: { metadata: { name: "kept-across-restart" } } });
      let servedWhileDown = true;
      await cp.restartApiServer({
        downMs: 200,
        whileDown: async () => {
          servedWhileDown = await core.readNamespace({ name: "default" }).then(
            () => true,
            () => false,
          );
        },
      });
      assert.equal(servedWhileDown, false, "nothing answers while the apiserver is down");
      const after = cp.pgids;
      assert.equal(after.length, 2);
      assert.equal(after[0], before[0], "etcd is the same process");
      assert.notEqual(after[1], before[1], "kube-apiserver is a new process");
      assert.equal(await groupAlive(before[1]), false, "the old apiserver is gone");
      // Same port, same certificates, same etcd data.
      const ns = await core.readNamespace({ name: "kept-across-restart" });
      assert.equal(ns.metadata?.name, "kept-across-restart");
    } finally {
      await cp.dispose();
    }
    await assertGone(dir, [...before, ...cp.pgids]);
  },
});
