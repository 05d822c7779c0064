/**
 * The law suite: the same contract checked against every registered law case (see
 * laws/registry.ts). For each case:
 *
 * (a) the acknowledged config passes the structural checks and analyses without errors, with the
 *     declared verdict, a plan, and the same report every time;
 * (b) every declared-lossless direction round-trips on generated objects of its source version
 *     (source → target → source, compared with the engine's equality after dropping empty
 *     structured maps, which conversion does not preserve, and the case's declared vanishing
 *     paths);
 * (c) with `acknowledgeLossy` removed, each lossy direction of each rule is exactly one
 *     *unacknowledged-lossy* error and nothing else fails;
 * (d) inputs are never mutated (deep-frozen, and compared with a JSON snapshot) and outputs share
 *     no object with their input;
 * (e) converting the same input twice — and through a structured-cloned, re-linked plan, through
 *     the webhook's `shareInput` linking on the frozen input, and through the interpreted
 *     linker (`compiled: false`, the reference for the default compiled one) — gives equal
 *     outputs, byte for byte against the interpreted linker (or the same error).
 *
 * Conversions go through `convertObject` (router + apiVersion stamping), as the webhook does.
 */
import { isJsonObject } from "../../src/lib/json.ts";
import { stringifyJson } from "../../src/lib/json_exact.ts";
import assert from "node:assert/strict";
import {
  analyze,
  ConversionError,
  type ConversionRuleSpec,
  convertObject,
  createRouter,
  type Direction,
  implementedStrategies,
  jsonEqual,
  type JsonObject,
  type JsonValue,
  type SchemaNode,
  structuralError,
} from "../../src/engine/mod.ts";
import { createRng, generateResource } from "../../src/engine/generate.ts";
import { inversePairs } from "../../src/engine/strategies/mod.ts";
import { isStructured, itemSchema } from "../../src/engine/schema.ts";
import { ABSENT, deepCopy, deletePath, getPath, setKey } from "../../src/engine/value.ts";
import { deepFreeze, describe } from "./_checks.ts";
import { configFor } from "./_helpers.ts";
import { apiVersion, HUB, KIND, SPOKE } from "./_schemas.ts";
import "./laws/cases/mod.ts";
import { caseSource, type LawCase, lawCases, type Vanishing } from "./laws/registry.ts";
import { mirroredCase, PAIRS } from "./laws/mirror.ts";

const INPUTS_PER_DIRECTION = 200;
const DIRECTIONS: readonly Direction[] = ["hubToSpoke", "spokeToHub"];
const LABEL: Record<Direction, string> = { hubToSpoke: "hub→spoke", spokeToHub: "spoke→hub" };

function analyzeCase(c: LawCase, rules: ConversionRuleSpec[] = c.rules) {
  const spec = configFor(
    { [SPOKE]: rules },
    c.policy === "Warn"
      ? { unmappedFieldPolicy: "Warn", unmappedFieldReason: "law case" }
      : { unmappedFieldPolicy: c.policy },
  );
  return { spec, result: analyze(caseSource(c), spec) };
}

function strategiesIn(rules: readonly ConversionRuleSpec[]): string[] {
  return rules.flatMap((r) => {
    const nested = (r.forEach as { rules?: ConversionRuleSpec[] } | undefined)?.rules ?? [];
    return [r.strategy, ...strategiesIn(nested)];
  });
}

/** Drops maps that became empty at structured schema positions. */
function pruneEmpty(v: JsonValue, node: SchemaNode | undefined): JsonValue {
  if (node === undefined) return v;
  if (Array.isArray(v)) {
    const items = itemSchema(node);
    return v.map((e) => pruneEmpty(e, items));
  }
  if (!isJsonObject(v) || !isStructured(node)) return v;
  const props = node.properties ?? {};
  const out: JsonObject = {};
  for (const key of Object.keys(v)) {
    const child = Object.hasOwn(props, key) ? props[key] : undefined;
    const pruned = pruneEmpty(v[key], child);
    const emptyStructured = child !== undefined && isStructured(child) && isJsonObject(pruned) &&
      Object.keys(pruned).length === 0;
    if (!emptyStructured) setKey(out, key, pruned);
  }
  return out;
}

function isEmptyContainer(v: JsonValue): boolean {
  return (Array.isArray(v) && v.length === 0) || (isJsonObject(v) && Object.keys(v).length === 0);
}

/** The original and the round-tripped object, made comparable (see the module doc). */
function comparable(
  original: JsonObject,
  back: JsonObject,
  schema: SchemaNode,
  vanishing: readonly Vanishing[],
): [JsonValue, JsonValue] {
  const a = deepCopy(original) as JsonObject;
  for (const v of vanishing) {
    const segments = v.path.split(".");
    const value = getPath(a, segments);
    if (value === ABSENT || getPath(back, segments) !== ABSENT) continue;
    if ((v.onlyIfEmpty ?? true) && !isEmptyContainer(value)) continue;
    deletePath(a, segments);
  }
  return [pruneEmpty(a, schema), pruneEmpty(back, schema)];
}

function containers(v: JsonValue, into: Set<object>): Set<object> {
  if (typeof v === "object" && v !== null) {
    into.add(v);
    for (const child of Array.isArray(v) ? v : Object.values(v)) containers(child, into);
  }
  return into;
}

function assertNoSharing(input: JsonObject, output: JsonObject, where: string): void {
  const mine = containers(input, new Set());
  for (const o of containers(output, new Set())) {
    assert.ok(!mine.has(o), `${where}: the output shares an object with the input`);
  }
}

const show = (v: unknown) => stringifyJson(v, { indent: 1 }).slice(0, 4000);

/** The registered cases, and each plain-pair case mirrored (the other strategy of its pair). */
const CASES: readonly LawCase[] = [
  ...lawCases(),
  ...lawCases().flatMap((c) => c.noMirror === undefined ? mirroredCase(c) ?? [] : []),
];

for (const c of CASES) {
  const title = `law [${c.family}] ${c.name}`;

  Deno.test(`${title} › (a) acknowledged: no errors, declared verdict, stable report`, () => {
    const { spec, result } = analyzeCase(c);
    assert.equal(structuralError(spec), undefined);
    assert.deepEqual(result.hardErrors, [], describe(result.hardErrors));
    const report = result.spokes[0];
    assert.deepEqual(report.errors, [], describe(report.errors));
    assert.deepEqual(report.lossless, c.lossless);
    assert.equal(result.overallLossless, c.lossless.hubToSpoke && c.lossless.spokeToHub);
    assert.ok(report.plan !== undefined);
    assert.equal(report.ruleResults.length, c.rules.length);
    assert.deepEqual(analyzeCase(c).result, result, "analysing twice gives the same report");
  });

  Deno.test(`${title} › (c) unacknowledged: one error per lossy direction of each rule`, () => {
    const stripped = c.rules.map((r) => ({ ...r, acknowledgeLossy: false }));
    const report = analyzeCase(c, stripped).result.spokes[0];
    const expected: string[] = [];
    for (const rr of report.ruleResults) {
      for (const dir of DIRECTIONS) if (!rr.lossless[dir]) expected.push(`${rr.index} ${dir}`);
    }
    const lossyDirs = DIRECTIONS.filter((d) => !c.lossless[d]);
    assert.deepEqual(report.lossless, c.lossless, "acknowledgement does not change verdicts");
    const found = report.errors.map((d) => {
      assert.equal(d.class, "unacknowledged-lossy", describe([d]));
      const dir = DIRECTIONS.find((x) => d.message.includes(`lossy ${LABEL[x]}`));
      assert.ok(dir !== undefined, `message names the direction: ${d.message}`);
      return `${d.ruleIndex} ${dir}`;
    });
    assert.deepEqual(found.sort(), expected.sort());
    for (const dir of lossyDirs) {
      assert.ok(found.some((f) => f.endsWith(dir)), `an error for lossy ${LABEL[dir]}`);
    }
    assert.equal(report.plan === undefined, lossyDirs.length > 0);
  });

  for (const dir of DIRECTIONS) {
    const exempt = c.roundTripExemptions?.find((e) => e.direction === dir);
    const roundTrip = c.lossless[dir];
    const what = roundTrip ? (exempt ? "exempt round trip really loses" : "round trip") : "lossy";
    Deno.test(
      `${title} › (b,d,e) ${LABEL[dir]} on ${INPUTS_PER_DIRECTION} generated objects: ${what}, ` +
        `no mutation, deterministic`,
      () => {
        if (exempt !== undefined) {
          assert.ok(roundTrip, "only a declared-lossless direction can be exempt");
          assert.ok(!c.lossless[dir === "hubToSpoke" ? "spokeToHub" : "hubToSpoke"]);
        }
        const { result } = analyzeCase(c);
        const router = createRouter(result);
        const cloned = createRouter(structuredClone(result));
        // The webhook's linking: outputs may share carried subtrees with the (frozen) input.
        const shared = createRouter(result, { shareInput: true });
        // The interpreted linker: the reference the compiled (default) linking must match.
        const interpreted = createRouter(result, { compiled: false });
        const interpretedShared = createRouter(result, { compiled: false, shareInput: true });
        const [from, to, schema, side] = dir === "hubToSpoke"
          ? [HUB, SPOKE, c.hub, "hub" as const]
          : [SPOKE, HUB, c.spoke, "spoke" as const];
        let losses = 0;
        for (let i = 0; i < INPUTS_PER_DIRECTION; i++) {
          const seed = `${c.name}/${dir}/${i}`;
          const rng = createRng(seed);
          const input = generateResource(schema, {
            ...c.generate,
            rng,
            apiVersion: apiVersion(from),
            kind: KIND,
          });
          c.prepare?.(input, side, rng);
          const snapshot = stringifyJson(input);
          deepFreeze(input);
          const where = `seed ${JSON.stringify(seed)}, input ${show(input)}`;

          let out: JsonObject;
          try {
            out = convertObject(router, input, apiVersion(to));
          } catch (e) {
            if (!(e instanceof ConversionError)) throw e;
            assert.ok(
              !roundTrip,
              `a lossless direction failed on a valid object: ${e.message}\n${where}`,
            );
            assert.throws(() => convertObject(cloned, input, apiVersion(to)), {
              message: e.message,
            });
            for (const other of [shared, interpreted, interpretedShared]) {
              assert.throws(() => convertObject(other, input, apiVersion(to)), {
                message: e.message,
              });
            }
            continue;
          }
          assert.equal(stringifyJson(input), snapshot, `input mutated; ${where}`);
          assertNoSharing(input, out, where);
          assert.deepEqual(convertObject(router, input, apiVersion(to)), out, `repeat; ${where}`);
          assert.deepEqual(convertObject(cloned, input, apiVersion(to)), out, `clone; ${where}`);
          // Frozen input: a write into a shared subtree would throw here.
          assert.deepEqual(convertObject(shared, input, apiVersion(to)), out, `shared; ${where}`);
          // Same keys in the same order too: the answer's bytes must not depend on the linker.
          const references = [["interpreted", interpreted], ["both", interpretedShared]] as const;
          for (const [name, other] of references) {
            const theirs = convertObject(other, input, apiVersion(to));
            assert.equal(stringifyJson(theirs), stringifyJson(out), `${name}; ${where}`);
          }
          assert.equal(out.apiVersion, apiVersion(to));
          if (!roundTrip) continue;

          const outSnapshot = stringifyJson(out);
          deepFreeze(out);
          const back = convertObject(router, out, apiVersion(from));
          assert.equal(stringifyJson(out), outSnapshot, `intermediate mutated; ${where}`);
          assertNoSharing(out, back, where);
          const [a, b] = comparable(input, back, schema, c.vanishing?.[dir] ?? []);
          if (jsonEqual(a, b)) continue;
          if (exempt !== undefined) {
            losses++;
            continue;
          }
          assert.fail(
            `${LABEL[dir]} is declared lossless but the round trip differs\n${where}\n` +
              `converted: ${show(out)}\nback: ${show(back)}`,
          );
        }
        if (exempt !== undefined) {
          assert.ok(losses > 0, `exemption is stale: no round trip lost data (${exempt.reason})`);
        }
      },
    );
  }
}

Deno.test("laws: every implemented strategy has at least one law case", () => {
  const covered = new Set(CASES.map((c) => c.strategy));
  const missing = implementedStrategies().filter((s) => !covered.has(s));
  assert.deepEqual(missing, [], `strategies without a law case: ${missing.join(", ")}`);
});

Deno.test("laws: each case uses its strategy, and only implemented strategies", () => {
  const implemented = new Set<string>(implementedStrategies());
  for (const c of lawCases()) {
    const used = strategiesIn(c.rules);
    if (c.strategy !== "core") assert.ok(used.includes(c.strategy), c.name);
    for (const s of used) assert.ok(implemented.has(s), `${c.name}: ${s} is not implemented`);
  }
});

Deno.test("laws: every cases/*.ts family is imported and registers a case", async () => {
  const dir = new URL("./laws/cases/", import.meta.url);
  const families: string[] = [];
  for await (const e of Deno.readDir(dir)) {
    if (e.isFile && e.name.endsWith(".ts") && e.name !== "mod.ts") {
      families.push(e.name.slice(0, -3));
    }
  }
  const registered = new Set(lawCases().map((c) => c.family));
  assert.deepEqual(families.filter((f) => !registered.has(f)).sort(), []);
  assert.deepEqual([...registered].filter((f) => !families.includes(f)).sort(), []);
});

Deno.test("laws: round-trip comparison prunes only empty structured maps", () => {
  const schema: SchemaNode = {
    type: "object",
    properties: {
      spec: {
        type: "object",
        properties: {
          a: { type: "object", properties: { b: { type: "string" } } },
          m: { type: "object", additionalProperties: { type: "string" } },
        },
      },
    },
  };
  assert.deepEqual(pruneEmpty({ spec: { a: {}, m: {} } }, schema), { spec: { m: {} } });
  assert.deepEqual(pruneEmpty({ spec: { a: {} } }, schema), {});
  const [a, b] = comparable({ spec: { m: {} } }, {}, schema, []);
  assert.equal(jsonEqual(a, b), false, "an empty free-form map is significant");
  const [c, d] = comparable({ spec: { z: [] } }, {}, schema, [{ path: "spec.z", reason: "t" }]);
  assert.ok(jsonEqual(c, d));
  const [e, f] = comparable({ spec: { z: [1] } }, {}, schema, [{ path: "spec.z", reason: "t" }]);
  assert.equal(jsonEqual(e, f), false, "a non-empty vanishing value is a loss");
});

// --- inverse pairs ------------------------------------------------------------------------------

Deno.test("laws: every inverse pair comes from mirror() and both directions have law cases", () => {
  assert.deepEqual(
    inversePairs().map((p) => p.join("/")).sort(),
    PAIRS.map((p) => p.join("/")).sort(),
  );
  const covered = new Set(CASES.map((c) => c.strategy));
  for (const name of PAIRS.flat()) assert.ok(covered.has(name as never), `${name} has no law case`);
});

const SWAP_INPUTS = 50;
for (const c of lawCases()) {
  const m = mirroredCase(c);
  if (m === undefined) continue;
  const inverse = m.strategy;
  Deno.test(`law [${c.family}] ${c.name} › mirrored as ${inverse}: swapped verdict, same output`, () => {
    const original = analyzeCase(c).result;
    const mirrored = analyzeCase(m).result;
    // The required-field check judges strategies by name (ScalarToFields is unprovable, its
    // mirror is judged by its source fields), so only it may reject a mirrored case.
    const errors = mirrored.spokes[0].errors;
    assert.ok(errors.every((d) => d.class.startsWith("RequiredField")), describe(errors));
    const [r, mr] = [original.spokes[0].ruleResults[0], mirrored.spokes[0].ruleResults[0]];
    assert.deepEqual(
      [mr.hubPaths, mr.spokePaths, mr.lossless],
      [r.spokePaths, r.hubPaths, {
        hubToSpoke: r.lossless.spokeToHub,
        spokeToHub: r.lossless.hubToSpoke,
      }],
    );
    if (errors.length > 0) return; // no plan to compare outputs with
    const router = createRouter(original);
    const mirrorRouter = createRouter(mirrored);
    for (const dir of DIRECTIONS) {
      const [from, to, schema] = dir === "hubToSpoke" ? [HUB, SPOKE, c.hub] : [SPOKE, HUB, c.spoke];
      for (let i = 0; i < SWAP_INPUTS; i++) {
        const seed = `${c.name}/mirror/${dir}/${i}`;
        const input = generateResource(schema, {
          ...c.generate,
          rng: createRng(seed),
          apiVersion: apiVersion(from),
          kind: KIND,
        });
        // In the mirrored case the same object is of the other version.
        const swapped = { ...input, apiVersion: apiVersion(to) };
        const run = (rt: typeof router, obj: JsonObject, v: string) => {
          try {
            const { apiVersion: _, ...out } = convertObject(rt, obj, apiVersion(v));
            return out;
          } catch (e) {
            if (e instanceof ConversionError) return "conversion error";
            throw e;
          }
        };
        assert.deepEqual(run(mirrorRouter, swapped, from), run(router, input, to), `seed ${seed}`);
      }
    }
  });
}
