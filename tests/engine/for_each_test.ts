/** ForEach conformance. */
import assert from "node:assert/strict";
import { type ConversionRuleSpec, structuralError } from "../../src/engine/mod.ts";
import { assertConversionError, describe, errorsOf, resource, single } from "./_checks.ts";
import { analyzePair, configFor, h2s, pairPlan, s2h } from "./_helpers.ts";
import { arr, int, map, obj, root, SPOKE, str } from "./_schemas.ts";

const rename = (hubPath: string, spokePath: string): ConversionRuleSpec => ({
  strategy: "FieldRename",
  fieldRename: { hubPath, spokePath },
});
const forEach = (
  hubItemsPath: string,
  spokeItemsPath: string,
  rules: ConversionRuleSpec[],
  extra = {},
): ConversionRuleSpec => ({
  strategy: "ForEach",
  forEach: { hubItemsPath, spokeItemsPath, rules },
  ...extra,
});

const hubVolumes = root({ volumes: arr(obj({ name: str(), sizeGB: int(), type: str() })) });
const spokeDisks = root({ disks: arr(obj({ name: str(), size: int(), type: str() })) });
const volumesRules = [
  forEach("spec.volumes", "spec.disks", [
    rename("sizeGB", "size"),
    {
      strategy: "EnumRemap",
      enumRemap: {
        path: "type",
        mapping: [{ hub: "ssd", spoke: "fast" }, { hub: "hdd", spoke: "slow" }],
      },
    },
  ]),
];

Deno.test("ForEach: element renames and enum remap; undeclared element keys dropped; [] ↔ []", () => {
  const plan = pairPlan(hubVolumes, spokeDisks, volumesRules);
  const hub = resource({
    spec: {
      volumes: [
        { name: "a", sizeGB: 10, type: "ssd" },
        { name: "b", sizeGB: 20, type: "hdd", undeclared: true },
      ],
    },
  });
  const spoke = h2s(plan, hub);
  assert.deepEqual(
    spoke,
    resource({
      spec: {
        disks: [{ name: "a", size: 10, type: "fast" }, { name: "b", size: 20, type: "slow" }],
      },
    }),
  );
  assert.deepEqual(
    s2h(plan, spoke),
    resource({
      spec: {
        volumes: [{ name: "a", sizeGB: 10, type: "ssd" }, { name: "b", sizeGB: 20, type: "hdd" }],
      },
    }),
  );
  assert.deepEqual(
    h2s(plan, resource({ spec: { volumes: [] } })),
    resource({ spec: { disks: [] } }),
  );
  assert.deepEqual(
    s2h(plan, resource({ spec: { disks: [] } })),
    resource({ spec: { volumes: [] } }),
  );
  // Elements are rebuilt from an empty map: nothing applicable yields {}.
  assert.deepEqual(h2s(plan, resource({ spec: { volumes: [{}] } })).spec, { disks: [{}] });
});

Deno.test("ForEach runtime errors: non-array source, non-map element (with its index), nested op errors", () => {
  const plan = pairPlan(hubVolumes, spokeDisks, volumesRules);
  assertConversionError(
    () => h2s(plan, resource({ spec: { volumes: { name: "a" } } })),
    "spec.volumes",
    "not an array",
  );
  assertConversionError(
    () => h2s(plan, resource({ spec: { volumes: [{ name: "a" }, "b"] } })),
    "spec.volumes[1]",
    "not a map",
  );
  assertConversionError(
    () => h2s(plan, resource({ spec: { volumes: [{ type: "ssd" }, { type: "nvme" }] } })),
    "spec.volumes[1]",
    '"nvme"',
  );
});

Deno.test("ForEach: nested uncovered fields are qualified with the items paths", () => {
  const { report } = analyzePair(
    root({ volumes: arr(obj({ name: str(), hubOnly: str() })) }),
    root({ disks: arr(obj({ name: str(), spokeOnly: int() })) }),
    [forEach("spec.volumes", "spec.disks", [])],
  );
  assert.deepEqual(report.uncoveredHub, ["spec.volumes.hubOnly"]);
  assert.deepEqual(report.uncoveredSpoke, ["spec.disks.spokeOnly"]);
  for (const d of errorsOf(report, "uncovered-field")) {
    assert.equal(d.ruleIndex, 0, "nested diagnostics are re-emitted on the ForEach rule");
    assert.match(d.message, /^rule\[0\] ForEach > /);
  }
  assert.deepEqual(report.lossless, { hubToSpoke: false, spokeToHub: false });
});

const nestedHub = root({
  volumes: arr(
    obj({ name: str(), disks: arr(obj({ sizeGB: int(), tags: arr(obj({ k: str() })) })) }),
  ),
});
const nestedSpoke = root({
  volumes: arr(
    obj({ name: str(), disks: arr(obj({ size: int(), tags: arr(obj({ k: str() })) })) }),
  ),
});

Deno.test("ForEach two levels: renames inside volumes[].disks[]", () => {
  const plan = pairPlan(nestedHub, nestedSpoke, [
    forEach("spec.volumes", "spec.volumes", [
      forEach("disks", "disks", [rename("sizeGB", "size")]),
    ]),
  ]);
  const hub = resource({
    spec: { volumes: [{ name: "v", disks: [{ sizeGB: 1 }, { sizeGB: 2, tags: [{ k: "x" }] }] }] },
  });
  const spoke = h2s(plan, hub);
  assert.deepEqual(
    spoke,
    resource({
      spec: { volumes: [{ name: "v", disks: [{ size: 1 }, { size: 2, tags: [{ k: "x" }] }] }] },
    }),
  );
  assert.deepEqual(s2h(plan, spoke), hub);
});

Deno.test("ForEach third level: foreach-depth at analysis and structurally", () => {
  const rules = [
    forEach("spec.volumes", "spec.volumes", [
      forEach("disks", "disks", [forEach("tags", "tags", [])]),
    ]),
  ];
  const { report } = analyzePair(nestedHub, nestedSpoke, rules);
  const d = single(report.errors, "foreach-depth");
  assert.match(d.message, /maximum of 2/);
  assert.equal(d.ruleIndex, 0);
  assert.equal(d.path, "spec.volumes.disks.tags");
  assert.equal(report.plan, undefined);
  assert.match(
    structuralError(configFor({ [SPOKE]: rules })) ?? "",
    /spec\.spokes\[0\]\.rules\[0\]\.forEach\.rules\[0\]\.forEach\.rules\[0\]: ForEach nesting depth exceeds the supported maximum of 2/,
  );
  const twoLevels = forEach("spec.volumes", "spec.volumes", [forEach("disks", "disks", [])]);
  assert.equal(structuralError(configFor({ [SPOKE]: [twoLevels] })), undefined);
});

Deno.test("ForEach length check: both items paths present with different lengths fails", () => {
  const plan = pairPlan(hubVolumes, spokeDisks, volumesRules);
  assertConversionError(
    () =>
      h2s(
        plan,
        resource({ spec: { volumes: [{ name: "a" }, { name: "b" }], disks: [{ name: "x" }] } }),
      ),
    "hub→spoke",
    "2 elements",
    "has 1",
  );
  assertConversionError(
    () => h2s(plan, resource({ spec: { volumes: [], disks: "none" } })),
    "spec.disks",
    "not an array",
  );
  // Without a source array nothing is written, and the stale destination is not passed through.
  assert.deepEqual(h2s(plan, resource({ spec: { disks: [{ name: "stale" }] } })), resource({}));
  // Equal lengths are fine; the stale destination value is not passed through.
  assert.deepEqual(
    h2s(plan, resource({ spec: { volumes: [{ name: "a" }], disks: [{ name: "stale" }] } })).spec,
    { disks: [{ name: "a" }] },
  );
});

Deno.test("ForEach over a non-array path: foreach-shape", () => {
  const { report } = analyzePair(
    root({ volumes: map(str()) }),
    root({ disks: arr(obj({ name: str() })) }),
    [forEach("spec.volumes", "spec.disks", [])],
  );
  const d = single(report.errors, "foreach-shape");
  assert.match(d.message, /spec\.volumes/);
  assert.equal(report.plan, undefined);
  const noItems = analyzePair(
    root({ volumes: arr(obj({ name: str() })) }),
    root({ disks: { type: "array" } }),
    [forEach("spec.volumes", "spec.disks", [])],
  ).report;
  assert.match(single(noItems.errors, "foreach-shape").message, /spokeItemsPath spec\.disks/);
});

Deno.test("ForEach: an acknowledged lossy nested rule still needs ack on the ForEach", () => {
  const nested = {
    strategy: "DefaultValue",
    defaultValue: { path: "protocol", existsOn: "Spoke", default: "TCP" },
    acknowledgeLossy: true,
  };
  const hub = root({ ports: arr(obj({ port: int() })) });
  const spoke = root({ ports: arr(obj({ port: int(), protocol: str() })) });
  const { report } = analyzePair(hub, spoke, [forEach("spec.ports", "spec.ports", [nested])]);
  const d = single(report.errors, "unacknowledged-lossy");
  assert.equal(d.ruleIndex, 0);
  assert.match(d.message, /^rule\[0\] ForEach: lossy spoke→hub/);
  assert.equal(report.errors.length, 1, describe(report.errors));

  // The other way round: the ForEach acknowledged, the nested rule not.
  const inner = analyzePair(hub, spoke, [
    forEach("spec.ports", "spec.ports", [{ ...nested, acknowledgeLossy: false }], {
      acknowledgeLossy: true,
    }),
  ]).report;
  const e = single(inner.errors, "unacknowledged-lossy");
  assert.match(e.message, /^rule\[0\] ForEach > rule\[0\] DefaultValue: lossy spoke→hub/);

  const plan = pairPlan(hub, spoke, [
    forEach("spec.ports", "spec.ports", [nested], { acknowledgeLossy: true }),
  ]);
  assert.deepEqual(
    h2s(plan, resource({ spec: { ports: [{ port: 80 }] } })).spec,
    { ports: [{ port: 80, protocol: "TCP" }] },
  );
});

Deno.test("ForEach with when inside: the gate reads the element", () => {
  const el = obj({ mode: str(), level: int() });
  const plan = pairPlan(
    root({ items: arr(el) }),
    root({ items: arr(obj({ mode: str(), tier: int() })) }),
    [
      forEach("spec.items", "spec.items", [{
        ...rename("level", "tier"),
        when: { path: "mode", equals: "advanced" },
      }]),
    ],
  );
  assert.deepEqual(
    h2s(
      plan,
      resource({ spec: { items: [{ mode: "advanced", level: 1 }, { mode: "basic", level: 2 }] } }),
    )
      .spec,
    { items: [{ mode: "advanced", tier: 1 }, { mode: "basic" }] },
  );
});
