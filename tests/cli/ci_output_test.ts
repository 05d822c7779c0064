/**
 * The CI-native outputs shared by the commands: config-path positions from a second YAML parse,
 * the workflow-command escaping, and `validate`/`analyze` with `-o github|sarif|markdown`.
 */
import assert from "node:assert/strict";
import { convctl, FIELD_RENAME } from "./_convctl.ts";
import { RENAME_RULE, tempFiles, widgetConfig } from "./_fixtures.ts";
import { configPathSegments, yamlLocator } from "../../src/cli/findings/positions.ts";
import { renderGithub, renderMarkdown } from "../../src/cli/findings/render.ts";
import { requiredFieldFindingId } from "../../src/cli/findings/finding.ts";

const CONFIG = `apiVersion: terasky.com/v1alpha1
kind: CRDConversionConfig
spec:
  hubVersion: v2
  spokes:
    - version: v1
      rules:
        - strategy: FieldRename
          fieldRename: { hubPath: a, spokePath: b }
        - strategy: Delete
          delete:
            path: spec.x
`;

Deno.test("positions: config paths map to the line and column of the key or item", () => {
  assert.deepEqual(configPathSegments("spec.spokes[0].rules[12]"), [
    "spec",
    "spokes",
    0,
    "rules",
    12,
  ]);
  const locate = yamlLocator(CONFIG);
  assert.deepEqual(locate("spec.hubVersion"), { line: 4, column: 3 });
  assert.deepEqual(locate("spec.spokes[0]"), { line: 6, column: 7 });
  assert.deepEqual(locate("spec.spokes[0].rules[1]"), { line: 10, column: 11 });
  assert.deepEqual(locate("spec.spokes[0].rules[1].delete.path"), { line: 12, column: 13 });
  // A path that does not resolve falls back to its longest resolving prefix.
  assert.deepEqual(locate("spec.spokes[0].rules[7]"), { line: 7, column: 7 });
  assert.deepEqual(locate(""), { line: 1, column: 1 });
  assert.equal(yamlLocator("a: [")("a"), undefined);
});

Deno.test("github: workflow commands escape their data and properties", () => {
  const text = renderGithub([
    { ruleId: "convctl/x", level: "note", message: "50%\nnext", file: "a,b:c.yaml" },
    { ruleId: "convctl/y", level: "error", message: "m", file: "c.yaml", line: 3, column: 5 },
  ]);
  assert.equal(
    text,
    "::error file=c.yaml,line=3,col=5,title=convctl/y::m\n" +
      "::notice file=a%2Cb%3Ac.yaml,title=convctl/x::50%25%0Anext\n",
  );
  assert.match(
    renderMarkdown([], "T"),
    /^### T\n\n0 error\(s\), 0 warning\(s\), 0 note\(s\)\n\nNo findings\.\n$/,
  );
});

Deno.test("finding ids: required-field classes in lower-kebab case", () => {
  assert.equal(
    requiredFieldFindingId("RequiredFieldUnsatisfiable"),
    "convctl/required-field-unsatisfiable",
  );
  assert.equal(
    requiredFieldFindingId("RequiredFieldConditional"),
    "convctl/required-field-conditional",
  );
});

Deno.test("validate -o github: an invalid rule is annotated at its line in the config", async () => {
  const dir = await tempFiles({
    "config.yaml": widgetConfig([
      RENAME_RULE,
      { strategy: "FieldRename", fieldRename: { hubPath: "spec.foo", spokePath: "spec.bar" } },
    ]),
  });
  const r = await convctl(
    "validate",
    "-c",
    `${dir}/config.yaml`,
    "--crd",
    FIELD_RENAME.crd,
    "-o",
    "github",
  );
  assert.equal(r.code, 1, r.stderr);
  const lines = (await Deno.readTextFile(`${dir}/config.yaml`)).split("\n");
  const second = lines.findIndex((l, i) =>
    l.includes("- strategy: FieldRename") &&
    i > lines.findIndex((x) => x.includes("- strategy: FieldRename"))
  ) + 1;
  const col = lines[second - 1].indexOf("strategy") + 1;
  const first = r.stdout.split("\n")[0];
  assert.equal(
    first,
    `::error file=${dir}/config.yaml,line=${second},col=${col},title=convctl/config-error::` +
      '[spoke v1] [path-not-found] spec.foo: rule[1] FieldRename: hubPath "spec.foo" not found in the hub schema',
  );
});

Deno.test("validate and analyze -o sarif|markdown on a clean config", async () => {
  for (const command of ["validate", "analyze"]) {
    const sarif = await convctl(command, ...FIELD_RENAME.flags, "-o", "sarif");
    assert.equal(sarif.code, 0, sarif.stderr);
    const log = JSON.parse(sarif.stdout);
    assert.equal(log.version, "2.1.0");
    assert.deepEqual(log.runs[0].results, []);
    const markdown = await convctl(command, ...FIELD_RENAME.flags, "-o", "markdown");
    assert.match(markdown.stdout, new RegExp(`^### convctl ${command}: .*\n\n0 error\\(s\\)`));
  }
});

Deno.test("analyze -o github: a required-field diagnostic carries its stable id", async () => {
  const r = await convctl(
    "analyze",
    "-c",
    "tests/cli/fixtures/validate_output/config.yaml",
    "--crd",
    "tests/cli/fixtures/validate_output/crd.yaml",
    "-o",
    "github",
  );
  assert.equal(r.code, 0, r.stderr);
  assert.match(
    r.stdout,
    /^::warning file=tests\/cli\/fixtures\/validate_output\/config\.yaml,line=13,col=11,title=convctl\/required-field-unprovable::\[spoke v1\] \[RequiredFieldUnprovable\] spec\.owner: .*convctl test --validate-output/m,
  );
});
