/**
 * The convctl distribution files: the composite GitHub Actions (.github/actions/*), the workflow
 * that exercises them and .pre-commit-hooks.yaml. The actions parse and are well-formed (inputs
 * reach shell steps only through `env`, never spliced into a script), and their shell steps are
 * dry-run here as a runner would run them: with GITHUB_OUTPUT/GITHUB_PATH/GITHUB_STEP_SUMMARY
 * files, and `convctl` from PATH (this checkout's, or a stub where a cluster or another command
 * would be needed).
 */
import assert from "node:assert/strict";
import { parse } from "yaml";

const REPO = new URL("../../", import.meta.url).pathname;
const ACTIONS = ["setup-convctl", "convctl-test", "convctl-diff", "convctl-fleet"];

// deno-lint-ignore no-explicit-any
type Obj = any;

async function action(name: string): Promise<Obj> {
  return parse(await Deno.readTextFile(`${REPO}.github/actions/${name}/action.yml`));
}

const EXPECTED: Record<string, { inputs: string[]; outputs: string[] }> = {
  "setup-convctl": {
    inputs: ["version", "binary", "verify-signature"],
    outputs: ["version", "cache-hit"],
  },
  "convctl-test": {
    inputs: [
      "config",
      "xrd",
      "samples",
      "validate-output",
      "annotate",
      "upload-artifact",
      "artifact-name",
    ],
    outputs: ["exit-code", "pass", "errors", "report-path"],
  },
  "convctl-diff": {
    inputs: ["base-config", "head-config"],
    outputs: ["has-deltas", "exit-code", "markdown-path"],
  },
  "convctl-fleet": {
    inputs: ["config", "kubeconfig-dir", "contexts"],
    outputs: ["exit-code", "report-path"],
  },
};

Deno.test("actions: composite, with the documented inputs and outputs; inputs reach scripts via env", async () => {
  for (const name of ACTIONS) {
    const a = await action(name);
    assert.equal(a.name, name);
    assert.equal(typeof a.description, "string");
    assert.equal(a.runs.using, "composite", `${name}: composite`);
    for (const i of EXPECTED[name].inputs) assert.ok(i in a.inputs, `${name}: input ${i}`);
    for (const o of EXPECTED[name].outputs) assert.ok(o in a.outputs, `${name}: output ${o}`);
    const ids = new Set((a.runs.steps as Obj[]).map((s) => s.id).filter(Boolean));
    for (const [o, spec] of Object.entries(a.outputs as Record<string, Obj>)) {
      for (const m of String(spec.value).matchAll(/steps\.([\w-]+)\.outputs/g)) {
        assert.ok(ids.has(m[1]), `${name}: output ${o} reads step ${m[1]}`);
      }
    }
    for (const [i, step] of (a.runs.steps as Obj[]).entries()) {
      const where = `${name} step ${i}`;
      assert.ok(!!step.uses !== !!step.run, `${where}: exactly one of uses/run`);
      if (step.uses) assert.match(step.uses, /^[\w.-]+\/[\w./-]+@v\d+$/, where);
      if (step.run) {
        assert.equal(step.shell, "bash", `${where}: shell`);
        assert.ok(!String(step.run).includes("${{"), `${where}: no expression inside the script`);
        for (const m of String(step.run).matchAll(/\$\{?(INPUT_[A-Z_]+)/g)) {
          assert.ok(m[1] in (step.env ?? {}), `${where}: ${m[1]} comes from env`);
        }
        const syntax = await new Deno.Command("bash", { args: ["-n", "-c", step.run] }).output();
        assert.equal(syntax.code, 0, `${where}: ${new TextDecoder().decode(syntax.stderr)}`);
      }
    }
  }
});

Deno.test("convctl-actions.yml exercises setup-convctl, convctl-test and convctl-diff", async () => {
  const wf = parse(
    await Deno.readTextFile(`${REPO}.github/workflows/convctl-actions.yml`),
  ) as Obj;
  const uses = Object.values(wf.jobs as Record<string, Obj>).flatMap((j) =>
    (j.steps as Obj[]).map((s) => s.uses).filter(Boolean)
  );
  for (const name of ["setup-convctl", "convctl-test", "convctl-diff"]) {
    assert.ok(uses.includes(`./.github/actions/${name}`), name);
  }
  const setup = wf.jobs.actions.steps.find((s: Obj) =>
    s.uses === "./.github/actions/setup-convctl"
  );
  assert.equal(setup.with.binary, "hack/convctl.sh");
});

Deno.test(".pre-commit-hooks.yaml: convctl-lint runs once over the tree", async () => {
  const hooks = parse(await Deno.readTextFile(`${REPO}.pre-commit-hooks.yaml`)) as Obj[];
  const lint = hooks.find((h) => h.id === "convctl-lint");
  assert.ok(lint);
  assert.equal(lint.entry, "convctl lint");
  assert.equal(lint.language, "system");
  assert.equal(lint.pass_filenames, false);
  assert.equal(lint.require_serial, true);
});

// ---------------------------------------------------------------------------------------------
// Dry runs

interface StepRun {
  code: number;
  stdout: string;
  outputs: Record<string, string>;
  path: string;
  summary: string;
}

/** The value of an env entry: `${{ inputs.x }}`, `${{ steps.s.outputs.k }}`, else "". */
function evaluate(
  value: unknown,
  a: Obj,
  inputs: Record<string, string>,
  steps: Record<string, Record<string, string>>,
): string {
  const text = String(value);
  const m = /^\$\{\{\s*(.+?)\s*\}\}$/.exec(text);
  if (m === null) return text;
  const input = /^inputs\.([\w-]+)$/.exec(m[1]);
  if (input !== null) return inputs[input[1]] ?? String(a.inputs[input[1]]?.default ?? "");
  const output = /^steps\.([\w-]+)\.outputs\.([\w-]+)$/.exec(m[1]);
  if (output !== null) return steps[output[1]]?.[output[2]] ?? "";
  return "";
}

/** Runs the action's shell step `id` as a runner would, `bin` first on PATH. */
async function runStep(
  name: string,
  id: string,
  inputs: Record<string, string>,
  bin: string,
  steps: Record<string, Record<string, string>> = {},
): Promise<StepRun> {
  const a = await action(name);
  const step = (a.runs.steps as Obj[]).find((s) => s.id === id);
  const tmp = await Deno.makeTempDir({ prefix: "dco-action-" });
  try {
    const files = { output: `${tmp}/output`, path: `${tmp}/path`, summary: `${tmp}/summary` };
    for (const f of Object.values(files)) await Deno.writeTextFile(f, "");
    const env: Record<string, string> = {
      PATH: `${bin}:${Deno.env.get("PATH")}`,
      HOME: Deno.env.get("HOME") ?? tmp,
      GITHUB_OUTPUT: files.output,
      GITHUB_PATH: files.path,
      GITHUB_STEP_SUMMARY: files.summary,
      RUNNER_TEMP: `${tmp}/runner`,
      RUNNER_TOOL_CACHE: `${tmp}/tool-cache`,
      NO_COLOR: "1",
    };
    for (const [k, v] of Object.entries(step.env ?? {})) env[k] = evaluate(v, a, inputs, steps);
    const r = await new Deno.Command("bash", {
      args: ["-c", step.run],
      cwd: REPO,
      env,
      clearEnv: true,
      stdout: "piped",
      stderr: "piped",
    }).output();
    const outputs: Record<string, string> = {};
    for (const line of (await Deno.readTextFile(files.output)).split("\n")) {
      const i = line.indexOf("=");
      if (i > 0) outputs[line.slice(0, i)] = line.slice(i + 1);
    }
    // Reports live under RUNNER_TEMP: read what the assertions need before it goes.
    for (const key of ["report-path", "markdown-path"]) {
      if (outputs[key] !== undefined) {
        outputs[`${key}:content`] = await Deno.readTextFile(outputs[key]).catch(() => "");
      }
    }
    return {
      code: r.code,
      stdout: new TextDecoder().decode(r.stdout) + new TextDecoder().decode(r.stderr),
      outputs,
      path: await Deno.readTextFile(files.path),
      summary: await Deno.readTextFile(files.summary),
    };
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
}

/** A directory with `convctl` → this checkout's hack/convctl.sh. */
async function realConvctl(): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "dco-bin-" });
  await Deno.symlink(`${REPO}hack/convctl.sh`, `${dir}/convctl`);
  return dir;
}

/** A directory with a stub `convctl` that logs its arguments, prints `stdout` and exits `code`. */
async function stubConvctl(stdout: string, code: number): Promise<{ bin: string; log: string }> {
  const dir = await Deno.makeTempDir({ prefix: "dco-stub-" });
  const log = `${dir}/args.log`;
  await Deno.writeTextFile(
    `${dir}/convctl`,
    `#!/usr/bin/env bash\nprintf '%s\\n' "$*" >> '${log}'\ncat <<'OUT'\n${stdout}\nOUT\nexit ${code}\n`,
  );
  await Deno.chmod(`${dir}/convctl`, 0o755);
  return { bin: dir, log };
}

Deno.test("setup-convctl (dry run): an adopted binary goes on PATH and reports its version", async () => {
  const bin = await realConvctl();
  try {
    const resolve = await runStep("setup-convctl", "resolve", { binary: "hack/convctl.sh" }, bin);
    assert.equal(resolve.code, 0, resolve.stdout);
    assert.equal(resolve.outputs.version, "local");
    const install = await runStep(
      "setup-convctl",
      "install",
      { binary: "hack/convctl.sh" },
      bin,
      { resolve: resolve.outputs, cache: {} },
    );
    assert.equal(install.code, 0, install.stdout);
    assert.equal(install.outputs.version, "dev");
    assert.equal(install.path.trim(), resolve.outputs.dir);

    const missing = await runStep("setup-convctl", "install", { binary: "no/such/convctl" }, bin, {
      resolve: resolve.outputs,
    });
    assert.notEqual(missing.code, 0);
    assert.match(
      missing.stdout,
      /::error title=setup-convctl::no\/such\/convctl is not an executable file/,
    );
  } finally {
    await Deno.remove(bin, { recursive: true });
  }
});

Deno.test("convctl-test (dry run): counts, JUnit report, annotations and job summary", async () => {
  const bin = await realConvctl();
  try {
    const pass = await runStep("convctl-test", "test", {
      config: "examples/field-rename/config.yaml",
      crd: "examples/field-rename/crd.yaml",
      samples: "examples/field-rename/samples",
      "validate-output": "true",
    }, bin);
    assert.equal(pass.code, 0, pass.stdout);
    assert.equal(pass.outputs["exit-code"], "0");
    assert.equal(pass.outputs.pass, "4");
    assert.equal(pass.outputs.errors, "0");
    assert.match(
      pass.outputs["report-path:content"],
      /^<\?xml .*\n<testsuites name="CRD conversion test/,
    );
    assert.match(pass.summary, /No findings\./);

    const fixture = "tests/cli/fixtures/validate_output";
    const fail = await runStep("convctl-test", "test", {
      config: `${fixture}/config.yaml`,
      crd: `${fixture}/crd.yaml`,
      samples: `${fixture}/samples`,
      "validate-output": "true",
    }, bin);
    assert.equal(fail.code, 0, "the test step records the exit code; the last step fails the job");
    assert.equal(fail.outputs["exit-code"], "1");
    assert.equal(fail.outputs.errors, "1");
    assert.match(
      fail.stdout,
      /^::error file=tests\/cli\/fixtures\/validate_output\/config\.yaml,line=13,col=11,title=convctl\/schema-violation::/m,
    );
    assert.match(fail.summary, /\| error \| `convctl\/schema-violation` \|/);
  } finally {
    await Deno.remove(bin, { recursive: true });
  }
});

Deno.test("convctl-diff (dry run): deltas do not fail the step; no deltas still says so", async () => {
  const inputs = { "base-config": "a.yaml", "head-config": "b.yaml", crd: "crd.yaml" };
  const deltas = await stubConvctl("### convctl diff\n| v1 | spec.x | changed |", 1);
  try {
    const r = await runStep("convctl-diff", "diff", inputs, deltas.bin);
    assert.equal(r.code, 0, r.stdout);
    assert.equal(r.outputs["has-deltas"], "true");
    assert.equal(r.outputs["exit-code"], "1");
    assert.match(
      r.outputs["markdown-path:content"],
      /^<!-- convctl-diff -->\n### convctl diff\n\| v1 \| spec\.x/,
    );
    assert.equal(
      await Deno.readTextFile(deltas.log),
      "diff -c a.yaml -c b.yaml --crd crd.yaml -o markdown\n",
    );
  } finally {
    await Deno.remove(deltas.bin, { recursive: true });
  }
  const same = await stubConvctl("", 0);
  try {
    const r = await runStep("convctl-diff", "diff", inputs, same.bin);
    assert.equal(r.code, 0);
    assert.equal(r.outputs["has-deltas"], "false");
    assert.match(r.outputs["markdown-path:content"], /### convctl diff: no deltas/);
    assert.match(r.summary, /no deltas/);
  } finally {
    await Deno.remove(same.bin, { recursive: true });
  }
  const broken = await stubConvctl("", 2);
  try {
    assert.equal((await runStep("convctl-diff", "diff", inputs, broken.bin)).code, 1);
  } finally {
    await Deno.remove(broken.bin, { recursive: true });
  }
});

Deno.test("convctl-fleet (dry run): one live run over every cluster, one JUnit report", async () => {
  const stub = await stubConvctl("", 1);
  try {
    const r = await runStep("convctl-fleet", "fleet", {
      config: "c.yaml",
      xrd: "x.yaml",
      "kubeconfig-dir": "clusters",
      contexts: "a,b",
    }, stub.bin);
    assert.equal(r.code, 0);
    assert.equal(r.outputs["exit-code"], "1");
    const args = await Deno.readTextFile(stub.log);
    assert.match(
      args,
      /^test -c c\.yaml --live --fail-on loss --quiet -x x\.yaml --kubeconfig-dir clusters --contexts a,b -o junit --output-file \S+\/convctl-fleet\/report\.xml\n$/,
    );
  } finally {
    await Deno.remove(stub.bin, { recursive: true });
  }
});
