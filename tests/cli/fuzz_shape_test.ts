/**
 * The generator `convctl fuzz` and `convctl test --fuzz` share gives the paths Quantity and
 * Duration rules read values in the rule's lexical form, so a run exercises the conversion and
 * not only the parse error.
 */
import assert from "node:assert/strict";
import { engineSpecOf } from "../../src/api/mod.ts";
import { analyze } from "../../src/engine/mod.ts";
import { parseGoDuration, parseQuantity } from "../../src/engine/units.ts";
import { generateFuzzObject, unitShaper } from "../../src/cli/fuzz_run.ts";
import { loadConfig, loadSchema } from "../../src/cli/load.ts";
import { ROOT } from "./_convctl.ts";

const DIR = `${ROOT}tests/cli/fixtures/all_strategies`;

Deno.test("unitShaper: quantity and duration strings at the hub, small integers at the spoke", async () => {
  const config = await loadConfig(`${DIR}/config.yaml`);
  const { source } = await loadSchema(config.kind, `${DIR}/crd.yaml`);
  const analysis = analyze(source, engineSpecOf(config.config));
  const hub = analysis.hubVersion;
  const spoke = analysis.spokes[0].version;
  const seen = { storage: 0, timeout: 0, storageMillis: 0 };
  for (let i = 0; i < 40; i++) {
    const atHub = generateFuzzObject(source, hub, 1, i, unitShaper(analysis, hub)).object;
    const spec = atHub.spec as Record<string, unknown> | undefined;
    if (typeof spec?.storage === "string") {
      seen.storage++;
      assert.equal(typeof parseQuantity(spec.storage), "object", `quantity ${spec.storage}`);
    }
    if (typeof spec?.timeoutSeconds === "number") {
      seen.timeout++;
      assert.ok(Number.isInteger(spec.timeoutSeconds) && spec.timeoutSeconds >= 0);
    }
    const atSpoke = generateFuzzObject(source, spoke, 1, i, unitShaper(analysis, spoke)).object;
    const s = atSpoke.spec as Record<string, unknown> | undefined;
    if (typeof s?.timeout === "string") {
      assert.notEqual(parseGoDuration(s.timeout), undefined, `duration ${s.timeout}`);
    }
    if (typeof s?.storageMillis === "number") {
      seen.storageMillis++;
      assert.ok(Number.isInteger(s.storageMillis) && s.storageMillis >= 0);
    }
  }
  assert.ok(seen.storage > 0 && seen.timeout > 0 && seen.storageMillis > 0, JSON.stringify(seen));
  // Without Quantity/Duration rules there is nothing to shape.
  assert.equal(unitShaper({ ...analysis, spokes: [] }, hub), undefined);
});
