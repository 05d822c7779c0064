/**
 * Enforces the import rules of docs/architecture.md#the-map: the test reads the map's table (folder
 * or file → may import) and fails on any import it does not allow. The engine also imports only its
 * libraries (CEL, RE2, JSON Patch) and uses no runtime API.
 */
import assert from "node:assert/strict";

const ROOT = new URL("../../", import.meta.url);
const SRC = new URL("src/", ROOT);

/** npm libraries the pure engine may use. */
const ENGINE_LIBRARIES: readonly string[] = ["@bufbuild/cel", "fast-json-patch", "re2js"];

/** The map's rows: `src/<folder>/` or `src/<folder>/<file>.ts` → the top-level folders it may import. */
export function readMap(markdown: string): Map<string, readonly string[]> {
  const section = markdown.split(/^## /m).find((s) => s.startsWith("The map\n"));
  if (!section) throw new Error("docs/architecture.md has no '## The map' section");
  const rows = new Map<string, readonly string[]>();
  for (const line of section.split("\n")) {
    const cells = line.split("|").map((c) => c.trim());
    const m = /^`(src\/[\w./]+)`$/.exec(cells[1] ?? "");
    if (!m || cells.length < 5) continue; // a row of the three-column table only
    const may = cells[3] === "nothing" ? [] : [...cells[3].matchAll(/`(\w+)`/g)].map((x) => x[1]);
    rows.set(m[1], may);
  }
  return rows;
}

async function* tsFiles(dir: URL): AsyncGenerator<URL> {
  for await (const entry of Deno.readDir(dir)) {
    const url = new URL(entry.name + (entry.isDirectory ? "/" : ""), dir);
    if (entry.isDirectory) yield* tsFiles(url);
    else if (entry.name.endsWith(".ts")) yield url;
  }
}

const IMPORT =
  /(?:^|\n)\s*(?:import|export)\b[^;]*?\bfrom\s*["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g;

function layerOf(url: URL): string {
  return url.pathname.slice(SRC.pathname.length).split("/")[0];
}

/** The violations of one file against the map; `where` is its path below src/. */
export function violationsOf(
  map: Map<string, readonly string[]>,
  file: URL,
  text: string,
): string[] {
  const where = file.pathname.slice(SRC.pathname.length);
  const layer = layerOf(file);
  const allowed = map.get(`src/${where}`) ?? map.get(`src/${layer}/`);
  if (allowed === undefined) return [`src/${layer}/ has no row in the map of docs/architecture.md`];
  const out: string[] = [];
  for (const m of text.matchAll(IMPORT)) {
    const spec = m[1] ?? m[2];
    if (spec.startsWith(".")) {
      const target = layerOf(new URL(spec, file));
      if (target !== layer && target !== "lib" && !allowed.includes(target)) {
        out.push(`${where} imports ${spec} (${layer} → ${target})`);
      }
    } else if (layer === "engine" && !ENGINE_LIBRARIES.includes(spec)) {
      out.push(`${where} imports ${spec}: the engine may use only ${ENGINE_LIBRARIES}`);
    } else if (layer === "lib") {
      out.push(`${where} imports ${spec}: src/lib imports nothing`);
    }
  }
  const isBench = file.pathname.endsWith("_bench.ts"); // benchmarks run under `deno bench`
  if (
    layer === "engine" && !isBench &&
    /\bDeno\./.test(text.replace(/\/\/.*|\/\*[\s\S]*?\*\//g, ""))
  ) {
    out.push(`${where} uses the Deno runtime API; the engine must stay pure`);
  }
  return out;
}

const MAP = readMap(await Deno.readTextFile(new URL("docs/architecture.md", ROOT)));

Deno.test("imports follow the map of docs/architecture.md", async () => {
  const violations: string[] = [];
  for await (const file of tsFiles(SRC)) {
    violations.push(...violationsOf(MAP, file, await Deno.readTextFile(file)));
  }
  assert.deepEqual(violations, []);
});

Deno.test("the map names every folder of src/ and only folders and files that exist", async () => {
  const folders: string[] = [];
  for await (const e of Deno.readDir(SRC)) if (e.isDirectory) folders.push(`src/${e.name}/`);
  for (const f of folders) assert.ok(MAP.has(f), `${f} has no row in the map`);
  for (const row of MAP.keys()) {
    await Deno.stat(new URL(row, ROOT)).catch(() => assert.fail(`${row} does not exist`));
  }
});

Deno.test("the map is read as written: the manager binary may not import the webhook role", () => {
  assert.equal(MAP.get("src/main/manager.ts")?.includes("webhook"), false);
  const file = new URL("main/manager.ts", SRC);
  assert.deepEqual(
    violationsOf(MAP, file, 'import { startPlainServer } from "../webhook/servers.ts";\n'),
    ["main/manager.ts imports ../webhook/servers.ts (main → webhook)"],
  );
  assert.deepEqual(violationsOf(MAP, file, 'import { TlsServer } from "../net/mod.ts";\n'), []);
});
