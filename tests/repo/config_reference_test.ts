/**
 * docs/configuration.md is the reference for the three kinds: every field path of their zod
 * schemas (src/api/config.ts, src/api/server.ts) appears there, in backticks, in the section of
 * its kind. A field added to a schema without documentation fails here.
 *
 * Paths are dotted, with `[]` for list items (`spec.spokes[].version`). The rule vocabulary is
 * shared by every place a rule occurs (spokes and the nested `forEach.rules` levels), so its
 * fields are rooted at `rules[]` (`rules[].fieldRename.hubPath`). Maps and free-form values are
 * leaves.
 */
import assert from "node:assert/strict";
import {
  ConversionWebhookServerSchema,
  CRDConversionConfigSchema,
  XRDConversionConfigSchema,
} from "../../src/api/mod.ts";

const DOC = new URL("../../docs/configuration.md", import.meta.url);

// deno-lint-ignore no-explicit-any
type Def = any;
const WRAPPERS = new Set(["optional", "nullable", "default", "prefault", "readonly", "catch"]);

function unwrap(schema: Def): Def {
  let s = schema;
  for (;;) {
    const def = s._zod.def;
    if (WRAPPERS.has(def.type) || def.type === "nonoptional") s = def.innerType;
    else if (def.type === "pipe") s = def.in;
    else return s;
  }
}

/** Every field path under `schema`; rule objects are walked once, rooted at `rules[]`. */
export function fieldPaths(schema: unknown): string[] {
  const out = new Set<string>();
  let rulesWalked = false;
  const walk = (node: Def, prefix: string): void => {
    const s = unwrap(node);
    const def = s._zod.def;
    if (def.type === "array") {
      walk(def.element, `${prefix}[]`);
      return;
    }
    if (def.type !== "object") return;
    if ("strategy" in def.shape && prefix !== "rules[]") {
      if (!rulesWalked) {
        rulesWalked = true;
        walk(s, "rules[]");
      }
      return;
    }
    for (const [key, child] of Object.entries(def.shape)) {
      const path = prefix === "" ? key : `${prefix}.${key}`;
      out.add(path);
      walk(child, path);
    }
  };
  walk(schema, "");
  return [...out];
}

/** The text of the `## ` section whose heading mentions `kind`. */
function section(doc: string, kind: string): string {
  const parts = doc.split(/^(?=## )/m);
  const found = parts.filter((p) => p.split("\n")[0].includes(kind));
  assert.ok(found.length > 0, `docs/configuration.md has a "## … ${kind} …" section`);
  return found.join("\n");
}

const doc = await Deno.readTextFile(DOC);

const KINDS = [
  { kind: "CRDConversionConfig", schema: CRDConversionConfigSchema },
  { kind: "XRDConversionConfig", schema: XRDConversionConfigSchema },
  { kind: "ConversionWebhookServer", schema: ConversionWebhookServerSchema },
];

for (const { kind, schema } of KINDS) {
  Deno.test(`configuration reference: every field of ${kind} is documented`, () => {
    const text = section(doc, kind);
    const paths = fieldPaths(schema);
    assert.ok(paths.length > 30, `walked ${paths.length} paths`);
    const missing = paths.filter((p) => !text.includes(`\`${p}\``));
    assert.deepEqual(missing, [], `fields of ${kind} missing from docs/configuration.md`);
  });
}

Deno.test("configuration reference: the walker sees the rule vocabulary and nested levels", () => {
  const paths = fieldPaths(CRDConversionConfigSchema);
  for (
    const p of [
      "spec.targetCRD.name",
      "spec.spokes[].rules",
      "rules[].strategy",
      "rules[].fieldRename.hubPath",
      "rules[].forEach.rules",
      "rules[].when.equals",
      "status.conditions[].type",
    ]
  ) assert.ok(paths.includes(p), p);
  assert.ok(!paths.some((p) => p.includes("forEach.rules[]")), "rules are rooted once");
  assert.ok(fieldPaths(ConversionWebhookServerSchema).includes("spec.rollout.maxSurge"));
});
