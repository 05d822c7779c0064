import assert from "node:assert/strict";
import { engineSpecOf } from "../../src/api/mod.ts";
import { analyze } from "../../src/engine/mod.ts";
import { loadConfig, loadSamples, loadSchema } from "../../src/cli/load.ts";
import { effectiveConcurrency, gradeSamples } from "../../src/cli/test_parallel.ts";
import { createSampleTester, type TestRunOptions } from "../../src/cli/test_run.ts";
import { FIELD_RENAME } from "./_convctl.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

Deno.test("--concurrency: ≤0 means #CPUs, clamped to [1, samples]", () => {
  assert.equal(effectiveConcurrency(0, 10, 4), 4);
  assert.equal(effectiveConcurrency(-3, 10, 4), 4);
  assert.equal(effectiveConcurrency(8, 3, 4), 3);
  assert.equal(effectiveConcurrency(2, 0, 4), 1);
});

Deno.test("gradeSamples: Workers grade every sample (none falls back), outcomes in input order", async () => {
  const config = await loadConfig(`${ROOT}${FIELD_RENAME.config}`);
  const { source } = await loadSchema(config.kind, `${ROOT}${FIELD_RENAME.crd}`);
  const spec = engineSpecOf(config.config);
  const samples = await loadSamples(`${ROOT}${FIELD_RENAME.samples}`, source);
  const many = Array.from(
    { length: 6 },
    (_, i) => ({ ...samples[i % samples.length], name: `s${i}` }),
  );
  const served = source.versions.filter((v) => v.served).map((v) => v.name);
  const options: TestRunOptions = { versionPairs: [], skipIdentity: false, validateOutput: true };
  const local = createSampleTester(analyze(source, spec), source, served, options);
  const inThread: string[] = [];
  const progress: number[] = [];
  const outcomes = await gradeSamples(
    { source, spec, served, options },
    many,
    3,
    (s) => {
      inThread.push(s.name);
      return local(s);
    },
    (done) => progress.push(done),
  );
  assert.deepEqual(inThread, [], "every sample was graded in a Worker");
  assert.deepEqual(outcomes.map((o) => o.sample.file), many.map((s) => s.name));
  assert.deepEqual(progress, [1, 2, 3, 4, 5, 6]);
  const strip = (o: (typeof outcomes)[number]) => ({
    ...o,
    sample: { ...o.sample, paths: o.sample.paths.map((p) => ({ ...p, timingMicros: 0 })) },
  });
  assert.deepEqual(outcomes.map(strip), many.map((s) => strip(local(s))));
});
