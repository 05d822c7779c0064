/**
 * File loading for convctl: YAML with YAML 1.1 scalar rules, strict config
 * decoding with kind dispatch, CRD/XRD schema files, and sample directories.
 */
import { LineCounter, parseAllDocuments, type Tags } from "yaml";
import {
  CONFIG_KINDS,
  type ConfigKind,
  type ConversionConfig,
  CRD_CONFIG_KIND,
  isJsonValue,
  parseConfig,
  XRD_CONFIG_KIND,
} from "../api/mod.ts";
import {
  type JsonObject,
  type JsonValue,
  type SchemaSource,
  schemaSourceFromCRD,
  schemaSourceFromXRD,
  versionOf,
} from "../engine/mod.ts";
import { CliError, type ParsedFlags } from "./args.ts";
import { loadPackageSchema } from "./package_source.ts";
import { isJsonObject } from "../lib/json.ts";
import { normalizeInteger } from "../lib/json_exact.ts";

// ---------------------------------------------------------------------------------------------
// YAML

/**
 * The reference converts YAML to JSON with a go-yaml v2 resolver: YAML 1.1 booleans
 * (`yes/no/on/off/y/n` in their listed case variants), 1.1 octal/binary/hex integers and merge
 * keys, but timestamps stay strings and there are no sexagesimal numbers. So: the `yaml` package's
 * 1.1 schema minus the tags that would produce non-JSON values or that go-yaml v2 does not apply
 * when decoding into generic JSON.
 */
const GO_YAML_V2_UNSUPPORTED = new Set([
  "tag:yaml.org,2002:timestamp",
  "tag:yaml.org,2002:binary",
  "tag:yaml.org,2002:omap",
  "tag:yaml.org,2002:pairs",
  "tag:yaml.org,2002:set",
]);

function goYamlTags(tags: Tags): Tags {
  return tags.filter((t) => {
    if (typeof t !== "object" || t === null) return true;
    const tag = t as { tag?: string; format?: string };
    return !GO_YAML_V2_UNSUPPORTED.has(tag.tag ?? "") && tag.format !== "TIME";
  });
}

/**
 * Integers as the JSON value model holds them (lib/json_exact.ts): safe ones as numbers, int64s
 * beyond 2^53 as bigints, larger ones as doubles. In place; `v` is fresh parser output.
 */
function normalizeIntegers(v: unknown): unknown {
  if (typeof v === "bigint") return normalizeInteger(v);
  if (typeof v !== "object" || v === null) return v;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) v[i] = normalizeIntegers(v[i]);
  } else {
    const o = v as Record<string, unknown>;
    for (const k of Object.keys(o)) o[k] = normalizeIntegers(o[k]);
  }
  return v;
}

/**
 * Every non-empty document of a YAML (or JSON) stream, as JSON data. Duplicate keys are errors.
 * With `exactIntegers` (objects), an int64 beyond 2^53 keeps its digits, as the apiserver keeps
 * them; without (configs and schemas), every number is a double, as the cluster's roles read
 * those from the apiserver.
 */
export function parseYamlDocuments(
  text: string,
  file: string,
  exactIntegers = false,
): JsonValue[] {
  const lines = new LineCounter();
  const docs = parseAllDocuments(text, {
    version: "1.1",
    customTags: goYamlTags,
    uniqueKeys: true,
    prettyErrors: false,
    lineCounter: lines,
    intAsBigInt: exactIntegers,
  });
  if (!Array.isArray(docs)) return []; // an empty stream
  const out: JsonValue[] = [];
  for (const doc of docs) {
    const problem = doc.errors[0];
    if (problem !== undefined) {
      const at = lines.linePos(problem.pos[0]);
      const where = `${file}:${at.line}:${at.col}`;
      throw new CliError(`cannot parse ${where}: ${problem.message}`);
    }
    if (doc.contents === null) continue;
    let value: unknown = doc.toJS({ maxAliasCount: 1000 });
    if (exactIntegers) value = normalizeIntegers(value);
    if (value === null || value === undefined) continue;
    if (!isJsonValue(value)) {
      throw new CliError(
        `cannot parse ${file}: document ${out.length + 1} holds a value JSON cannot represent ` +
          `(such as .inf or .nan)`,
      );
    }
    out.push(value);
  }
  return out;
}

export async function readTextFile(file: string, what: string): Promise<string> {
  try {
    return await Deno.readTextFile(file);
  } catch (e) {
    throw new CliError(`cannot read ${what} ${file}: ${(e as Error).message}`);
  }
}

/** Exactly one document, which must be a map (`text`: the file's content, already read). */
async function readSingleMap(file: string, what: string, text?: string): Promise<JsonObject> {
  const docs = parseYamlDocuments(text ?? await readTextFile(file, what), file);
  if (docs.length !== 1) {
    throw new CliError(
      `${what} ${file} must contain exactly one YAML document (found ${docs.length})`,
    );
  }
  const doc = docs[0];
  if (!isJsonObject(doc)) throw new CliError(`${what} ${file} is not a YAML map`);
  return doc;
}

// ---------------------------------------------------------------------------------------------
// Config + schema

export interface LoadedConfig {
  file: string;
  kind: ConfigKind;
  config: ConversionConfig;
  /** metadata.name, or "" when the config has none. */
  name: string;
}

/** What each config kind takes its schema from. */
const SCHEMA_FLAG: Record<
  ConfigKind,
  { flag: "xrd" | "crd"; shown: string; what: string; article: string }
> = {
  [XRD_CONFIG_KIND]: { flag: "xrd", shown: "-x/--xrd", what: "XRD", article: "an" },
  [CRD_CONFIG_KIND]: { flag: "crd", shown: "--crd", what: "CRD", article: "a" },
};

export function schemaFlagOf(kind: ConfigKind): { flag: "xrd" | "crd"; shown: string } {
  return SCHEMA_FLAG[kind];
}

/** The config kind, read from the top-level `kind` alone (before the strict decode). */
function configKind(doc: JsonObject, file: string): ConfigKind {
  const kind = doc.kind;
  if (kind === undefined || kind === null || kind === "") {
    throw new CliError(`config ${file}: missing kind`);
  }
  if (!(CONFIG_KINDS as readonly JsonValue[]).includes(kind)) {
    throw new CliError(
      `config ${file}: unrecognized kind ${JSON.stringify(kind)} (expected ${
        CONFIG_KINDS.join(" or ")
      })`,
    );
  }
  return kind as ConfigKind;
}

/**
 * Kind dispatch, then the strict decode (an unknown field anywhere is an error). When command-line `flags` are given, the schema
 * flag of the other kind is an error naming the right flag.
 */
export async function loadConfig(
  file: string,
  flags?: ParsedFlags,
  text?: string,
): Promise<LoadedConfig> {
  const doc = await readSingleMap(file, "config", text);
  const kind = configKind(doc, file);
  const right = SCHEMA_FLAG[kind];
  const wrong = right.flag === "xrd" ? SCHEMA_FLAG[CRD_CONFIG_KIND] : SCHEMA_FLAG[XRD_CONFIG_KIND];
  if (flags?.has(wrong.flag)) {
    throw new CliError(
      `config ${file} is a ${kind}: its schema comes from ${right.shown} (${right.article} ${right.what} file), ` +
        `not ${wrong.shown}`,
    );
  }
  const parsed = parseConfig(doc);
  if (!parsed.ok) {
    throw new CliError(`invalid config ${file}:\n  ${parsed.errors.join("\n  ")}`);
  }
  return { file, kind, config: parsed.config, name: parsed.config.metadata?.name ?? "" };
}

export interface LoadedSchema {
  file: string;
  raw: JsonObject;
  source: SchemaSource;
}

/** An XRD (kept generic) or a CRD file, matching the config kind. */
export async function loadSchema(
  kind: ConfigKind,
  file: string,
  text?: string,
): Promise<LoadedSchema> {
  const what = SCHEMA_FLAG[kind].what;
  const raw = await readSingleMap(file, `${what} file`, text);
  const expectedKind = kind === XRD_CONFIG_KIND
    ? "CompositeResourceDefinition"
    : "CustomResourceDefinition";
  if (raw.kind !== undefined && raw.kind !== expectedKind) {
    throw new CliError(
      `${what} file ${file} has kind ${JSON.stringify(raw.kind)}, expected ${expectedKind}`,
    );
  }
  const spec = raw.spec;
  if (!isJsonObject(spec) || !Array.isArray(spec.versions)) {
    throw new CliError(`${what} file ${file} has no spec.versions list`);
  }
  const source = kind === XRD_CONFIG_KIND ? schemaSourceFromXRD(raw) : schemaSourceFromCRD(raw);
  return { file, raw, source };
}

export interface Target {
  config: LoadedConfig;
  schema?: LoadedSchema;
}

/**
 * The common start of every config-taking command: `-c` plus (optionally) the schema flag that
 * matches the config kind. Flag-level checks (required, exclusive) happen before any file is read.
 */
export async function loadTarget(
  flags: ParsedFlags,
  schema: "required" | "optional",
): Promise<Target> {
  const configFile = flags.string("config")!;
  if (flags.has("target") && !flags.has("package")) {
    throw new CliError("--target requires --package");
  }
  const config = await loadConfig(configFile, flags);
  const { flag, shown } = SCHEMA_FLAG[config.kind];
  const pkg = flags.string("package");
  if (pkg !== undefined) {
    if (config.kind !== XRD_CONFIG_KIND) {
      throw new CliError(
        `config ${configFile} is a ${config.kind}: its schema comes from ${shown}, not --package`,
      );
    }
    return { config, schema: await loadPackageSchema(pkg, flags.string("target")) };
  }
  const schemaFile = flags.string(flag);
  if (schemaFile === undefined) {
    if (schema === "required") {
      throw new CliError(
        `config ${configFile} is a ${config.kind}: ${shown} is required`,
      );
    }
    return { config };
  }
  return { config, schema: await loadSchema(config.kind, schemaFile) };
}

// ---------------------------------------------------------------------------------------------
// Samples

export interface Sample {
  /** Path relative to the samples directory (with `#<n>` for the n-th object of a multi-object file). */
  name: string;
  object: JsonObject;
  version: string;
}

export async function walkYamlFiles(dir: string, rel: string, out: string[]): Promise<void> {
  const entries: Deno.DirEntry[] = [];
  try {
    for await (const e of Deno.readDir(dir)) entries.push(e);
  } catch (e) {
    throw new CliError(`cannot read samples directory ${dir}: ${(e as Error).message}`);
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const e of entries) {
    const path = `${dir}/${e.name}`;
    const relPath = rel === "" ? e.name : `${rel}/${e.name}`;
    let isDir = e.isDirectory;
    let isFile = e.isFile;
    if (e.isSymlink) {
      const st = await Deno.stat(path).catch(() => undefined);
      isDir = st?.isDirectory ?? false;
      isFile = st?.isFile ?? false;
    }
    if (isDir) await walkYamlFiles(path, relPath, out);
    else if (isFile && /\.ya?ml$/i.test(e.name)) out.push(relPath);
  }
}

/** The part of an apiVersion before the last `/` ("" for core objects). */
export function groupOf(apiVersion: string): string {
  const i = apiVersion.lastIndexOf("/");
  return i < 0 ? "" : apiVersion.slice(0, i);
}

/**
 * The samples of `convctl test`: every YAML document under `dir` (recursive, lexical order) whose kind and group
 * match the target; other documents are ignored.
 */
export async function loadSamples(dir: string, source: SchemaSource): Promise<Sample[]> {
  const st = await Deno.stat(dir).catch((e: Error) => {
    throw new CliError(`cannot read samples directory ${dir}: ${e.message}`);
  });
  if (!st.isDirectory) throw new CliError(`samples path ${dir} is not a directory`);
  const files: string[] = [];
  await walkYamlFiles(dir.replace(/\/+$/, "") || "/", "", files);
  const samples: Sample[] = [];
  for (const rel of files) {
    const path = `${dir.replace(/\/+$/, "")}/${rel}`;
    const docs = parseYamlDocuments(await readTextFile(path, "sample file"), path, true);
    const matching: JsonObject[] = [];
    for (const doc of docs) {
      if (!isJsonObject(doc) || doc.kind !== source.targetKind) continue;
      const apiVersion = doc.apiVersion;
      if (typeof apiVersion !== "string" || apiVersion === "") {
        throw new CliError(`sample ${path}: a ${source.targetKind} object has no apiVersion`);
      }
      if (groupOf(apiVersion) !== source.group) continue;
      matching.push(doc);
    }
    matching.forEach((object, i) => {
      samples.push({
        name: matching.length === 1 ? rel : `${rel}#${i + 1}`,
        object,
        version: versionOf(object.apiVersion as string),
      });
    });
  }
  if (samples.length === 0) {
    throw new CliError(`no ${source.targetKind}.${source.group} objects under ${dir}`);
  }
  return samples;
}

/** `--sample FILE` of `convert`: exactly one document. */
export async function loadSingleObject(file: string): Promise<JsonObject> {
  const docs = parseYamlDocuments(await readTextFile(file, "sample file"), file, true);
  if (docs.length !== 1) {
    throw new CliError(`sample ${file} must contain exactly one document (found ${docs.length})`);
  }
  const doc = docs[0];
  if (!isJsonObject(doc)) throw new CliError(`sample ${file} is not a YAML map`);
  return doc;
}
