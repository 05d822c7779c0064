/**
 * The compiled linker (src/engine/link_compiled.ts) against the interpreted one, its reference:
 *
 * - differential: every law case (and each mirrored case), both directions, on generated objects
 *   of the source version, of the other version (the wrong shape) and with values of random
 *   wrong types spliced in — the compiled and interpreted linkers, each with and without
 *   `shareInput`, give byte-identical output or the same ConversionError message;
 * - hostile names: field names that would break or inject code if spliced as text (`__proto__`,
 *   quotes, newlines, U+2028, `</script>`, `${x}`, a comment end, …) in rename paths, constant paths and
 *   the carry tree convert identically through both, with no prototype pollution;
 * - the generated literals are inert, and without `new Function` linking falls back.
 */
import assert from "node:assert/strict";
import { stringifyJson } from "../../src/lib/json_exact.ts";
import {
  type AnalysisResult,
  analyze,
  ConversionError,
  type ConversionRuleSpec,
  convertObject,
  convertWithPlan,
  createRouter,
  type JsonObject,
  type JsonValue,
  linkPlan,
  type OpData,
  type Router,
  type SchemaNode,
} from "../../src/engine/mod.ts";
import { createRng, generateResource } from "../../src/engine/generate.ts";
import { generate, literal } from "../../src/engine/link_compiled.ts";
import { setKey } from "../../src/engine/value.ts";
import { configFor, pairSource } from "./_helpers.ts";
import { apiVersion, HUB, KIND, SPOKE } from "./_schemas.ts";
import { analyzeCase, corrupt, DIFFERENTIAL_CASES, DIRECTIONS, outcome } from "./_differential.ts";
import { lawCases } from "./laws/registry.ts";

const INPUTS = 40;

/** The four linkings: compiled (default) and interpreted, each with and without sharing. */
function routers(result: AnalysisResult): [string, Router][] {
  return [
    ["compiled", createRouter(result)],
    ["compiled, shareInput", createRouter(result, { shareInput: true })],
    ["interpreted", createRouter(result, { compiled: false })],
    ["interpreted, shareInput", createRouter(result, { compiled: false, shareInput: true })],
  ];
}

for (const c of DIFFERENTIAL_CASES) {
  Deno.test(`compiled ≡ interpreted: [${c.family}] ${c.name}`, () => {
    const result = analyzeCase(c);
    if (result.spokes[0]?.plan === undefined) return; // a mirrored case the checks reject
    const linked = routers(result);
    let errors = 0;
    for (const dir of DIRECTIONS) {
      const [from, to, own, other, side] = dir === "hubToSpoke"
        ? [HUB, SPOKE, c.hub, c.spoke, "hub" as const]
        : [SPOKE, HUB, c.spoke, c.hub, "spoke" as const];
      for (let i = 0; i < INPUTS; i++) {
        const seed = `compiled/${c.name}/${dir}/${i}`;
        const rng = createRng(seed);
        const shape = i % 4 === 3 ? other : own;
        const base = generateResource(shape, {
          ...c.generate,
          rng,
          apiVersion: apiVersion(from),
          kind: KIND,
        });
        c.prepare?.(base, side, rng);
        const input = i % 2 === 1 ? corrupt(base, rng, 0) as JsonObject : base;
        const [, reference] = linked[2];
        const expected = outcome(reference, input, apiVersion(to));
        if (expected.startsWith("error")) errors++;
        for (const [name, router] of linked) {
          assert.equal(
            outcome(router, input, apiVersion(to)),
            expected,
            `${name} vs interpreted; seed ${seed}; input ${stringifyJson(input).slice(0, 2000)}`,
          );
        }
      }
    }
    tally.errors += errors;
    tally.cases++;
  });
}

const tally = { cases: 0, errors: 0 };

Deno.test("compiled ≡ interpreted: the differential inputs reach the error paths", () => {
  assert.ok(tally.cases > 0);
  // At least one error per case on average: the corrupted inputs do exercise the throws.
  assert.ok(tally.errors >= tally.cases, `${tally.errors} errors over ${tally.cases} cases`);
});

// --- hostile names --------------------------------------------------------------------------

const HOSTILE = [
  "__proto__",
  "constructor",
  "prototype",
  "hasOwnProperty",
  '"',
  "'",
  "`",
  "\\",
  "a\nb",
  "\r",
  "\u2028",
  "\u2029",
  "</script>",
  "${x}",
  "*/",
  "/*",
  "//",
  "\"]; globalThis['polluted'] = 1; x[\"",
  "'); globalThis['polluted'] = 1; ('",
  "`; globalThis['polluted'] = 1; `",
  "});globalThis['polluted']=1;({",
  "\u0000",
  "\ud800",
  "é",
  "0",
];

/** A map with own keys (`__proto__` included) from entries. */
function own<T>(entries: [string, T][]): Record<string, T> {
  const out: Record<string, T> = {};
  for (const [k, v] of entries) setKey(out, k, v);
  return out;
}

const str: SchemaNode = { type: "string" };
const objOf = (props: Record<string, SchemaNode>): SchemaNode => ({
  type: "object",
  properties: props,
});

/** `spec.<h>.<h>` carried for every name, renames `spec.src.<h>` ↔ `spec.dst.<h>`. */
function hostileSchema(moved: "src" | "dst", extra: Record<string, SchemaNode> = {}): SchemaNode {
  const byName = own(HOSTILE.map((h) => [h, objOf(own([[h, str]]))]));
  const spec = own<SchemaNode>([
    ...Object.entries(byName),
    [moved, objOf(own(HOSTILE.map((h) => [h, str])))],
    ...Object.entries(extra),
  ]);
  return objOf(own([["metadata", { type: "object" }], ["spec", objOf(spec)]]));
}

const HOSTILE_RULES: ConversionRuleSpec[] = [
  ...HOSTILE.map((h) => ({
    strategy: "FieldRename",
    fieldRename: { hubPath: `spec.src.${h}`, spokePath: `spec.dst.${h}` },
  })),
  ...["__proto__", "constructor", "</script>", "a\nb"].map((h) => ({
    strategy: "Constant",
    constant: { path: `spec.konst.${h}`, existsOn: "Hub", value: { [h]: h } },
    acknowledgeLossy: true,
    reason: "hostile constant",
  })),
];

function hostileObject(version: string, moved: "src" | "dst"): JsonObject {
  const spec = own<JsonValue>([
    ...HOSTILE.map((h, i): [string, JsonValue] => [
      h,
      own<JsonValue>([[h, `value ${i}`], [`undeclared ${h}`, own([[h, i]])]]),
    ]),
    [moved, own(HOSTILE.map((h, i) => [h, `moved ${i}`]))],
  ]);
  return own<JsonValue>([
    ["apiVersion", apiVersion(version)],
    ["kind", KIND],
    ["metadata", { name: "hostile" }],
    ["spec", spec],
    ["__proto__", { polluted: "root" }],
    ["constructor", { prototype: { polluted: "root" } }],
  ]);
}

/**
 * Runs `fn` with the `Object.prototype.__proto__` accessor of browsers and Node in place (Deno
 * removes it), so a plain `o["__proto__"] = v` would set a prototype instead of a field.
 */
function withProtoAccessor(fn: () => void): void {
  const had = Object.getOwnPropertyDescriptor(Object.prototype, "__proto__");
  Object.defineProperty(Object.prototype, "__proto__", {
    get(this: object) {
      return Object.getPrototypeOf(this);
    },
    set(this: object, p: object | null) {
      Object.setPrototypeOf(this, p);
    },
    configurable: true,
  });
  try {
    fn();
  } finally {
    delete (Object.prototype as Record<string, unknown>)["__proto__"];
    if (had !== undefined) Object.defineProperty(Object.prototype, "__proto__", had);
  }
}

Deno.test("compiled linker: hostile field names convert as interpreted, no pollution", () => {
  withProtoAccessor(hostileNames);
});

function hostileNames(): void {
  const hub = hostileSchema("src", {
    konst: objOf(
      own(
        ["__proto__", "constructor", "</script>", "a\nb"].map((
          h,
        ) => [h, { type: "object", "x-kubernetes-preserve-unknown-fields": true }]),
      ),
    ),
  });
  const spoke = hostileSchema("dst");
  const result = analyze(pairSource(hub, spoke), configFor({ [SPOKE]: HOSTILE_RULES }));
  const report = result.spokes[0];
  assert.deepEqual(report.errors, [], JSON.stringify(report.errors));
  const plan = report.plan!;
  const linked = routers(result);
  for (const [from, to, moved] of [[HUB, SPOKE, "src"], [SPOKE, HUB, "dst"]] as const) {
    const input = hostileObject(from, moved);
    const [, reference] = linked[2];
    const expected = outcome(reference, input, apiVersion(to));
    assert.ok(expected.startsWith("ok"), expected);
    for (const [name, router] of linked) {
      assert.equal(outcome(router, input, apiVersion(to)), expected, `${name}, ${from}→${to}`);
      const out = convertObject(router, input, apiVersion(to));
      const spec = out.spec as JsonObject;
      assert.equal(Object.getPrototypeOf(spec), Object.prototype);
      assert.ok(Object.hasOwn(spec, "__proto__"), "the __proto__ field is carried as data");
      assert.deepEqual(Object.keys((spec as Record<string, JsonObject>)["__proto__"]), [
        "__proto__",
        "undeclared __proto__",
      ]);
      const target = (to === SPOKE ? spec.dst : spec.src) as JsonObject;
      assert.equal(Object.keys(target).length, HOSTILE.length, `every renamed field; ${name}`);
      assert.equal(Object.getPrototypeOf(target), Object.prototype);
      if (to === HUB) {
        const konst = spec.konst as Record<string, JsonObject>;
        assert.ok(Object.hasOwn(konst, "__proto__"));
        assert.deepEqual(Object.keys(konst["__proto__"]), ["__proto__"]);
        assert.equal(Object.getPrototypeOf(konst), Object.prototype);
      }
    }
  }
  const polluted = ({} as Record<string, unknown>).polluted;
  assert.equal(polluted, undefined, "no prototype pollution");
  assert.equal((globalThis as Record<string, unknown>).polluted, undefined, "no code ran");

  // Compiled: one function per direction, every hostile name in it only as an inert literal.
  assert.equal(linkPlan(plan).hubToSpoke.length, 1);
  for (const dir of DIRECTIONS) {
    const { source } = generate(plan[dir], false, () => () => {});
    assert.match(source, /^[\x20-\x7e\n]*$/, "generated source is printable ASCII lines");
    assert.ok(!source.includes("</script>"));
    for (const h of HOSTILE) {
      assert.ok(source.includes(literal(h)), `${JSON.stringify(h)} as a literal`);
    }
  }
}

Deno.test("compiled linker: literals are printable ASCII and evaluate to the same string", () => {
  const extra = ["", "plain", "\u{1F600}", "\udfff\ud800", "\x7f", "\t\b\f\v"];
  for (const s of [...HOSTILE, ...extra]) {
    const lit = literal(s);
    assert.match(lit, /^"[\x20-\x7e]*"$/);
    assert.equal(new Function(`return ${lit};`)(), s);
  }
  assert.throws(() => literal(1 as unknown as string), TypeError);
});

Deno.test("compiled linker: without new Function, conversion runs the interpreted ops", () => {
  const c = lawCases()[0];
  const result = analyzeCase(c);
  const reference = createRouter(result, { compiled: false });
  const router = createRouter(result); // generated on its first call, which is blocked here
  const inputs = Array.from({ length: 20 }, (_, i) =>
    generateResource(c.hub, {
      rng: createRng(`fallback/${i}`),
      apiVersion: apiVersion(HUB),
      kind: KIND,
    }));
  const original = globalThis.Function;
  let attempts = 0;
  const blocked = function () {
    attempts++;
    throw new EvalError("code generation from strings disallowed for this context");
  } as unknown as FunctionConstructor;
  let first: string;
  globalThis.Function = blocked;
  try {
    first = outcome(router, inputs[0], apiVersion(SPOKE));
  } finally {
    globalThis.Function = original;
  }
  assert.equal(attempts, 1, "the first conversion tried to generate the function");
  assert.equal(first, outcome(reference, inputs[0], apiVersion(SPOKE)));
  for (const input of inputs) {
    assert.equal(
      outcome(router, input, apiVersion(SPOKE)),
      outcome(reference, input, apiVersion(SPOKE)),
    );
  }
  assert.equal(attempts, 1, "no second attempt: the interpreted ops stay");
});

/** Op lists the analyser does not emit, but whose errors both linkers must word alike. */
const HAND_MADE: { name: string; ops: OpData[] }[] = [
  {
    name: "a write under a scalar an earlier op wrote",
    ops: [
      { op: "set", to: ["spec", "a"], value: 1 },
      { op: "copy", from: ["spec", "x"], to: ["spec", "a", "b"] },
      { op: "set", to: ["spec", "a", "c", "d"], value: { k: [1] } },
    ],
  },
  {
    name: "a write under a non-map in the seeded metadata",
    ops: [
      { op: "copy", from: ["spec", "x"], to: ["metadata", "labels", "x"] },
      { op: "carry", tree: { metadata: "skip", spec: "copy" } },
    ],
  },
  { name: "the empty target path", ops: [{ op: "copy", from: ["spec", "x"], to: [] }] },
  { name: "set at the empty path", ops: [{ op: "set", to: [], value: 1 }] },
  {
    name: "copy of the whole input, when-gated set",
    ops: [
      { op: "copy", from: [], to: ["spec", "whole"] },
      {
        op: "when",
        path: ["spec", "x"],
        equals: 1,
        inner: { op: "set", to: ["status", "one"], value: true },
      },
      {
        op: "when",
        path: ["spec"],
        equals: { x: 1 },
        inner: { op: "copy", from: ["spec", "x"], to: ["status", "x"] },
      },
    ],
  },
  {
    name: "carry into maps earlier ops wrote (in place, past the keyed-build limit)",
    ops: [
      ...Array.from({ length: 14 }, (_, i) => ({
        op: "set",
        to: ["spec", "m", `pre${i}`],
        value: i,
      })),
      { op: "set", to: ["spec", "n"], value: "scalar" },
      { op: "carry", tree: { spec: { m: { deep: { x: "copy" } }, n: { y: "copy" }, x: "skip" } } },
    ],
  },
];

const HAND_INPUTS: JsonObject[] = [
  { metadata: { labels: "not a map" }, spec: { x: 1 } },
  { metadata: { labels: { a: "b" } }, spec: { x: 1, m: { deep: { x: 2, z: 3 }, q: [1] } } },
  { spec: { x: 2, n: { y: 1 }, m: { pre0: "in place", extra: {} } } },
  { kind: "K", spec: "scalar spec" },
  { spec: { m: "scalar" } },
];

Deno.test("compiled linker: hand-made op lists give the interpreted outputs and errors", () => {
  let errors = 0;
  for (const { name, ops } of HAND_MADE) {
    const plan = { hubVersion: HUB, spokeVersion: SPOKE, hubToSpoke: ops, spokeToHub: [] };
    const run = (compiled: boolean, shareInput: boolean, input: JsonObject) => {
      try {
        const linked = linkPlan(plan, { compiled, shareInput });
        return `ok ${stringifyJson(convertWithPlan(linked, "hubToSpoke", input))}`;
      } catch (e) {
        if (e instanceof ConversionError) return `error ${e.message}`;
        throw e;
      }
    };
    for (const input of HAND_INPUTS) {
      for (const share of [false, true]) {
        const expected = run(false, share, input);
        if (expected.startsWith("error")) errors++;
        assert.equal(run(true, share, input), expected, `${name}; ${stringifyJson(input)}`);
      }
    }
  }
  assert.ok(errors >= 8, `the error paths are reached (${errors})`);
});
