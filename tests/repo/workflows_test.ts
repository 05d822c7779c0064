/**
 * The GitHub workflows parse, are well-formed (jobs with a runner and steps, each step a `uses`
 * or a `run`, `needs` naming jobs of the workflow) and every `deno task <name>` they run exists in
 * deno.json. ci.yml runs what .ci/run runs (fmt, lint, check, the unit and e2e tests); image.yml
 * and release.yml build every role of the Dockerfile through its ROLE build arg; release.yml
 * compiles the binaries with `deno task compile` and pushes the chart.
 */
import assert from "node:assert/strict";
import { parse } from "yaml";
import { parseSoakArgs } from "../../hack/soak/flags.ts";

const REPO = new URL("../../", import.meta.url).pathname;
const DIR = `${REPO}.github/workflows`;
const ROLES = ["manager", "webhook-server", "convctl"];

// deno-lint-ignore no-explicit-any
type Obj = any;

const tasks = new Set(
  Object.keys(JSON.parse(await Deno.readTextFile(`${REPO}deno.json`)).tasks as object),
);

/** `deno task X` / `hack/deno.sh task X` in a shell script: the task names. */
function taskRefs(script: string): string[] {
  return [...script.matchAll(/\bdeno(?:\.sh)?\s+task\s+([A-Za-z0-9:_-]+)/g)].map((m) => m[1]);
}

async function workflows(): Promise<Map<string, Obj>> {
  const out = new Map<string, Obj>();
  for await (const e of Deno.readDir(DIR)) {
    if (!/\.ya?ml$/.test(e.name)) continue;
    out.set(e.name, parse(await Deno.readTextFile(`${DIR}/${e.name}`)));
  }
  return out;
}

const runs = (wf: Obj): string[] =>
  Object.values(wf.jobs as Record<string, Obj>).flatMap((j) =>
    (j.steps as Obj[]).filter((s) => s.run).map((s) => s.run as string)
  );

Deno.test("workflows: every file parses into jobs of steps that use existing deno tasks", async () => {
  const all = await workflows();
  assert.deepEqual(
    [...all.keys()].sort(),
    [
      "chart.yml",
      "ci.yml",
      "convctl-actions.yml",
      "image.yml",
      "release.yml",
      "scale.yml",
      "soak.yml",
    ],
  );
  for (const [file, wf] of all) {
    assert.equal(typeof wf.name, "string", `${file}: name`);
    assert.ok(wf.on, `${file}: triggers`);
    const jobs = wf.jobs as Record<string, Obj>;
    assert.ok(jobs && Object.keys(jobs).length > 0, `${file}: jobs`);
    for (const [id, job] of Object.entries(jobs)) {
      const where = `${file} job ${id}`;
      assert.equal(typeof job["runs-on"], "string", `${where}: runs-on`);
      assert.ok(Array.isArray(job.steps) && job.steps.length > 0, `${where}: steps`);
      for (const need of [job.needs ?? []].flat()) {
        assert.ok(need in jobs, `${where}: needs ${need}, a job of ${file}`);
      }
      for (const [i, step] of (job.steps as Obj[]).entries()) {
        assert.ok(!!step.uses !== !!step.run, `${where} step ${i}: exactly one of uses/run`);
        if (step.uses) {
          assert.match(
            step.uses,
            /^(?:[\w.-]+\/[\w./-]+@v\d+|\.\/\.github\/actions\/[\w-]+)$/,
            `${where}: ${step.uses}`,
          );
        }
        for (const t of taskRefs(step.run ?? "")) {
          assert.ok(tasks.has(t), `${where} step ${i}: deno task ${t} is not in deno.json`);
        }
      }
    }
  }
});

Deno.test("workflows: ci.yml runs .ci/run's checks and tests through the same deno tasks", async () => {
  const ci = (await workflows()).get("ci.yml");
  const script = runs(ci).join("\n");
  const used = new Set(taskRefs(script));
  for (const t of ["fmt", "lint", "check", "test:unit", "test:e2e"]) {
    assert.ok(used.has(t), `ci.yml runs deno task ${t}`);
  }
  assert.match(script, /task fmt --check/);
  assert.match(script, /deno\.sh install --frozen/);
  // .ci/run's tasks: `test` is test:unit + test:e2e (hack/test.sh).
  const ciRun = await Deno.readTextFile(`${REPO}.ci/run`);
  for (const t of taskRefs(ciRun)) {
    assert.ok(
      t === "test" ? used.has("test:unit") && used.has("test:e2e") : used.has(t),
      `.ci/run's deno task ${t} runs in ci.yml`,
    );
  }
});

Deno.test("workflows: images per role with the ROLE build arg; the release ships everything", async () => {
  const all = await workflows();
  const dockerfile = await Deno.readTextFile(`${REPO}Dockerfile`);
  for (const file of ["image.yml", "release.yml"]) {
    const wf = all.get(file);
    const jobs = Object.values(wf.jobs as Record<string, Obj>);
    const build = jobs.find((j) =>
      (j.steps as Obj[]).some((s) => String(s.uses).startsWith("docker/build-push-action@"))
    );
    assert.ok(build, `${file}: a docker build job`);
    const roles = (build.strategy?.matrix?.include ?? []).map((m: Obj) => m.role);
    assert.deepEqual(roles.sort(), [...ROLES].sort(), `${file}: every role`);
    const step = (build.steps as Obj[]).find((s) =>
      String(s.uses).startsWith("docker/build-push-action@")
    );
    assert.equal(step.with["build-args"], "ROLE=${{ matrix.role }}");
    assert.match(String(step.with.platforms), /linux\/amd64,linux\/arm64/);
    for (const r of roles) assert.match(dockerfile, new RegExp(`^FROM runtime AS ${r}$`, "m"));
  }
  assert.equal(
    all.get("image.yml").jobs.image.steps.find((s: Obj) => s.uses?.startsWith("docker/build-push"))
      .with.push,
    "${{ startsWith(github.ref, 'refs/tags/') }}",
    "image.yml pushes on tags only",
  );

  const release = all.get("release.yml");
  assert.deepEqual(release.on.push.tags, ["v*"]);
  const bin = release.jobs.binaries;
  assert.deepEqual(
    bin.strategy.matrix.include.map((m: Obj) => m.target).sort(),
    ["aarch64-unknown-linux-gnu", "x86_64-unknown-linux-gnu"],
  );
  assert.ok(taskRefs(runs({ jobs: { bin } }).join("\n")).includes("compile"));
  const script = runs(release).join("\n");
  assert.match(script, /helm package charts\/declarative-conversion-operator/);
  assert.match(script, /helm push .*"oci:\/\//);
  assert.ok(
    (release.jobs["github-release"].steps as Obj[]).some((s) =>
      String(s.uses).startsWith("softprops/action-gh-release@")
    ),
  );
});

// --- soak.yml ------------------------------------------------------------------------------------

Deno.test("workflows: soak.yml runs hack/e2e_soak.ts nightly, 8 minutes and 4 restarts (+ hold), and keeps the result", async () => {
  const soak = (await workflows()).get("soak.yml");
  assert.deepEqual(soak.on.schedule, [{ cron: "30 2 * * *" }], "nightly at 02:30 UTC");
  const inputs = soak.on.workflow_dispatch.inputs;
  assert.equal(inputs.duration.default, "480");
  assert.equal(inputs.restarts.default, "4");
  assert.equal(inputs.hold.default, "240");
  const job = soak.jobs.soak;
  assert.equal(job["timeout-minutes"], 45);
  const steps = job.steps as Obj[];
  const run = steps.find((s) => String(s.run).includes("hack/e2e_soak.ts"));
  assert.ok(run, "a step runs hack/e2e_soak.ts");
  assert.match(
    run.run,
    /--duration "\$DURATION" --restarts "\$RESTARTS" --hold "\$HOLD" --out soak-result\.json/,
  );
  assert.equal(run.env.DURATION, "${{ inputs.duration || '480' }}", "the nightly default");
  assert.equal(run.env.RESTARTS, "${{ inputs.restarts || '4' }}");
  assert.equal(run.env.HOLD, "${{ inputs.hold || '240' }}");
  assert.equal(run.shell, "bash", "pipefail: the soak's exit status survives the tee");
  assert.ok(!String(run.run).includes("${{"), "inputs reach the script through env");
  assert.ok(
    steps.some((s) => s.run?.includes("hack/testenv.sh")),
    "the control-plane binaries are built or reused",
  );
  const summary = steps.find((s) => String(s.run).includes("GITHUB_STEP_SUMMARY"));
  assert.equal(summary?.if, "always()", "the job summary is written when the soak fails too");
  const upload = steps.find((s) => String(s.uses).startsWith("actions/upload-artifact@"));
  assert.equal(upload?.if, "always()");
  assert.equal(upload.with.name, "soak-result");
  assert.equal(upload.with.path, "soak-result.json");
  // The script takes those flags, and the defaults mean 8 minutes and 4 restarts.
  const opts = parseSoakArgs([
    "--duration",
    inputs.duration.default,
    "--restarts",
    inputs.restarts.default,
    "--hold",
    inputs.hold.default,
    "--out",
    "soak-result.json",
  ]);
  assert.equal(opts.envelope.durationSeconds, 480);
  assert.equal(opts.envelope.restarts, 4);
  assert.equal(opts.envelope.holdSeconds, 240);
  assert.equal(opts.requireLeakVerdict, true, "the nightly soak needs a leak verdict");
  assert.equal(opts.out, "soak-result.json");
});

// --- scale.yml: the nightly scale run and its comparison ---------------------------------------

Deno.test("workflows: scale.yml runs hack/e2e_scale.ts nightly, uploads and compares its result", async () => {
  const scale = (await workflows()).get("scale.yml");
  const script = runs(scale).join("\n");
  for (const ref of script.matchAll(/\bhack\/[\w./-]+\.(?:ts|sh)\b/g)) {
    assert.ok(await Deno.stat(`${REPO}${ref[0]}`).then(() => true, () => false), ref[0]);
  }
  assert.deepEqual(scale.on.schedule, [{ cron: "30 3 * * *" }]);
  const inputs = scale.on.workflow_dispatch.inputs as Record<string, Obj>;
  assert.deepEqual(
    Object.fromEntries(Object.entries(inputs).map(([k, v]) => [k, v.default])),
    { targets: "300", instances: "20", parallel: "16", threshold: "1.5" },
  );
  assert.equal(scale.permissions.actions, "read", "scale.yml reads the previous run's artifact");
  const job = scale.jobs.scale;
  assert.equal(job["timeout-minutes"], 75);
  const upload = (job.steps as Obj[]).find((s) =>
    String(s.uses).startsWith("actions/upload-artifact@")
  );
  assert.deepEqual(
    [upload.with.name, upload.with.path, upload.with["retention-days"], upload.if],
    ["scale-result", "scale-result.json", 90, "always()"],
  );
  assert.match(
    script,
    /sudo -E [^\n]*hack\/e2e_scale\.ts[^]*--targets "\$TARGETS" --instances "\$INSTANCES" --parallel "\$PARALLEL"[^]*--result-json scale-result\.json/,
  );
  const env = (job.steps as Obj[]).find((s) => /e2e_scale\.ts/.test(s.run ?? "")).env;
  assert.deepEqual(env, {
    TARGETS: "${{ inputs.targets || '300' }}",
    INSTANCES: "${{ inputs.instances || '20' }}",
    PARALLEL: "${{ inputs.parallel || '16' }}",
  });
  assert.match(script, /gh run list [^\n]*--workflow scale\.yml --status success/);
  assert.match(script, /gh run download [^\n]*--name scale-result/);
  assert.match(script, /hack\/scale_report\.ts --current scale-result\.json/);
  assert.match(script, /--threshold "\$\{\{ inputs\.threshold \|\| '1\.5' \}\}"/);
  assert.match(script, /tee -a "\$GITHUB_STEP_SUMMARY"/);
  assert.match(script, /exit "\$\{PIPESTATUS\[0\]\}"/, "the job fails when scale_report.ts does");
});
