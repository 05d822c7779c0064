/**
 * File loading for convctl: YAML with YAML 1.1 scalar rules and positions (`file:line:col` in
 * every decode error), `-` for standard input, strict config decoding with kind dispatch, CRD/XRD
 * schema files checked against the config's target, sample directories and `convert`'s input
 * (objects of the target, Lists of them, multi-document streams), and sample validation.
 */
import {
  type Document,
  isMap,
  isScalar,
  isSeq,
  LineCounter,
  parseAllDocuments,
  type Tags,
} from "yaml";
import {
  CONFIG_KINDS,
  type ConfigKind,
  type ConversionConfig,
  CRD_CONFIG_KIND,
  isJsonValue,
  parseConfig,
  targetNameOf,
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
import { type PathSegment, validateAgainstSchema } from "../engine/schema_validate.ts";
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

/** One non-empty document of a YAML (or JSON) stream, with where its values sit in the text. */
export interface YamlDocument {
  value: JsonValue;
  /**
   * `file:line:col` of the value at `at` (of its key when `key` is set), or of the nearest
   * enclosing value that exists: an absent required field points at its parent.
   */
  locate(at: readonly PathSegment[], key?: boolean): string;
}

function nodeStart(node: unknown): number | undefined {
  const range = (node as { range?: [number, number, number] } | null)?.range;
  return range?.[0];
}

/** The offset of the value (or key) at `at` in a parsed document, or of its deepest ancestor. */
function offsetOf(doc: Document, at: readonly PathSegment[], key: boolean): number {
  let node: unknown = doc.contents;
  let offset = nodeStart(node) ?? 0;
  for (let i = 0; i < at.length; i++) {
    const segment = at[i];
    if (isMap(node)) {
      const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === segment);
      if (pair === undefined) break;
      if (key && i === at.length - 1) return nodeStart(pair.key) ?? offset;
      node = pair.value;
    } else if (isSeq(node) && typeof segment === "number") {
      node = node.items[segment];
    } else break;
    const start = nodeStart(node);
    if (start === undefined) break;
    offset = start;
  }
  return offset;
}

/**
 * Every non-empty document of a YAML (or JSON) stream, as JSON data with its positions.
 * Duplicate keys are errors, reported as `file:line:col: message`. With `exactIntegers`
 * (objects), an int64 beyond 2^53 keeps its digits, as the apiserver keeps them; without (configs
 * and schemas), every number is a double, as the cluster's roles read those from the apiserver.
 */
export function parseYamlSources(
  text: string,
  file: string,
  exactIntegers = false,
): YamlDocument[] {
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
  const where = (offset: number) => {
    const at = lines.linePos(offset);
    return `${file}:${at.line}:${at.col}`;
  };
  const out: YamlDocument[] = [];
  for (const doc of docs) {
    const problem = doc.errors[0];
    if (problem !== undefined) throw new CliError(`${where(problem.pos[0])}: ${problem.message}`);
    if (doc.contents === null) continue;
    let value: unknown = doc.toJS({ maxAliasCount: 1000 });
    if (exactIntegers) value = normalizeIntegers(value);
    if (value === null || value === undefined) continue;
    if (!isJsonValue(value)) {
      throw new CliError(
        `${where(nodeStart(doc.contents) ?? 0)}: a value JSON cannot represent ` +
          `(such as .inf or .nan)`,
      );
    }
    out.push({ value, locate: (at, key = false) => where(offsetOf(doc, at, key)) });
  }
  return out;
}

/** {@link parseYamlSources} without the positions. */
export function parseYamlDocuments(
  text: string,
  file: string,
  exactIntegers = false,
): JsonValue[] {
  return parseYamlSources(text, file, exactIntegers).map((d) => d.value);
}

/** The file name `-` means standard input. */
export const STDIN = "-";

/** How a file is named in messages: `<stdin>` for `-`. */
export function shownName(file: string): string {
  return file === STDIN ? "<stdin>" : file;
}

/** A file's text; `-` reads standard input to its end. */
export async function readTextFile(file: string, what: string): Promise<string> {
  try {
    if (file === STDIN) return await new Response(Deno.stdin.readable).text();
    return await Deno.readTextFile(file);
  } catch (e) {
    throw new CliError(`cannot read ${what} ${shownName(file)}: ${(e as Error).message}`);
  }
}

/** Exactly one document, which must be a map (`text`: the file's content, already read). */
async function readSingleSource(file: string, what: string, text?: string): Promise<YamlDocument> {
  const name = shownName(file);
  const docs = parseYamlSources(text ?? await readTextFile(file, what), name);
  if (docs.length !== 1) {
    throw new CliError(
      `${what} ${name} must contain exactly one YAML document (found ${docs.length})`,
    );
  }
  if (!isJsonObject(docs[0].value)) throw new CliError(`${what} ${name} is not a YAML map`);
  return docs[0];
}

/** {@link readSingleSource} without the positions. */
async function readSingleMap(file: string, what: string, text?: string): Promise<JsonObject> {
  return (await readSingleSource(file, what, text)).value as JsonObject;
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
  const source = await readSingleSource(file, "config", text);
  const doc = source.value as JsonObject;
  file = shownName(file);
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
    const lines = parsed.issues.map((i) => `${source.locate(i.at, i.key)}: ${i.text}`);
    throw new CliError(`invalid config ${file}:\n  ${lines.join("\n  ")}`);
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
  return schemaOfManifest(kind, raw, `${what} file ${shownName(file)}`, shownName(file));
}

/**
 * A CRD or XRD manifest already read (a file's, or the cluster's) as the schema of a `kind`
 * config; `described` names it in errors ("CRD file a.yaml", "CRD x of cluster c").
 */
export function schemaOfManifest(
  kind: ConfigKind,
  raw: JsonObject,
  described: string,
  file: string,
): LoadedSchema {
  const expectedKind = kind === XRD_CONFIG_KIND
    ? "CompositeResourceDefinition"
    : "CustomResourceDefinition";
  if (raw.kind !== undefined && raw.kind !== expectedKind) {
    throw new CliError(
      `${described} has kind ${JSON.stringify(raw.kind)}, expected ${expectedKind}`,
    );
  }
  const spec = raw.spec;
  if (!isJsonObject(spec) || !Array.isArray(spec.versions)) {
    throw new CliError(`${described} has no spec.versions list`);
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
  const loaded = await loadSchema(config.kind, schemaFile);
  requireSameTarget(config, loaded);
  return { config, schema: loaded };
}

/**
 * A config names its target (`spec.targetCRD.name` / `spec.targetXRD.name`); checking it against
 * a schema file of another resource would report on the wrong one. An unnamed schema file is
 * taken as the target.
 */
export function requireSameTarget(config: LoadedConfig, schema: LoadedSchema): void {
  const wanted = targetNameOf(config.config);
  const given = schema.source.name;
  if (given === "" || given === wanted) return;
  const field = config.kind === XRD_CONFIG_KIND ? "spec.targetXRD.name" : "spec.targetCRD.name";
  const { shown, what } = SCHEMA_FLAG[config.kind];
  throw new CliError(
    `config ${config.file} targets ${JSON.stringify(wanted)} (${field}), but the ${what} file ` +
      `${schema.file} (${shown}) is ${JSON.stringify(given)}`,
  );
}

// ---------------------------------------------------------------------------------------------
// Samples

export interface Sample {
  /** Path relative to the samples directory (with `#<n>` for the n-th object of a multi-object file). */
  name: string;
  object: JsonObject;
  version: string;
  /** `file:line:col` of a path inside the object (the object itself for `[]`). */
  locate?: (at: readonly PathSegment[]) => string;
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

/** `Widget.demo.example.com`, how the target's objects are named in messages. */
export function targetKindName(source: SchemaSource): string {
  return `${source.targetKind}.${source.group}`;
}

/**
 * The problems of a sample against the schema of its version (types, required fields, enums:
 * src/engine/schema_validate.ts), one line each: `file:line:col: [v1] spec.size: expected
 * integer, got string "x"`. A version the schema file does not have gives no line (the caller
 * reports unknown versions its own way).
 */
export function validateSample(sample: Sample, source: SchemaSource): string[] {
  const version = source.versions.find((v) => v.name === sample.version);
  if (version === undefined) return [];
  return validateAgainstSchema(version.schema, sample.object).map((v) =>
    `${sample.locate?.(v.at) ?? sample.name}: [${sample.version}] ${v.path}: ${v.message}`
  );
}

/** Every sample valid against its version's schema, else one error listing every problem. */
export function requireValidSamples(samples: readonly Sample[], source: SchemaSource): void {
  const lines = samples.flatMap((s) => validateSample(s, source));
  if (lines.length > 0) {
    throw new CliError(
      `input does not match the schema of its version (--no-validate-input skips this check):` +
        lines.map((l) => `\n  ${l}`).join(""),
    );
  }
}

export interface SampleOptions {
  /** Check every sample against its version's schema ({@link requireValidSamples}). */
  validate?: boolean;
}

/**
 * The samples of `convctl test`: every YAML document under `dir` (recursive, lexical order) whose kind and group
 * match the target; other documents are ignored.
 */
export async function loadSamples(
  dir: string,
  source: SchemaSource,
  options: SampleOptions = {},
): Promise<Sample[]> {
  const st = await Deno.stat(dir).catch((e: Error) => {
    throw new CliError(`cannot read samples directory ${dir}: ${e.message}`);
  });
  if (!st.isDirectory) throw new CliError(`samples path ${dir} is not a directory`);
  const files: string[] = [];
  await walkYamlFiles(dir.replace(/\/+$/, "") || "/", "", files);
  const samples: Sample[] = [];
  for (const rel of files) {
    const path = `${dir.replace(/\/+$/, "")}/${rel}`;
    const docs = parseYamlSources(await readTextFile(path, "sample file"), path, true);
    const matching: YamlDocument[] = [];
    for (const doc of docs) {
      const v = doc.value;
      if (!isJsonObject(v) || v.kind !== source.targetKind) continue;
      const apiVersion = v.apiVersion;
      if (typeof apiVersion !== "string" || apiVersion === "") {
        throw new CliError(`sample ${path}: a ${source.targetKind} object has no apiVersion`);
      }
      if (groupOf(apiVersion) !== source.group) continue;
      matching.push(doc);
    }
    matching.forEach((doc, i) => {
      const object = doc.value as JsonObject;
      samples.push({
        name: matching.length === 1 ? rel : `${rel}#${i + 1}`,
        object,
        version: versionOf(object.apiVersion as string),
        locate: (at) => doc.locate(at),
      });
    });
  }
  if (samples.length === 0) {
    throw new CliError(`no ${targetKindName(source)} objects under ${dir}`);
  }
  if (options.validate === true) requireValidSamples(samples, source);
  return samples;
}

/** One document of `convert`'s input: an object of the target, or a List of them. */
export interface InputDocument {
  /** The document as read (for a List, its wrapper: `apiVersion`, `kind`, `metadata`). */
  value: JsonObject;
  /** Whether the document is a List whose `items` are the objects. */
  list: boolean;
  items: Sample[];
}

/**
 * `kind: List`, or any `<Kind>List` with an `items` list (what `kubectl get -o yaml` prints);
 * never the target's own kind, however it is spelled.
 */
function isListDocument(doc: JsonObject, targetKind: string): boolean {
  const kind = doc.kind;
  if (typeof kind !== "string" || kind === targetKind) return false;
  return kind === "List" || (kind.endsWith("List") && Array.isArray(doc.items));
}

function describeObject(v: JsonObject): string {
  const kind = typeof v.kind === "string" && v.kind !== "" ? v.kind : undefined;
  const apiVersion = typeof v.apiVersion === "string" && v.apiVersion !== ""
    ? v.apiVersion
    : undefined;
  if (kind === undefined) return "an object without kind";
  return apiVersion === undefined ? `a ${kind}` : `a ${kind} (apiVersion ${apiVersion})`;
}

/**
 * The input of `convert` (`--sample FILE`, `-` for stdin): every non-empty document of a YAML or
 * JSON stream, each an object of the target or a List of them. Anything else is refused with its
 * position: converting another kind would drop every field the target's schema does not know. An
 * object's version is `from` when given, else its apiVersion's.
 */
export async function loadConvertInput(
  file: string,
  source: SchemaSource,
  from: string | undefined,
): Promise<InputDocument[]> {
  const name = shownName(file);
  const docs = parseYamlSources(await readTextFile(file, "sample file"), name, true);
  if (docs.length === 0) throw new CliError(`sample ${name} holds no document`);
  const wanted = targetKindName(source);
  return docs.map((doc, d) => {
    const docName = docs.length === 1 ? name : `${name}#${d + 1}`;
    const value = doc.value;
    if (!isJsonObject(value)) {
      throw new CliError(`${doc.locate([])}: sample ${docName} is not a YAML map`);
    }
    const list = isListDocument(value, source.targetKind);
    if (list && !Array.isArray(value.items)) {
      throw new CliError(`${doc.locate([])}: ${describeObject(value)} has no items list`);
    }
    const entries = list ? value.items as JsonValue[] : [value];
    const items = entries.map((item, i): Sample => {
      const prefix: PathSegment[] = list ? ["items", i] : [];
      const locate = (at: readonly PathSegment[]) => doc.locate([...prefix, ...at]);
      const itemName = list ? `${docName} items[${i}]` : docName;
      if (!isJsonObject(item)) throw new CliError(`${locate([])}: ${itemName} is not a map`);
      const apiVersion = typeof item.apiVersion === "string" ? item.apiVersion : "";
      if (
        item.kind !== source.targetKind ||
        (apiVersion !== "" && groupOf(apiVersion) !== source.group)
      ) {
        throw new CliError(
          `${locate([])}: ${describeObject(item)} is not a ${wanted} object; convert converts ` +
            `only objects of the config's target`,
        );
      }
      let version = from;
      if (version === undefined) {
        if (apiVersion === "") {
          throw new CliError(`sample ${itemName} has no apiVersion; pass --from`);
        }
        version = versionOf(apiVersion);
      }
      return { name: itemName, object: item, version, locate };
    });
    return { value, list, items };
  });
}
