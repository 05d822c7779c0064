/**
 * The strategy catalog of the scale generator: for each of the 29 conversion strategies, one
 * "slot" — a rule plus the hub and spoke fields it owns and a spoke value it converts. Every slot
 * names its fields with its own prefix, so any number of slots share one CRD without clashing.
 */
import type { JsonObject, JsonValue } from "../../src/lib/json.ts";

/** Names a slot's fields: `field("title")` is `v1s3Title`, `path("title")` is `spec.v1s3Title`. */
export interface SlotNames {
  prefix: string;
  field(name: string): string;
  path(name: string): string;
  /** A label or annotation key owned by the slot. */
  key(name: string): string;
}

export interface SlotParts {
  rule: JsonObject;
  /** Hub fields under `spec`, by field name. */
  hub: Record<string, JsonObject>;
  /** Spoke fields under `spec`, by field name. */
  spoke: Record<string, JsonObject>;
  /** A valid spoke value for each spoke field the instances set. */
  sample: Record<string, JsonValue>;
}

export interface SlotTemplate {
  strategy: string;
  build(n: SlotNames): SlotParts;
}

export const SCALE_GROUP = "scale.dco.example.org";

export function slotNames(prefix: string): SlotNames {
  const field = (name: string) => `${prefix}${name[0].toUpperCase()}${name.slice(1)}`;
  return {
    prefix,
    field,
    path: (name) => `spec.${field(name)}`,
    key: (name) => `${SCALE_GROUP}/${prefix.toLowerCase()}-${name}`,
  };
}

const str = { type: "string" };
const int = { type: "integer" };
const num = { type: "number" };
const bool = { type: "boolean" };
const obj = (properties: Record<string, JsonObject>) => ({ type: "object", properties });
const arr = (items: JsonObject, maxItems?: number): JsonObject =>
  maxItems === undefined ? { type: "array", items } : { type: "array", maxItems, items };
const map = (values: JsonObject) => ({ type: "object", additionalProperties: values });

/** Builds the field records of one side: `[name, schema]` pairs named through `n.field`. */
function fields(n: SlotNames, entries: [string, JsonObject][]): Record<string, JsonObject> {
  return Object.fromEntries(entries.map(([name, schema]) => [n.field(name), schema]));
}

function values(n: SlotNames, entries: [string, JsonValue][]): Record<string, JsonValue> {
  return Object.fromEntries(entries.map(([name, value]) => [n.field(name), value]));
}

const lossy = (reason: string) => ({ acknowledgeLossy: true, reason });

/** All 29 strategies, in a fixed order (the generator walks it round-robin). */
export const CATALOG: readonly SlotTemplate[] = [
  {
    strategy: "FieldRename",
    build: (n) => ({
      rule: {
        strategy: "FieldRename",
        fieldRename: { hubPath: n.path("displayName"), spokePath: n.path("title") },
      },
      hub: fields(n, [["displayName", str]]),
      spoke: fields(n, [["title", str]]),
      sample: values(n, [["title", "Widget"]]),
    }),
  },
  {
    strategy: "ScalarToObject",
    build: (n) => ({
      rule: {
        strategy: "ScalarToObject",
        scalarToObject: {
          hubPath: n.path("replicaCount"),
          spokePath: n.path("replicas"),
          key: "count",
          defaultsForOtherKeys: { mode: "auto" },
        },
      },
      hub: fields(n, [["replicaCount", int]]),
      spoke: fields(n, [["replicas", obj({ count: int })]]),
      sample: values(n, [["replicas", { count: 5 }]]),
    }),
  },
  {
    strategy: "ObjectToScalar",
    build: (n) => ({
      rule: {
        strategy: "ObjectToScalar",
        objectToScalar: { hubPath: n.path("owner"), spokePath: n.path("ownerName"), key: "name" },
      },
      hub: fields(n, [["owner", obj({ name: str })]]),
      spoke: fields(n, [["ownerName", str]]),
      sample: values(n, [["ownerName", "bob"]]),
    }),
  },
  {
    strategy: "SingletonArrayToObject",
    build: (n) => ({
      rule: {
        strategy: "SingletonArrayToObject",
        singletonArrayToObject: { hubPath: n.path("zones"), spokePath: n.path("zone") },
      },
      hub: fields(n, [["zones", arr(obj({ name: str }), 1)]]),
      spoke: fields(n, [["zone", obj({ name: str })]]),
      sample: values(n, [["zone", { name: "us-2b" }]]),
    }),
  },
  {
    strategy: "ObjectToSingletonArray",
    build: (n) => ({
      rule: {
        strategy: "ObjectToSingletonArray",
        objectToSingletonArray: { hubPath: n.path("primaryDisk"), spokePath: n.path("disks") },
      },
      hub: fields(n, [["primaryDisk", obj({ sizeGB: int })]]),
      spoke: fields(n, [["disks", arr(obj({ sizeGB: int }), 1)]]),
      sample: values(n, [["disks", [{ sizeGB: 50 }]]]),
    }),
  },
  {
    strategy: "FieldsToMap",
    build: (n) => ({
      rule: {
        strategy: "FieldsToMap",
        fieldsToMap: {
          hubPaths: [n.path("cpuLimit"), n.path("memoryLimit")],
          spokeMapPath: n.path("limits"),
          keyNames: { [n.path("cpuLimit")]: "cpu", [n.path("memoryLimit")]: "memory" },
          onUnknownSpokeKey: "Error",
        },
      },
      hub: fields(n, [["cpuLimit", str], ["memoryLimit", str]]),
      spoke: fields(n, [["limits", map(str)]]),
      sample: values(n, [["limits", { cpu: "2", memory: "4Gi" }]]),
    }),
  },
  {
    strategy: "MapToFields",
    build: (n) => ({
      rule: {
        strategy: "MapToFields",
        mapToFields: {
          hubMapPath: n.path("requests"),
          spokePaths: [n.path("cpuRequest"), n.path("memoryRequest")],
          keyNames: { [n.path("cpuRequest")]: "cpu", [n.path("memoryRequest")]: "memory" },
          onUnknownHubKey: "Error",
        },
      },
      hub: fields(n, [["requests", map(str)]]),
      spoke: fields(n, [["cpuRequest", str], ["memoryRequest", str]]),
      sample: values(n, [["cpuRequest", "250m"], ["memoryRequest", "512Mi"]]),
    }),
  },
  {
    strategy: "ToAnnotation",
    build: (n) => ({
      rule: {
        strategy: "ToAnnotation",
        toAnnotation: {
          hubPath: n.path("notes"),
          key: n.key("notes"),
          serialization: "JSON",
          restoreOnReverse: true,
        },
      },
      hub: fields(n, [["notes", obj({ text: str, priority: int })]]),
      spoke: {},
      sample: {},
    }),
  },
  {
    strategy: "ToLabel",
    build: (n) => ({
      rule: {
        strategy: "ToLabel",
        toLabel: {
          hubPath: n.path("tier"),
          key: n.key("tier"),
          serialization: "String",
          restoreOnReverse: true,
        },
      },
      hub: fields(n, [["tier", str]]),
      spoke: {},
      sample: {},
    }),
  },
  {
    strategy: "FromAnnotation",
    build: (n) => ({
      rule: {
        strategy: "FromAnnotation",
        fromAnnotation: {
          spokePath: n.path("legacyNote"),
          key: n.key("legacy-note"),
          serialization: "JSON",
          stashOnReverse: true,
        },
      },
      hub: {},
      spoke: fields(n, [["legacyNote", str]]),
      sample: values(n, [["legacyNote", "note & <more>"]]),
    }),
  },
  {
    strategy: "FromLabel",
    build: (n) => ({
      rule: {
        strategy: "FromLabel",
        fromLabel: {
          spokePath: n.path("operatorTier"),
          key: n.key("operator-tier"),
          stashOnReverse: true,
        },
      },
      hub: {},
      spoke: fields(n, [["operatorTier", str]]),
      sample: values(n, [["operatorTier", "basic"]]),
    }),
  },
  {
    strategy: "EnumRemap",
    build: (n) => ({
      rule: {
        strategy: "EnumRemap",
        enumRemap: {
          path: n.path("size"),
          mapping: [{ hub: "Large", spoke: "L" }, { hub: "Medium", spoke: "M" }, {
            hub: "Small",
            spoke: "S",
          }],
          onUnmappedHubValue: "Error",
          onUnmappedSpokeValue: "Error",
        },
      },
      hub: fields(n, [["size", str]]),
      spoke: fields(n, [["size", str]]),
      sample: values(n, [["size", "S"]]),
    }),
  },
  {
    strategy: "DefaultValue",
    build: (n) => ({
      rule: {
        strategy: "DefaultValue",
        defaultValue: { path: n.path("zoneHint"), existsOn: "Spoke", default: "a" },
        ...lossy("the zone hint exists only on the spoke"),
      },
      hub: {},
      spoke: fields(n, [["zoneHint", str]]),
      sample: values(n, [["zoneHint", "b"]]),
    }),
  },
  {
    strategy: "Constant",
    build: (n) => ({
      rule: {
        strategy: "Constant",
        constant: { path: n.path("schemaLevel"), existsOn: "Hub", value: 2 },
        ...lossy("the schema level is a hub-only marker"),
      },
      hub: fields(n, [["schemaLevel", int]]),
      spoke: {},
      sample: {},
    }),
  },
  {
    strategy: "Delete",
    build: (n) => ({
      rule: {
        strategy: "Delete",
        delete: { path: n.path("debugMode"), existsOn: "Spoke" },
        ...lossy("debug mode is not kept on the hub"),
      },
      hub: {},
      spoke: fields(n, [["debugMode", bool]]),
      sample: values(n, [["debugMode", true]]),
    }),
  },
  {
    strategy: "JSONPatch",
    build: (n) => ({
      rule: {
        strategy: "JSONPatch",
        jsonPatch: {
          // `add` rather than `move`: an instance written at the other spoke has no such field.
          hubToSpoke: [{ op: "add", path: `/spec/${n.field("stampedV2")}`, value: true }],
          spokeToHub: [{ op: "add", path: `/spec/${n.field("stamped")}`, value: true }],
        },
        ...lossy("the patch stamps a constant marker each way"),
      },
      hub: fields(n, [["stamped", bool]]),
      spoke: fields(n, [["stampedV2", bool]]),
      sample: values(n, [["stampedV2", true]]),
    }),
  },
  {
    strategy: "ForEach",
    build: (n) => ({
      rule: {
        strategy: "ForEach",
        forEach: {
          hubItemsPath: n.path("volumes"),
          spokeItemsPath: n.path("volumes"),
          rules: [{
            strategy: "FieldRename",
            fieldRename: { hubPath: "sizeGB", spokePath: "size" },
          }],
        },
      },
      hub: fields(n, [["volumes", arr(obj({ name: str, sizeGB: int }))]]),
      spoke: fields(n, [["volumes", arr(obj({ name: str, size: int }))]]),
      sample: values(n, [["volumes", [{ name: "cache", size: 7 }]]]),
    }),
  },
  {
    strategy: "TypeCoerce",
    build: (n) => ({
      rule: {
        strategy: "TypeCoerce",
        typeCoerce: { path: n.path("threshold"), onFractionalInteger: "Error" },
      },
      hub: fields(n, [["threshold", num]]),
      spoke: fields(n, [["threshold", str]]),
      sample: values(n, [["threshold", "2.5"]]),
    }),
  },
  {
    strategy: "ScalarToFields",
    build: (n) => ({
      rule: {
        strategy: "ScalarToFields",
        scalarToFields: {
          hubPath: n.path("memory"),
          pattern: "^(?P<value>[0-9]+(?:\\.[0-9]+)?(?:e[+-][0-9]+)?)(?P<unit>Ki|Mi|Gi)$",
          spokeFields: { value: n.path("memoryValue"), unit: n.path("memoryUnit") },
          joinTemplate: "{{.value}}{{.unit}}",
          losslessOverride: true,
        },
        reason: "the join prints the number the pattern parses back",
      },
      hub: fields(n, [["memory", str]]),
      spoke: fields(n, [["memoryValue", num], ["memoryUnit", str]]),
      sample: values(n, [["memoryValue", 512], ["memoryUnit", "Mi"]]),
    }),
  },
  {
    strategy: "FieldsToScalar",
    build: (n) => ({
      rule: {
        strategy: "FieldsToScalar",
        fieldsToScalar: {
          hubFields: { host: n.path("hostName"), port: n.path("port") },
          pattern: "^(?P<host>[^:]+):(?P<port>[0-9]+)$",
          spokePath: n.path("endpoint"),
          joinTemplate: "{{.host}}:{{.port}}",
          losslessOverride: true,
        },
      },
      hub: fields(n, [["hostName", str], ["port", int]]),
      spoke: fields(n, [["endpoint", str]]),
      sample: values(n, [["endpoint", "api.example:8080"]]),
    }),
  },
  {
    strategy: "ArrayToMapByKey",
    build: (n) => ({
      rule: {
        strategy: "ArrayToMapByKey",
        arrayToMapByKey: {
          hubPath: n.path("ports"),
          spokePath: n.path("portsByName"),
          keyField: "name",
        },
        ...lossy("map to array sorts by name"),
      },
      hub: fields(n, [["ports", arr(obj({ name: str, port: int }))]]),
      spoke: fields(n, [["portsByName", map(obj({ port: int }))]]),
      sample: values(n, [["portsByName", { https: { port: 443 }, http: { port: 80 } }]]),
    }),
  },
  {
    strategy: "MapToArrayByKey",
    build: (n) => ({
      rule: {
        strategy: "MapToArrayByKey",
        mapToArrayByKey: {
          hubPath: n.path("tiersByName"),
          spokePath: n.path("tiers"),
          keyField: "name",
        },
        ...lossy("map to array sorts by name"),
      },
      hub: fields(n, [["tiersByName", map(obj({ weight: int }))]]),
      spoke: fields(n, [["tiers", arr(obj({ name: str, weight: int }))]]),
      sample: values(n, [["tiers", [{ name: "gold", weight: 5 }, { name: "silver", weight: 1 }]]]),
    }),
  },
  {
    strategy: "NumericScale",
    build: (n) => ({
      rule: {
        strategy: "NumericScale",
        numericScale: { hubPath: n.path("offsetTenths"), spokePath: n.path("offset"), factor: 10 },
        ...lossy("the hub keeps whole tenths only"),
      },
      hub: fields(n, [["offsetTenths", int]]),
      spoke: fields(n, [["offset", num]]),
      sample: values(n, [["offset", 2.5]]),
    }),
  },
  {
    strategy: "ListJoin",
    build: (n) => ({
      rule: {
        strategy: "ListJoin",
        listJoin: {
          hubPath: n.path("allowedPorts"),
          spokePath: n.path("allowedPortList"),
          separator: ";",
        },
      },
      hub: fields(n, [["allowedPorts", arr(int)]]),
      spoke: fields(n, [["allowedPortList", str]]),
      sample: values(n, [["allowedPortList", "8080;9090"]]),
    }),
  },
  {
    strategy: "ListSplit",
    build: (n) => ({
      rule: {
        strategy: "ListSplit",
        listSplit: { hubPath: n.path("hostsCsv"), spokePath: n.path("hosts"), separator: "," },
      },
      hub: fields(n, [["hostsCsv", str]]),
      spoke: fields(n, [["hosts", arr(str)]]),
      sample: values(n, [["hosts", ["a.example", "b.example"]]]),
    }),
  },
  {
    strategy: "Quantity",
    build: (n) => ({
      rule: {
        strategy: "Quantity",
        quantity: { hubPath: n.path("storage"), spokePath: n.path("storageMillis") },
        ...lossy("quantities come back in canonical form"),
      },
      hub: fields(n, [["storage", str]]),
      spoke: fields(n, [["storageMillis", int]]),
      sample: values(n, [["storageMillis", 1500]]),
    }),
  },
  {
    strategy: "Duration",
    build: (n) => ({
      rule: {
        strategy: "Duration",
        duration: { hubPath: n.path("timeoutSeconds"), spokePath: n.path("timeout") },
        ...lossy("durations come back in canonical form"),
      },
      hub: fields(n, [["timeoutSeconds", int]]),
      spoke: fields(n, [["timeout", str]]),
      sample: values(n, [["timeout", "1h30m"]]),
    }),
  },
  {
    strategy: "MapKeyRename",
    build: (n) => ({
      rule: {
        strategy: "MapKeyRename",
        mapKeyRename: {
          hubPath: n.path("selector"),
          spokePath: n.path("matchLabels"),
          renames: { app: "application", tier: "level" },
        },
      },
      hub: fields(n, [["selector", map(str)]]),
      spoke: fields(n, [["matchLabels", map(str)]]),
      sample: values(n, [["matchLabels", { application: "api", level: "backend" }]]),
    }),
  },
  {
    strategy: "CEL",
    build: (n) => {
      const packed = n.field("packed");
      const high = n.field("bitHigh");
      const low = n.field("bitLow");
      return {
        rule: {
          strategy: "CEL",
          cel: {
            hubPaths: [n.path("packed")],
            spokePaths: [n.path("bitHigh"), n.path("bitLow")],
            // Guarded by has(): an instance written at the other spoke has none of these fields.
            hubToSpoke:
              `has(object.spec.${packed}) ? {"spec.${high}": int(object.spec.${packed}) / 256, ` +
              `"spec.${low}": int(object.spec.${packed}) % 256} : {}`,
            spokeToHub: `has(object.spec.${high}) && has(object.spec.${low}) ? ` +
              `{"spec": {"${packed}": int(object.spec.${high}) * 256 + int(object.spec.${low})}} : {}`,
          },
          ...lossy("packed into two bytes"),
        },
        hub: fields(n, [["packed", int]]),
        spoke: fields(n, [["bitHigh", int], ["bitLow", int]]),
        sample: values(n, [["bitHigh", 2], ["bitLow", 3]]),
      };
    },
  },
];
