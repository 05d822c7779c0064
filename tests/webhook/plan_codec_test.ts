/**
 * The encoded plans (src/webhook/plan_codec.ts): over every law case (and each mirrored case),
 * plan → encoding → deferred router converts identically to the router linked directly from the
 * plan — on generated objects of the source version, of the other version and with values of
 * wrong types spliced in, both directions; the same output bytes or the same error message. And
 * the encoding is exact where JSON text would not be (`bigint`, `-0`, `undefined`), a deferred
 * router links nothing until used, and a compile result never carries plans that do not link.
 */
import assert from "node:assert/strict";
import {
  convertObject,
  createRouter,
  type JsonObject,
  type PlanData,
  Router,
} from "../../src/engine/mod.ts";
import { createRng, generateResource } from "../../src/engine/generate.ts";
import { compiledResult } from "../../src/webhook/compile.ts";
import {
  decodePlans,
  deferredPlans,
  encodePlans,
  LINK_OPTIONS,
} from "../../src/webhook/plan_codec.ts";
import { apiVersion, HUB, KIND, SPOKE } from "../engine/_schemas.ts";
import {
  analyzeCase,
  corrupt,
  DIFFERENTIAL_CASES,
  DIRECTIONS,
  outcome,
} from "../engine/_differential.ts";
import { lawCases } from "../engine/laws/registry.ts";

const INPUTS = 24;
const tally = { cases: 0, conversions: 0 };

for (const c of DIFFERENTIAL_CASES) {
  Deno.test(`encoded plans ≡ linked plans: [${c.family}] ${c.name}`, () => {
    const result = analyzeCase(c);
    const plans = result.spokes.flatMap((s) => s.plan === undefined ? [] : [s.plan]);
    if (plans.length === 0) return; // a mirrored case the checks reject
    const direct = createRouter(result.hubVersion, plans, LINK_OPTIONS);
    const bytes = encodePlans(plans);
    assert.deepEqual(decodePlans(bytes), plans, "decodes to the same plan data");
    const encoded = new Router(
      result.hubVersion,
      deferredPlans(bytes, plans.map((p) => p.spokeVersion)),
    );
    assert.deepEqual(encoded.versions(), direct.versions());
    for (const dir of DIRECTIONS) {
      const [from, to, own, other, side] = dir === "hubToSpoke"
        ? [HUB, SPOKE, c.hub, c.spoke, "hub" as const]
        : [SPOKE, HUB, c.spoke, c.hub, "spoke" as const];
      for (let i = 0; i < INPUTS; i++) {
        const seed = `codec/${c.name}/${dir}/${i}`;
        const rng = createRng(seed);
        const base = generateResource(i % 4 === 3 ? other : own, {
          ...c.generate,
          rng,
          apiVersion: apiVersion(from),
          kind: KIND,
        });
        c.prepare?.(base, side, rng);
        const input = i % 2 === 1 ? corrupt(base, rng, 0) as JsonObject : base;
        assert.equal(
          outcome(encoded, input, apiVersion(to)),
          outcome(direct, input, apiVersion(to)),
          `seed ${seed}`,
        );
        tally.conversions++;
      }
    }
    tally.cases++;
  });
}

Deno.test("encoded plans: every law case was compared", () => {
  assert.ok(tally.cases >= lawCases().length, `${tally.cases} cases`);
  assert.ok(tally.conversions >= tally.cases * INPUTS * 2);
});

Deno.test("the encoding keeps what JSON text would lose", () => {
  const plan: PlanData = {
    hubVersion: "v2",
    spokeVersion: "v1",
    hubToSpoke: [{ op: "set", to: ["spec", "big"], value: 2n ** 62n }, {
      op: "set",
      to: ["spec", "z"],
      value: -0,
      note: undefined,
    }],
    spokeToHub: [],
  };
  const [back] = decodePlans(encodePlans([plan]));
  assert.equal(back.hubToSpoke[0].value, 2n ** 62n);
  assert.ok(Object.is(back.hubToSpoke[1].value, -0));
  assert.ok(Object.hasOwn(back.hubToSpoke[1], "note"));
});

Deno.test("the encoding owns its buffer, so a transfer moves exactly the plans", () => {
  const bytes = encodePlans([{
    hubVersion: "v2",
    spokeVersion: "v1",
    hubToSpoke: [],
    spokeToHub: [],
  }]);
  assert.equal(bytes.byteOffset, 0);
  assert.equal(bytes.byteLength, bytes.buffer.byteLength);
});

Deno.test("a deferred router links on its first conversion, not before", () => {
  let links = 0;
  const plans: PlanData[] = [{
    hubVersion: "v2",
    spokeVersion: "v1",
    hubToSpoke: [{ op: "copy", from: ["spec", "a"], to: ["spec", "b"] }],
    spokeToHub: [{ op: "copy", from: ["spec", "b"], to: ["spec", "a"] }],
  }];
  const deferred = deferredPlans(encodePlans(plans), ["v1"]);
  const router = new Router("v2", {
    spokeVersions: deferred.spokeVersions,
    link: () => {
      links++;
      return deferred.link();
    },
  });
  assert.deepEqual(router.versions(), ["v2", "v1"]);
  assert.equal(router.linked, false);
  assert.equal(links, 0);
  const out = convertObject(router, { apiVersion: "g/v2", spec: { a: 1 } }, "g/v1");
  assert.deepEqual(out.spec, { b: 1 });
  convertObject(router, { apiVersion: "g/v1", spec: { b: 2 } }, "g/v2");
  assert.equal(router.linked, true);
  assert.equal(links, 1, "linked once");
});

Deno.test("plans that do not link make the compile fail, with the linker's message", () => {
  const r = compiledResult({
    target: "widgets.example.com",
    kind: "crd",
    config: "widgets",
    hubVersion: "v2",
    plans: [{ hubVersion: "v2", spokeVersion: "v1", hubToSpoke: [{ op: "nope" }], spokeToHub: [] }],
    reviewVersions: ["v1"],
    lossless: {},
    planHash: "gen=1/1",
  });
  assert.equal(r.ok, false);
  assert.ok(!r.ok && r.reason === "AnalyzeFailed");
  assert.match(!r.ok ? r.message : "", /^linking compiled plans: unknown op code "nope"/);
});
