/**
 * Whole-object benchmark (`deno task bench`), group "100 fields": an object with 100 scalar spec
 * fields (90 identity-covered, 10 renamed) through `convertObject`, against a floor — bare
 * `JSON.parse` + `JSON.stringify` of the same payload (the baseline, so deno prints the ratio) —
 * and the whole handler path (parse + convert + stringify).
 */
import { convertObject, createRouter } from "./convert.ts";
import type { JsonObject, JsonValue, SchemaNode } from "./types.ts";
import { analyzePair, bool, GROUP, HUB, int, object, root, SPOKE, str } from "./bench_support.ts";

const FIELDS = 100;
const RENAMED = 10;
const kindOf = (i: number): SchemaNode => [str, int, bool][i % 3];
const valueOf = (i: number): JsonValue =>
  [`value-${i}-${"x".repeat(i % 7)}`, i * 37, i % 2 === 0][i % 3];
const hubName = (i: number) => (i < RENAMED ? `hubField${i}` : `field${i}`);
const spokeName = (i: number) => (i < RENAMED ? `spokeField${i}` : `field${i}`);

const wideHub: Record<string, SchemaNode> = {};
const wideSpoke: Record<string, SchemaNode> = {};
const wideSpec: JsonObject = {};
for (let i = 0; i < FIELDS; i++) {
  wideHub[hubName(i)] = kindOf(i);
  wideSpoke[spokeName(i)] = kindOf(i);
  wideSpec[hubName(i)] = valueOf(i);
}
const wideRouter = createRouter(
  analyzePair(
    root(wideHub),
    root(wideSpoke),
    Array.from({ length: RENAMED }, (_, i) => ({
      strategy: "FieldRename",
      fieldRename: { hubPath: `spec.${hubName(i)}`, spokePath: `spec.${spokeName(i)}` },
    })),
  ),
);
const wideObject: JsonObject = {
  apiVersion: `${GROUP}/${HUB}`,
  ...object(wideSpec, {
    managedFields: [{
      manager: "kubectl",
      operation: "Update",
      apiVersion: `${GROUP}/${HUB}`,
      time: "2026-01-01T00:00:00Z",
      fieldsType: "FieldsV1",
      fieldsV1: { "f:spec": {} },
    }],
  }),
};
const widePayload = JSON.stringify(wideObject);
const spokeAPIVersion = `${GROUP}/${SPOKE}`;

Deno.bench({
  name: "floor: JSON.parse + JSON.stringify (100 fields)",
  group: "100 fields",
  baseline: true,
  fn: () => {
    JSON.stringify(JSON.parse(widePayload));
  },
});

Deno.bench({
  name: "convertObject hub→spoke (100 fields, 10 renames)",
  group: "100 fields",
  fn: () => {
    convertObject(wideRouter, wideObject, spokeAPIVersion);
  },
});

Deno.bench({
  name: "parse + convertObject + stringify (100 fields)",
  group: "100 fields",
  fn: () => {
    JSON.stringify(convertObject(wideRouter, JSON.parse(widePayload), spokeAPIVersion));
  },
});
