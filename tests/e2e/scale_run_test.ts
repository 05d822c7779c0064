/**
 * A small scale envelope end to end on the real stack (kube-apiserver + etcd +
 * kube-controller-manager, the manager, two webhook-server Pods on the test kubelet behind their
 * Service): generate → apply → configs Applied → create the instances → roll the webhook-server
 * Deployment (cold start against the fleet) → List/Get at v1 and v2, every read converted by the
 * Pods → observe the replicas → result JSON → `hack/scale_report.ts` against a baseline recorded
 * from a real run of the same envelope (tests/hack/fixtures/scale/suite-baseline.json, written by
 * `hack/e2e_scale.ts` with the flags below). Asserts zero errors and a comparable report; how fast
 * it was is the report's business, not this test's.
 */
import assert from "node:assert/strict";
import { e2eTest } from "../support/control_plane.ts";
import { parseScaleResult } from "../../hack/scale/result.ts";
import { scaleRun } from "../../hack/scale/scale_run.ts";
import { scaleKubelet, startScaleStack } from "../../hack/scale/stack.ts";

const REPO = new URL("../../", import.meta.url).pathname;
const BASELINE = `${REPO}tests/hack/fixtures/scale/suite-baseline.json`;

/** The envelope; `hack/e2e_scale.ts --targets 3 --instances 4 --parallel 4 --list-repeats 2`. */
const ENVELOPE = {
  targets: 3,
  instances: 4,
  strategiesMin: 3,
  strategiesMax: 10,
  seed: 1,
  parallel: 4,
  listRepeats: 2,
  getRepeats: 1,
  qps: 100,
  burst: 200,
};

e2eTest("scale run: a small envelope end to end, reported against a recorded run", async (cp) => {
  await using stack = await startScaleStack(cp, { replicas: 2 });
  const out = await scaleRun(cp, stack, {
    ...ENVELOPE,
    namespace: "dco-scale",
    timeoutMs: 300_000,
    log: () => {},
  });
  assert.deepEqual(out.problems, [], await stack.logs());
  const r = parseScaleResult(out.result);
  assert.equal(r.totalObjects, 12);
  const { listV1, listV2, getV1, getV2 } = r.measurements;
  assert.deepEqual(
    [listV1, listV2, getV1, getV2].map((m) => [m.n, m.errors]),
    [[6, 0], [6, 0], [12, 0], [12, 0]],
    JSON.stringify(out.errorSamples),
  );
  assert.ok(r.createMs > 0);
  assert.equal(Object.values(r.strategyCoverage).filter((n) => n > 0).length, 29);

  // The replicas after the roll: both new, each synced the whole fleet from cold.
  assert.equal(out.coldStart.length, 2);
  assert.equal(r.observed?.webhookReplicas, 2);
  assert.equal(r.observed?.webhookInitialSyncTargets, 3);
  assert.ok((r.observed?.webhookInitialSyncSeconds ?? -1) >= 0);
  assert.ok((r.observed?.webhookWorkingSetBytes ?? 0) > 16 * 2 ** 20);
  const rolled = new Set(out.coldStart.map((c) => c.pod));
  assert.deepEqual(new Set(out.replicas.map((x) => x.pod)), rolled);

  const dir = await cp.makeTempDir("scale");
  await Deno.writeTextFile(`${dir}/scale-result.json`, JSON.stringify(r, null, 2));
  const report = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-read",
      `${REPO}hack/scale_report.ts`,
      "--current",
      `${dir}/scale-result.json`,
      "--previous",
      BASELINE,
    ],
  }).output();
  const stdout = new TextDecoder().decode(report.stdout);
  const stderr = new TextDecoder().decode(report.stderr);
  assert.match(stdout, /Compared with the run recorded \S+ \(threshold 1\.50×\)/, stdout);
  assert.doesNotMatch(stdout, /Not comparable/);
  for (const label of ["listV1 p50", "getV2 p99", "createMs", "webhookInitialSyncSeconds"]) {
    assert.match(stdout, new RegExp(`\\| ${label} \\| \\d`), `${label} compared`);
  }
  // Only a timing regression may fail the report here (the suite's machine is shared); an
  // absolute failure (an error, no requests) may not.
  const absolute = stderr.split("\n").filter((l) => l.startsWith("FAIL:") && !/threshold/.test(l));
  assert.deepEqual(absolute, []);
  assert.ok(report.code === 0 || report.code === 1, stderr);
}, { kubelet: scaleKubelet() });
