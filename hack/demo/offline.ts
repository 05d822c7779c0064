/**
 * `deno task demo --offline`: the engine over the examples, no cluster. For each one: validate, a
 * one-line analysis per spoke, then one sample converted to every other version (before/after YAML
 * side by side) with its round-trip verdict, and the full sample test summary. Returns 0 when every
 * example validates and tests clean, 1 otherwise.
 */
import { CliError } from "../../src/cli/args.ts";
import type { Sample } from "../../src/cli/load.ts";
import { toYaml } from "../../src/cli/output.ts";
import { runConversionTests } from "../../src/cli/test.ts";
import { exitCodeFor, summaryLine, type TestPath } from "../../src/cli/test_report.ts";
import { type AnalysisResult, convertObject } from "../../src/engine/mod.ts";
import { exampleNames, loadExample } from "./examples.ts";
import { beforeAfter, bold, dim, green, heading, red, say, yellow } from "./view.ts";

const VERDICT: Record<TestPath["result"], string> = {
  pass: green("✓ identical"),
  loss: yellow("~ lost only fields the config acknowledges as lossy"),
  fail: red("✗ lost fields no rule acknowledges"),
  error: red("✗ conversion failed"),
};

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
  say(heading(name));
  const ex = await loadExample(name);
  const { analysis, config, samples, served, router } = ex;
  if (ex.problems.length > 0) {
    say(red(`validate: ${ex.problems.length} error(s)`));
    for (const p of ex.problems) say(`  ${p}`);
    return false;
  }
  say(`validate: ${green("valid")} (${config.kind} ${config.name} → ${analysis.target})`);
  say(`analyze: hub ${bold(analysis.hubVersion)}`);
  for (const line of analysisLines(analysis)) say(line);

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

/** Runs the offline demo over `only` (one example) or every example. */
export async function runOffline(only?: string): Promise<number> {
  const names = only === undefined ? await exampleNames() : [only];
  say(bold("dco offline demo: the conversion engine over the examples (no cluster)"));
  say(dim(
    `(${names.length} example(s) under examples/; each runs what \`convctl validate\`, ` +
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
  say(green(`all ${names.length} example(s) validate, convert and round-trip as declared`));
  return 0;
}
