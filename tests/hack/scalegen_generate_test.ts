/**
 * The scale generator's fleet: every config passes the engine's validation against its CRD, the
 * slots together use all 29 strategies, the same seed gives the same bytes, and every instance
 * converts to every served version.
 */
import assert from "node:assert/strict";
import { parseConfig } from "../../src/api/parse.ts";
import {
  analyze,
  convertObject,
  createRouter,
  implementedStrategies,
  schemaSourceFromCRD,
  structuralError,
} from "../../src/engine/mod.ts";
import { CATALOG } from "../../hack/scale/catalog.ts";
import { type FleetOptions, generateFleet } from "../../hack/scale/generate.ts";

const base: FleetOptions = {
  targets: 4,
  instances: 2,
  strategiesMin: 3,
  strategiesMax: 10,
  seed: 1,
  namespace: "dco-scale",
};
const SEEDS = [1, 2, 7, 42, 1234];

Deno.test("the catalog holds every implemented strategy once", () => {
  const names = CATALOG.map((t) => t.strategy);
  assert.equal(new Set(names).size, 29);
  assert.deepEqual([...names].sort(), [...implementedStrategies()].sort());
});

for (const seed of SEEDS) {
  Deno.test(`seed ${seed}: every config validates clean and every instance converts`, () => {
    const fleet = generateFleet({ ...base, seed });
    for (const target of fleet.targets) {
      const parsed = parseConfig(target.config);
      assert.ok(parsed.ok, `${target.crdName}: ${parsed.ok ? "" : parsed.errors.join("; ")}`);
      assert.equal(structuralError(parsed.config.spec), undefined);
      const analysis = analyze(schemaSourceFromCRD(target.crd), parsed.config.spec);
      assert.deepEqual(analysis.hardErrors, [], target.crdName);
      for (const spoke of analysis.spokes) assert.deepEqual(spoke.errors, [], spoke.version);
      const router = createRouter(analysis);
      for (const instance of target.instances) {
        for (const version of ["v1", "v2", "v3"]) {
          const out = convertObject(router, instance, `scale.dco.example.org/${version}`);
          assert.equal(out.apiVersion, `scale.dco.example.org/${version}`);
          const back = convertObject(router, out, "scale.dco.example.org/v1");
          assert.deepEqual(
            (back.spec as Record<string, unknown>).fixture,
            (instance.spec as Record<string, unknown>).fixture,
          );
        }
      }
    }
  });

  Deno.test(`seed ${seed}: the slots cover all 29 strategies within the slot bounds`, () => {
    const fleet = generateFleet({ ...base, seed });
    const used = new Set(fleet.targets.flatMap((t) => [...t.slots.v1, ...t.slots.v2]));
    assert.equal(used.size, 29);
    for (const t of fleet.targets) {
      for (const s of [t.slots.v1, t.slots.v2]) assert.ok(s.length >= 3 && s.length <= 10);
    }
    assert.ok(Object.values(fleet.strategyCoverage).every((n) => n > 0));
  });
}

Deno.test("the smallest fleet that can cover all strategies still covers them", () => {
  const fleet = generateFleet({ ...base, targets: 2, strategiesMin: 1, strategiesMax: 8 });
  assert.equal(new Set(fleet.targets.flatMap((t) => [...t.slots.v1, ...t.slots.v2])).size, 29);
});

Deno.test("a fleet too small to cover all strategies is refused", () => {
  assert.throws(() => generateFleet({ ...base, targets: 1, strategiesMax: 10 }), RangeError);
});

Deno.test("the same seed gives byte-identical output; another seed differs", () => {
  const a = JSON.stringify(generateFleet(base));
  assert.equal(JSON.stringify(generateFleet(base)), a);
  assert.notEqual(JSON.stringify(generateFleet({ ...base, seed: 2 })), a);
});
