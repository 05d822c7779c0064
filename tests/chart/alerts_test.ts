/**
 * The chart's PrometheusRule (docs/observability.md#alerts) through Prometheus' own tooling: the rules are
 * rendered with `helm template` (so promtool sees exactly what the chart ships, thresholds
 * substituted from values), then `promtool check rules` and `promtool test rules` run the cases in
 * tests/obs/promtool/ against them. promtool comes from hack/promtool.sh (Debian's package,
 * extracted into a cache); if it cannot be provided the test FAILS, it never skips.
 *
 * promtool compares annotations verbatim, so the unit-test copy of the rules drops them (expr,
 * for and labels are kept exactly as rendered); `promtool check rules` validates the full
 * rendered rules including the annotation templates, and the annotations' content is asserted
 * here.
 *
 * Needs helm (found like tests/chart through `resolveAssets()`).
 */
import assert from "node:assert/strict";
import { parse, stringify } from "yaml";
import { CHART, helm, KUBE_VERSION, type Obj, setArgs } from "./_helm.ts";

const ROOT = new URL("../..", import.meta.url).pathname;
const CASES = `${ROOT}tests/obs/promtool`;

/** Every alert the chart ships (docs/observability.md#alerts), in the rule pack's order. */
const ALERTS = [
  "ConversionWebhookRegistryCompileErrors",
  "ConversionWebhookNotReady",
  "ConversionWebhookHighLatency",
  "ConversionWebhookPanics",
  "ConversionWebhookLossyRate",
  "ConversionWebhookErrorRatio",
  "ManagerReconcileAnalyzeFailures",
  "ConversionAppliedButNotPropagated",
  "ConversionRevertedOutOfBand",
  "ManagerPhaseStaleOrFailClosed",
  "ControllerWorkqueueBacklog",
  "ControllerReconcileErrors",
  "ConversionWebhookReplicaNotReady",
  "InformerCacheStale",
  "InformerWatchErrors",
  "ConversionWebhookCertificateExpiringSoon",
  "ConversionWebhookTLSReloadFailing",
];

/** Values of the second render, matching tests/obs/promtool/custom_thresholds.yaml. */
const CUSTOM: Record<string, string> = {
  "metrics.prometheusRule.workqueueDepthThreshold": "100",
  "metrics.prometheusRule.workqueueBacklogFor": "5m",
  "metrics.prometheusRule.reconcileErrorRateThreshold": "1",
  "metrics.prometheusRule.propagationLagFor": "30m",
};

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

async function run(cmd: string, args: string[], cwd?: string): Promise<Run> {
  const out = await new Deno.Command(cmd, { args, cwd, stdout: "piped", stderr: "piped" })
    .output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

let promtoolPath: Promise<string> | undefined;

/** hack/promtool.sh's path, or an error carrying its messages (the test fails, never skips). */
function promtool(): Promise<string> {
  promtoolPath ??= (async () => {
    const r = await run("bash", [`${ROOT}hack/promtool.sh`]);
    const path = r.stdout.trim();
    if (r.code !== 0 || path === "") {
      throw new Error(`hack/promtool.sh could not provide promtool (exit ${r.code}):\n${r.stderr}`);
    }
    return path;
  })();
  return promtoolPath;
}

async function renderRule(sets: Record<string, string>): Promise<Obj> {
  const r = await helm(
    "template",
    "rel",
    CHART,
    "--namespace",
    "dco-system",
    "--kube-version",
    KUBE_VERSION,
    "--set",
    "metrics.prometheusRule.enabled=true",
    ...setArgs(sets),
    "--show-only",
    "templates/monitoring/prometheusrule.yaml",
  );
  assert.equal(r.code, 0, `helm template failed:\n${r.stderr}`);
  const rule = parse(r.stdout) as Obj;
  assert.equal(rule.kind, "PrometheusRule");
  return rule;
}

function rulesOf(spec: Obj): Obj[] {
  return spec.groups.flatMap((g: Obj) => g.rules);
}

/** The spec with every annotation removed (promtool compares annotations verbatim). */
function withoutAnnotations(spec: Obj): Obj {
  const copy = structuredClone(spec);
  for (const r of rulesOf(copy)) delete r.annotations;
  return copy;
}

interface Workdir {
  dir: string;
  spec: Obj;
}

let workdir: Promise<Workdir> | undefined;

/** A temp dir with rules-full.yaml, rules.yaml, rules-custom.yaml and copies of the cases. */
function prepare(): Promise<Workdir> {
  workdir ??= (async () => {
    const dir = await Deno.makeTempDir({ prefix: "dco-promtool-" });
    globalThis.addEventListener("unload", () => Deno.removeSync(dir, { recursive: true }));
    const [def, custom] = await Promise.all([renderRule({}), renderRule(CUSTOM)]);
    await Deno.writeTextFile(`${dir}/rules-full.yaml`, stringify(def.spec));
    await Deno.writeTextFile(`${dir}/rules.yaml`, stringify(withoutAnnotations(def.spec)));
    await Deno.writeTextFile(
      `${dir}/rules-custom.yaml`,
      stringify(withoutAnnotations(custom.spec)),
    );
    for await (const e of Deno.readDir(CASES)) {
      if (e.isFile && e.name.endsWith(".yaml")) {
        await Deno.copyFile(`${CASES}/${e.name}`, `${dir}/${e.name}`);
      }
    }
    return { dir, spec: def.spec };
  })();
  return workdir;
}

async function caseFiles(): Promise<string[]> {
  const files: string[] = [];
  for await (const e of Deno.readDir(CASES)) {
    if (e.isFile && e.name.endsWith(".yaml")) files.push(e.name);
  }
  return files.sort();
}

Deno.test("alerts: hack/promtool.sh provides a working promtool", async () => {
  const bin = await promtool();
  const r = await run(bin, ["--version"]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout + r.stderr, /promtool, version \d+\.\d+/);
});

Deno.test("alerts: the rendered rule pack has every alert of docs/observability.md, in order", async () => {
  const { spec } = await prepare();
  assert.deepEqual(spec.groups.map((g: Obj) => g.name), ["declarative-conversion-operator"]);
  const rules = rulesOf(spec);
  assert.deepEqual(rules.map((r) => r.alert), ALERTS);
  const by = Object.fromEntries(rules.map((r) => [r.alert, r]));
  const severity = Object.fromEntries(rules.map((r) => [r.alert, r.labels.severity]));
  for (const a of ["ConversionWebhookNotReady", "ConversionWebhookPanics"]) {
    assert.equal(severity[a], "critical", a);
  }
  assert.equal(severity.ConversionWebhookReplicaNotReady, "critical");
  assert.equal(
    Object.values(severity).filter((s) => s === "warning").length,
    ALERTS.length - 3,
  );
  assert.equal(by.ConversionWebhookPanics.for, undefined, "panics fire at once");
  assert.equal(by.ConversionAppliedButNotPropagated.for, "5m");
  assert.equal(by.ControllerWorkqueueBacklog.for, "15m");
  assert.equal(by.ControllerReconcileErrors.for, "15m");
  const sel =
    'app_kubernetes_io_name=~"declarative-conversion-operator|declarative-conversion-webhook-server"';
  for (const a of ["ControllerWorkqueueBacklog", "ControllerReconcileErrors"]) {
    assert.ok(by[a].expr.includes(sel), `${a} selects on app_kubernetes_io_name: ${by[a].expr}`);
    assert.match(by[a].expr, /sum by \(job, controller\)/);
  }
  assert.match(by.ControllerWorkqueueBacklog.expr, /\)\s*> 10$/);
  assert.match(by.ControllerReconcileErrors.expr, /\)\s*> 0\.1$/);
});

Deno.test("alerts: every alert has a summary and a description naming its labels", async () => {
  const { spec } = await prepare();
  for (const r of rulesOf(spec)) {
    const a = r.annotations as Record<string, string> | undefined;
    assert.ok(a?.summary && a.description, `${r.alert} has summary and description`);
    assert.doesNotMatch(a.summary + a.description, /__[A-Z_]+__/, `${r.alert}: placeholder left`);
  }
  const by = Object.fromEntries(rulesOf(spec).map((r) => [r.alert, r.annotations]));
  for (const a of ["ControllerWorkqueueBacklog", "ControllerReconcileErrors"]) {
    const text = by[a].summary + by[a].description;
    assert.match(text, /\$labels\.controller/, a);
    assert.match(text, /\$labels\.job/, a);
  }
  assert.match(by.ConversionWebhookRegistryCompileErrors.description, /\/debug\/registry/);
  assert.match(by.ConversionWebhookRegistryCompileErrors.summary, /\$labels\.reason/);
  assert.match(by.ConversionAppliedButNotPropagated.description, /ConversionPropagated/);
  assert.match(by.ConversionAppliedButNotPropagated.description, /status\.generatedCRDs/);
  assert.match(by.ConversionRevertedOutOfBand.description, /PackageManaged/);
  assert.match(by.ConversionRevertedOutOfBand.description, /guard/);
  assert.match(by.ConversionWebhookLossyRate.summary, /\$labels\.direction/);
  assert.match(by.ManagerReconcileAnalyzeFailures.summary, /\$labels\.config_kind/);
  assert.match(by.ManagerPhaseStaleOrFailClosed.description, /\$labels\.from_phase/);
  assert.match(by.ManagerPhaseStaleOrFailClosed.summary, /\$labels\.to_phase/);
  for (const a of ["InformerCacheStale", "InformerWatchErrors"]) {
    assert.match(by[a].summary, /\$labels\.resource/, a);
    assert.match(by[a].description, /dco_informer_watch_errors_total|RBAC/, a);
  }
  assert.match(by.InformerWatchErrors.summary, /\$labels\.reason/);
});

Deno.test("alerts: promtool check rules accepts the rendered rules (annotations included)", async () => {
  const bin = await promtool();
  const { dir } = await prepare();
  for (const f of ["rules-full.yaml", "rules.yaml", "rules-custom.yaml"]) {
    const r = await run(bin, ["check", "rules", f], dir);
    assert.equal(r.code, 0, `promtool check rules ${f}:\n${r.stdout}\n${r.stderr}`);
    assert.match(r.stdout + r.stderr, new RegExp(`SUCCESS: ${ALERTS.length} rules found`));
  }
});

Deno.test("alerts: promtool test rules passes every case in tests/obs/promtool", async () => {
  const bin = await promtool();
  const { dir } = await prepare();
  const files = await caseFiles();
  assert.deepEqual(files, [
    "certificates.yaml",
    "controller_health.yaml",
    "custom_thresholds.yaml",
    "informers.yaml",
    "manager.yaml",
    "webhook.yaml",
  ]);
  // Every alert has at least one case that expects it to fire and one that expects silence.
  const fires = new Set<string>();
  const silent = new Set<string>();
  for (const f of files) {
    const doc = parse(await Deno.readTextFile(`${CASES}/${f}`)) as Obj;
    for (const t of doc.tests) {
      for (const a of t.alert_rule_test ?? []) {
        ((a.exp_alerts ?? []).length > 0 ? fires : silent).add(a.alertname);
      }
    }
  }
  for (const a of ALERTS) {
    assert.ok(fires.has(a), `no firing case for ${a}`);
    assert.ok(silent.has(a), `no silent case for ${a}`);
  }
  const r = await run(bin, ["test", "rules", ...files], dir);
  assert.equal(r.code, 0, `promtool test rules:\n${r.stdout}\n${r.stderr}`);
  for (const f of files) assert.match(r.stdout + r.stderr, new RegExp(`${f}\\s+SUCCESS`));
});
