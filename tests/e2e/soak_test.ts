/**
 * A short soak in the suite: hack/e2e_soak.ts for 30 s with 2 rollout restarts of the
 * webhook-server Deployment (one replica, so a restart is a surge Pod and a drain) (real Pods on the test kubelet, behind their Service), checked through
 * its result JSON: a clean self-check, 0 failed reads or writes and 0 wrong values over ≥ 100 of
 * each, both restarts rolled out, samples of RSS, heap, event-loop lag and open fds from the
 * replicas, and the leak rule applied to each of them (3 s windows after a 5 s warm-up; too short
 * a life for a verdict, so not required here). The nightly soak (8 minutes and 4 restarts, then a
 * 4 minute hold for the leak verdict) runs from .github/workflows/soak.yml.
 */
import assert from "node:assert/strict";
import { SoakResultSchema } from "../../hack/soak/result.ts";

const SCRIPT = new URL("../../hack/e2e_soak.ts", import.meta.url).pathname;

Deno.test({
  name: "soak: reads and writes through 2 rollout restarts, 0 failed, 0 wrong, heap sampled",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "dco-soak-" });
    try {
      const out = `${dir}/soak-result.json`;
      const run = await new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          "--allow-all",
          SCRIPT,
          "--duration=30",
          "--restarts=2",
          "--replicas=1",
          "--hold=0",
          "--sample-interval=1",
          "--leak-warmup=5",
          "--leak-window=3",
          "--require-leak-verdict=false",
          `--out=${out}`,
        ],
        stdout: "piped",
        stderr: "piped",
        env: { NO_COLOR: "1" },
      }).output();
      const stdout = new TextDecoder().decode(run.stdout);
      const stderr = new TextDecoder().decode(run.stderr);
      console.log(stdout.split("\n").filter((l) => !l.startsWith("  ")).join("\n"));
      const text = await Deno.readTextFile(out).catch(() => undefined);
      assert.ok(
        text,
        `no result (exit ${run.code}):\n${stdout.slice(-3000)}\n${stderr.slice(-3000)}`,
      );
      const r = SoakResultSchema.parse(JSON.parse(text));

      assert.equal(r.selfCheck.failedReads + r.selfCheck.failedWrites, 0, "self-check clean");
      assert.equal(r.selfCheck.wrongValues, 0);
      assert.equal(r.traffic.failedReads, 0, r.traffic.errorSamples.join("\n"));
      assert.equal(r.traffic.failedWrites, 0, r.traffic.errorSamples.join("\n"));
      assert.equal(r.traffic.wrongValues, 0, r.traffic.errorSamples.join("\n"));
      assert.ok(r.traffic.reads >= 100, `${r.traffic.reads} reads`);
      assert.ok(r.traffic.writes >= 100, `${r.traffic.writes} writes`);
      assert.ok(r.traffic.lists > 0, "lists at v2");
      assert.equal(r.restarts.length, 2, "both restarts rolled out");

      // Samples from the replicas of every generation (the first may end before t = 0).
      assert.ok(r.summary.replicasSampled >= 2, `${r.summary.replicasSampled} replicas sampled`);
      for (const s of r.samples) {
        assert.ok(s.rssBytes > 0 && s.heapUsedBytes > 0 && s.heapTotalBytes >= s.heapUsedBytes);
        assert.ok(s.openFds !== null && s.openFds > 0, `open fds of ${s.pod}`);
      }
      assert.ok(r.summary.eventLoopLagSeconds.max >= r.summary.eventLoopLagSeconds.p50);

      // The leak rule ran over every sampled replica with the run's parameters. No replica of a
      // 30 s run lives through a full collection (the first comes after about two minutes here),
      // so none can be judged; the nightly soak's hold is what gives it a verdict.
      assert.deepEqual(r.leak.rule, {
        warmupSeconds: 5,
        windowSeconds: 3,
        dropFraction: 0.15,
        minSpanSeconds: 60,
        maxSlopeBytesPerSecond: 16 * 1024,
      });
      assert.equal(r.leakVerdictRequired, false);
      assert.equal(r.leak.replicas.length, new Set(r.samples.map((s) => s.pod)).size);
      assert.ok(r.leak.replicas.some((x) => x.windows >= 3), JSON.stringify(r.leak.replicas));
      assert.ok(r.leak.replicas.every((x) => !x.leaking));
      assert.deepEqual(r.problems, [], stderr.slice(-3000));
      assert.equal(run.code, 0);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
