import assert from "node:assert/strict";
import { closest, didYouMean, levenshtein } from "../../src/lib/edit_distance.ts";

Deno.test("levenshtein: insertions, deletions and substitutions", () => {
  assert.equal(levenshtein("kitten", "sitting"), 3);
  assert.equal(levenshtein("", "abc"), 3);
  assert.equal(levenshtein("hubPth", "hubPath"), 1);
  assert.equal(levenshtein(new Uint8Array([1, 2]), new Uint8Array([1, 2])), 0);
});

Deno.test("closest: a likely typo, a prefix, nothing far off, no guess between ties", () => {
  assert.equal(closest("hubPth", ["spokePath", "hubPath"]), "hubPath");
  assert.equal(closest("--sampel", ["--sample", "--to", "--from"]), "--sample");
  assert.equal(closest("--out", ["--output", "--quiet"]), "--output");
  assert.equal(closest("JSON", ["yaml", "json"]), "json");
  assert.equal(closest("--verbose", ["--config", "--crd", "--xrd"]), undefined);
  assert.equal(closest("v3", ["v1", "v2"]), undefined);
  assert.equal(closest("v22", ["v1", "v2"]), "v2");
  assert.equal(didYouMean("reson", ["reason"]), ' (did you mean "reason"?)');
  assert.equal(didYouMean("--sed", ["--seed"], false), " (did you mean --seed?)");
  assert.equal(didYouMean("zzz", ["reason"]), "");
});
