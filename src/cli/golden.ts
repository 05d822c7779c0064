/**
 * The golden corpus of `convctl test`: `--record DIR` writes every converted object to
 * `DIR/<sample>/<from>-to-<to>.yaml` (sorted keys, no timestamps: byte-stable) plus
 * `DIR/manifest.yaml`; `--golden DIR` replays and reports each difference as drift: `changed`
 * (with the fields), `missing` (an output with no golden file) or `orphaned` (a golden file no
 * output matches). A manifest that names another plan or schema is a warning, not drift.
 */
import type { ConversionConfigSpec, JsonValue, SchemaSource } from "../engine/mod.ts";
import { isJsonObject } from "../lib/json.ts";
import { bytesToHex, sha256 } from "../lib/sha256.ts";
import { CliError } from "./args.ts";
import { parseYamlDocuments } from "./load.ts";
import { sortKeysDeep, toYaml } from "./output.ts";
import { leafDiff } from "./test_report.ts";
import type { ConvertedOutput } from "./test_run.ts";
import { stringifyJson } from "../lib/json_exact.ts";

export const MANIFEST_FILE = "manifest.yaml";

export interface GoldenManifest {
  planHash: string;
  schemaHash: string;
  convctlVersion: string;
}

export type DriftKind = "changed" | "missing" | "orphaned";

export interface GoldenDrift {
  /** The golden file, relative to the corpus directory. */
  file: string;
  kind: DriftKind;
  /** For `changed`: the differing field paths, sorted. */
  fields?: string[];
}

export interface GoldenResult {
  dir: string;
  compared: number;
  drift: GoldenDrift[];
  /** Set when the corpus was recorded from another plan or schema. */
  manifestWarning?: string;
}

/** Where one path's output lives inside the corpus. */
export function goldenFile(sample: string, from: string, to: string): string {
  return `${sample}/${from}-to-${to}.yaml`;
}

async function hashOf(v: JsonValue): Promise<string> {
  return "sha256:" + bytesToHex(await sha256(stringifyJson(sortKeysDeep(v))));
}

/** The plan hash (the config spec) and schema hash (every version schema) of a run. */
export async function goldenManifest(
  spec: ConversionConfigSpec,
  source: SchemaSource,
  convctlVersion: string,
): Promise<GoldenManifest> {
  return {
    planHash: await hashOf(spec as unknown as JsonValue),
    schemaHash: await hashOf(source.versions as unknown as JsonValue),
    convctlVersion,
  };
}

async function writeFile(path: string, text: string): Promise<void> {
  try {
    await Deno.mkdir(path.slice(0, path.lastIndexOf("/")), { recursive: true });
    await Deno.writeTextFile(path, text);
  } catch (e) {
    throw new CliError(`cannot write ${path}: ${(e as Error).message}`);
  }
}

/** A sample's outputs, keyed by golden file. */
export interface RecordedOutputs {
  sample: string;
  outputs: readonly ConvertedOutput[];
}

function filesOf(all: readonly RecordedOutputs[]): Map<string, JsonValue> {
  const out = new Map<string, JsonValue>();
  for (const { sample, outputs } of all) {
    for (const o of outputs) out.set(goldenFile(sample, o.from, o.to), o.object);
  }
  return out;
}

/** Writes the corpus (existing files are overwritten; nothing else is removed). */
export async function recordGolden(
  dir: string,
  all: readonly RecordedOutputs[],
  manifest: GoldenManifest,
): Promise<number> {
  const root = dir.replace(/\/+$/, "");
  const files = filesOf(all);
  for (const [file, object] of files) await writeFile(`${root}/${file}`, toYaml(object));
  await writeFile(`${root}/${MANIFEST_FILE}`, toYaml(manifest as unknown as JsonValue));
  return files.size;
}

async function listYaml(dir: string, rel: string, out: string[]): Promise<void> {
  const entries: Deno.DirEntry[] = [];
  for await (const e of Deno.readDir(rel === "" ? dir : `${dir}/${rel}`)) entries.push(e);
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const e of entries) {
    const path = rel === "" ? e.name : `${rel}/${e.name}`;
    if (e.isDirectory) await listYaml(dir, path, out);
    else if (/\.ya?ml$/i.test(e.name) && path !== MANIFEST_FILE) out.push(path);
  }
}

async function readIfPresent(path: string): Promise<string | undefined> {
  try {
    return await Deno.readTextFile(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return undefined;
    throw new CliError(`cannot read ${path}: ${(e as Error).message}`);
  }
}

/** Compares the outputs with the corpus under `dir`. */
export async function compareGolden(
  dir: string,
  all: readonly RecordedOutputs[],
  manifest: GoldenManifest,
): Promise<GoldenResult> {
  const root = dir.replace(/\/+$/, "");
  const st = await Deno.stat(root).catch(() => undefined);
  if (st === undefined || !st.isDirectory) {
    throw new CliError(`golden corpus ${dir} is not a directory (record one with --record)`);
  }
  const files = filesOf(all);
  const drift: GoldenDrift[] = [];
  for (const [file, object] of files) {
    const text = await readIfPresent(`${root}/${file}`);
    if (text === undefined) {
      drift.push({ file, kind: "missing" });
      continue;
    }
    if (text === toYaml(object)) continue;
    const docs = parseYamlDocuments(text, `${root}/${file}`, true);
    const fields = leafDiff(docs[0] ?? null, object);
    drift.push({ file, kind: "changed", fields: fields.length > 0 ? fields : ["(formatting)"] });
  }
  const present: string[] = [];
  await listYaml(root, "", present);
  for (const file of present) if (!files.has(file)) drift.push({ file, kind: "orphaned" });
  drift.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));

  const result: GoldenResult = { dir, compared: files.size, drift };
  const manifestText = await readIfPresent(`${root}/${MANIFEST_FILE}`);
  const recorded = manifestText === undefined
    ? undefined
    : parseYamlDocuments(manifestText, `${root}/${MANIFEST_FILE}`)[0];
  if (!isJsonObject(recorded)) {
    result.manifestWarning = `${MANIFEST_FILE} is missing from the corpus`;
  } else {
    const changed = (["planHash", "schemaHash"] as const).filter((k) =>
      recorded[k] !== manifest[k]
    );
    if (changed.length > 0) {
      result.manifestWarning = `the corpus was recorded with another ${
        changed.map((k) => (k === "planHash" ? "config" : "schema")).join(" and ")
      } (${changed.map((k) => `${k} ${String(recorded[k])}`).join(", ")})`;
    }
  }
  return result;
}

/** One line per drift, as the table and the findings print it. */
export function driftLine(d: GoldenDrift): string {
  switch (d.kind) {
    case "changed":
      return `changed: ${d.file}: ${d.fields!.join(", ")}`;
    case "missing":
      return `missing: ${d.file}: an output with no golden file`;
    case "orphaned":
      return `orphaned: ${d.file}: no output produces this golden file`;
  }
}
