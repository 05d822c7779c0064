/** The schema-driven generator (src/engine/generate.ts). */
import assert from "node:assert/strict";
import {
  createRng,
  generateObject,
  generateResource,
  generateValue,
} from "../../src/engine/generate.ts";
import { labelValueError, qualifiedNameError } from "../../src/engine/go.ts";
import { jsonEqual, type JsonValue, type SchemaNode } from "../../src/engine/mod.ts";

/** A validator for the keywords the generator promises to honour (returns the first problem). */
function validate(v: JsonValue, s: SchemaNode, at = "$"): string | undefined {
  if (v === null) return s.nullable === true ? undefined : `${at}: null`;
  if (Array.isArray(s.enum)) {
    return s.enum.some((e) => jsonEqual(e, v))
      ? undefined
      : `${at}: ${JSON.stringify(v)} not in enum`;
  }
  if (s["x-kubernetes-int-or-string"] === true) {
    return Number.isInteger(v) || typeof v === "string" ? undefined : `${at}: not int-or-string`;
  }
  if (Array.isArray(s.oneOf)) {
    const matching = s.oneOf.filter((b) =>
      (b.required ?? []).every((r) => Object.hasOwn(v as object, r))
    );
    if (matching.length !== 1) return `${at}: ${matching.length} oneOf branches match`;
  }
  switch (s.type) {
    case "string": {
      if (typeof v !== "string") return `${at}: not a string`;
      const n = [...v].length;
      if (typeof s.minLength === "number" && n < s.minLength) return `${at}: too short`;
      if (typeof s.maxLength === "number" && n > s.maxLength) return `${at}: too long`;
      if (typeof s.pattern === "string" && !new RegExp(s.pattern, "u").test(v)) {
        return `${at}: pattern`;
      }
      if (s.format === "date-time" && !/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/.test(v)) {
        return `${at}: date-time`;
      }
      if (s.format === "uuid" && !/^[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}$/.test(v)) {
        return `${at}: uuid`;
      }
      return undefined;
    }
    case "integer":
    case "number": {
      if (typeof v !== "number" || !Number.isFinite(v)) return `${at}: not a number`;
      if (s.type === "integer" && !Number.isSafeInteger(v)) return `${at}: not a safe integer`;
      if (Object.is(v, -0)) return `${at}: -0`;
      if (
        typeof s.minimum === "number" &&
        (s.exclusiveMinimum === true ? v <= s.minimum : v < s.minimum)
      ) {
        return `${at}: below minimum`;
      }
      if (
        typeof s.maximum === "number" &&
        (s.exclusiveMaximum === true ? v >= s.maximum : v > s.maximum)
      ) {
        return `${at}: above maximum`;
      }
      if (typeof s.multipleOf === "number" && v % s.multipleOf !== 0) return `${at}: multipleOf`;
      return undefined;
    }
    case "boolean":
      return typeof v === "boolean" ? undefined : `${at}: not a boolean`;
    case "array": {
      if (!Array.isArray(v)) return `${at}: not an array`;
      if (typeof s.minItems === "number" && v.length < s.minItems) return `${at}: minItems`;
      if (typeof s.maxItems === "number" && v.length > s.maxItems) return `${at}: maxItems`;
      if (s.uniqueItems === true && new Set(v.map((x) => JSON.stringify(x))).size !== v.length) {
        return `${at}: not unique`;
      }
      const keys = s["x-kubernetes-list-map-keys"] as string[] | undefined;
      if (keys !== undefined) {
        const ids = v.map((x) =>
          JSON.stringify(keys.map((k) => (x as Record<string, JsonValue>)[k]))
        );
        if (new Set(ids).size !== ids.length) return `${at}: duplicate list-map keys`;
      }
      if (s.items !== undefined && !Array.isArray(s.items)) {
        for (let i = 0; i < v.length; i++) {
          const p = validate(v[i], s.items, `${at}[${i}]`);
          if (p) return p;
        }
      }
      return undefined;
    }
    case "object": {
      if (typeof v !== "object" || Array.isArray(v)) return `${at}: not an object`;
      const props = s.properties ?? {};
      for (const r of s.required ?? []) if (!Object.hasOwn(v, r)) return `${at}: missing ${r}`;
      const n = Object.keys(v).length;
      if (typeof s.minProperties === "number" && n < s.minProperties) return `${at}: minProperties`;
      if (typeof s.maxProperties === "number" && n > s.maxProperties) return `${at}: maxProperties`;
      for (const [k, x] of Object.entries(v)) {
        if (Object.hasOwn(props, k)) {
          const p = validate(x, props[k], `${at}.${k}`);
          if (p) return p;
        } else if (
          s.additionalProperties === false ||
          (s.additionalProperties === undefined &&
            s["x-kubernetes-preserve-unknown-fields"] !== true)
        ) {
          return `${at}: unexpected key ${k}`;
        } else if (typeof s.additionalProperties === "object") {
          const p = validate(x, s.additionalProperties, `${at}.${k}`);
          if (p) return p;
        }
      }
      return undefined;
    }
  }
  return undefined;
}

const RICH: SchemaNode = {
  type: "object",
  required: ["spec"],
  properties: {
    apiVersion: { type: "string" },
    kind: { type: "string" },
    metadata: { type: "object" },
    spec: {
      type: "object",
      required: ["name", "replicas"],
      properties: {
        name: { type: "string", minLength: 3, maxLength: 8 },
        replicas: { type: "integer", minimum: 1, maximum: 5 },
        ratio: { type: "number", minimum: 0, exclusiveMaximum: true, maximum: 1 },
        port: { type: "integer", format: "int32", minimum: 1, maximum: 65535 },
        step: { type: "integer", multipleOf: 5, minimum: 10, maximum: 100 },
        big: { type: "integer", minimum: 1000000 },
        level: { type: "string", enum: ["low", "high"] },
        code: { type: "integer", enum: [200, 404] },
        when: { type: "string", format: "date-time" },
        id: { type: "string", format: "uuid" },
        slug: { type: "string", pattern: "^[a-z][a-z0-9-]*$", maxLength: 10 },
        enabled: { type: "boolean" },
        maybe: { type: "string", nullable: true },
        port2: { "x-kubernetes-int-or-string": true },
        labels: {
          type: "object",
          additionalProperties: { type: "string", maxLength: 4 },
          maxProperties: 2,
        },
        closed: { type: "object", additionalProperties: false },
        raw: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
        rawWithProps: {
          type: "object",
          "x-kubernetes-preserve-unknown-fields": true,
          properties: { known: { type: "integer" } },
        },
        zones: {
          type: "array",
          minItems: 1,
          maxItems: 2,
          items: { type: "string", enum: ["a", "b", "c"] },
          uniqueItems: true,
        },
        ports: {
          type: "array",
          "x-kubernetes-list-type": "map",
          "x-kubernetes-list-map-keys": ["port"],
          items: {
            type: "object",
            required: ["port"],
            properties: {
              port: { type: "integer", minimum: 1, maximum: 3 },
              name: { type: "string" },
            },
          },
        },
        anyArray: { type: "array" },
        choice: {
          type: "object",
          properties: { a: { type: "string" }, b: { type: "string" } },
          oneOf: [{ required: ["a"] }, { required: ["b"] }],
        },
        combined: {
          allOf: [{ type: "object", properties: { x: { type: "integer" } } }, { required: ["x"] }],
        },
        nested: {
          type: "object",
          properties: {
            deeper: {
              type: "object",
              required: ["leaf"],
              properties: { leaf: { type: "number" } },
            },
          },
        },
      },
    },
    status: { type: "object", properties: { phase: { type: "string" } } },
  },
};

Deno.test("generated values are valid against the schema (1000 seeds)", () => {
  for (let seed = 0; seed < 1000; seed++) {
    const v = generateValue(RICH, { seed });
    const problem = validate(v, RICH);
    assert.equal(problem, undefined, `seed ${seed}: ${problem}\n${JSON.stringify(v)}`);
    const combined =
      ((v as { spec: Record<string, JsonValue> }).spec.combined ?? { x: 0 }) as Record<
        string,
        JsonValue
      >;
    assert.ok(Number.isInteger(combined.x), `seed ${seed}: allOf required x`);
  }
});

Deno.test("same seed ⇒ same value; different seeds differ", () => {
  assert.deepEqual(generateValue(RICH, { seed: 42 }), generateValue(RICH, { seed: 42 }));
  assert.deepEqual(
    generateValue(RICH, { seed: "law/x/1" }),
    generateValue(RICH, { seed: "law/x/1" }),
  );
  const distinct = new Set<string>();
  for (let seed = 0; seed < 50; seed++) distinct.add(JSON.stringify(generateValue(RICH, { seed })));
  assert.equal(distinct.size, 50);
});

Deno.test("optional fields are sometimes present, sometimes absent; required always present", () => {
  let withRatio = 0;
  let withStatus = 0;
  for (let seed = 0; seed < 200; seed++) {
    const v = generateValue(RICH, { seed }) as Record<string, Record<string, JsonValue>>;
    assert.ok(v.spec !== undefined && v.spec.name !== undefined && v.spec.replicas !== undefined);
    if (Object.hasOwn(v.spec, "ratio")) withRatio++;
    if (Object.hasOwn(v, "status")) withStatus++;
  }
  assert.ok(withRatio > 60 && withRatio < 180, `ratio present ${withRatio}/200`);
  assert.ok(withStatus > 60 && withStatus < 180, `status present ${withStatus}/200`);
  const always = generateValue(RICH, { seed: 1, optionalProbability: 1 }) as Record<
    string,
    Record<string, JsonValue>
  >;
  assert.ok(Object.hasOwn(always.spec, "ratio") && Object.hasOwn(always, "status"));
  const never = generateValue(RICH, { seed: 1, optionalProbability: 0 }) as Record<
    string,
    Record<string, JsonValue>
  >;
  assert.deepEqual(Object.keys(never), ["spec"]);
  assert.deepEqual(Object.keys(never.spec).sort(), ["name", "replicas"]);
});

Deno.test("free-form maps, preserve-unknown and schema-less values get arbitrary content", () => {
  let extraKeys = 0;
  let mapEntries = 0;
  let exotic = 0;
  for (let seed = 0; seed < 200; seed++) {
    const spec = (generateValue(RICH, { seed, optionalProbability: 1 }) as Record<
      string,
      Record<string, JsonValue>
    >).spec;
    const raw = spec.rawWithProps as Record<string, JsonValue>;
    extraKeys += Object.keys(raw).filter((k) => k !== "known").length;
    mapEntries += Object.keys(spec.labels as object).length;
    for (const k of Object.keys(spec.raw as object)) {
      if (k === "__proto__" || k.includes(".")) exotic++;
    }
    assert.deepEqual(spec.closed, {});
  }
  assert.ok(extraKeys > 50, `preserve-unknown extra keys: ${extraKeys}`);
  assert.ok(mapEntries > 50, `map entries: ${mapEntries}`);
  assert.ok(exotic > 0, "edge-case keys appear");
});

Deno.test("edge cases appear by default and can be turned off", () => {
  const s: SchemaNode = {
    type: "object",
    properties: {
      s: { type: "string" },
      n: { type: "number" },
      m: { type: "object", additionalProperties: { type: "string" } },
    },
    required: ["s", "n", "m"],
  };
  let spicy = 0;
  let extreme = 0;
  for (let seed = 0; seed < 300; seed++) {
    const v = generateValue(s, { seed }) as { s: string; n: number };
    if (/[^a-z0-9]/.test(v.s)) spicy++;
    if (v.n === 1e21 || v.n === 1e-7) extreme++;
    const tame = generateValue(s, { seed, edgeCases: false }) as {
      s: string;
      n: number;
      m: object;
    };
    assert.match(tame.s, /^[a-z0-9]*$/);
    assert.ok(Math.abs(tame.n) <= 1000);
    for (const k of Object.keys(tame.m)) assert.match(k, /^[a-z][a-z0-9]*$/);
  }
  assert.ok(spicy > 10, `spicy strings: ${spicy}`);
  assert.ok(extreme > 0, "1e21 / 1e-7 appear");
});

Deno.test("generated values survive a JSON round trip (the webhook's wire format)", () => {
  for (let seed = 0; seed < 300; seed++) {
    const v = generateValue(RICH, { seed });
    assert.ok(jsonEqual(JSON.parse(JSON.stringify(v)), v), `seed ${seed}`);
  }
});

Deno.test("the custom hook overrides nodes by path", () => {
  const v = generateObject(RICH, {
    seed: 3,
    custom: (_node, path) => (path.join(".") === "spec.name" ? "fixed" : undefined),
  }) as { spec: { name: string } };
  assert.equal(v.spec.name, "fixed");
  const seen = new Set<string>();
  for (let seed = 0; seed < 20; seed++) {
    generateValue(RICH, {
      seed,
      optionalProbability: 1,
      custom: (_n, p) => void seen.add(p.join(".")),
    });
  }
  assert.ok(seen.has("spec.ports.[].port"));
  assert.ok(seen.has("spec.labels.{}"));
  assert.ok(seen.has(""), "the root is offered too");
});

Deno.test("generateResource: apiVersion, kind and a valid metadata replace the schema's", () => {
  let labelled = 0;
  for (let seed = 0; seed < 100; seed++) {
    const r = generateResource(RICH, {
      seed,
      apiVersion: "demo.example.com/v1",
      kind: "Gadget",
      namespace: "ns",
    });
    assert.equal(r.apiVersion, "demo.example.com/v1");
    assert.equal(r.kind, "Gadget");
    const md = r.metadata as {
      name: string;
      namespace: string;
      labels?: Record<string, string>;
      annotations?: Record<string, string>;
    };
    assert.match(md.name, /^[a-z]([-a-z0-9]*[a-z0-9])?$/);
    assert.equal(md.namespace, "ns");
    for (const [k, v] of Object.entries(md.labels ?? {})) {
      assert.equal(qualifiedNameError(k), undefined, k);
      assert.equal(labelValueError(v), undefined, v);
      labelled++;
    }
    for (const k of Object.keys(md.annotations ?? {})) {
      assert.equal(qualifiedNameError(k), undefined, k);
    }
    // metadata is the generator's own (the schema's `metadata` is a bare object).
    assert.equal(validate({ ...r, metadata: {} }, RICH), undefined);
  }
  assert.ok(labelled > 0);
  assert.equal(
    generateResource(undefined, { apiVersion: "a/v1", kind: "K", name: "n" }).metadata !==
      undefined,
    true,
  );
  assert.deepEqual(generateObject({ type: "string" }), {});
});

Deno.test("createRng: ranges are inclusive and uniform enough; string and number seeds", () => {
  const rng = createRng(7);
  const counts = [0, 0, 0];
  for (let i = 0; i < 3000; i++) {
    const x = rng.int(0, 2);
    counts[x]++;
    const f = rng.next();
    assert.ok(f >= 0 && f < 1);
  }
  for (const c of counts) assert.ok(c > 850 && c < 1150, String(counts));
  const wide = createRng(1);
  for (let i = 0; i < 1000; i++) {
    const v = wide.int(-Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER);
    assert.ok(Number.isSafeInteger(v));
  }
  assert.equal(createRng(5).int(3, 3), 3);
  assert.equal(createRng("a").next(), createRng("a").next());
  assert.notEqual(createRng("a").next(), createRng("b").next());
  assert.equal(createRng(2 ** 32 + 5).next(), createRng(5).next(), "numbers are taken modulo 2^32");
  assert.ok(["x", "y"].includes(createRng(1).pick(["x", "y"])));
});
