/**
 * Numbers survive `/convert` exactly: int64 literals beyond 2^53 come back digit for digit through
 * the real handler (bytes in, bytes out), carried, renamed, forEach-mapped, stashed in an
 * annotation and restored, and scaled by NumericScale; a number beyond the double range, or a
 * scaled value beyond int64, is refused — never written as null.
 */
import assert from "node:assert/strict";
import type { JsonObject } from "../../../src/engine/mod.ts";
import { compileConfig } from "../../../src/webhook/compile.ts";
import { convertContext, convertReviewBytes } from "../../../src/webhook/convert/mod.ts";
import { PlanRegistry } from "../../../src/webhook/registry.ts";
import { SILENT } from "../../../src/webhook/_log.ts";

const GROUP = "numbers.example.com";
const TARGET = `counters.${GROUP}`;
const NOTE = `${GROUP}/note`;
const LITERALS = ["9007199254740993", "-9223372036854775808", "9223372036854775807"];

const int = { type: "integer" };
const spec = (props: Record<string, unknown>) => ({
  type: "object",
  properties: { metadata: { type: "object" }, spec: { type: "object", properties: props } },
});
const HUB = spec({
  carried: int,
  sizeBytes: int,
  items: { type: "array", items: { type: "object", properties: { count: int } } },
  note: int,
  nanos: int,
});
const SPOKE = spec({
  micros: int,
  carried: int,
  size: int,
  entries: { type: "array", items: { type: "object", properties: { n: int } } },
});

function registry(): PlanRegistry {
  const crd = {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: TARGET, generation: 1 },
    spec: {
      group: GROUP,
      scope: "Namespaced",
      names: { kind: "Counter", plural: "counters" },
      versions: [
        { name: "v1", served: true, storage: false, schema: { openAPIV3Schema: SPOKE } },
        { name: "v2", served: true, storage: true, schema: { openAPIV3Schema: HUB } },
      ],
    },
  } as unknown as JsonObject;
  const rename = (hubPath: string, spokePath: string) => ({
    strategy: "FieldRename",
    fieldRename: { hubPath, spokePath },
  });
  const compiled = compileConfig("crd", {
    metadata: { name: "counters", generation: 1 },
    spec: {
      targetCRD: { name: TARGET },
      hubVersion: "v2",
      spokes: [{
        version: "v1",
        rules: [
          rename("spec.sizeBytes", "spec.size"),
          {
            strategy: "ForEach",
            forEach: {
              hubItemsPath: "spec.items",
              spokeItemsPath: "spec.entries",
              rules: [rename("count", "n")],
            },
          },
          {
            strategy: "ToAnnotation",
            toAnnotation: { hubPath: "spec.note", key: NOTE, restoreOnReverse: true },
          },
          {
            strategy: "NumericScale",
            numericScale: { hubPath: "spec.nanos", spokePath: "spec.micros", factor: 1000 },
            acknowledgeLossy: true,
            reason: "sub-microsecond digits are rounded",
          },
        ],
      }],
    },
  }, crd);
  if (!compiled.ok) throw new Error(`test config does not compile: ${compiled.message}`);
  const r = new PlanRegistry();
  r.install(compiled, new Date());
  return r;
}

const ctx = convertContext({ registry: registry(), logger: SILENT });
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Posts review text through the handler and returns the response text. */
function convert(reviewText: string): string {
  const out = convertReviewBytes(ctx, TARGET, encoder.encode(reviewText));
  assert.equal(out.status, 200, decoder.decode(out.body));
  return decoder.decode(out.body);
}

/** A review in raw text, so the literals are never read as doubles on the way in. */
function reviewText(desired: string, objects: string[]): string {
  return `{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","request":{` +
    `"uid":"u-numbers","desiredAPIVersion":"${GROUP}/${desired}","objects":[${
      objects.join(",")
    }]}}`;
}

const meta = (i: number, annotations = "") =>
  `"metadata":{"name":"c${i}","namespace":"default"${
    annotations === "" ? "" : `,"annotations":{${annotations}}`
  }}`;

function spokeObject(n: string, i: number): string {
  return `{"apiVersion":"${GROUP}/v1","kind":"Counter",${
    meta(i, `"${NOTE}":"${n}"`)
  },"spec":{"carried":${n},"size":${n},"entries":[{"n":${n}},{"n":1}]}}`;
}

function hubObject(n: string, i: number): string {
  return `{"apiVersion":"${GROUP}/v2","kind":"Counter",${
    meta(i)
  },"spec":{"carried":${n},"sizeBytes":${n},"items":[{"count":${n}},{"count":1}],"note":${n}}}`;
}

Deno.test("int64 literals beyond 2^53 survive carry, rename, forEach and restore (v1 → v2)", () => {
  const text = convert(reviewText("v2", LITERALS.map(spokeObject)));
  assert.match(text, /"status":"Success"/);
  for (const n of LITERALS) {
    for (const field of ["carried", "sizeBytes", "count", "note"]) {
      assert.ok(text.includes(`"${field}":${n}`), `${field} ${n} unchanged in ${text}`);
    }
  }
  assert.ok(!text.includes(NOTE), "the restored annotation is removed");
});

Deno.test("int64 literals beyond 2^53 survive carry, rename, forEach and stash (v2 → v1)", () => {
  const text = convert(reviewText("v1", LITERALS.map(hubObject)));
  assert.match(text, /"status":"Success"/);
  for (const n of LITERALS) {
    for (const field of ["carried", "size", "n"]) {
      assert.ok(text.includes(`"${field}":${n}`), `${field} ${n} unchanged in ${text}`);
    }
    assert.ok(text.includes(`"${NOTE}":"${n}"`), `the stash holds the digits of ${n}`);
  }
});

Deno.test("a round trip v2 → v1 → v2 of the answer's own text keeps every int64 literal", () => {
  const spokeText = convert(reviewText("v1", LITERALS.map(hubObject)));
  const open = '"convertedObjects":[';
  const objects = spokeText.slice(
    spokeText.indexOf(open) + open.length,
    spokeText.lastIndexOf("]}}"),
  );
  const back = convert(reviewText("v2", [objects]));
  for (const n of LITERALS) {
    for (const field of ["carried", "sizeBytes", "count", "note"]) {
      assert.ok(back.includes(`"${field}":${n}`), `${field} ${n} unchanged in ${back}`);
    }
  }
});

Deno.test("integers beyond int64 stay doubles, as the apiserver made them", () => {
  const text = convert(
    reviewText("v2", [
      `{"apiVersion":"${GROUP}/v1","kind":"Counter",${
        meta(0)
      },"spec":{"carried":9223372036854775808,"size":12345678901234567890123}}`,
    ]),
  );
  assert.ok(text.includes(`"carried":9223372036854776000`), text);
  assert.ok(text.includes(`"sizeBytes":1.2345678901234568e+22`), text);
});

Deno.test("a number beyond the double range is refused (400), never written as null", () => {
  for (const n of ["1e400", "-1e400", "1" + "0".repeat(400)]) {
    const out = convertReviewBytes(
      ctx,
      TARGET,
      encoder.encode(
        reviewText("v2", [
          `{"apiVersion":"${GROUP}/v1","kind":"Counter",${meta(0)},"spec":{"carried":${n}}}`,
        ]),
      ),
    );
    assert.equal(out.status, 400);
    assert.match(decoder.decode(out.body), /outside the range of a double/);
  }
});

Deno.test("a stashed annotation beyond the double range fails the review naming the field", () => {
  const text = convert(
    reviewText("v2", [
      `{"apiVersion":"${GROUP}/v1","kind":"Counter",${
        meta(0, `"${NOTE}":"1e400"`)
      },"spec":{"carried":1}}`,
    ]),
  );
  assert.match(text, /"status":"Failure"/);
  assert.match(text, /cannot restore spec\.note: .*outside the range of a double/);
  assert.ok(!text.includes("null"), text);
});

const withMicros = (micros: string) =>
  reviewText("v2", [
    `{"apiVersion":"${GROUP}/v1","kind":"Counter",${meta(0)},"spec":{"micros":${micros}}}`,
  ]);

Deno.test("NumericScale through the handler: exact beyond 2^53, a Failure beyond int64", () => {
  assert.ok(convert(withMicros("9007199254740993")).includes(`"nanos":9007199254740993000`));
  assert.ok(convert(withMicros("-9223372036854775")).includes(`"nanos":-9223372036854775000`));
  const text = convert(withMicros("9223372036854775807"));
  assert.match(text, /"status":"Failure"/);
  assert.match(
    text,
    /spec\.micros: multiplying by 1000 gives 9223372036854775807000, beyond the int64 range/,
  );
  assert.ok(!text.includes("null"), text);
});
