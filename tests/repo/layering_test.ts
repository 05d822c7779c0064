/**
 * Enforces the import direction of docs/architecture.md:
 * main → {manager, webhook, cli} → {kube, assign, api, obs} → engine, and the engine imports only
 * its own files and its libraries (no runtime APIs, no other layer).
 */
import assert from "node:assert/strict";

const SRC = new URL("../../src/", import.meta.url);

/** Which top-level folders each folder may import from (besides itself, `lib` and npm libraries). */
const ALLOWED: Record<string, readonly string[]> = {
  lib: [],
  engine: [],
  api: ["engine"],
  assign: ["engine"],
  obs: [],
  net: ["obs"],
  kube: ["obs"],
  cli: ["engine", "api", "obs", "kube"],
  manager: ["engine", "api", "assign", "kube", "obs", "net"],
  webhook: ["engine", "api", "assign", "kube", "obs", "net"],
  main: ["engine", "api", "assign", "kube", "obs", "net", "cli", "manager", "webhook"],
};

/** npm libraries the pure engine may use (CEL, RE2, JSON Patch come with later strategies). */
const ENGINE_LIBRARIES: readonly string[] = ["@bufbuild/cel", "fast-json-patch", "re2js"];

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

Deno.test("imports follow the layering of docs/architecture.md", async () => {
  const violations: string[] = [];
  for await (const file of tsFiles(SRC)) {
    const layer = layerOf(file);
    const allowed = ALLOWED[layer];
    assert.ok(allowed !== undefined, `src/${layer} is not a known layer; add it to ALLOWED`);
    const text = await Deno.readTextFile(file);
    const where = file.pathname.slice(SRC.pathname.length);
    for (const m of text.matchAll(IMPORT)) {
      const spec = m[1] ?? m[2];
      if (spec.startsWith(".")) {
        const target = layerOf(new URL(spec, file));
        if (target !== layer && target !== "lib" && !allowed.includes(target)) {
          violations.push(`${where} imports ${spec} (${layer} → ${target})`);
        }
      } else if (layer === "engine" && !ENGINE_LIBRARIES.includes(spec)) {
        violations.push(`${where} imports ${spec}: the engine may use only ${ENGINE_LIBRARIES}`);
      }
    }
    const isBench = file.pathname.endsWith("_bench.ts"); // benchmarks run under `deno bench`
    if (
      layer === "engine" && !isBench &&
      /\bDeno\./.test(text.replace(/\/\/.*|\/\*[\s\S]*?\*\//g, ""))
    ) {
      violations.push(`${where} uses the Deno runtime API; the engine must stay pure`);
    }
  }
  assert.deepEqual(violations, []);
});
