/**
 * The CRDs generated from the zod schemas (src/api/crds.ts): the committed manifests are not
 * stale, every schema is structural, names/columns/scope are the ones src/api/crds.ts declares, the post-processing
 * handles each zod shape it claims to, and structural defaulting of the generated schema gives
 * `spec.sharding` the semantics src/api/server.ts documents (absent stays absent, `{}` is a member).
 */
import assert from "node:assert/strict";
import { z } from "zod";
import { RE2JS } from "re2js";
import { parse } from "yaml";
import {
  CRD_DIR,
  type CustomResourceDefinition,
  generateCRDs,
  openAPISchemaOf,
  renderCRDFiles,
  type SchemaNode,
  toStructural,
} from "../../src/api/crds.ts";
import {
  CONFIG_PHASES,
  ConversionWebhookServerSpecSchema,
  isShardMember,
  REVIEW_VERSIONS_RULE,
  RULE_PARAMS_KEYS,
  shardWeight,
} from "../../src/api/mod.ts";

const REPO = new URL("../../", import.meta.url).pathname;
const GEN = `${REPO}hack/gen_crds.ts`;

function crdByKind(kind: string): CustomResourceDefinition {
  const crd = generateCRDs().find((c) => c.spec.names.kind === kind);
  assert.ok(crd, kind);
  return crd;
}

function schemaOf(kind: string): SchemaNode {
  return crdByKind(kind).spec.versions[0].schema.openAPIV3Schema;
}

function isNode(v: unknown): v is SchemaNode {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Walks every schema node with its path. */
function walk(node: SchemaNode, at: string, visit: (n: SchemaNode, at: string) => void): void {
  visit(node, at);
  if (isNode(node.properties)) {
    for (const [k, v] of Object.entries(node.properties)) {
      walk(v as SchemaNode, `${at}.${k}`, visit);
    }
  }
  if (isNode(node.additionalProperties)) walk(node.additionalProperties, `${at}.*`, visit);
  if (isNode(node.items)) walk(node.items, `${at}[]`, visit);
}

/** Problems that make a schema non-structural (or that the apiserver would reject). */
function structuralProblems(root: SchemaNode): string[] {
  const problems: string[] = [];
  walk(root, "", (n, at) => {
    const free = n["x-kubernetes-preserve-unknown-fields"] === true;
    const intOrString = n["x-kubernetes-int-or-string"] === true;
    if (typeof n.type !== "string" && !free && !intOrString) problems.push(`${at}: no type`);
    for (const k of ["$ref", "definitions", "$defs", "anyOf", "oneOf", "allOf", "not", "const"]) {
      if (k in n) problems.push(`${at}: ${k}`);
    }
    if ("additionalProperties" in n && "properties" in n) {
      problems.push(`${at}: additionalProperties next to properties`);
    }
    if (n.additionalProperties === false || n.additionalProperties === true) {
      problems.push(`${at}: additionalProperties: ${n.additionalProperties}`);
    }
    if (n.type === "integer" && n.format !== "int32" && n.format !== "int64") {
      problems.push(`${at}: integer without int32/int64 format`);
    }
    if (n.type === "array" && !isNode(n.items)) problems.push(`${at}: array without items`);
    if (typeof n.pattern === "string") {
      try {
        RE2JS.compile(n.pattern);
      } catch {
        problems.push(`${at}: pattern not RE2`);
      }
    }
    if (n["x-kubernetes-list-type"] === "map") {
      const item = n.items as SchemaNode;
      const required = (item.required ?? []) as string[];
      for (const key of n["x-kubernetes-list-map-keys"] as string[]) {
        if (!required.includes(key)) problems.push(`${at}: list-map key ${key} not required`);
      }
    }
  });
  return problems;
}

/**
 * The apiserver's structural defaulting (apiextensions-apiserver `structuraldefaulting.Default`):
 * defaults fill absent properties of objects that are present, recursing into objects, maps
 * and list items; an absent object is never created by its children's defaults.
 */
function applyDefaults(value: unknown, schema: SchemaNode): unknown {
  if (Array.isArray(value)) {
    return isNode(schema.items)
      ? value.map((v) => applyDefaults(v, schema.items as SchemaNode))
      : value;
  }
  if (!isNode(value)) return value;
  const out: Record<string, unknown> = { ...value };
  if (isNode(schema.properties)) {
    for (const [k, sub] of Object.entries(schema.properties as Record<string, SchemaNode>)) {
      if (!(k in out) && "default" in sub) out[k] = structuredClone(sub.default);
      if (k in out) out[k] = applyDefaults(out[k], sub);
    }
  } else if (isNode(schema.additionalProperties)) {
    for (const k of Object.keys(out)) {
      out[k] = applyDefaults(out[k], schema.additionalProperties);
    }
  }
  return out;
}

Deno.test("committed CRD manifests are up to date with the zod schemas", async () => {
  const files = renderCRDFiles();
  assert.deepEqual([...files.keys()].sort(), [
    "terasky.com_conversionwebhookservers.yaml",
    "terasky.com_crdconversionconfigs.yaml",
    "terasky.com_xrdconversionconfigs.yaml",
  ]);
  const committed: string[] = [];
  for await (const e of Deno.readDir(`${REPO}${CRD_DIR}`)) {
    if (e.isFile) committed.push(e.name);
  }
  assert.deepEqual(
    committed.sort(),
    [...files.keys()].sort(),
    `${CRD_DIR} holds other files than gen:crds writes; run \`deno task gen:crds\``,
  );
  for (const [name, text] of files) {
    const onDisk = await Deno.readTextFile(`${REPO}${CRD_DIR}/${name}`);
    assert.ok(
      onDisk === text,
      `${CRD_DIR}/${name} is stale: run \`deno task gen:crds\` and commit the result`,
    );
    assert.deepEqual(
      parse(onDisk),
      generateCRDs().find((c) => name.endsWith(`${c.spec.names.plural}.yaml`)),
    );
  }
});

Deno.test("gen_crds --check: 0 when current, 1 when a file differs or is missing", async () => {
  const run = async (...args: string[]) => {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--allow-read", "--allow-write", GEN, ...args],
      stdout: "piped",
      stderr: "piped",
    }).output();
    return { code: out.code, stderr: new TextDecoder().decode(out.stderr) };
  };
  assert.equal((await run("--check")).code, 0);

  const dir = await Deno.makeTempDir({ prefix: "dco-gen-crds-" });
  try {
    const missing = await run("--check", `--dir=${dir}`);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /deno task gen:crds/);
    assert.equal((await run(`--dir=${dir}`)).code, 0);
    assert.equal((await run("--check", `--dir=${dir}`)).code, 0);
    await Deno.writeTextFile(`${dir}/terasky.com_crdconversionconfigs.yaml`, "# edited\n", {
      append: true,
    });
    const stale = await run("--check", `--dir=${dir}`);
    assert.equal(stale.code, 1);
    assert.match(stale.stderr, /terasky\.com_crdconversionconfigs\.yaml: out of date/);
    assert.equal((await run("--bogus")).code, 2);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("every generated schema is structural", () => {
  for (const crd of generateCRDs()) {
    const root = crd.spec.versions[0].schema.openAPIV3Schema;
    assert.deepEqual(structuralProblems(root), [], crd.metadata.name);
    assert.ok(!JSON.stringify(root).includes("$ref"), crd.metadata.name);
  }
});

/**
 * Every property (at any depth, under list items and map values too) without a description —
 * except the root `metadata`, which the apiserver forbids anything but its type (kubectl explain
 * documents it as ObjectMeta).
 */
function undescribed(root: SchemaNode): string[] {
  const missing: string[] = [];
  walk(root, "", (n, at) => {
    if (!isNode(n.properties)) return;
    for (const [k, v] of Object.entries(n.properties)) {
      if (at === "" && k === "metadata") continue;
      const d = (v as SchemaNode).description;
      if (typeof d !== "string" || d.trim() === "") missing.push(`${at}.${k}`);
    }
  });
  return missing;
}

Deno.test("every property of every generated CRD has a description (kubectl explain)", () => {
  for (const crd of generateCRDs()) {
    const root = crd.spec.versions[0].schema.openAPIV3Schema;
    assert.deepEqual(undescribed(root), [], crd.metadata.name);
    // The apiserver rejects a CRD whose root `metadata` says more than its type.
    assert.deepEqual(propsOf(root).metadata, { type: "object" });
    assert.ok(typeof root.description === "string" && root.description !== "");
  }
});

Deno.test("the description check names a property without one", () => {
  const root = openAPISchemaOf(
    z.object({
      a: z.string().describe("described"),
      b: z.array(z.object({ c: z.int(), d: z.string().describe("d") })).describe("list"),
      e: z.record(z.string(), z.object({ f: z.boolean() })).describe("map"),
    }),
  );
  assert.deepEqual(undescribed(root), [".b[].c", ".e.*.f"]);
});

Deno.test("names, scope, subresources and printer columns", () => {
  /** The Ready condition's message, shown with `-o wide` (priority 1). */
  const MESSAGE = ["Message", "string", '.status.conditions[?(@.type=="Ready")].message', "1"];
  /** The config kinds' columns: the target's name, then the same four. */
  const configColumns = (target: "CRD" | "XRD") => [
    [target, "string", `.spec.target${target}.name`],
    ["Hub", "string", ".spec.hubVersion"],
    ["Phase", "string", ".status.phase"],
    ["Lossless", "boolean", ".status.overallLossless"],
    ["Age", "date", ".metadata.creationTimestamp"],
    MESSAGE,
  ];
  const expected: Record<string, { plural: string; short: string; columns: string[][] }> = {
    CRDConversionConfig: {
      plural: "crdconversionconfigs",
      short: "ccc",
      columns: configColumns("CRD"),
    },
    XRDConversionConfig: {
      plural: "xrdconversionconfigs",
      short: "xcc",
      columns: configColumns("XRD"),
    },
    ConversionWebhookServer: {
      plural: "conversionwebhookservers",
      short: "cws",
      columns: [
        ["Default", "boolean", ".spec.default"],
        ["Ready", "integer", ".status.readyReplicas"],
        ["Endpoint", "string", ".status.endpoint"],
        ["Age", "date", ".metadata.creationTimestamp"],
        MESSAGE,
      ],
    },
  };
  const crds = generateCRDs();
  assert.deepEqual(crds.map((c) => c.spec.names.kind).sort(), Object.keys(expected).sort());
  for (const crd of crds) {
    const want = expected[crd.spec.names.kind];
    assert.equal(crd.metadata.name, `${want.plural}.terasky.com`);
    assert.equal(crd.spec.group, "terasky.com");
    assert.equal(crd.spec.scope, "Cluster");
    assert.deepEqual(crd.spec.names, {
      kind: crd.spec.names.kind,
      listKind: `${crd.spec.names.kind}List`,
      plural: want.plural,
      singular: crd.spec.names.kind.toLowerCase(),
      shortNames: [want.short],
    });
    assert.equal(crd.spec.versions.length, 1);
    const v = crd.spec.versions[0];
    assert.deepEqual([v.name, v.served, v.storage], ["v1alpha1", true, true]);
    assert.deepEqual(v.subresources, { status: {} });
    assert.deepEqual(
      v.additionalPrinterColumns.map((c) =>
        c.priority === undefined ? [c.name, c.type, c.jsonPath] : [
          c.name,
          c.type,
          c.jsonPath,
          String(c.priority),
        ]
      ),
      want.columns,
    );
    assert.deepEqual(v.schema.openAPIV3Schema.required, ["spec"]);
  }
});

type Props = Record<string, SchemaNode>;
const propsOf = (n: SchemaNode): Props => n.properties as Props;

Deno.test("config kinds: spec defaults, enums, rule blocks and status", () => {
  for (
    const [kind, target, gen] of [
      ["XRDConversionConfig", "targetXRD", "observedXRDGeneration"],
      ["CRDConversionConfig", "targetCRD", "observedCRDGeneration"],
    ]
  ) {
    const root = propsOf(schemaOf(kind));
    const spec = root.spec;
    const p = propsOf(spec);
    assert.deepEqual(spec.required, [target, "hubVersion", "spokes"], kind);
    assert.deepEqual(p.conversionReviewVersions.default, ["v1"]);
    // The apiserver checks what the offline decode checks: known versions, a set, v1 in it.
    assert.deepEqual((p.conversionReviewVersions.items as SchemaNode).enum, ["v1", "v1beta1"]);
    assert.equal(p.conversionReviewVersions.maxItems, 2);
    assert.equal(p.conversionReviewVersions["x-kubernetes-list-type"], "set");
    assert.deepEqual(p.conversionReviewVersions["x-kubernetes-validations"], [{
      rule: "size(self) == 0 || 'v1' in self",
      message: REVIEW_VERSIONS_RULE,
    }]);
    assert.deepEqual([p.unmappedFieldPolicy.default, p.unmappedFieldPolicy.enum], [
      "Error",
      ["Error", "Warn"],
    ]);
    assert.deepEqual([p.driftPolicy.default, p.driftPolicy.enum], [
      "KeepServingStale",
      ["KeepServingStale", "FailClosed"],
    ]);
    assert.equal(p.spokes.minItems, 1);
    assert.equal(propsOf(p.webhookServerRef).name.type, "string");
    const spoke = p.spokes.items as SchemaNode;
    const rules = propsOf(spoke).rules;
    assert.deepEqual(rules.default, []);
    const rule = propsOf(rules.items as SchemaNode);
    assert.equal((rule.strategy.enum as string[]).length, 29);
    for (const key of RULE_PARAMS_KEYS) assert.equal(rule[key]?.type, "object", `${kind} ${key}`);
    assert.equal(rule.acknowledgeLossy.default, false);
    // Free-form JSON values stay free-form.
    assert.equal(propsOf(rule.when).equals["x-kubernetes-preserve-unknown-fields"], true);

    const status = propsOf(root.status);
    assert.deepEqual(status.phase.enum, [...CONFIG_PHASES]);
    assert.equal(status[gen].format, "int64");
    for (
      const f of [
        "observedGeneration",
        "schemaHash",
        "conditions",
        "assignedWebhookServer",
        "webhookPath",
        "webhookURL",
        "overallLossless",
        "spokeStatuses",
        "lastAppliedPlanHash",
        "message",
      ]
    ) {
      assert.ok(f in status, `${kind} status.${f}`);
    }
    const conditions = status.conditions;
    assert.equal(conditions["x-kubernetes-list-type"], "map");
    assert.deepEqual(conditions["x-kubernetes-list-map-keys"], ["type"]);
    assert.deepEqual(propsOf(conditions.items as SchemaNode).status.enum, [
      "True",
      "False",
      "Unknown",
    ]);
    const xrdOnly = ["webhookPort", "generatedCRDs"];
    for (const f of xrdOnly) {
      assert.equal(f in status, kind === "XRDConversionConfig", `${kind} ${f}`);
    }
  }
  const generated = propsOf(schemaOf("XRDConversionConfig")).status;
  const gcrds = propsOf(generated).generatedCRDs;
  assert.deepEqual(gcrds["x-kubernetes-list-map-keys"], ["name"]);
  assert.deepEqual(propsOf(gcrds.items as SchemaNode).role.enum, ["composite", "claim"]);
  assert.equal(propsOf(generated).webhookPort.format, "int32");
});

Deno.test("ConversionWebhookServer: spec defaults and status", () => {
  const root = propsOf(schemaOf("ConversionWebhookServer"));
  const p = propsOf(root.spec);
  // `certificate` is optional: only the manager's cert-manager mode needs its issuerRef.
  assert.equal(root.spec.required, undefined);
  assert.equal(propsOf(p.certificate).required, undefined);
  const defaults: [string, unknown][] = [
    ["default", false],
    ["replicas", 2],
    ["serviceAccountName", "declarative-conversion-webhook-server"],
  ];
  for (const [f, d] of defaults) assert.deepEqual(p[f].default, d, f);
  for (const f of ["sharding", "startupProbe", "rollout", "autoscaling", "service", "namespace"]) {
    assert.equal("default" in p[f], false, `${f} itself has no default`);
  }
  const nested: [string, string, unknown][] = [
    ["autoscaling", "targetCPUUtilizationPercentage", 75],
    ["service", "type", "ClusterIP"],
    ["service", "port", 443],
    ["startupProbe", "enabled", true],
    ["startupProbe", "periodSeconds", 5],
    ["startupProbe", "failureThreshold", 60],
    ["sharding", "enabled", true],
    ["sharding", "weight", 1],
    ["rollout", "preStopSleepSeconds", 5],
    ["rollout", "terminationGracePeriodSeconds", 45],
    ["rollout", "maxUnavailable", 0],
    ["rollout", "maxSurge", 1],
    ["rollout", "defaultTopologySpread", true],
  ];
  for (const [block, f, d] of nested) {
    assert.deepEqual(propsOf(p[block])[f].default, d, `${block}.${f}`);
  }
  assert.deepEqual(p.autoscaling.required, ["minReplicas", "maxReplicas"]);
  assert.equal(propsOf(p.sharding).weight.minimum, 1);
  assert.deepEqual(
    [
      propsOf(p.rollout).preStopSleepSeconds.minimum,
      propsOf(p.rollout).preStopSleepSeconds.maximum,
    ],
    [0, 300],
  );
  assert.equal(propsOf(p.rollout).terminationGracePeriodSeconds.format, "int64");
  for (const f of ["maxUnavailable", "maxSurge"]) {
    assert.equal(propsOf(p.rollout)[f]["x-kubernetes-int-or-string"], true);
  }
  const issuer = propsOf(propsOf(p.certificate).issuerRef);
  assert.deepEqual([issuer.kind.default, issuer.kind.enum], ["ClusterIssuer", [
    "Issuer",
    "ClusterIssuer",
  ]]);
  assert.equal(p.affinity["x-kubernetes-preserve-unknown-fields"], true);

  const status = propsOf(root.status);
  assert.deepEqual(Object.keys(status).sort(), [
    "assignedConfigs",
    "conditions",
    "endpoint",
    "observedGeneration",
    "readyReplicas",
    "replicas",
    "reportingReplicas",
    "servedTargets",
  ]);
  assert.equal(status.servedTargets["x-kubernetes-list-type"], "atomic");
  assert.equal(status.reportingReplicas.format, "int32");
  assert.deepEqual(Object.keys(propsOf(status.assignedConfigs.items as SchemaNode)), [
    "name",
    "xrdName",
    "phase",
  ]);
});

Deno.test("structural defaulting of the generated schema: sharding absent / {} / enabled:false", () => {
  const spec = propsOf(schemaOf("ConversionWebhookServer")).spec;
  const base = { certificate: { issuerRef: { name: "ca" } } };
  const cases: [string, Record<string, unknown>, unknown, boolean][] = [
    ["absent", {}, undefined, false],
    ["empty", { sharding: {} }, { enabled: true, weight: 1 }, true],
    ["disabled", { sharding: { enabled: false } }, { enabled: false, weight: 1 }, false],
  ];
  for (const [name, extra, want, member] of cases) {
    const defaulted = applyDefaults({ ...base, ...extra }, spec) as Record<string, unknown>;
    assert.deepEqual(defaulted.sharding, want, name);
    assert.equal("sharding" in defaulted, want !== undefined, name);
    assert.equal(isShardMember(defaulted), member, name);
    // The zod decode agrees with the apiserver's algorithm on the whole spec.
    const decoded = JSON.parse(
      JSON.stringify(ConversionWebhookServerSpecSchema.parse({ ...base, ...extra })),
    );
    assert.deepEqual(decoded, defaulted, name);
  }
  assert.equal(shardWeight({ sharding: { weight: 0 } }), 1);
  assert.equal(shardWeight({ sharding: { weight: -3 } }), 1);
  assert.equal(shardWeight({ sharding: { weight: 4 } }), 4);
  assert.equal(shardWeight({}), 1);
});

Deno.test("toStructural: each zod shape maps onto a structural node", () => {
  const node = openAPISchemaOf(z.object({
    i32: z.int32().min(1),
    i64: z.int(),
    n: z.number(),
    ios: z.union([z.int(), z.string()]).default(1),
    free: z.unknown(),
    loose: z.looseObject({ name: z.string() }),
    strict: z.strictObject({ a: z.string() }),
    map: z.record(z.string(), z.int32()),
    when: z.iso.datetime(),
    re: z.string().regex(/^[a-z]+$/),
  }));
  assert.deepEqual(node, {
    type: "object",
    properties: {
      i32: { type: "integer", minimum: 1, format: "int32" },
      i64: { type: "integer", format: "int64" },
      n: { type: "number" },
      ios: { default: 1, "x-kubernetes-int-or-string": true },
      free: { "x-kubernetes-preserve-unknown-fields": true },
      loose: {
        type: "object",
        properties: { name: { type: "string" } },
        required: ["name"],
        "x-kubernetes-preserve-unknown-fields": true,
      },
      strict: { type: "object", properties: { a: { type: "string" } }, required: ["a"] },
      map: { type: "object", additionalProperties: { type: "integer", format: "int32" } },
      when: { type: "string", format: "date-time" },
      re: { type: "string", pattern: "^[a-z]+$" },
    },
    required: ["i32", "i64", "n", "free", "loose", "strict", "map", "when", "re"],
  });
});

Deno.test("toStructural: rejects what cannot be structural", () => {
  assert.throws(
    () => openAPISchemaOf(z.union([z.object({ a: z.string() }), z.object({ b: z.string() })])),
    /unions other than int\|string/,
  );
  assert.throws(() => openAPISchemaOf(z.string().regex(/^(?!x)y$/)), /not RE2/);
  assert.throws(() => toStructural({ $ref: "#/definitions/x" }), /\$ref/);
  const tree: z.ZodType = z.lazy(() => z.object({ children: z.array(tree) }));
  assert.throws(() => openAPISchemaOf(tree));
});
