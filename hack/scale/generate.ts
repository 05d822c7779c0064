/**
 * The scale generator's fleet, pure and deterministic for a seed: CRDs `widgetNNNs` with a `v3`
 * storage hub and `v1`/`v2` served spokes, one CRDConversionConfig per CRD whose spokes carry
 * strategy slots from the catalog, and instances at `v1`.
 */
import { createRng } from "../../src/engine/generate_rng.ts";
import type { JsonObject, JsonValue } from "../../src/lib/json.ts";
import { CATALOG, SCALE_GROUP, slotNames, type SlotParts } from "./catalog.ts";

export const HUB_VERSION = "v3";
export const SPOKE_VERSIONS = ["v1", "v2"] as const;
export const CONFIG_API_VERSION = "terasky.com/v1alpha1";

export interface FleetOptions {
  targets: number;
  instances: number;
  strategiesMin: number;
  strategiesMax: number;
  seed: number;
  namespace: string;
}

export interface Target {
  crdName: string;
  kind: string;
  plural: string;
  crd: JsonObject;
  config: JsonObject;
  instances: JsonObject[];
  /** Strategy of each slot, by spoke version. */
  slots: Record<string, string[]>;
}

export interface Fleet {
  targets: Target[];
  /** Strategy → number of slots using it. */
  strategyCoverage: Record<string, number>;
}

/** Why the options cannot give a fleet covering every strategy, or undefined. */
export function fleetOptionsError(o: FleetOptions): string | undefined {
  if (!Number.isSafeInteger(o.targets) || o.targets < 1) return "--targets must be at least 1";
  if (!Number.isSafeInteger(o.instances) || o.instances < 0) {
    return "--instances must be at least 0";
  }
  if (!Number.isSafeInteger(o.strategiesMin) || o.strategiesMin < 1) {
    return "--strategies-min must be at least 1";
  }
  if (!Number.isSafeInteger(o.strategiesMax) || o.strategiesMax < o.strategiesMin) {
    return "--strategies-max must be at least --strategies-min";
  }
  if (2 * o.targets * o.strategiesMax < CATALOG.length) {
    return `2 × --targets × --strategies-max must be at least ${CATALOG.length} to cover every strategy`;
  }
  return undefined;
}

const pad = (i: number) => String(i).padStart(3, "0");

/**
 * Slot strategies per spoke: seeded counts in [min, max], round-robin over the catalog from a
 * seeded start; counts are raised (never above max) until there are enough slots, and a coverage
 * pass swaps a repeated strategy for each one still missing.
 */
function assignSlots(o: FleetOptions): number[][] {
  const rng = createRng(o.seed);
  const counts = Array.from(
    { length: o.targets * 2 },
    () => rng.int(o.strategiesMin, o.strategiesMax),
  );
  for (let i = 0; counts.reduce((a, b) => a + b, 0) < CATALOG.length; i = (i + 1) % counts.length) {
    if (counts[i] < o.strategiesMax) counts[i]++;
  }
  let cursor = rng.int(0, CATALOG.length - 1);
  const slots = counts.map((c) => Array.from({ length: c }, () => cursor++ % CATALOG.length));
  const uses = new Array<number>(CATALOG.length).fill(0);
  for (const s of slots.flat()) uses[s]++;
  for (let missing = 0; missing < CATALOG.length; missing++) {
    if (uses[missing] > 0) continue;
    outer: for (const spoke of slots) {
      for (let i = 0; i < spoke.length; i++) {
        if (uses[spoke[i]] > 1) {
          uses[spoke[i]]--;
          spoke[i] = missing;
          uses[missing]++;
          break outer;
        }
      }
    }
  }
  return slots;
}

function versionSchema(fields: Record<string, JsonObject>): JsonObject {
  return {
    openAPIV3Schema: {
      type: "object",
      properties: {
        spec: { type: "object", properties: { fixture: { type: "string" }, ...fields } },
      },
    },
  };
}

function buildTarget(index: number, spokeSlots: number[][], o: FleetOptions): Target {
  const kind = `Widget${pad(index)}`;
  const plural = `widget${pad(index)}s`;
  const crdName = `${plural}.${SCALE_GROUP}`;
  const hubFields: Record<string, JsonObject> = {};
  const spokeFields: Record<string, Record<string, JsonObject>> = {};
  const spokes: JsonObject[] = [];
  const slots: Record<string, string[]> = {};
  const sample: Record<string, JsonValue> = {};
  SPOKE_VERSIONS.forEach((version, v) => {
    const parts: SlotParts[] = spokeSlots[v].map((s, i) =>
      CATALOG[s].build(slotNames(`${version}s${i}`))
    );
    slots[version] = spokeSlots[v].map((s) => CATALOG[s].strategy);
    spokeFields[version] = Object.assign({}, ...parts.map((p) => p.spoke));
    for (const p of parts) Object.assign(hubFields, p.hub);
    if (version === "v1") { for (const p of parts) Object.assign(sample, p.sample); }
    spokes.push({ version, rules: parts.map((p) => p.rule) });
  });
  const crd: JsonObject = {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: crdName },
    spec: {
      group: SCALE_GROUP,
      scope: "Namespaced",
      names: { kind, plural, singular: `widget${pad(index)}`, categories: ["widgets"] },
      versions: [
        ...SPOKE_VERSIONS.map((version) => ({
          name: version,
          served: true,
          storage: false,
          schema: versionSchema(spokeFields[version]),
        })),
        { name: HUB_VERSION, served: true, storage: true, schema: versionSchema(hubFields) },
      ],
    },
  };
  const config: JsonObject = {
    apiVersion: CONFIG_API_VERSION,
    kind: "CRDConversionConfig",
    metadata: { name: `${crdName}-conversion` },
    spec: {
      targetCRD: { name: crdName },
      hubVersion: HUB_VERSION,
      unmappedFieldPolicy: "Warn",
      unmappedFieldReason:
        "each spoke maps only its own slots; the other spoke's hub fields have no counterpart on it",
      spokes,
    },
  };
  const instances = Array.from({ length: o.instances }, (_, i): JsonObject => ({
    apiVersion: `${SCALE_GROUP}/v1`,
    kind,
    metadata: { name: `${plural.slice(0, -1)}-${pad(i)}`, namespace: o.namespace },
    spec: { fixture: `${kind}/${i}`, ...structuredClone(sample) },
  }));
  return { crdName, kind, plural, crd, config, instances, slots };
}

/** The whole fleet for `o` (check {@link fleetOptionsError} first). */
export function generateFleet(o: FleetOptions): Fleet {
  const error = fleetOptionsError(o);
  if (error !== undefined) throw new RangeError(error);
  const slots = assignSlots(o);
  const targets = Array.from(
    { length: o.targets },
    (_, t) => buildTarget(t + 1, [slots[2 * t], slots[2 * t + 1]], o),
  );
  const strategyCoverage: Record<string, number> = {};
  for (const t of CATALOG) strategyCoverage[t.strategy] = 0;
  for (const s of slots.flat()) strategyCoverage[CATALOG[s].strategy]++;
  return { targets, strategyCoverage };
}
