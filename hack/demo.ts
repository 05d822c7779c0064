/**
 * `deno task demo`: the offline engine over every example under examples/. For each one:
 * validate, a one-line analysis per spoke, then one sample converted to every other version
 * (before/after YAML side by side) with its round-trip verdict, and the full sample test summary.
 * Exit 0 when every example validates and tests clean, 1 otherwise.
 */
import { engineSpecOf } from "../src/api/mod.ts";
import { CliError } from "../src/cli/args.ts";
import { loadConfig, loadSamples, loadSchema, type Sample } from "../src/cli/load.ts";
import { formatSpokeDiagnostic, toYaml, useColor } from "../src/cli/output.ts";
import { runConversionTests } from "../src/cli/test.ts";
import { exitCodeFor, summaryLine, type TestPath } from "../src/cli/test_report.ts";
import {
  type AnalysisResult,
  analyze,
  convertObject,
  createRouter,
  structuralError,
} from "../src/engine/mod.ts";

const EXAMPLES = new URL("../examples/", import.meta.url);
const color = useColor(Deno.stdout);
const paint = (code: string) => (text: string) => color ? `\x1b[${code}m${text}\x1b[0m` : text;
const bold = paint("1");
const dim = paint("2");
const green = paint("32");
const yellow = paint("33");
const red = paint("31");

const VERDICT: Record<TestPath["result"], string> = {
  pass: green("✓ identical"),
  loss: yellow("~ lost only fields the config acknowledges as lossy"),
  fail: red("✗ lost fields no rule acknowledges"),
  error: red("✗ conversion failed"),
};

function say(text = ""): void {
  console.log(text);
}

/** Display width: code points, not counting colour escapes. */
function visible(text: string): number {
  // deno-lint-ignore no-control-regex -- matching ANSI SGR sequences is the point
  return [...text.replace(/\x1b\[[0-9;]*m/g, "")].length;
}

/** Two YAML documents next to each other, or one above the other when too wide. */
function beforeAfter(leftTitle: string, left: string, rightTitle: string, right: string): string {
  const l = [leftTitle, ...left.trimEnd().split("\n")];
  const r = [rightTitle, ...right.trimEnd().split("\n")];
  const width = Math.max(...l.map(visible)) + 4;
  const columns = Deno.stdout.isTerminal() ? Deno.consoleSize().columns : 120;
  if (width + Math.max(...r.map(visible)) + 4 > columns) {
    return [...l, "", ...r].map((s) => `    ${s}`).join("\n");
  }
  const rows: string[] = [];
  for (let i = 0; i < Math.max(l.length, r.length); i++) {
    const a = l[i] ?? "";
    const b = r[i] ?? "";
    const gutter = i === 0 ? "  " : dim("│ ");
    rows.push(`    ${a}${" ".repeat(width - visible(a))}${gutter}${b}`.trimEnd());
  }
  return rows.join("\n");
}

function analysisLines(analysis: AnalysisResult): string[] {
  const way = (ok: boolean) => (ok ? green("lossless") : yellow("lossy"));
  return analysis.spokes.map((s) =>
    `  spoke ${bold(s.version)}: hub→spoke ${way(s.lossless.hubToSpoke)}, ` +
    `spoke→hub ${way(s.lossless.spokeToHub)}, ${s.ruleResults.length} rule(s), ` +
    `${s.warnings.length} warning(s)`
  );
}

/** Picks the first sample not at the hub version (the more interesting conversion). */
function showcase(samples: readonly Sample[], hub: string): Sample {
  return samples.find((s) => s.version !== hub) ?? samples[0];
}

async function demoExample(name: string): Promise<boolean> {
  const dir = new URL(`${name}/`, EXAMPLES).pathname;
  say(bold(`━━ ${name} ${"━".repeat(Math.max(4, 72 - name.length))}`));
  const config = await loadConfig(`${dir}config.yaml`);
  const schema = await loadSchema(config.kind, `${dir}crd.yaml`);
  const spec = engineSpecOf(config.config);

  const structural = structuralError(spec);
  const analysis = analyze(schema.source, spec);
  const problems = [
    ...(structural === undefined ? [] : [`[structural] ${structural}`]),
    ...analysis.hardErrors.map((d) => `[${d.class}] ${d.message}`),
    ...analysis.spokes.flatMap((s) => s.errors.map((d) => formatSpokeDiagnostic(s.version, d))),
  ];
  if (problems.length > 0) {
    say(red(`validate: ${problems.length} error(s)`));
    for (const p of problems) say(`  ${p}`);
    return false;
  }
  say(`validate: ${green("valid")} (${config.kind} ${config.name} → ${analysis.target})`);
  say(`analyze: hub ${bold(analysis.hubVersion)}`);
  for (const line of analysisLines(analysis)) say(line);

  const samples = await loadSamples(`${dir}samples`, schema.source);
  const served = schema.source.versions.filter((v) => v.served).map((v) => v.name);
  const router = createRouter(analysis);
  const sample = showcase(samples, analysis.hubVersion);
  const verdicts = runConversionTests(analysis, served, [sample], {
    versionPairs: [],
    skipIdentity: true,
    configName: config.name,
  }).samples[0].paths;
  for (const target of served.filter((v) => v !== sample.version)) {
    say();
    say(`${bold(sample.name)}: ${sample.version} → ${target}`);
    const converted = convertObject(router, sample.object, `${analysis.group}/${target}`);
    say(beforeAfter(
      dim(`before (${sample.version})`),
      toYaml(sample.object),
      dim(`after (${target})`),
      toYaml(converted),
    ));
    const verdict = verdicts.find((p) => p.to === target);
    if (verdict !== undefined) {
      const trip = `${sample.version} → ${target} → ${sample.version}`;
      say(`  round trip ${trip}: ${VERDICT[verdict.result]}`);
      for (const issue of verdict.issues ?? []) {
        say(dim(`    ${issue.type} ${issue.field}: ${issue.detail}`));
      }
    }
  }

  const report = runConversionTests(analysis, served, samples, {
    versionPairs: [],
    skipIdentity: false,
    configName: config.name,
  });
  const ok = exitCodeFor(report, "loss", false) === 0;
  say();
  say(
    `test (${samples.length} samples): ${
      ok ? green(summaryLine(report)) : red(summaryLine(report))
    }`,
  );
  return ok;
}

async function main(): Promise<number> {
  const names: string[] = [];
  for await (const e of Deno.readDir(EXAMPLES)) if (e.isDirectory) names.push(e.name);
  names.sort();
  say(bold("dco offline demo: the conversion engine over every example"));
  say(dim(
    `(${names.length} examples under examples/; each runs what \`convctl validate\`, ` +
      "`analyze`, `convert` and `test` run)",
  ));
  say();
  const failed: string[] = [];
  for (const name of names) {
    try {
      if (!(await demoExample(name))) failed.push(name);
    } catch (e) {
      if (!(e instanceof CliError)) throw e;
      say(red(`error: ${e.message}`));
      failed.push(name);
    }
    say();
  }
  if (failed.length > 0) {
    say(red(`FAILED: ${failed.join(", ")}`));
    return 1;
  }
  say(green(`all ${names.length} examples validate, convert and round-trip as declared`));
  return 0;
}

Deno.exit(await main());
