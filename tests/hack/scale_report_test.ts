/**
 * scale-report on recorded result pairs (tests/hack/fixtures/scale): a new key, a changed
 * envelope, a jump below the noise floor, a real regression, an error-count failure, and another
 * schemaVersion; plus the command's Markdown, FAIL lines and exit codes.
 */
import assert from "node:assert/strict";
import { parseScaleResult, ScaleResultError } from "../../hack/scale/result.ts";
import { baselineOf, compareScaleResults, renderMarkdown } from "../../hack/scale/report.ts";

const DIR = new URL("./fixtures/scale/", import.meta.url).pathname;
const REPO = new URL("../../", import.meta.url).pathname;
const read = async (name: string): Promise<unknown> =>
  JSON.parse(await Deno.readTextFile(`${DIR}${name}`));
const load = async (name: string) => parseScaleResult(await read(name), name);
const compare = async (previous: string, current: string) =>
  compareScaleResults(await load(current), baselineOf(await read(previous)));
const row = (r: Awaited<ReturnType<typeof compare>>, label: string) =>
  r.rows.find((x) => x.label === label);

Deno.test("scale result: every fixture of schemaVersion 2 parses", async () => {
  for await (const e of Deno.readDir(DIR)) {
    if (e.name !== "schema-v1.json") await load(e.name);
  }
});

Deno.test("scale result: another schemaVersion is refused by name", async () => {
  const doc = await read("schema-v1.json");
  assert.throws(() => parseScaleResult(doc, "old.json"), ScaleResultError);
  assert.throws(
    () => parseScaleResult(doc, "old.json"),
    /old\.json: schemaVersion 1 is not supported \(this tool reads schemaVersion 2\)/,
  );
  assert.throws(
    () => parseScaleResult({ ...(doc as object), schemaVersion: 2, createMs: "slow" }, "x.json"),
    /x\.json: not a scale result: createMs:/,
  );
});

Deno.test("scale report: a key missing from the previous run is new, not compared", async () => {
  const r = await compare("new-key-previous.json", "new-key-current.json");
  assert.equal(r.notComparable, undefined);
  assert.deepEqual(row(r, "webhookWorkingSetBytes")?.status, "new");
  assert.equal(row(r, "listV1 p50")?.status, "ok");
  assert.deepEqual(r.failures, []);
});

Deno.test("scale report: a changed envelope is not comparable, with no false regression", async () => {
  const r = await compare("baseline.json", "envelope-changed.json");
  assert.equal(r.notComparable, "the envelope differs (targets 300 -> 100)");
  assert.ok(r.rows.every((x) => x.status === "not compared" && x.previous === undefined));
  assert.deepEqual(r.failures, []);
});

Deno.test("scale report: another schemaVersion as the previous run skips the comparison", async () => {
  const r = await compare("schema-v1.json", "baseline.json");
  assert.match(r.notComparable ?? "", /schemaVersion 1 is not supported/);
  assert.deepEqual(r.failures, []);
  assert.match(
    compareScaleResults(await load("baseline.json"), undefined).notComparable ?? "",
    /no previous/,
  );
});

Deno.test("scale report: a doubling below the 20 ms floor is noise", async () => {
  const r = await compare("baseline.json", "below-floor.json");
  const p50 = row(r, "getV1 p50");
  assert.equal(p50?.ratio, 2);
  assert.equal(p50?.status, "ok");
  assert.ok((row(r, "getV1 p99")?.ratio ?? 0) > 2);
  assert.equal(row(r, "getV1 p99")?.status, "ok");
  assert.deepEqual(r.failures, []);
});

Deno.test("scale report: a real regression is REGRESSED with its FAIL line", async () => {
  const r = await compare("baseline.json", "regressed.json");
  assert.equal(row(r, "listV1 p50")?.status, "REGRESSED");
  assert.deepEqual(r.failures, [
    "FAIL: listV1 p50: 90.0 ms -> 190.0 ms (2.11x, threshold 1.50x)",
  ]);
  assert.equal(r.rows.filter((x) => x.status === "REGRESSED").length, 1);
  const md = renderMarkdown(r, await load("regressed.json"));
  assert.match(md, /\| listV1 p50 \| 90\.0 ms \| 190\.0 ms \| 2\.11× \| \*\*REGRESSED\*\* \|/);
  // A higher threshold lets the same pair pass.
  assert.deepEqual(
    compareScaleResults(await load("regressed.json"), baselineOf(await read("baseline.json")), 2.5)
      .failures,
    [],
  );
});

Deno.test("scale report: Get/List errors and an empty run fail regardless of history", async () => {
  const r = await compare("baseline.json", "errors.json");
  assert.deepEqual(r.failures, ["FAIL: getV2: 3 of 6000 requests failed"]);
  const noHistory = compareScaleResults(await load("errors.json"), undefined);
  assert.deepEqual(noHistory.failures, r.failures);
  const empty = await load("baseline.json");
  for (const m of Object.values(empty.measurements)) m.n = 0;
  assert.deepEqual(compareScaleResults(empty, undefined).failures, [
    "FAIL: the run issued zero requests",
  ]);
  assert.throws(() => compareScaleResults(empty, undefined, 1), /must be > 1\.0/);
});

async function runReport(...args: string[]) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-read", `${REPO}hack/scale_report.ts`, ...args],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

Deno.test("scale_report.ts: exit 1 with REGRESSED and FAIL on a regression, 0 otherwise, 2 on misuse", async () => {
  const bad = await runReport(
    "--previous",
    `${DIR}baseline.json`,
    "--current",
    `${DIR}regressed.json`,
  );
  assert.equal(bad.code, 1);
  assert.match(bad.stdout, /^## Scale report/);
  assert.match(bad.stdout, /\*\*REGRESSED\*\*/);
  assert.equal(bad.stderr, "FAIL: listV1 p50: 90.0 ms -> 190.0 ms (2.11x, threshold 1.50x)\n");

  const env = await runReport(
    "--previous",
    `${DIR}baseline.json`,
    "--current",
    `${DIR}envelope-changed.json`,
  );
  assert.equal(env.code, 0);
  assert.match(env.stdout, /Not comparable: the envelope differs/);

  const missing = await runReport(
    "--previous",
    `${DIR}nope.json`,
    "--current",
    `${DIR}baseline.json`,
  );
  assert.equal(missing.code, 0);
  assert.match(missing.stdout, /Not comparable: .*nope\.json/);

  assert.equal((await runReport("--current", `${DIR}schema-v1.json`)).code, 2);
  assert.equal((await runReport("--current", `${DIR}baseline.json`, "--threshold", "1")).code, 2);
  assert.equal((await runReport()).code, 2);
});
