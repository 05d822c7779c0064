/**
 * Strategy benchmarks (`deno task bench`): one representative object per implemented strategy,
 * each direction, converted through a linked plan (`convertWithPlan`). One group per strategy and
 * direction, so deno ranks only like with like: the interpreted linker (the baseline) against the
 * compiled one (docs/design/engine.md#the-compiled-linker), the ratio being what compiling buys
 * that strategy. Group `link`: what compiling costs once (link and first conversions). Every strategy has a
 * `STRATEGY_CASES` entry; a new one adds one. The whole-object group is convert_wide_bench.ts.
 */
import { convertWithPlan, type LinkedPlan, linkPlan } from "./convert.ts";
import type { ConversionRuleSpec, Direction, JsonObject, SchemaNode } from "./types.ts";
import { analyzePair, arr, bool, int, num, obj, object, root, str } from "./bench_support.ts";

interface StrategyCase {
  name: string;
  hub: Record<string, SchemaNode>;
  spoke: Record<string, SchemaNode>;
  rules: ConversionRuleSpec[];
  /** A representative input per direction (hub object for hub→spoke, spoke object back). */
  hubObject: JsonObject;
  spokeObject: JsonObject;
}

const zone = obj({ name: str, weight: int });
const ack = { acknowledgeLossy: true };

const STRATEGY_CASES: StrategyCase[] = [
  {
    name: "FieldRename",
    hub: { storageGB: str, size: int },
    spoke: { storageSize: str, size: int },
    rules: [{
      strategy: "FieldRename",
      fieldRename: { hubPath: "spec.storageGB", spokePath: "spec.storageSize" },
    }],
    hubObject: object({ storageGB: "100", size: 3 }),
    spokeObject: object({ storageSize: "100", size: 3 }),
  },
  {
    name: "ScalarToObject",
    hub: { replicaCount: int },
    spoke: { replicas: obj({ count: int, mode: str }) },
    rules: [{
      strategy: "ScalarToObject",
      scalarToObject: {
        hubPath: "spec.replicaCount",
        spokePath: "spec.replicas",
        key: "count",
        defaultsForOtherKeys: { mode: "auto" },
      },
      ...ack,
    }],
    hubObject: object({ replicaCount: 3 }),
    spokeObject: object({ replicas: { count: 3, mode: "manual" } }),
  },
  {
    name: "ObjectToScalar",
    hub: { network: obj({ cidr: str }) },
    spoke: { networkCIDR: str },
    rules: [{
      strategy: "ObjectToScalar",
      objectToScalar: { hubPath: "spec.network", spokePath: "spec.networkCIDR", key: "cidr" },
    }],
    hubObject: object({ network: { cidr: "10.0.0.0/16" } }),
    spokeObject: object({ networkCIDR: "10.0.0.0/16" }),
  },
  {
    name: "SingletonArrayToObject",
    hub: { zones: arr(zone, 1) },
    spoke: { zone },
    rules: [{
      strategy: "SingletonArrayToObject",
      singletonArrayToObject: { hubPath: "spec.zones", spokePath: "spec.zone" },
    }],
    hubObject: object({ zones: [{ name: "a", weight: 1 }] }),
    spokeObject: object({ zone: { name: "a", weight: 1 } }),
  },
  {
    name: "ObjectToSingletonArray",
    hub: { primaryRegion: zone },
    spoke: { regions: arr(zone, 1) },
    rules: [{
      strategy: "ObjectToSingletonArray",
      objectToSingletonArray: { hubPath: "spec.primaryRegion", spokePath: "spec.regions" },
    }],
    hubObject: object({ primaryRegion: { name: "eu", weight: 2 } }),
    spokeObject: object({ regions: [{ name: "eu", weight: 2 }] }),
  },
  {
    name: "FieldsToMap",
    hub: { cpuLimit: str, memoryLimit: str },
    spoke: { limits: { type: "object", additionalProperties: str } },
    rules: [{
      strategy: "FieldsToMap",
      fieldsToMap: {
        hubPaths: ["spec.cpuLimit", "spec.memoryLimit"],
        spokeMapPath: "spec.limits",
        keyNames: { "spec.cpuLimit": "cpu", "spec.memoryLimit": "memory" },
      },
    }],
    hubObject: object({ cpuLimit: "4", memoryLimit: "8Gi" }),
    spokeObject: object({ limits: { cpu: "4", memory: "8Gi" } }),
  },
  {
    name: "MapToFields",
    hub: { tags: { type: "object", additionalProperties: str } },
    spoke: { env: str, team: str },
    rules: [{
      strategy: "MapToFields",
      mapToFields: { hubMapPath: "spec.tags", spokePaths: ["spec.env", "spec.team"] },
    }],
    hubObject: object({ tags: { env: "dev", team: "a" } }),
    spokeObject: object({ env: "dev", team: "a" }),
  },
  {
    name: "ToAnnotation",
    hub: { description: str, note: obj({ text: str, level: int }) },
    spoke: {},
    rules: [
      {
        strategy: "ToAnnotation",
        toAnnotation: { hubPath: "spec.description", key: "d", restoreOnReverse: true },
      },
      {
        strategy: "ToAnnotation",
        toAnnotation: { hubPath: "spec.note", key: "n", restoreOnReverse: true },
      },
    ],
    hubObject: object({ description: "a <b> & c", note: { text: "hi", level: 2 } }),
    spokeObject: object({}, {
      annotations: { d: '"a \\u003cb\\u003e \\u0026 c"', n: '{"level":2,"text":"hi"}' },
    }),
  },
  {
    name: "ToLabel",
    hub: { tier: str },
    spoke: {},
    rules: [{
      strategy: "ToLabel",
      toLabel: {
        hubPath: "spec.tier",
        key: "demo.example.com/tier",
        serialization: "String",
        restoreOnReverse: true,
      },
    }],
    hubObject: object({ tier: "gold" }),
    spokeObject: object({}, { labels: { app: "demo", "demo.example.com/tier": "gold" } }),
  },
  {
    name: "FromAnnotation",
    hub: {},
    spoke: { operatorNote: str },
    rules: [{
      strategy: "FromAnnotation",
      fromAnnotation: { spokePath: "spec.operatorNote", key: "note", stashOnReverse: true },
    }],
    hubObject: object({}, { annotations: { note: '"handle with care"' } }),
    spokeObject: object({ operatorNote: "handle with care" }),
  },
  {
    name: "FromLabel",
    hub: {},
    spoke: { operatorTier: str },
    rules: [{
      strategy: "FromLabel",
      fromLabel: { spokePath: "spec.operatorTier", key: "operator-tier", stashOnReverse: true },
    }],
    hubObject: object({}, { labels: { app: "demo", "operator-tier": "silver" } }),
    spokeObject: object({ operatorTier: "silver" }),
  },
  {
    name: "EnumRemap",
    hub: { size: str },
    spoke: { size: str },
    rules: [{
      strategy: "EnumRemap",
      enumRemap: {
        path: "spec.size",
        mapping: [{ hub: "Small", spoke: "S" }, { hub: "Medium", spoke: "M" }, {
          hub: "Large",
          spoke: "L",
        }],
      },
    }],
    hubObject: object({ size: "Large" }),
    spokeObject: object({ size: "L" }),
  },
  {
    name: "DefaultValue",
    hub: { name: str },
    spoke: { name: str, zone: str },
    rules: [{
      strategy: "DefaultValue",
      defaultValue: { path: "spec.zone", existsOn: "Spoke", default: "a" },
      ...ack,
    }],
    hubObject: object({ name: "n" }),
    spokeObject: object({ name: "n", zone: "b" }),
  },
  {
    name: "Constant",
    hub: { name: str, apiLevel: int },
    spoke: { name: str },
    rules: [{
      strategy: "Constant",
      constant: { path: "spec.apiLevel", existsOn: "Hub", value: 2 },
      ...ack,
    }],
    hubObject: object({ name: "n", apiLevel: 2 }),
    spokeObject: object({ name: "n" }),
  },
  {
    name: "Delete",
    hub: { name: str },
    spoke: { name: str, debugMode: bool },
    rules: [{ strategy: "Delete", delete: { path: "spec.debugMode", existsOn: "Spoke" }, ...ack }],
    hubObject: object({ name: "n" }),
    spokeObject: object({ name: "n", debugMode: true }),
  },
  {
    name: "ForEach",
    hub: { volumes: arr(obj({ name: str, sizeGB: int, type: str })) },
    spoke: { volumes: arr(obj({ name: str, size: int, type: str })) },
    rules: [{
      strategy: "ForEach",
      forEach: {
        hubItemsPath: "spec.volumes",
        spokeItemsPath: "spec.volumes",
        rules: [
          { strategy: "FieldRename", fieldRename: { hubPath: "sizeGB", spokePath: "size" } },
          {
            strategy: "EnumRemap",
            enumRemap: {
              path: "type",
              mapping: [{ hub: "ssd", spoke: "fast" }, { hub: "hdd", spoke: "slow" }],
            },
          },
        ],
      },
    }],
    hubObject: object({
      volumes: [1, 2, 3, 4].map((i) => ({
        name: `v${i}`,
        sizeGB: i * 10,
        type: i % 2 ? "ssd" : "hdd",
      })),
    }),
    spokeObject: object({
      volumes: [1, 2, 3, 4].map((i) => ({
        name: `v${i}`,
        size: i * 10,
        type: i % 2 ? "fast" : "slow",
      })),
    }),
  },
  {
    name: "TypeCoerce",
    hub: { replicas: int },
    spoke: { replicas: str },
    rules: [{ strategy: "TypeCoerce", typeCoerce: { path: "spec.replicas" } }],
    hubObject: object({ replicas: 3 }),
    spokeObject: object({ replicas: "3" }),
  },
  {
    name: "ScalarToFields",
    hub: { size: str },
    spoke: { sizeValue: int, sizeUnit: str },
    rules: [{
      strategy: "ScalarToFields",
      scalarToFields: {
        hubPath: "spec.size",
        pattern: "^(?P<value>[0-9]+)(?P<unit>[A-Za-z]+)$",
        spokeFields: { value: "spec.sizeValue", unit: "spec.sizeUnit" },
        joinTemplate: "{{.value}}{{.unit}}",
        losslessOverride: true,
      },
    }],
    hubObject: object({ size: "50Gi" }),
    spokeObject: object({ sizeValue: 50, sizeUnit: "Gi" }),
  },
  {
    name: "FieldsToScalar",
    hub: { contactName: str, contactEmail: str },
    spoke: { contact: str },
    rules: [{
      strategy: "FieldsToScalar",
      fieldsToScalar: {
        hubFields: { name: "spec.contactName", email: "spec.contactEmail" },
        pattern: "^(?P<name>[^<]+) <(?P<email>[^>]+)>$",
        spokePath: "spec.contact",
        joinTemplate: "{{.name}} <{{.email}}>",
        losslessOverride: true,
      },
    }],
    hubObject: object({ contactName: "Jane Doe", contactEmail: "jane@example.com" }),
    spokeObject: object({ contact: "Jane Doe <jane@example.com>" }),
  },
  {
    name: "ArrayToMapByKey",
    hub: { ports: arr(obj({ name: str, port: int })) },
    spoke: { portsByName: { type: "object", additionalProperties: obj({ port: int }) } },
    rules: [{
      strategy: "ArrayToMapByKey",
      arrayToMapByKey: { hubPath: "spec.ports", spokePath: "spec.portsByName", keyField: "name" },
      ...ack,
    }],
    hubObject: object({ ports: [{ name: "http", port: 80 }, { name: "https", port: 443 }] }),
    spokeObject: object({ portsByName: { http: { port: 80 }, https: { port: 443 } } }),
  },
  {
    name: "MapToArrayByKey",
    hub: { tiers: { type: "object", additionalProperties: obj({ size: int }) } },
    spoke: { tierList: arr(obj({ name: str, size: int })) },
    rules: [{
      strategy: "MapToArrayByKey",
      mapToArrayByKey: { hubPath: "spec.tiers", spokePath: "spec.tierList", keyField: "name" },
      ...ack,
    }],
    hubObject: object({ tiers: { gold: { size: 3 }, silver: { size: 1 } } }),
    spokeObject: object({ tierList: [{ name: "gold", size: 3 }, { name: "silver", size: 1 }] }),
  },
  {
    name: "NumericScale",
    hub: { memoryMiB: int },
    spoke: { memoryGiB: num },
    rules: [{
      strategy: "NumericScale",
      numericScale: { hubPath: "spec.memoryMiB", spokePath: "spec.memoryGiB", factor: 1024 },
      ...ack,
    }],
    hubObject: object({ memoryMiB: 4096 }),
    spokeObject: object({ memoryGiB: 4 }),
  },
  {
    name: "ListJoin",
    hub: { ports: arr(int) },
    spoke: { portList: str },
    rules: [{
      strategy: "ListJoin",
      listJoin: { hubPath: "spec.ports", spokePath: "spec.portList", separator: ";" },
    }],
    hubObject: object({ ports: [80, 443, 8080] }),
    spokeObject: object({ portList: "80;443;8080" }),
  },
  {
    name: "ListSplit",
    hub: { hosts: str },
    spoke: { hostList: arr(str) },
    rules: [{
      strategy: "ListSplit",
      listSplit: { hubPath: "spec.hosts", spokePath: "spec.hostList", separator: "," },
    }],
    hubObject: object({ hosts: "a.example.com,b.example.com" }),
    spokeObject: object({ hostList: ["a.example.com", "b.example.com"] }),
  },
  {
    name: "Quantity",
    hub: { memory: str },
    spoke: { memoryMillis: int },
    rules: [{
      strategy: "Quantity",
      quantity: { hubPath: "spec.memory", spokePath: "spec.memoryMillis" },
      ...ack,
    }],
    hubObject: object({ memory: "1536Mi" }),
    spokeObject: object({ memoryMillis: 1610612736000 }),
  },
  {
    name: "Duration",
    hub: { timeout: str },
    spoke: { timeoutSeconds: int },
    rules: [{
      strategy: "Duration",
      duration: { hubPath: "spec.timeout", spokePath: "spec.timeoutSeconds" },
      ...ack,
    }],
    hubObject: object({ timeout: "1h30m0s" }),
    spokeObject: object({ timeoutSeconds: 5400 }),
  },
  {
    name: "MapKeyRename",
    hub: { selector: { type: "object", additionalProperties: str } },
    spoke: { matchLabels: { type: "object", additionalProperties: str } },
    rules: [{
      strategy: "MapKeyRename",
      mapKeyRename: {
        hubPath: "spec.selector",
        spokePath: "spec.matchLabels",
        renames: { app: "application", tier: "level" },
      },
    }],
    hubObject: object({ selector: { app: "web", tier: "gold", region: "eu" } }),
    spokeObject: object({ matchLabels: { application: "web", level: "gold", region: "eu" } }),
  },
  {
    name: "JSONPatch",
    hub: { legacyFlag: bool },
    spoke: { legacyFlagV2: bool },
    rules: [{
      strategy: "JSONPatch",
      jsonPatch: {
        hubToSpoke: [{ op: "move", from: "/spec/legacyFlag", path: "/spec/legacyFlagV2" }],
        spokeToHub: [{ op: "move", from: "/spec/legacyFlagV2", path: "/spec/legacyFlag" }],
        losslessOverride: true,
      },
    }],
    hubObject: object({ legacyFlag: true }),
    spokeObject: object({ legacyFlagV2: true }),
  },
  {
    name: "CEL",
    hub: { packed: int },
    spoke: { bitHigh: int, bitLow: int },
    rules: [{
      strategy: "CEL",
      cel: {
        hubPaths: ["spec.packed"],
        spokePaths: ["spec.bitHigh", "spec.bitLow"],
        hubToSpoke:
          '{"spec.bitHigh": int(object.spec.packed) / 256, "spec.bitLow": int(object.spec.packed) % 256}',
        spokeToHub: '{"spec.packed": int(object.spec.bitHigh) * 256 + int(object.spec.bitLow)}',
      },
      ...ack,
    }],
    hubObject: object({ packed: 1025 }),
    spokeObject: object({ bitHigh: 4, bitLow: 1 }),
  },
];

const LABEL: Record<Direction, string> = { hubToSpoke: "hub→spoke", spokeToHub: "spoke→hub" };

for (const c of STRATEGY_CASES) {
  const data = analyzePair(root(c.hub), root(c.spoke), c.rules).spokes[0].plan!;
  const compiled: LinkedPlan = linkPlan(data);
  const interpreted: LinkedPlan = linkPlan(data, { compiled: false });
  for (const direction of ["hubToSpoke", "spokeToHub"] as const) {
    const input = direction === "hubToSpoke" ? c.hubObject : c.spokeObject;
    const group = `${c.name} ${LABEL[direction]}`;
    Deno.bench({ name: `${group} interpreted`, group, baseline: true }, () => {
      convertWithPlan(interpreted, direction, input);
    });
    Deno.bench({ name: `${group} compiled`, group }, () => {
      convertWithPlan(compiled, direction, input);
    });
  }
}

// What compiling costs once: link a 40-field plan with one rename and convert one object each
// way — the compiled linker generates its functions on that first conversion (registry installs
// and the initial sync pay only the linking; the first request per plan direction the rest).
const fields = (first: string) =>
  root(Object.fromEntries([
    [first, int],
    ...Array.from({ length: 40 }, (_, i) => [`field${i}`, i % 2 ? str : int]),
  ]));
const linkData = analyzePair(fields("storageGB"), fields("storageSize"), [{
  strategy: "FieldRename",
  fieldRename: { hubPath: "spec.storageGB", spokePath: "spec.storageSize" },
}]).spokes[0].plan!;
const linkSpec = (first: string): JsonObject =>
  Object.fromEntries([
    [first, 7],
    ...Array.from({ length: 40 }, (_, i) => [`field${i}`, i % 2 ? `v${i}` : i]),
  ]);
const [linkHub, linkSpoke] = [object(linkSpec("storageGB")), object(linkSpec("storageSize"))];
for (const compiled of [false, true]) {
  const name = compiled ? "compiled" : "interpreted";
  Deno.bench(
    { name: `link + first conversions, ${name}`, group: "link", baseline: !compiled },
    () => {
      const plan = linkPlan(linkData, { compiled });
      convertWithPlan(plan, "hubToSpoke", linkHub);
      convertWithPlan(plan, "spokeToHub", linkSpoke);
    },
  );
}
