/**
 * The chart's Grafana dashboards (docs/observability.md#dashboards): Conversion Overview, Conversion Target Detail
 * and Conversion Platform Stability, rendered with `helm template` (one ConfigMap per
 * `dashboards/*.json`) and checked as shipped: valid JSON, unique uids, titles, the `conversion`
 * tag, the `datasource` variable plus each dashboard's own variable, a description on every panel,
 * and PromQL that only uses metric names and labels the operator exports (as docs/observability.md
 * documents them) — or, in the pod-resource rows of Platform Stability, the cAdvisor and
 * kube-state-metrics families that dashboard names. Every query also goes through
 * `promtool check rules` so a syntax error fails here, not in Grafana.
 *
 * Needs helm (tests/chart/_helm.ts) and promtool (hack/promtool.sh; the test fails, never skips).
 */
import assert from "node:assert/strict";
import { stringify } from "yaml";
import { FULLNAME, type Obj, render } from "./_helm.ts";

const ROOT = new URL("../..", import.meta.url).pathname;
const APP_SELECTOR =
  'app_kubernetes_io_name=~"declarative-conversion-operator|declarative-conversion-webhook-server"';

interface Expected {
  file: string;
  uid: string;
  title: string;
  /** Template variables besides `datasource`. */
  variables: string[];
  /** Every query of every panel must reference these variables. */
  everyQueryUses: string[];
  /** Row titles, in order. */
  rows: string[];
}

/** The three dashboards, their variables and rows (docs/observability.md#dashboards). */
const DASHBOARDS: Expected[] = [
  {
    file: "conversion-overview",
    uid: "dco-conversion-overview",
    title: "Conversion Overview",
    variables: [],
    everyQueryUses: [],
    rows: ["Overview", "Controller health"],
  },
  {
    file: "target-detail",
    uid: "dco-conversion-target-detail",
    title: "Conversion Target Detail",
    variables: ["target"],
    everyQueryUses: ["$target"],
    rows: ["Target state", "Conversion traffic", "Registry and manager"],
  },
  {
    file: "platform-stability",
    uid: "dco-conversion-stability",
    title: "Conversion Platform Stability",
    variables: ["namespace"],
    everyQueryUses: ["$namespace"],
    rows: [
      "Platform SLIs",
      "Per-target snapshot",
      "Conversion traffic",
      "Latency",
      "Failures, lossy, compile errors",
      "Registry and replica readiness",
      "Manager control plane",
      "Webhook pod resources",
      "Manager pod resources",
    ],
  },
];

type Kind = "counter" | "gauge" | "histogram";

/**
 * What the operator exports (docs/observability.md lists the same, a test below keeps the two
 * in step): name → [type, labels].
 */
const OPERATOR_METRICS: Record<string, [Kind, string[]]> = {
  // the webhook server
  dco_webhook_conversion_review_duration_seconds: ["histogram", ["target", "direction", "result"]],
  dco_webhook_conversion_review_requests_total: ["counter", ["target", "result"]],
  dco_webhook_conversion_objects_total: [
    "counter",
    ["target", "from_version", "to_version", "result"],
  ],
  dco_webhook_conversion_object_duration_seconds: ["histogram", ["target", "direction", "result"]],
  dco_webhook_conversion_batch_size: ["histogram", ["target"]],
  dco_webhook_conversion_panics_total: ["counter", ["target"]],
  dco_webhook_lossy_conversion_total: ["counter", ["target", "direction"]],
  dco_webhook_registry_size: ["gauge", []],
  dco_webhook_registry_entry_loaded: ["gauge", ["target"]],
  dco_webhook_registry_last_reload_timestamp_seconds: ["gauge", ["target"]],
  dco_webhook_registry_reload_total: ["counter", ["target", "result"]],
  dco_webhook_registry_compile_errors_total: ["counter", ["target", "reason"]],
  dco_webhook_ready: ["gauge", []],
  dco_webhook_initial_sync_duration_seconds: ["gauge", []],
  dco_webhook_initial_sync_targets: ["gauge", []],
  // the manager
  dco_manager_analyze_failures_total: ["counter", ["config_kind", "target", "reason"]],
  dco_manager_apply_duration_seconds: ["histogram", ["config_kind", "target", "result"]],
  dco_manager_phase_transitions_total: [
    "counter",
    ["config_kind", "target", "from_phase", "to_phase", "reason"],
  ],
  dco_watch_map_list_errors_total: ["counter", ["map_func"]],
  dco_manager_conversion_propagated: ["gauge", ["target"]],
  dco_manager_propagation_lag_seconds: ["histogram", ["target"]],
  dco_manager_conversion_reverts_total: ["counter", ["config_kind", "target"]],
  // both roles: what woke a controller
  dco_operator_wake_total: ["counter", ["controller", "cause"]],
  // both roles: the informer caches
  dco_informer_watch_errors_total: ["counter", ["resource", "reason"]],
  dco_informer_last_sync_timestamp_seconds: ["gauge", ["resource"]],
  // the controller framework's families (controller-runtime's names)
  workqueue_depth: ["gauge", ["name", "controller", "priority"]],
  workqueue_adds_total: ["counter", ["name", "controller"]],
  workqueue_queue_duration_seconds: ["histogram", ["name", "controller"]],
  workqueue_work_duration_seconds: ["histogram", ["name", "controller"]],
  workqueue_unfinished_work_seconds: ["gauge", ["name", "controller"]],
  workqueue_longest_running_processor_seconds: ["gauge", ["name", "controller"]],
  workqueue_retries_total: ["counter", ["name", "controller"]],
  controller_runtime_reconcile_total: ["counter", ["controller", "result"]],
  controller_runtime_reconcile_errors_total: ["counter", ["controller"]],
  controller_runtime_terminal_reconcile_errors_total: ["counter", ["controller"]],
  controller_runtime_reconcile_panics_total: ["counter", ["controller"]],
  controller_runtime_reconcile_time_seconds: ["histogram", ["controller"]],
  controller_runtime_max_concurrent_reconciles: ["gauge", ["controller"]],
  controller_runtime_active_workers: ["gauge", ["controller"]],
  // process and runtime (Deno) (process_open_fds is not exported under Deno's permissions)
  process_resident_memory_bytes: ["gauge", []],
  process_cpu_seconds_total: ["counter", []],
  process_start_time_seconds: ["gauge", []],
  deno_v8_heap_used_bytes: ["gauge", []],
  deno_v8_heap_total_bytes: ["gauge", []],
  deno_v8_external_bytes: ["gauge", []],
  deno_event_loop_lag_seconds: ["gauge", []],
};

/**
 * Families whose names are shared with every other workload that exports them, so a query must
 * select this operator through the ServiceMonitors' targetLabels
 * (docs/observability.md#scraping-alerts-and-dashboards-from-the-chart).
 */
const SHARED_PREFIXES = ["workqueue_", "controller_runtime_", "process_", "deno_"];

/**
 * cAdvisor and kube-state-metrics families, allowed only in Platform Stability's pod-resource
 * rows and its `namespace` variable.
 */
const EXTERNAL_METRICS: Record<string, [Kind, string[]]> = {
  container_cpu_usage_seconds_total: ["counter", ["namespace", "pod", "container"]],
  container_memory_working_set_bytes: ["gauge", ["namespace", "pod", "container"]],
  container_cpu_cfs_throttled_periods_total: ["counter", ["namespace", "pod", "container"]],
  container_cpu_cfs_periods_total: ["counter", ["namespace", "pod", "container"]],
  container_network_receive_bytes_total: ["counter", ["namespace", "pod", "interface"]],
  container_network_transmit_bytes_total: ["counter", ["namespace", "pod", "interface"]],
  kube_pod_container_info: ["gauge", ["namespace", "pod", "container"]],
  kube_pod_container_resource_requests: [
    "gauge",
    ["namespace", "pod", "container", "resource", "unit"],
  ],
  kube_pod_container_resource_limits: [
    "gauge",
    ["namespace", "pod", "container", "resource", "unit"],
  ],
  kube_pod_container_status_restarts_total: ["counter", ["namespace", "pod", "container"]],
  kube_horizontalpodautoscaler_status_current_replicas: [
    "gauge",
    ["namespace", "horizontalpodautoscaler"],
  ],
  kube_horizontalpodautoscaler_status_desired_replicas: [
    "gauge",
    ["namespace", "horizontalpodautoscaler"],
  ],
  kube_horizontalpodautoscaler_spec_max_replicas: ["gauge", [
    "namespace",
    "horizontalpodautoscaler",
  ]],
};
const EXTERNAL_ROWS = ["Webhook pod resources", "Manager pod resources"];

/** Labels the scrape adds (Prometheus Operator target labels plus the chart's targetLabels). */
const SCRAPE_LABELS = [
  "job",
  "instance",
  "namespace",
  "pod",
  "service",
  "endpoint",
  "container",
  "app_kubernetes_io_name",
];

// ---------------------------------------------------------------------------------------------
// rendering

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

async function run(cmd: string, args: string[], env?: Record<string, string>): Promise<Run> {
  const out = await new Deno.Command(cmd, { args, env, stdout: "piped", stderr: "piped" })
    .output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

interface Rendered {
  expected: Expected;
  configMap: Obj;
  dashboard: Obj;
}

let rendered: Promise<Rendered[]> | undefined;

/** The three dashboards as the chart renders them with dashboards on (rendered once). */
function dashboards(): Promise<Rendered[]> {
  rendered ??= (async () => {
    const cms = (await render({ "dashboards.enabled": "true" })).filter((o) =>
      o.kind === "ConfigMap" && o.metadata?.labels?.grafana_dashboard !== undefined
    );
    return DASHBOARDS.map((expected) => {
      const name = `${FULLNAME}-dashboard-${expected.file}`;
      const configMap = cms.find((o) => o.metadata.name === name);
      assert.ok(configMap, `ConfigMap ${name} rendered; have ${cms.map((o) => o.metadata.name)}`);
      const key = `${expected.file}.json`;
      assert.deepEqual(Object.keys(configMap.data), [key]);
      let dashboard: Obj;
      try {
        dashboard = JSON.parse(configMap.data[key]);
      } catch (e) {
        throw new Error(`${key} is not valid JSON: ${e}`);
      }
      return { expected, configMap, dashboard };
    });
  })();
  return rendered;
}

/** Every query of a dashboard: panel queries and query variables, with the row they sit in. */
function queries(dash: Obj): Array<{ where: string; row: string; expr: string }> {
  const out: Array<{ where: string; row: string; expr: string }> = [];
  let row = "";
  for (const p of dash.panels as Obj[]) {
    if (p.type === "row") row = p.title;
    for (const t of p.targets ?? []) {
      out.push({ where: `${p.title}/${t.refId}`, row, expr: t.expr });
    }
  }
  for (const v of dash.templating.list as Obj[]) {
    if (v.type !== "query") continue;
    const q = typeof v.query === "string" ? v.query : v.query.query;
    out.push({ where: `variable ${v.name}`, row: "variables", expr: q });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// a small PromQL reader: enough to list metric names and the labels a query touches

const FUNCTIONS_AND_KEYWORDS = new Set([
  "sum",
  "min",
  "max",
  "avg",
  "count",
  "group",
  "stddev",
  "stdvar",
  "topk",
  "bottomk",
  "quantile",
  "count_values",
  "by",
  "without",
  "on",
  "ignoring",
  "group_left",
  "group_right",
  "and",
  "or",
  "unless",
  "bool",
  "offset",
  "inf",
  "nan",
]);

/** Grafana variables and Grafana-only functions replaced by plain PromQL. */
function toPromQL(expr: string): string {
  return expr
    .replace(/^label_values\((.*),\s*[a-zA-Z_]+\)$/s, "$1")
    .replace(/^query_result\((.*)\)$/s, "$1")
    .replaceAll("$__rate_interval", "1m")
    .replaceAll("$target", "some-target")
    .replaceAll("$namespace", ".+")
    .replace(/\$\{?[a-zA-Z_]+\}?/g, "x");
}

interface Parsed {
  /** Metric names as written (with `_bucket`/`_count`/`_sum`). */
  metrics: string[];
  /** [metric, label] for each matcher in a selector's braces. */
  matchers: Array<[string, string]>;
  /** Labels named in by/without/on/ignoring/group_left/group_right. */
  grouping: string[];
}

function parsePromQL(promql: string): Parsed {
  const strings: string[] = [];
  let s = promql.replace(/"(?:[^"\\]|\\.)*"/g, (m) => {
    strings.push(m);
    return '""';
  });
  const matchers: Array<[string, string]> = [];
  const metrics: string[] = [];
  s = s.replace(/([a-zA-Z_:][a-zA-Z0-9_:]*)?\s*\{([^}]*)\}/g, (_m, name, body: string) => {
    for (const part of body.split(",").map((x) => x.trim()).filter((x) => x !== "")) {
      const label = part.match(/^([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)/);
      assert.ok(label, `matcher ${part} in ${promql}`);
      matchers.push([name ?? "", label[1]]);
    }
    return name ? ` ${name} ` : " ";
  });
  const grouping: string[] = [];
  s = s.replace(
    /\b(by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)/g,
    (_m, _kw, body: string) => {
      grouping.push(...body.split(",").map((x) => x.trim()).filter((x) => x !== ""));
      return " ";
    },
  );
  s = s.replace(/\[[^\]]*\]/g, " ").replace(/\boffset\s+\d+[smhdwy]+/g, " ");
  s = s.replace(/(?<![a-zA-Z_:])\d+(\.\d+)?(e[+-]?\d+)?/gi, " ");
  for (const m of s.matchAll(/([a-zA-Z_:][a-zA-Z0-9_:]*)(\s*\()?/g)) {
    if (m[2] !== undefined) continue; // a function or aggregation
    if (FUNCTIONS_AND_KEYWORDS.has(m[1].toLowerCase())) continue;
    metrics.push(m[1]);
  }
  return { metrics, matchers, grouping };
}

/** `foo_bucket` of a histogram → [family, kind]; undefined when the name is not allowed. */
function family(
  name: string,
  allowed: Record<string, [Kind, string[]]>,
): [string, Kind, string[]] | undefined {
  if (allowed[name] !== undefined) {
    const [kind, labels] = allowed[name];
    // A histogram is only queried through its series.
    return kind === "histogram" ? undefined : [name, kind, labels];
  }
  const m = name.match(/^(.*)_(bucket|count|sum)$/);
  if (m && allowed[m[1]]?.[0] === "histogram") {
    const labels = allowed[m[1]][1];
    return [m[1], "histogram", m[2] === "bucket" ? [...labels, "le"] : labels];
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// tests

Deno.test("dashboards: the reader finds metric names and labels", () => {
  const p = parsePromQL(toPromQL(
    'histogram_quantile(0.99, sum by (target, le) (rate(a_b_bucket{target="$target", x=~"1|2"}[5m]))) / on(pod) group_left c offset 15m > bool 1e-9 unless vector(0)',
  ));
  assert.deepEqual(p.metrics, ["a_b_bucket", "c"]);
  assert.deepEqual(p.matchers, [["a_b_bucket", "target"], ["a_b_bucket", "x"]]);
  assert.deepEqual(p.grouping, ["target", "le", "pod"]);
  assert.deepEqual(family("dco_webhook_conversion_batch_size_bucket", OPERATOR_METRICS), [
    "dco_webhook_conversion_batch_size",
    "histogram",
    ["target", "le"],
  ]);
  assert.equal(family("dco_webhook_conversion_batch_size", OPERATOR_METRICS), undefined);
  assert.equal(family("dco_webhook_ready_count", OPERATOR_METRICS), undefined);
  assert.equal(family("go_goroutines", OPERATOR_METRICS), undefined);
});

Deno.test("dashboards: the allowed operator metrics are the ones docs/observability.md documents", async () => {
  const doc = await Deno.readTextFile(`${ROOT}docs/observability.md`);
  for (const name of Object.keys(OPERATOR_METRICS)) {
    assert.ok(doc.includes(`\`${name}\``), `${name} is documented in docs/observability.md`);
  }
});

Deno.test("dashboards: one ConfigMap per dashboard, valid JSON, unique uids and titles", async () => {
  const all = await dashboards();
  const cms = (await render({ "dashboards.enabled": "true" })).filter((o) =>
    o.kind === "ConfigMap" && o.metadata?.labels?.grafana_dashboard !== undefined
  );
  assert.deepEqual(
    cms.map((o) => o.metadata.name).sort(),
    DASHBOARDS.map((d) => `${FULLNAME}-dashboard-${d.file}`).sort(),
  );
  for (const cm of cms) assert.ok(cm.metadata.name.length <= 63, cm.metadata.name);
  const uids = new Set<string>();
  const titles = new Set<string>();
  for (const { expected, configMap, dashboard } of all) {
    assert.equal(configMap.metadata.labels.grafana_dashboard, "1");
    assert.equal(dashboard.uid, expected.uid, expected.file);
    assert.equal(dashboard.title, expected.title, expected.file);
    assert.ok(!uids.has(dashboard.uid), `duplicate uid ${dashboard.uid}`);
    assert.ok(!titles.has(dashboard.title), `duplicate title ${dashboard.title}`);
    uids.add(dashboard.uid);
    titles.add(dashboard.title);
    assert.ok(dashboard.uid.length <= 40, `${dashboard.uid}: Grafana uids are at most 40 chars`);
    assert.deepEqual(dashboard.tags, ["conversion"], expected.file);
    assert.ok(
      dashboard.links.some((l: Obj) => l.type === "dashboards" && l.tags.includes("conversion")),
      `${expected.file}: header links to the other conversion dashboards`,
    );
    assert.ok(typeof dashboard.description === "string" && dashboard.description.length > 20);
  }
});

Deno.test("dashboards: template variables", async () => {
  for (const { expected, dashboard } of await dashboards()) {
    const vars = dashboard.templating.list as Obj[];
    assert.deepEqual(
      vars.map((v) => v.name),
      ["datasource", ...expected.variables],
      expected.file,
    );
    assert.equal(vars[0].type, "datasource");
    assert.equal(vars[0].query, "prometheus");
    for (const v of vars.slice(1)) {
      assert.equal(v.type, "query", `${expected.file}: ${v.name}`);
      assert.equal(v.datasource?.uid, "${datasource}", `${expected.file}: ${v.name}`);
    }
  }
  const [, detail, stability] = await dashboards();
  const target = detail.dashboard.templating.list[1];
  const tq = parsePromQL(toPromQL(target.query.query));
  assert.deepEqual(
    [...new Set(tq.metrics)].sort(),
    ["dco_manager_apply_duration_seconds_count", "dco_webhook_registry_entry_loaded"],
  );
  assert.deepEqual([...new Set(tq.grouping)], ["target"]);
  assert.ok(target.regex.includes("target="), "the variable takes the target label");
  const ns = stability.dashboard.templating.list[1];
  assert.equal(
    ns.query.query,
    'label_values(kube_pod_container_info{container=~"webhook-server|manager"}, namespace)',
  );
});

Deno.test("dashboards: every panel has a description, a data source and queries", async () => {
  for (const { expected, dashboard } of await dashboards()) {
    const ids = new Set<number>();
    const rows: string[] = [];
    for (const p of dashboard.panels as Obj[]) {
      const where = `${expected.file}: ${p.title}`;
      assert.ok(typeof p.description === "string" && p.description.length > 20, where);
      assert.ok(typeof p.title === "string" && p.title !== "", where);
      assert.ok(!ids.has(p.id), `${where}: duplicate panel id ${p.id}`);
      ids.add(p.id);
      assert.ok(p.gridPos.x + p.gridPos.w <= 24, `${where}: fits the grid`);
      if (p.type === "row") {
        rows.push(p.title);
        continue;
      }
      assert.deepEqual(p.datasource, { type: "prometheus", uid: "${datasource}" }, where);
      assert.ok(Array.isArray(p.targets) && p.targets.length > 0, `${where}: has a query`);
      const refIds = new Set<string>();
      for (const t of p.targets) {
        assert.ok(typeof t.expr === "string" && t.expr !== "", `${where}: ${t.refId} has expr`);
        assert.ok(!refIds.has(t.refId), `${where}: duplicate refId ${t.refId}`);
        refIds.add(t.refId);
        assert.deepEqual(t.datasource, { type: "prometheus", uid: "${datasource}" }, where);
        assert.doesNotMatch(t.expr, /__[A-Z_]+__/, `${where}: placeholder left`);
        for (const v of expected.everyQueryUses) {
          assert.ok(t.expr.includes(v), `${where}: ${t.expr} uses ${v}`);
        }
      }
    }
    assert.deepEqual(rows, expected.rows, expected.file);
  }
});

Deno.test("dashboards: queries use only the operator's metrics and their labels", async () => {
  for (const { expected, dashboard } of await dashboards()) {
    for (const q of queries(dashboard)) {
      const where = `${expected.file}: ${q.where}: ${q.expr}`;
      const externalOk = expected.file === "platform-stability" &&
        (EXTERNAL_ROWS.includes(q.row) || q.row === "variables");
      const allowed = externalOk ? { ...OPERATOR_METRICS, ...EXTERNAL_METRICS } : OPERATOR_METRICS;
      const p = parsePromQL(toPromQL(q.expr));
      assert.ok(p.metrics.length > 0, `${where}: reads a metric`);
      const labels = new Set([...SCRAPE_LABELS]);
      for (const name of p.metrics) {
        const f = family(name, allowed);
        assert.ok(f, `${where}: ${name} is not a metric the operator exports`);
        f[2].forEach((l) => labels.add(l));
        if (SHARED_PREFIXES.some((x) => name.startsWith(x))) {
          assert.ok(
            new RegExp(`${name}\\{[^}]*${escape(APP_SELECTOR)}`).test(q.expr),
            `${where}: ${name} selects this operator by app_kubernetes_io_name`,
          );
        }
      }
      for (const [metric, label] of p.matchers) {
        const f = family(metric, allowed);
        assert.ok(f, `${where}: selector without a known metric`);
        assert.ok(
          f[2].includes(label) || SCRAPE_LABELS.includes(label),
          `${where}: ${metric} has no label ${label}`,
        );
      }
      for (const label of p.grouping) {
        assert.ok(labels.has(label), `${where}: no metric of this query has label ${label}`);
      }
      assert.doesNotMatch(q.expr, /\bxrd\s*[=!]/, `${where}: the target label is target`);
    }
  }
});

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

Deno.test("dashboards: Target Detail and Platform Stability carry their documented panels", async () => {
  const [, detail, stability] = await dashboards();
  const titles = (d: Obj) => (d.panels as Obj[]).filter((p) => p.type !== "row");
  const detailPanels = titles(detail.dashboard);
  assert.deepEqual(
    detailPanels.filter((p) => p.type === "stat").map((p) => p.title),
    [
      "Loaded on all ready replicas",
      "Replicas with plan",
      "Seconds since last compile",
      "Request rate",
      "Error ratio",
      "Config kind",
    ],
  );
  const uses = (panels: Obj[], title: string, metric: string) => {
    const p = panels.find((x) => x.title === title);
    assert.ok(p, `panel ${title}`);
    assert.ok(p.targets.some((t: Obj) => t.expr.includes(metric)), `${title} reads ${metric}`);
    return p;
  };
  // The per-pod readiness recipe: ready replicas that have not loaded the target (empty = healthy).
  const loaded = uses(detailPanels, "Loaded on all ready replicas", "dco_webhook_ready == 1");
  assert.ok(
    loaded.targets[0].expr.includes(
      'unless on(pod) (dco_webhook_registry_entry_loaded{target="$target"} == 1)',
    ),
  );
  for (
    const [title, metric] of [
      ["Review latency p99 by direction", "dco_webhook_conversion_review_duration_seconds_bucket"],
      ["Requests by result", "dco_webhook_conversion_review_requests_total"],
      ["Objects from -> to", "dco_webhook_conversion_objects_total"],
      ["Lossy conversions by direction", "dco_webhook_lossy_conversion_total"],
      ["Entry loaded per pod", "dco_webhook_registry_entry_loaded"],
      ["Compiles and reloads", "dco_webhook_registry_compile_errors_total"],
      ["Manager apply latency p99", "dco_manager_apply_duration_seconds_bucket"],
      ["Analyze failures", "dco_manager_analyze_failures_total"],
      ["Phase transitions", "dco_manager_phase_transitions_total"],
    ]
  ) uses(detailPanels, title, metric);

  const stab = titles(stability.dashboard);
  const slis = stab.filter((p) => p.type === "stat");
  assert.equal(slis.length, 12, "twelve platform SLIs");
  assert.ok(stab.some((p) => p.type === "table" && p.title === "Per-target snapshot"));
  assert.ok(stab.some((p) => p.type === "heatmap"), "a latency heatmap");
  uses(stab, "Ready replicas missing a loaded plan", "dco_webhook_ready{");
  uses(stab, "Manager event-loop lag", "deno_event_loop_lag_seconds");
  uses(stab, "Manager RSS and V8 heap", "process_resident_memory_bytes");
  uses(stab, "Manager process CPU", "process_cpu_seconds_total");
  uses(stab, "Webhook-server HPA replicas", "kube_horizontalpodautoscaler_status_current_replicas");
  uses(stab, "Workqueue depth", "workqueue_depth");
  uses(stab, "Reconcile rate by result", "controller_runtime_reconcile_total");
  uses(stab, "Watch-map errors", "dco_watch_map_list_errors_total");
  uses(stab, "Informer cache age", "dco_informer_last_sync_timestamp_seconds");
  uses(stab, "Informer list/watch errors", "dco_informer_watch_errors_total");
  for (const name of ["Webhook", "Manager"]) {
    uses(stab, `${name} CPU vs request / limit`, "kube_pod_container_resource_limits");
    uses(
      stab,
      `${name} memory working set vs request / limit`,
      "container_memory_working_set_bytes",
    );
    uses(stab, `${name} restarts 1h`, "kube_pod_container_status_restarts_total");
    uses(stab, `${name} CFS throttling`, "container_cpu_cfs_throttled_periods_total");
  }
  assert.ok(
    !JSON.stringify(stability.dashboard).includes("go_goroutines"),
    "Deno: event-loop lag instead of goroutines",
  );
});

Deno.test("dashboards: every query is valid PromQL (promtool check rules)", async () => {
  const pr = await run("bash", [`${ROOT}hack/promtool.sh`]);
  assert.equal(pr.code, 0, `hack/promtool.sh could not provide promtool:\n${pr.stderr}`);
  const promtool = pr.stdout.trim().split("\n").at(-1)!;
  const rules: Obj[] = [];
  for (const { expected, dashboard } of await dashboards()) {
    queries(dashboard).forEach((q, i) =>
      rules.push({
        record: `dashboard:${expected.file.replaceAll("-", "_")}:q${i}`,
        expr: toPromQL(q.expr),
      })
    );
  }
  const dir = await Deno.makeTempDir({ prefix: "dco-dashboards-" });
  try {
    const file = `${dir}/queries.yaml`;
    await Deno.writeTextFile(file, stringify({ groups: [{ name: "dashboards", rules }] }));
    const r = await run(promtool, ["check", "rules", file]);
    assert.equal(r.code, 0, `promtool check rules:\n${r.stdout}\n${r.stderr}`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
