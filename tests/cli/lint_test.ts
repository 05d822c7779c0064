import assert from "node:assert/strict";
import { lintTreeTarget, writeLintTree } from "../support/lint_tree.ts";
import { assertToolError, convctl } from "./_convctl.ts";
import { sarifValidator } from "./_sarif.ts";
import type { LintReport } from "../../src/cli/lint_report.ts";
import { excluded, globRegExp } from "../../src/cli/lint_walk.ts";

const PAIRS = 20;

async function withTree(count: number, body: (dir: string) => Promise<void>): Promise<void> {
  const dir = await writeLintTree(count);
  try {
    await body(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

async function lintJson(...args: string[]): Promise<{ code: number; report: LintReport }> {
  const r = await convctl("lint", ...args, "-o", "json");
  assert.equal(r.stderr, "");
  return { code: r.code, report: JSON.parse(r.stdout) };
}

Deno.test("lint: a tree of 20 pairs, every config paired and clean, in walk order", async () => {
  await withTree(PAIRS, async (dir) => {
    for (const concurrency of ["1", "3"]) {
      const { code, report } = await lintJson(dir, "--concurrency", concurrency);
      assert.equal(code, 0);
      assert.deepEqual(report.summary, {
        configs: PAIRS,
        schemas: PAIRS,
        errors: 0,
        warnings: 0,
        unpaired: 0,
        duplicate: 0,
      });
      assert.equal(report.passed, true);
      report.configs.forEach((c, i) => {
        const n = String(i).padStart(3, "0");
        assert.equal(c.file, `${dir}/configs/widget-${n}.yaml`);
        assert.equal(c.target, lintTreeTarget(i));
        // the CRD opens with two comment lines
        assert.deepEqual(c.schema, { file: `${dir}/crds/widget-${n}.yaml`, line: 3 });
        assert.equal(c.status, "OK");
        assert.deepEqual(c.findings, []);
      });
    }
  });
});

Deno.test("lint: unpaired, duplicate, invalid and unreadable configs; multi-document files", async () => {
  await withTree(3, async (dir) => {
    const config = (i: number) => Deno.readTextFile(`${dir}/configs/widget-00${i}.yaml`);
    // Pair 2's schema goes away: unpaired. A second config for pair 0, in a multi-document file
    // after an unrelated manifest: duplicate. Pair 1 gets an unknown field: invalid.
    await Deno.remove(`${dir}/crds/widget-002.yaml`);
    const second = (await config(0)).replace("name: widgets-conversion", "name: again");
    await Deno.writeTextFile(
      `${dir}/configs/more.yaml`,
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n---\n${second}`,
    );
    await Deno.writeTextFile(
      `${dir}/configs/widget-001.yaml`,
      (await config(1)).replace("hubVersion: v2", "hubVersion: v2\n  bogus: 1"),
    );
    await Deno.writeTextFile(`${dir}/configs/broken.yaml`, "kind: CRDConversionConfig\n  : [\n");
    await Deno.writeTextFile(`${dir}/configs/chart.yaml`, "{{ .Values.x }}: [\n"); // not ours

    const { code, report } = await lintJson(dir);
    assert.equal(code, 1);
    assert.deepEqual(
      report.configs.map((c) => [c.file.slice(dir.length + 1), c.line, c.status]),
      [
        ["configs/broken.yaml", 3, "ERROR"], // the line of the parse error
        ["configs/more.yaml", 6, "DUPLICATE"],
        ["configs/widget-000.yaml", 1, "DUPLICATE"],
        ["configs/widget-001.yaml", 1, "ERROR"],
        ["configs/widget-002.yaml", 1, "UNPAIRED"],
      ],
    );
    const ids = report.configs.map((c) => c.findings.map((f) => f.ruleId));
    assert.deepEqual(ids, [
      ["convctl/config-error"],
      ["convctl/duplicate-config"],
      ["convctl/duplicate-config"],
      ["convctl/config-error"],
      ["convctl/unpaired-config"],
    ]);
    assert.match(report.configs[3].findings[0].message, /bogus/);
    assert.equal(
      report.configs[4].findings[0].message,
      `no CustomResourceDefinition named ${lintTreeTarget(2)} found`,
    );
    assert.deepEqual(report.summary, {
      configs: 5,
      schemas: 2,
      errors: 2,
      warnings: 0,
      unpaired: 1,
      duplicate: 2,
    });

    // --exclude by base name and by path; the rest still fails (unpaired, duplicate).
    const some = await lintJson(dir, "--exclude", "broken.yaml", "--exclude", "**/widget-001.yaml");
    assert.deepEqual(some.report.configs.map((c) => c.status), [
      "DUPLICATE",
      "DUPLICATE",
      "UNPAIRED",
    ]);

    // --fail-on none still fails on pairing problems; a tree without them passes.
    await Deno.remove(`${dir}/configs/more.yaml`);
    await Deno.remove(`${dir}/configs/widget-002.yaml`);
    const none = await lintJson(dir, "--fail-on", "none");
    assert.equal(none.code, 0);
    assert.equal((await lintJson(dir)).code, 1);
  });
});

Deno.test("lint: the table, and --schema-dir", async () => {
  await withTree(2, async (dir) => {
    const r = await convctl("lint", `${dir}/configs`, "--schema-dir", `${dir}/crds`);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.split("\n");
    assert.match(lines[0], /^STATUS +CONFIG +TARGET +SCHEMA +FINDINGS$/);
    assert.match(
      lines[1],
      new RegExp(`^OK +\\S+widget-000\\.yaml:1 +${lintTreeTarget(0)} +\\S+:3 +0$`),
    );
    assert.ok(r.stdout.endsWith("\nSUMMARY: 0 error(s), 0 warning(s), 0 unpaired, 0 duplicate\n"));
    // Without the schema directory every config is unpaired.
    const alone = await convctl("lint", `${dir}/configs`);
    assert.equal(alone.code, 1);
    assert.match(alone.stdout, /SUMMARY: 0 error\(s\), 0 warning\(s\), 2 unpaired, 0 duplicate/);
  });
});

Deno.test("lint: bad input is a one-line error, exit 2", async () => {
  assertToolError(
    await convctl("lint", "no/such/dir"),
    /^error: cannot read path no\/such\/dir: .*\n$/,
  );
  assertToolError(
    await convctl("lint", "--fail-on", "loud"),
    'invalid value "loud" for --fail-on: must be one of none, warn, loss',
  );
  assertToolError(
    await convctl("lint", "--concurrency", "-1"),
    'invalid value "-1" for --concurrency: expected an integer from 0 to 256',
  );
});

Deno.test("lint: --exclude globs", () => {
  const globs = ["*.tmpl.yaml", "vendor/**", "a?c"].map(globRegExp);
  assert.ok(excluded("x/y/z.tmpl.yaml", globs));
  assert.ok(excluded("vendor/a/b.yaml", globs));
  assert.ok(excluded("./abc", globs));
  assert.ok(!excluded("x/vendor.yaml", globs));
  assert.ok(!excluded("abbc", globs));
});

Deno.test("lint -o github|sarif|markdown: the findings where they are, in the CI formats", async () => {
  await withTree(2, async (dir) => {
    await Deno.remove(`${dir}/crds/widget-001.yaml`);
    const file = `${dir}/configs/widget-001.yaml`;
    const github = await convctl("lint", dir, "-o", "github");
    assert.equal(github.code, 1, github.stderr);
    assert.match(
      github.stdout,
      new RegExp(
        `^::error file=${file},line=1,title=convctl/unpaired-config::no CustomResource`,
        "m",
      ),
    );
    const sarif = await convctl("lint", dir, "-o", "sarif");
    assert.equal(sarif.code, 1);
    const log = JSON.parse(sarif.stdout);
    const validate = await sarifValidator();
    assert.ok(validate(log), JSON.stringify(validate.errors));
    assert.deepEqual(
      log.runs[0].results.map((r: { ruleId: string }) => r.ruleId),
      ["convctl/unpaired-config"],
    );
    const markdown = await convctl("lint", dir, "-o", "markdown");
    assert.match(markdown.stdout, /\| error \| `convctl\/unpaired-config` \|/);
  });
});
