/**
 * Fleet mode's pieces without a cluster: which clusters `--contexts` / `--kubeconfig-dir` name,
 * how one failing cluster is isolated, the fleet exit code and its JSON/JUnit/table shapes; and
 * the streaming sample selector that bounds `--live` against the directory one.
 */
import assert from "node:assert/strict";
import { parseFlags } from "../../src/cli/args.ts";
import {
  fleetExitCode,
  type FleetReport,
  fleetTargets,
  renderFleetJunit,
  renderFleetTable,
  runFleet,
} from "../../src/cli/fleet.ts";
import { testCommand } from "../../src/cli/test.ts";
import type { TestReport } from "../../src/cli/test_report.ts";
import { SampleSelector } from "../../src/cli/test_run.ts";
import { createRng } from "../../src/engine/generate_rng.ts";
import { convctl, FIELD_RENAME } from "./_convctl.ts";

const flagsOf = (...args: string[]) => parseFlags(args, testCommand.spec.flags);

Deno.test("fleet targets: --contexts, --kubeconfig-dir, and both", async () => {
  assert.deepEqual(await fleetTargets(flagsOf("--live", "--context", "a")), [
    { kubeconfig: undefined, context: "a" },
  ]);
  assert.deepEqual(await fleetTargets(flagsOf("--kubeconfig", "k", "--contexts", "a,b")), [
    { kubeconfig: "k", context: "a" },
    { kubeconfig: "k", context: "b" },
  ]);
  const dir = await Deno.makeTempDir();
  for (const f of ["prod", "dev", ".hidden", "README", "notes.md"]) {
    await Deno.writeTextFile(`${dir}/${f}`, "");
  }
  await Deno.mkdir(`${dir}/sub`);
  assert.deepEqual(await fleetTargets(flagsOf("--kubeconfig-dir", dir)), [
    { kubeconfig: `${dir}/dev`, name: "dev" },
    { kubeconfig: `${dir}/prod`, name: "prod" },
  ]);
  assert.deepEqual(
    (await fleetTargets(flagsOf("--kubeconfig-dir", dir, "--contexts", "x,y"))).map((t) => t.name),
    ["dev:x", "dev:y", "prod:x", "prod:y"],
  );
  const empty = await Deno.makeTempDir();
  await assert.rejects(fleetTargets(flagsOf("--kubeconfig-dir", empty)), /no kubeconfig files/);
  await assert.rejects(fleetTargets(flagsOf("--contexts", "")), /empty context name/);
});

function report(unacknowledgedLoss: number): TestReport {
  return {
    meta: {
      resourceKind: "CRD",
      resource: "widgets.demo.example.com",
      config: "widgets-conversion",
      hubVersion: "v2",
      servedVersions: ["v1", "v2"],
      generatedAt: "2026-01-01T00:00:00Z",
      durationMs: 1,
    },
    summary: {
      samples: 1,
      pathsTested: 1,
      pass: 1 - unacknowledgedLoss,
      acknowledgedLoss: 0,
      unacknowledgedLoss,
      errors: 0,
    },
    samples: [{
      file: "cluster:default/w@v1",
      assertedVersion: "v1",
      paths: [{
        from: "v1",
        to: "v2",
        result: unacknowledgedLoss > 0 ? "fail" : "pass",
        timingMicros: 5,
        fieldsConverted: 3,
      }],
    }],
  };
}

Deno.test("runFleet: a failing cluster records its error, the others still run, in order", async () => {
  let running = 0, most = 0;
  const targets = ["a", "b", "c", "d", "e", "f"].map((context) => ({ context }));
  const done: string[] = [];
  const fleet = await runFleet(targets, async (target) => {
    most = Math.max(most, ++running);
    await Promise.resolve();
    running--;
    if (target.context === "c") throw new Error("cluster c: unreachable");
    return report(0);
  }, (c) => done.push(c.label));
  assert.deepEqual(fleet.clusters.map((c) => c.label), ["a", "b", "c", "d", "e", "f"]);
  assert.equal(fleet.clusters[2].error, "cluster c: unreachable");
  assert.equal(fleet.clusters[2].report, undefined);
  assert.equal(done.length, 6);
  assert.ok(most <= 4, `at most 4 clusters at once (saw ${most})`);
  assert.equal(
    fleetExitCode(fleet, "none", false),
    1,
    "an errored cluster fails whatever --fail-on",
  );
});

Deno.test("fleet exit code and renderings", () => {
  const healthy: FleetReport = { clusters: [{ label: "a", report: report(0) }] };
  assert.equal(fleetExitCode(healthy, "loss", false), 0);
  const lossy: FleetReport = {
    clusters: [{ label: "a", report: report(0) }, { label: "b", report: report(1) }, {
      label: "c",
      error: "cluster c: unreachable",
    }],
  };
  assert.equal(fleetExitCode({ clusters: lossy.clusters.slice(0, 2) }, "loss", false), 1);
  assert.equal(fleetExitCode({ clusters: lossy.clusters.slice(0, 2) }, "none", false), 0);

  const table = renderFleetTable(lossy);
  assert.match(table, /^=== a ===\nCRD Conversion Test Report$/m);
  assert.match(table, /^=== c ===\nERROR: cluster c: unreachable$/m);
  assert.match(table, /\nFLEET: 3 clusters, 2 failed\n$/);

  const junit = renderFleetJunit(lossy);
  assert.match(
    junit,
    /^<testsuites name="convctl fleet" tests="3" failures="1" errors="1" time="0\.002000">$/m,
  );
  assert.match(junit, /<testsuite name="b\/CRD\/widgets\.demo\.example\.com" tests="1"/);
  assert.match(junit, /classname="a\.widgets-conversion\.v2"/);
  assert.match(
    junit,
    /<testsuite name="c" tests="1" failures="0" errors="1" time="0\.000000">\n\s+<testcase name="c: cluster" classname="c" time="0\.000000">\n\s+<error message="cluster error">cluster c: unreachable<\/error>/,
  );
  assert.equal(junit.match(/<testsuites /g)?.length, 1);
});

/** The whole-population selection, written out plainly: the reference the streaming one meets. */
function naiveSelection(
  population: { object: { metadata: { name: string; creationTimestamp: string } } }[],
  max: number,
  strategy: "first" | "random" | "newest",
  seed: number,
): string[] {
  let kept: number[];
  if (strategy === "first") kept = population.slice(0, max).map((_, i) => i);
  else if (strategy === "random") {
    const rng = createRng(`sample/${seed}`);
    kept = [];
    population.forEach((_, i) => {
      if (i < max) kept.push(i);
      else {
        const j = rng.int(0, i);
        if (j < max) kept[j] = i;
      }
    });
  } else {
    const created = (i: number) => Date.parse(population[i].object.metadata.creationTimestamp);
    kept = population.map((_, i) => i).sort((a, b) => created(b) - created(a) || a - b)
      .slice(0, max);
  }
  return kept.sort((a, b) => a - b).map((i) => population[i].object.metadata.name);
}

Deno.test("SampleSelector offered one by one keeps what a whole-population selection keeps", () => {
  const population = Array.from({ length: 37 }, (_, i) => ({
    object: {
      metadata: {
        name: `o${i}`,
        creationTimestamp: new Date(Date.UTC(2026, 0, 1 + ((i * 7) % 11))).toISOString(),
      },
    },
  }));
  for (const strategy of ["first", "random", "newest"] as const) {
    for (const seed of [1, 7]) {
      const selector = new SampleSelector<(typeof population)[number]>(
        5,
        strategy,
        seed,
        (t) => t.object,
      );
      for (const t of population) if (!selector.full) selector.offer(t);
      assert.deepEqual(
        selector.kept().map((t) => t.object.metadata.name),
        naiveSelection(population, 5, strategy, seed),
        `${strategy} seed ${seed}`,
      );
    }
  }
});

Deno.test("test --live: setup errors name the cluster; cluster flags need --live", async () => {
  const missing = await convctl(
    "test",
    ...FIELD_RENAME.flags,
    "--live",
    "--kubeconfig",
    "/nonexistent/kubeconfig",
  );
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /^error: cluster \/nonexistent\/kubeconfig: /);
  const namespace = await convctl(
    "test",
    ...FIELD_RENAME.flags,
    "-s",
    FIELD_RENAME.samples,
    "--namespace",
    "x",
  );
  assert.equal(namespace.stderr, "error: --namespace requires --live\n");
});
