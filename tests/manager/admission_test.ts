/**
 * The manager's validating admission of configs and servers as pure decisions against in-memory
 * cluster fakes, and the AdmissionReview envelope (src/manager/admission/http.ts).
 */
import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Registry } from "prom-client";
import { AdmissionWebhookMetrics } from "../../src/manager/metrics.ts";
import { admissionDenialEvent } from "../../src/manager/events.ts";
import {
  ADMISSION_PATHS,
  type AdmissionAnswer,
  type AdmissionContext,
  type AdmissionDecision,
  type AdmissionDenial,
  answerAdmission,
  type ConfigSummary,
  createNodeAdmissionListener,
  scanFlags,
  validateConfigAdmission,
  validateServerAdmission,
} from "../../src/manager/admission/mod.ts";
import type { ServerInfo } from "../../src/assign/resolve.ts";
import type { ConfigKind } from "../../src/api/mod.ts";
import type { JsonObject } from "../../src/engine/mod.ts";

// --- fixtures -----------------------------------------------------------------------------------

const CRD_TARGET = "widgets.demo.example.com";
const XRD_TARGET = "xnetworks.demo.example.com";

function version(name: string, hubFlag: boolean, flag: string, spec: JsonObject): JsonObject {
  return {
    name,
    served: true,
    [flag]: hubFlag,
    schema: {
      openAPIV3Schema: {
        type: "object",
        properties: { metadata: { type: "object" }, spec: { type: "object", properties: spec } },
      },
    },
  };
}

/** A namespaced target of the demo group (a CRD or an XRD) with these versions. */
function target(
  apiVersion: string,
  kind: string,
  name: string,
  names: JsonObject,
  versions: JsonObject[],
): JsonObject {
  return {
    apiVersion,
    kind,
    metadata: { name },
    spec: { group: "demo.example.com", scope: "Namespaced", names, versions },
  };
}

const CRD = target(
  "apiextensions.k8s.io/v1",
  "CustomResourceDefinition",
  CRD_TARGET,
  { kind: "Widget", plural: "widgets" },
  [
    version("v1", false, "storage", {
      storageSize: { type: "integer" },
      region: { type: "string" },
    }),
    version("v2", true, "storage", { storageGB: { type: "integer" }, region: { type: "string" } }),
  ],
);

const XRD = target(
  "apiextensions.crossplane.io/v2",
  "CompositeResourceDefinition",
  XRD_TARGET,
  { kind: "XNetwork", plural: "xnetworks" },
  [
    version("v1", false, "referenceable", { size: { type: "integer" } }),
    version("v2", true, "referenceable", { sizeGB: { type: "integer" } }),
  ],
);

type Obj = Record<string, unknown>;

/** A config of `kind` on `targetName` whose v1 spoke renames `hubPath` to `spokePath`. */
function renameConfig(
  kind: ConfigKind,
  targetName: string,
  rename: { hubPath: string; spokePath: string },
  spec: Obj,
  name: string,
): Obj {
  const targetKey = kind === "CRDConversionConfig" ? "targetCRD" : "targetXRD";
  return {
    apiVersion: "terasky.com/v1alpha1",
    kind,
    metadata: { name },
    spec: {
      [targetKey]: { name: targetName },
      hubVersion: "v2",
      spokes: [{ version: "v1", rules: [{ strategy: "FieldRename", fieldRename: rename }] }],
      ...spec,
    },
  };
}

function crdConfig(spec: Obj = {}, name = "widgets-conversion"): Obj {
  const rename = { hubPath: "spec.storageGB", spokePath: "spec.storageSize" };
  return renameConfig("CRDConversionConfig", CRD_TARGET, rename, spec, name);
}

function xrdConfig(spec: Obj = {}, name = "xnetworks-conversion"): Obj {
  const rename = { hubPath: "spec.sizeGB", spokePath: "spec.size" };
  return renameConfig("XRDConversionConfig", XRD_TARGET, rename, spec, name);
}

/** A CRD config whose v1 spoke has exactly these rules. */
function withRules(...rules: Obj[]): Obj {
  return crdConfig({ spokes: [{ version: "v1", rules }] });
}

interface Fake {
  features?: { xrd: boolean; crd: boolean };
  targets?: Record<string, JsonObject>;
  configs?: ConfigSummary[];
  servers?: ServerInfo[];
}

function fakeCtx(f: Fake = {}): AdmissionContext {
  const targets = f.targets ?? { [CRD_TARGET]: CRD, [XRD_TARGET]: XRD };
  return {
    features: f.features ?? { xrd: true, crd: true },
    getTarget: (_kind: ConfigKind, name: string) => targets[name],
    listConfigs: () => Promise.resolve(f.configs ?? []),
    listServers: () => Promise.resolve(f.servers ?? []),
  };
}

function crdCreate(object: Obj, f: Fake = {}): Promise<AdmissionDecision> {
  return validateConfigAdmission("CRDConversionConfig", "CREATE", object, undefined, fakeCtx(f));
}

function xrdCreate(object: Obj, f: Fake = {}): Promise<AdmissionDecision> {
  return validateConfigAdmission("XRDConversionConfig", "CREATE", object, undefined, fakeCtx(f));
}

function crdUpdate(object: Obj, old: Obj, f: Fake = {}): Promise<AdmissionDecision> {
  return validateConfigAdmission("CRDConversionConfig", "UPDATE", object, old, fakeCtx(f));
}

function denied(d: AdmissionDecision): string {
  assert.equal(d.allowed, false, `expected a denial, got ${JSON.stringify(d)}`);
  return d.allowed ? "" : d.message;
}

function assertDenied(d: AdmissionDecision, ...parts: string[]): void {
  const message = denied(d);
  for (const p of parts) assert.ok(message.includes(p), `${JSON.stringify(message)} lacks ${p}`);
}

function assertAllowed(d: AdmissionDecision, warnings: string[] = []): void {
  assert.equal(d.allowed, true, `expected allowed, got ${JSON.stringify(d)}`);
  const got = d.allowed ? d.warnings ?? [] : [];
  assert.equal(got.length, warnings.length, `warnings: ${JSON.stringify(got)}`);
  warnings.forEach((w, i) => assert.ok(got[i].includes(w), `${got[i]} lacks ${w}`));
}

// --- configs ------------------------------------------------------------------------------------

Deno.test("config: a valid config against its live target is admitted without warnings", async () => {
  assertAllowed(await crdCreate(crdConfig()));
  assertAllowed(
    await xrdCreate(xrdConfig()),
  );
});

Deno.test("config: DELETE (and CONNECT) are always allowed, whatever the state", async () => {
  const ctx = fakeCtx({ features: { xrd: false, crd: false } });
  for (const kind of ["CRDConversionConfig", "XRDConversionConfig"] as const) {
    assertAllowed(await validateConfigAdmission(kind, "DELETE", undefined, { bogus: 1 }, ctx));
    assertAllowed(await validateConfigAdmission(kind, "CONNECT", undefined, undefined, ctx));
  }
});

Deno.test("config rule 1: feature disabled rejects with the exact message and flag, first", async () => {
  const off = { features: { xrd: false, crd: false } };
  const x = await xrdCreate(xrdConfig(), off);
  assertDenied(
    x,
    "XRD conversion support is disabled on this installation",
    "--enable-xrd-support=false",
  );
  // Checked before structure: even a malformed object gets the feature message.
  const c = await crdCreate({ kind: "CRDConversionConfig", spec: "garbage" }, off);
  assertDenied(
    c,
    "native CRD conversion support is disabled on this installation",
    "--enable-crd-support=false",
  );
  // Each flag gates only its own kind; updates are checked too.
  assertAllowed(await crdCreate(crdConfig(), { features: { xrd: false, crd: true } }));
  assertDenied(
    await crdUpdate(crdConfig(), crdConfig(), {
      features: { xrd: true, crd: false },
    }),
    "native CRD conversion support is disabled",
  );
});

Deno.test("config rule 2: undecodable objects are rejected as config-parse", async () => {
  assertDenied(await crdCreate(crdConfig({ bogusField: 1 })), "[config-parse]", "bogusField");
  assertDenied(
    await crdCreate({ ...xrdConfig() }),
    "[config-parse] kind: expected CRDConversionConfig",
  );
});

Deno.test("config rule 2: conversionReviewVersions must contain v1, with the field and the rule", async () => {
  for (const kind of ["crd", "xrd"] as const) {
    const config = (v: string[]) =>
      kind === "crd"
        ? crdCreate(crdConfig({ conversionReviewVersions: v }))
        : xrdCreate(xrdConfig({ conversionReviewVersions: v }));
    assertDenied(
      await config(["v1beta1"]),
      '[config-parse] spec.conversionReviewVersions: must contain "v1"',
      'the ConversionReview versions are "v1" and "v1beta1"',
    );
    assertDenied(
      await config(["v1", "v2"]),
      '[config-parse] spec.conversionReviewVersions[1]: must be one of "v1", "v1beta1", got "v2"',
    );
    assertDenied(await config(["v1", "v1"]), "must not list a version twice");
    for (const ok of [["v1"], ["v1beta1", "v1"], []]) assertAllowed(await config(ok));
  }
});

Deno.test("config rule 2: structure — policy reason, spokes, hub, duplicates", async () => {
  assertDenied(
    await crdCreate(crdConfig({ unmappedFieldPolicy: "Warn", unmappedFieldReason: "  " })),
    "[structural] spec.unmappedFieldReason",
  );
  assertAllowed(
    await crdCreate(crdConfig({ unmappedFieldPolicy: "Warn", unmappedFieldReason: "legacy" })),
  );
  assertDenied(await crdCreate(crdConfig({ spokes: [] })), "[structural] spec.spokes");
  assertDenied(
    await crdCreate(crdConfig({ spokes: [{ version: "v2", rules: [] }] })),
    "[structural] spec.spokes[0].version",
    "hub version",
  );
  assertDenied(
    await crdCreate(crdConfig({ spokes: [{ version: "v1" }, { version: "v1" }] })),
    "[structural] spec.spokes[1].version: duplicate",
  );
});

Deno.test("config rule 2: structure — exactly one params block, and it matches the strategy", async () => {
  assertDenied(
    await crdCreate(withRules({ strategy: "FieldRename" })),
    "[structural] spec.spokes[0].rules[0]: exactly one params block",
  );
  assertDenied(
    await crdCreate(withRules({
      strategy: "FieldRename",
      fieldRename: { hubPath: "spec.storageGB", spokePath: "spec.storageSize" },
      delete: { path: "spec.region", existsOn: "Hub" },
    })),
    "exactly one params block",
    "fieldRename, delete",
  );
  // The reference only counts; the re-implementation rejects a mismatch here, as structural.
  assertDenied(
    await crdCreate(
      withRules({ strategy: "Delete", fieldRename: { hubPath: "a", spokePath: "b" } }),
    ),
    "[structural] spec.spokes[0].rules[0]: strategy Delete requires the delete params block, found fieldRename",
  );
  // ... also inside forEach.rules.
  assertDenied(
    await crdCreate(withRules({
      strategy: "ForEach",
      forEach: {
        hubItemsPath: "spec.a",
        spokeItemsPath: "spec.a",
        rules: [{ strategy: "Delete", fieldRename: { hubPath: "x", spokePath: "y" } }],
      },
    })),
    "[structural] spec.spokes[0].rules[0].forEach.rules[0]: strategy Delete requires the delete",
  );
});

Deno.test("config rule 2: structure — forEach depth, when.path, CEL, labels", async () => {
  const level = (rules: Obj[]): Obj => ({
    strategy: "ForEach",
    forEach: { hubItemsPath: "spec.a", spokeItemsPath: "spec.a", rules },
  });
  assertDenied(
    await crdCreate(withRules(level([level([level([])])]))),
    "[structural]",
    "nesting depth exceeds the supported maximum of 2",
  );
  const rename = { hubPath: "spec.storageGB", spokePath: "spec.storageSize" };
  assertDenied(
    await crdCreate(
      withRules({ strategy: "FieldRename", fieldRename: rename, when: { path: " " } }),
    ),
    "[structural] spec.spokes[0].rules[0].when.path",
  );
  assertDenied(
    await crdCreate(withRules({
      strategy: "CEL",
      cel: { hubPaths: [], spokePaths: [], hubToSpoke: "{}", spokeToHub: "{}" },
    })),
    "[structural]",
    "requires acknowledgeLossy: true",
  );
  assertDenied(
    await crdCreate(withRules({
      strategy: "FromLabel",
      fromLabel: { spokePath: "spec.region", key: "example.com/region", serialization: "JSON" },
    })),
    "[structural] spec.spokes[0].rules[0].fromLabel.serialization",
  );
  assertDenied(
    await crdCreate(withRules({
      strategy: "ToLabel",
      toLabel: { hubPath: "spec.region", key: "not a/valid/key" },
    })),
    "[structural] spec.spokes[0].rules[0].toLabel.key",
  );
  assertDenied(
    await crdCreate(withRules({
      strategy: "FromLabel",
      fromLabel: { spokePath: "spec.region", key: "-bad" },
    })),
    "[structural] spec.spokes[0].rules[0].fromLabel.key",
  );
});

Deno.test("config rule 3: one config per target, across kinds; the object itself is skipped", async () => {
  const other: ConfigSummary = { kind: "CRDConversionConfig", name: "other", target: CRD_TARGET };
  assertDenied(
    await crdCreate(crdConfig(), { configs: [other] }),
    `target "${CRD_TARGET}" is already configured by CRDConversionConfig "other"`,
  );
  // Cross-kind collision, even under the same name.
  const cross: ConfigSummary = {
    kind: "XRDConversionConfig",
    name: "widgets-conversion",
    target: CRD_TARGET,
  };
  assertDenied(
    await crdCreate(crdConfig(), { configs: [cross] }),
    'XRDConversionConfig "widgets-conversion"',
  );
  // The stored copy of the object itself (kind + name) is not a collision.
  const self: ConfigSummary = {
    kind: "CRDConversionConfig",
    name: "widgets-conversion",
    target: CRD_TARGET,
  };
  assertAllowed(
    await crdUpdate(crdConfig(), crdConfig(), {
      configs: [self, { kind: "CRDConversionConfig", name: "x", target: "other.example.com" }],
    }),
  );
  // Order: structure (2) is checked before uniqueness (3).
  assertDenied(await crdCreate(crdConfig({ spokes: [] }), { configs: [other] }), "[structural]");
});

Deno.test("config rule 4: a webhookServerRef naming no server is only a warning", async () => {
  const config = crdConfig({ webhookServerRef: { name: "ghost" } });
  assertAllowed(await crdCreate(config), [
    'webhookServerRef "ghost" does not name an existing ConversionWebhookServer',
  ]);
  assertAllowed(await crdCreate(config, { servers: [{ name: "ghost" }] }));
  // Order: uniqueness (3) still rejects.
  assertDenied(
    await crdCreate(config, {
      configs: [{ kind: "CRDConversionConfig", name: "b", target: CRD_TARGET }],
    }),
    "already configured",
  );
});

Deno.test("config rule 5: a missing target is a warning and skips rules 6 and 7", async () => {
  const badTranslation = withRules({
    strategy: "FieldRename",
    fieldRename: { hubPath: "", spokePath: "spec.x" },
  });
  for (
    const object of [
      crdConfig(),
      badTranslation,
      withRules({ strategy: "Delete", delete: { path: "spec.nope", existsOn: "Hub" } }),
    ]
  ) {
    assertAllowed(await crdCreate(object, { targets: {} }), [
      `target CRD "${CRD_TARGET}" not found; live schema analysis skipped`,
    ]);
  }
  // Both warnings, in rule order.
  assertAllowed(
    await crdCreate(crdConfig({ webhookServerRef: { name: "ghost" } }), { targets: {} }),
    [
      "webhookServerRef",
      "not found",
    ],
  );
});

Deno.test("config rule 6: a rule translation error rejects as rule-translation", async () => {
  assertDenied(
    await crdCreate(
      withRules({ strategy: "FieldRename", fieldRename: { hubPath: "", spokePath: "spec.x" } }),
    ),
    "[rule-translation] invalid rule configuration: spec.spokes[0].rules[0].fieldRename.hubPath",
  );
});

Deno.test("config rule 7: engine analysis errors reject with [spoke v] [class] path", async () => {
  const d = await crdCreate(withRules({
    strategy: "FieldRename",
    fieldRename: { hubPath: "spec.storageGB", spokePath: "spec.nope" },
  }));
  const message = denied(d);
  assert.match(message, /configuration is invalid against the live CRD/);
  assert.match(message, /\[spoke v1\] \[path-not-found\] spec\.nope: /);
  assert.match(message, /; \[spoke v1\] \[uncovered-field\]/); // the summary joins with "; "
  // Hard errors (the hub is not the storage version) are named with their class too.
  assertDenied(
    await crdCreate(crdConfig({ hubVersion: "v1", spokes: [{ version: "v2" }] })),
    "[hub-version]",
  );
  // XRD configs are analysed against the XRD.
  assertDenied(
    await xrdCreate(xrdConfig({ spokes: [{ version: "v1" }] })),
    'live XRD "xnetworks.demo.example.com"',
    "[spoke v1] [uncovered-field]",
  );
  // Warn policy: uncovered fields become admission warnings, not a denial.
  const warn = await crdCreate(crdConfig({
    unmappedFieldPolicy: "Warn",
    unmappedFieldReason: "legacy field",
    spokes: [{ version: "v1" }],
  }));
  assert.equal(warn.allowed, true);
  assert.ok(
    warn.allowed && (warn.warnings ?? []).some((w) => w.startsWith("[spoke v1] [uncovered-field]")),
  );
});

Deno.test("config: an UPDATE of an object already being deleted is never blocked", async () => {
  const old = {
    ...crdConfig(),
    metadata: { name: "widgets-conversion", deletionTimestamp: "2026-01-01T00:00:00Z" },
  };
  assertAllowed(
    await crdUpdate(crdConfig({ spokes: [] }), old, {
      features: { xrd: false, crd: false },
    }),
  );
});

// --- servers ------------------------------------------------------------------------------------

function server(name: string, spec: Obj = {}, annotations?: Record<string, string>): Obj {
  return {
    apiVersion: "terasky.com/v1alpha1",
    kind: "ConversionWebhookServer",
    metadata: { name, ...(annotations === undefined ? {} : { annotations }) },
    spec: { certificate: { issuerRef: { name: "ca" } }, ...spec },
  };
}

function serverCreate(object: Obj, f: Fake = {}): Promise<AdmissionDecision> {
  return validateServerAdmission("CREATE", object, undefined, fakeCtx(f));
}

function serverDelete(stored: Obj, f: Fake = {}): Promise<AdmissionDecision> {
  return validateServerAdmission("DELETE", undefined, stored, fakeCtx(f));
}

/** A stored CRD config on `target`, pinned to `server`, last applied at `webhookURL`. */
function pinned(name: string, target: string, server: string, webhookURL?: string): ConfigSummary {
  return {
    kind: "CRDConversionConfig",
    name,
    target,
    webhookServerRef: { name: server },
    ...(webhookURL === undefined ? {} : { webhookURL }),
  };
}

/** The endpoint a config on `target` was last applied at, on server `server`. */
function urlOf(server: string, target: string): string {
  return `https://${server}-webhook-server.dco-system.svc/convert/${target}`;
}

function serverUpdate(object: Obj, stored: Obj, f: Fake = {}): Promise<AdmissionDecision> {
  return validateServerAdmission("UPDATE", object, stored, fakeCtx(f));
}

Deno.test("server: flag scanning follows the --flag=value / --flag value / -flag forms", () => {
  assert.deepEqual(
    scanFlags(["--a=1", "--b", "2", "-c", "--d", "--e", "x", "y", "-", "--"]).map((
      f,
    ) => [f.name, f.value]),
    [["a", "1"], ["b", "2"], ["c", undefined], ["d", undefined], ["e", "x"]],
  );
});

Deno.test("server rule 1: extraArgs must not name a managed flag, in any form", async () => {
  for (
    const args of [
      ["--tls-cert-dir=/x"],
      ["--webhook-server-name", "foo"],
      ["--enable-crd-support"],
      ["-enable-xrd-support=false"],
      ["-cache-label-selector", "a=b"],
      ["--log-level=debug", "--metrics-bind-address", ":0"],
      ["--conversion-bind-address=:1"],
    ]
  ) {
    const name = scanFlags(args).at(-1)!.name;
    assertDenied(await serverCreate(server("s", { extraArgs: args })), `--${name}`, "managed");
  }
  // A value token is skipped, never read as a flag; other flags are fine.
  assertAllowed(
    await serverCreate(server("s", { extraArgs: ["--log-level", "cache-label-selector"] })),
  );
  // Order: managed flags (1) before timing (2).
  assertDenied(
    await serverCreate(
      server("s", { extraArgs: ["--shutdown-timeout=bogus", "--tls-cert-dir=/x"] }),
    ),
    "--tls-cert-dir",
  );
});

Deno.test("server rule 2: preStop + shutdown timeout must fit the termination grace period", async () => {
  assertAllowed(await serverCreate(server("s"))); // 5 + 30 <= 45
  assertAllowed(await serverCreate(server("s", { extraArgs: ["--shutdown-timeout", "40s"] }))); // = 45
  assertDenied(
    await serverCreate(server("s", { extraArgs: ["--shutdown-timeout=1m"] })),
    "preStopSleepSeconds (5)",
    "(60s",
    "terminationGracePeriodSeconds (45)",
    "at least 65",
  );
  assertDenied(
    await serverCreate(server("s", { extraArgs: ["--shutdown-timeout", "40500ms"] })),
    "at least 46",
  );
  assertDenied(
    await serverCreate(
      server("s", { rollout: { preStopSleepSeconds: 20, terminationGracePeriodSeconds: 40 } }),
    ),
    "preStopSleepSeconds (20)",
    "(30s, default)",
    "terminationGracePeriodSeconds (40)",
    "at least 50",
  );
  assertAllowed(
    await serverCreate(server("s", {
      extraArgs: ["--shutdown-timeout=2m"],
      rollout: { terminationGracePeriodSeconds: 130 },
    })),
  );
  for (const bad of ["abc", "0s", "-5s", "30"]) {
    assertDenied(
      await serverCreate(server("s", { extraArgs: [`--shutdown-timeout=${bad}`] })),
      "--shutdown-timeout",
      "not a positive Go duration",
    );
  }
  assertDenied(
    await serverCreate(server("s", { extraArgs: ["--shutdown-timeout"] })),
    "has no value",
  );
});

Deno.test("server rule 3: at most one default", async () => {
  const servers: ServerInfo[] = [{ name: "a", default: true }, { name: "b" }];
  assertDenied(
    await serverCreate(server("c", { default: true }), { servers }),
    'ConversionWebhookServer "a" is already marked default',
  );
  // Re-saving the default itself is fine, as is a non-default.
  assertAllowed(
    await serverUpdate(server("a", { default: true }), server("a"), { servers }),
  );
  assertAllowed(await serverCreate(server("c"), { servers }));
});

Deno.test("server rule 4: a default outside a non-empty shard pool is rejected", async () => {
  const dflt: ServerInfo = { name: "main", default: true };
  // Enabling sharding on a non-default instance first.
  assertDenied(
    await serverUpdate(server("b", { sharding: {} }), server("b"), {
      servers: [dflt, { name: "b" }],
    }),
    'default ConversionWebhookServer "main" is not a member of the shard pool [b]',
  );
  // Creating a pool member while the default is outside.
  assertDenied(
    await serverCreate(server("c", { sharding: { weight: 2 } }), { servers: [dflt] }),
    '"main"',
    "[c]",
  );
  // Disabling / removing sharding on the default while others remain in the pool.
  const pool: ServerInfo[] = [
    { name: "main", default: true, sharding: { enabled: true } },
    { name: "b", sharding: { enabled: true } },
  ];
  assertDenied(
    await serverUpdate(
      server("main", { default: true, sharding: { enabled: false } }),
      server("main"),
      { servers: pool },
    ),
    '"main" is not a member of the shard pool [b]',
  );
  assertDenied(
    await serverUpdate(server("main", { default: true }), server("main"), { servers: pool }),
    "[b]",
  );
  // Marking a non-member default while a pool exists (rule 3 passes: nobody else is default).
  assertDenied(
    await serverCreate(server("x", { default: true }), { servers: [{ name: "b", sharding: {} }] }),
    '"x" is not a member of the shard pool [b]',
  );
  // Enabling sharding on the default first is valid; so is a pool without any default.
  assertAllowed(
    await serverUpdate(server("main", { default: true, sharding: {} }), server("main"), {
      servers: [dflt, { name: "b" }],
    }),
  );
  assertAllowed(
    await serverCreate(server("c", { sharding: {} }), { servers: [{ name: "b", sharding: {} }] }),
  );
  assertAllowed(await serverCreate(server("c", { sharding: {} }), { servers: pool }));
  // Order: the default check (3) comes first.
  assertDenied(
    await serverCreate(server("x", { default: true }), {
      servers: [dflt, { name: "b", sharding: {} }],
    }),
    "already marked default",
  );
});

Deno.test("server delete: the force annotation allows, whatever depends on it", async () => {
  const configs = [pinned("c1", "t1", "s")];
  const servers: ServerInfo[] = [{ name: "s" }];
  const stored = server("s", {}, { "conversion.terasky.com/allow-force-delete": "true" });
  assertAllowed(
    await serverDelete(stored, { configs, servers }),
  );
  const notTrue = server("s", {}, { "conversion.terasky.com/allow-force-delete": "yes" });
  assertDenied(
    await serverDelete(notTrue, { configs, servers }),
    "in use",
  );
});

Deno.test("server delete: dependents (ServedBy) block, listed sorted with the hint", async () => {
  const servers: ServerInfo[] = [{ name: "main", default: true }, { name: "other" }];
  const configs: ConfigSummary[] = [
    { kind: "XRDConversionConfig", name: "zeta", target: "z.example.com" }, // unpinned → default
    pinned("alpha", "a.example.com", "main"),
    pinned("pinned", "p.example.com", "other"),
  ];
  const d = await serverDelete(server("main", { default: true }), { configs, servers });
  assertDenied(
    d,
    'ConversionWebhookServer "main" is in use by 2 config(s): alpha (CRDConversionConfig), zeta (XRDConversionConfig)',
    'conversion.terasky.com/allow-force-delete: "true"',
    "it is the default instance, so unpinned configs",
  );
  assert.ok(!denied(d).includes("pinned ("));
  // Not the default: no note. Mid-handover: status.webhookURL still names its Service.
  const handover = [pinned("moving", "m.example.com", "main", urlOf("other", "m.example.com"))];
  const h = await serverDelete(server("other"), { configs: handover, servers });
  assertDenied(h, "in use by 1 config(s): moving (CRDConversionConfig)");
  assert.ok(!denied(h).includes("default instance"));
  // Nothing depends on it: allowed. A similar prefix is not this server's Service.
  const prefix = [pinned("c", "c.example.com", "main", urlOf("other2", "c.example.com"))];
  assertAllowed(
    await serverDelete(server("other"), { configs: prefix, servers }),
  );
});

Deno.test("server: an UPDATE of a server being deleted is never blocked", async () => {
  const old = {
    ...server("s"),
    metadata: { name: "s", deletionTimestamp: "2026-01-01T00:00:00Z" },
  };
  assertAllowed(
    await serverUpdate(server("s", { extraArgs: ["--tls-cert-dir=/x"] }), old),
  );
});

// --- AdmissionReview envelope -------------------------------------------------------------------

const CRD_PATH = "/validate-terasky-com-v1alpha1-crdconversionconfig";
const CWS_PATH = "/validate-terasky-com-v1alpha1-conversionwebhookserver";

function reviewBody(request: Obj): string {
  return JSON.stringify({ apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview", request });
}

function request(kind: string, operation: string, object: unknown, oldObject: unknown = null): Obj {
  return {
    uid: "705ab4f5-6393-11e8-b7cc-42010a800002",
    kind: { group: "terasky.com", version: "v1alpha1", kind },
    operation,
    name: "n",
    object,
    oldObject,
  };
}

function review(a: AdmissionAnswer) {
  assert.equal(a.status, 200, JSON.stringify(a));
  if (a.status !== 200) throw new Error("unreachable");
  return a.review;
}

Deno.test("http: the three documented paths route to the three kinds", () => {
  assert.deepEqual(Object.values(ADMISSION_PATHS).sort(), [
    "CRDConversionConfig",
    "ConversionWebhookServer",
    "XRDConversionConfig",
  ]);
});

Deno.test("http: allowed and denied reviews echo the uid; denials carry code 403", async () => {
  const opts = { ctx: fakeCtx() };
  const ok = review(
    await answerAdmission(
      opts,
      `${CRD_PATH}?timeout=10s`,
      "POST",
      new TextEncoder().encode(reviewBody(request("CRDConversionConfig", "CREATE", crdConfig()))),
    ),
  );
  assert.deepEqual(ok, {
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    response: { uid: "705ab4f5-6393-11e8-b7cc-42010a800002", allowed: true },
  });
  const warned = review(
    await answerAdmission(
      { ctx: fakeCtx({ targets: {} }) },
      CRD_PATH,
      "POST",
      reviewBody(request("CRDConversionConfig", "CREATE", crdConfig())),
    ),
  );
  assert.equal(warned.response.allowed, true);
  assert.equal(warned.response.warnings?.length, 1);
  const no = review(
    await answerAdmission(
      opts,
      CRD_PATH,
      "POST",
      reviewBody(request("CRDConversionConfig", "CREATE", crdConfig({ spokes: [] }))),
    ),
  );
  assert.equal(no.response.uid, "705ab4f5-6393-11e8-b7cc-42010a800002");
  assert.equal(no.response.allowed, false);
  assert.equal(no.response.status?.code, 403);
  assert.match(no.response.status?.message ?? "", /^\[structural\] spec\.spokes/);
  // Config DELETE: allowed; server DELETE uses oldObject.
  assert.equal(
    review(
      await answerAdmission(
        opts,
        CRD_PATH,
        "POST",
        reviewBody(request("CRDConversionConfig", "DELETE", null, crdConfig())),
      ),
    ).response.allowed,
    true,
  );
  const cws = review(
    await answerAdmission(
      {
        ctx: fakeCtx({
          servers: [{ name: "n", default: true }],
          configs: [{ kind: "CRDConversionConfig", name: "c", target: "t" }],
        }),
      },
      CWS_PATH,
      "POST",
      reviewBody(
        request("ConversionWebhookServer", "DELETE", null, server("n", { default: true })),
      ),
    ),
  );
  assert.equal(cws.response.allowed, false);
  assert.match(cws.response.status?.message ?? "", /in use by 1 config/);
});

Deno.test("http: malformed bodies get 400, unknown paths 404, other methods 405", async () => {
  const opts = { ctx: fakeCtx() };
  for (
    const body of [
      "{not json",
      new Uint8Array([0xff, 0xfe]),
      "[]",
      JSON.stringify({
        apiVersion: "admission.k8s.io/v1beta1",
        kind: "AdmissionReview",
        request: {},
      }),
      JSON.stringify({ apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview" }),
      reviewBody({ operation: "CREATE" }),
      reviewBody({ uid: "u", operation: "PATCH" }),
    ]
  ) {
    assert.equal((await answerAdmission(opts, CRD_PATH, "POST", body)).status, 400, String(body));
  }
  assert.equal((await answerAdmission(opts, "/validate-something-else", "POST", "{}")).status, 404);
  assert.equal((await answerAdmission(opts, "/convert/x", "POST", "{}")).status, 404);
  assert.equal((await answerAdmission(opts, CRD_PATH, "GET", "")).status, 405);
  assert.equal(
    (await answerAdmission({ ...opts, maxRequestBytes: 10 }, CRD_PATH, "POST", "x".repeat(11)))
      .status,
    413,
  );
});

Deno.test("http: a kind/path mismatch and a failing cluster read are denials, never allows", async () => {
  const mismatch = review(
    await answerAdmission(
      { ctx: fakeCtx() },
      CRD_PATH,
      "POST",
      reviewBody(request("XRDConversionConfig", "CREATE", xrdConfig())),
    ),
  );
  assert.equal(mismatch.response.allowed, false);
  assert.match(
    mismatch.response.status?.message ?? "",
    /validates CRDConversionConfig, not XRDConversionConfig/,
  );
  const errors: unknown[] = [];
  const broken: AdmissionContext = {
    ...fakeCtx(),
    listConfigs: () => Promise.reject(new Error("apiserver down")),
  };
  const failed = review(
    await answerAdmission(
      { ctx: broken, onError: (e) => errors.push(e) },
      CRD_PATH,
      "POST",
      reviewBody(request("CRDConversionConfig", "CREATE", crdConfig())),
    ),
  );
  assert.equal(failed.response.allowed, false);
  assert.equal(failed.response.status?.code, 500);
  assert.match(failed.response.status?.message ?? "", /apiserver down/);
  assert.equal(errors.length, 1);
});

Deno.test("http: the node listener serves reviews over a real socket", async () => {
  const listener = createNodeAdmissionListener({ ctx: fakeCtx(), maxRequestBytes: 64 * 1024 });
  const srv = http.createServer(listener);
  await new Promise<void>((resolve) => srv.listen(0, "127.0.0.1", resolve));
  const { port } = srv.address() as AddressInfo;
  const base = `http://127.0.0.1:${port}`;
  try {
    const ok = await fetch(`${base}${CRD_PATH}?timeout=10s`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: reviewBody(request("CRDConversionConfig", "CREATE", crdConfig({ spokes: [] }))),
    });
    assert.equal(ok.status, 200);
    const body = await ok.json();
    assert.equal(body.response.uid, "705ab4f5-6393-11e8-b7cc-42010a800002");
    assert.equal(body.response.allowed, false);
    assert.equal(body.response.status.code, 403);
    const bad = await fetch(`${base}${CRD_PATH}`, { method: "POST", body: "{" });
    assert.equal(bad.status, 400);
    await bad.body?.cancel();
    const missing = await fetch(`${base}/nope`, { method: "POST", body: "{}" });
    assert.equal(missing.status, 404);
    await missing.body?.cancel();
    const big = await fetch(`${base}${CRD_PATH}`, { method: "POST", body: "x".repeat(200 * 1024) });
    assert.equal(big.status, 413);
    await big.body?.cancel();
  } finally {
    await new Promise<void>((resolve) => srv.close(() => resolve()));
  }
});

Deno.test("http: controller-runtime's webhook metrics count served paths by code, latency and in flight", async () => {
  const registry = new Registry();
  const listener = createNodeAdmissionListener({
    ctx: fakeCtx(),
    metrics: new AdmissionWebhookMetrics(registry),
  });
  const srv = http.createServer(listener);
  await new Promise<void>((resolve) => srv.listen(0, "127.0.0.1", resolve));
  const { port } = srv.address() as AddressInfo;
  const base = `http://127.0.0.1:${port}`;
  try {
    for (const body of [reviewBody(request("CRDConversionConfig", "CREATE", crdConfig())), "{"]) {
      const res = await fetch(`${base}${CRD_PATH}?timeout=10s`, { method: "POST", body });
      await res.body?.cancel();
    }
    await (await fetch(`${base}/nope`, { method: "POST", body: "{}" })).body?.cancel();
    const text = await registry.metrics();
    const series = (name: string, labels: string) =>
      text.split("\n").find((l) => l.startsWith(`${name}{${labels}}`))?.split(" ")[1];
    const webhook = `webhook="${CRD_PATH}"`;
    assert.equal(series("controller_runtime_webhook_requests_total", `${webhook},code="200"`), "1");
    assert.equal(series("controller_runtime_webhook_requests_total", `${webhook},code="400"`), "1");
    assert.equal(series("controller_runtime_webhook_latency_seconds_count", webhook), "2");
    assert.equal(series("controller_runtime_webhook_requests_in_flight", webhook), "0");
    assert.ok(!text.includes('webhook="/nope"'), "an unknown path is no webhook");
  } finally {
    await new Promise<void>((resolve) => srv.close(() => resolve()));
  }
});

Deno.test("http: a denied DELETE of a stored object is reported for a Warning Event; CREATE is not", async () => {
  const denials: AdmissionDenial[] = [];
  const opts = {
    ctx: fakeCtx({
      servers: [{ name: "n", default: true }],
      configs: [{ kind: "CRDConversionConfig", name: "c", target: "t" }],
    }),
    onDenied: (d: AdmissionDenial) => denials.push(d),
  };
  const stored = { ...server("n", { default: true }), metadata: { name: "n", uid: "u-1" } };
  const del = review(
    await answerAdmission(
      opts,
      CWS_PATH,
      "POST",
      reviewBody(request("ConversionWebhookServer", "DELETE", null, stored)),
    ),
  );
  assert.equal(del.response.allowed, false);
  // A denied CREATE: no stored object to put an Event on.
  const create = review(
    await answerAdmission(
      opts,
      CWS_PATH,
      "POST",
      reviewBody(
        request(
          "ConversionWebhookServer",
          "CREATE",
          server("x", { extraArgs: ["--tls-cert-dir=/x"] }),
        ),
      ),
    ),
  );
  assert.equal(create.response.allowed, false);
  assert.equal(denials.length, 1);
  assert.equal(denials[0].operation, "DELETE");
  assert.equal(denials[0].reason, "Forbidden");
  assert.equal(denials[0].message, del.response.status?.message);
  assert.deepEqual(admissionDenialEvent(denials[0]), {
    regarding: {
      apiVersion: "terasky.com/v1alpha1",
      kind: "ConversionWebhookServer",
      name: "n",
      uid: "u-1",
    },
    type: "Warning",
    reason: "Forbidden",
    action: "Delete",
    note: del.response.status?.message,
  });
});
