/**
 * The values table of the chart README (charts/declarative-conversion-operator/README.md),
 * generated from values.yaml and values.schema.json:
 *
 *   bash hack/deno.sh run -A hack/chart_readme.ts           rewrite the table
 *   bash hack/deno.sh run -A hack/chart_readme.ts --check   exit 1 when it is stale
 *
 * A row per key: documented keys (a `# -- ` comment block right above them, helm-docs style;
 * following `# ` lines continue it) and undocumented leaves. Below a documented key whose value
 * is a map there are no more rows (its description covers the map). Type from the schema (its
 * `type`, `enum`, `anyOf`, `$ref`s followed), else from the value; default is the value as JSON.
 * The README comes out as `deno fmt` writes Markdown (the repository's formatter would otherwise
 * re-align the table). tests/chart/readme_test.ts keeps the committed table current.
 */
import { parse } from "yaml";

export const CHART_DIR = new URL("../charts/declarative-conversion-operator/", import.meta.url);
export const BEGIN = "<!-- values-table:begin (hack/chart_readme.ts) -->";
export const END = "<!-- values-table:end -->";

export interface ValueRow {
  key: string;
  type: string;
  default: string;
  description: string;
}

type Schema = Record<string, unknown>;

const KEY_LINE = /^(\s*)([A-Za-z0-9_.\-/]+|"[^"]+"):(?:\s+(.*))?$/;
const DOC_START = /^\s*# -- ?(.*)$/;
const DOC_MORE = /^\s*#(?: (.*))?$/;

function valueAt(values: unknown, path: readonly string[]): unknown {
  let v = values;
  for (const k of path) v = (v as Record<string, unknown> | null)?.[k];
  return v;
}

function isMap(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** The schema node of `path`, following `properties` and local `$ref`s. */
function schemaAt(root: Schema, path: readonly string[]): Schema | undefined {
  const deref = (s: Schema | undefined): Schema | undefined => {
    const ref = s?.$ref;
    if (typeof ref !== "string") return s;
    const parts = ref.replace(/^#\//, "").split("/");
    return deref(valueAt(root, parts) as Schema | undefined);
  };
  let s: Schema | undefined = deref(root);
  for (const k of path) {
    s = deref((s?.properties as Record<string, Schema> | undefined)?.[k]);
    if (s === undefined) return undefined;
  }
  return s;
}

function schemaType(root: Schema, s: Schema): string | undefined {
  const deref = (x: Schema): Schema =>
    typeof x.$ref === "string"
      ? deref(valueAt(root, x.$ref.replace(/^#\//, "").split("/")) as Schema)
      : x;
  s = deref(s);
  if (Array.isArray(s.enum)) {
    return s.enum.filter((e) => e !== "").map((e) => JSON.stringify(e)).join(" \\| ");
  }
  if (Array.isArray(s.anyOf)) {
    const parts = s.anyOf.map((x) => schemaType(root, x as Schema)).filter((x) => x);
    return [...new Set(parts)].join(" \\| ") || undefined;
  }
  if (typeof s.type === "string") return s.type;
  if (Array.isArray(s.type)) return s.type.join(" \\| ");
  return undefined;
}

function valueType(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  if (typeof v === "number") return Number.isInteger(v) ? "integer" : "number";
  return typeof v === "object" ? "object" : typeof v;
}

/** The rows of `valuesText` (values.yaml), typed by `schema` (values.schema.json). */
export function valueRows(valuesText: string, schema: Schema): ValueRow[] {
  const values = parse(valuesText);
  const rows: ValueRow[] = [];
  const stack: Array<{ indent: number; key: string; documented: boolean }> = [];
  let doc: string[] | undefined;
  for (const line of valuesText.split("\n")) {
    const start = DOC_START.exec(line);
    if (start) {
      doc = [start[1]];
      continue;
    }
    const more = doc && DOC_MORE.exec(line);
    if (more) {
      doc!.push(more[1] ?? "");
      continue;
    }
    const m = KEY_LINE.exec(line);
    if (!m) {
      if (!/^\s*-/.test(line)) doc = undefined;
      continue;
    }
    const indent = m[1].length;
    const key = m[2].replace(/^"|"$/g, "");
    while (stack.length > 0 && stack.at(-1)!.indent >= indent) stack.pop();
    const path = [...stack.map((s) => s.key), key];
    const underDocumented = stack.some((s) => s.documented);
    const value = valueAt(values, path);
    const documented = doc !== undefined;
    if (!underDocumented && (documented || !isMap(value) || Object.keys(value).length === 0)) {
      const s = schemaAt(schema, path);
      rows.push({
        key: path.join("."),
        type: (s && schemaType(schema, s)) ?? valueType(value),
        default: JSON.stringify(value) ?? "",
        description: (doc ?? []).join(" ").replace(/\s+/g, " ").trim(),
      });
    }
    doc = undefined;
    stack.push({ indent, key, documented });
  }
  return rows;
}

const cell = (s: string) => s.replaceAll("|", "\\|").replaceAll("\n", " ");

/** The Markdown table of `rows`. */
export function valuesTable(rows: readonly ValueRow[]): string {
  const lines = [
    "| Key | Type | Default | Description |",
    "| --- | --- | --- | --- |",
    ...rows.map((r) =>
      `| \`${r.key}\` | ${r.type} | ${r.default === "" ? "" : `\`${cell(r.default)}\``} | ${
        cell(r.description)
      } |`
    ),
  ];
  return lines.join("\n");
}

/** `readme` with the text between the markers replaced by the table of the chart's values. */
export async function renderReadme(readme: string): Promise<string> {
  const valuesText = await Deno.readTextFile(new URL("values.yaml", CHART_DIR));
  const schema = JSON.parse(await Deno.readTextFile(new URL("values.schema.json", CHART_DIR)));
  const b = readme.indexOf(BEGIN);
  const e = readme.indexOf(END);
  if (b < 0 || e < b) throw new Error(`README.md lacks the markers ${BEGIN} … ${END}`);
  const table = valuesTable(valueRows(valuesText, schema));
  return await formatMarkdown(
    `${readme.slice(0, b + BEGIN.length)}\n\n${table}\n\n${readme.slice(e)}`,
  );
}

/** `text` as `deno fmt` (this repository's settings) formats Markdown. */
async function formatMarkdown(text: string): Promise<string> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["fmt", "--ext=md", "-"],
    cwd: new URL("..", import.meta.url).pathname,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(text));
  await writer.close();
  const out = await child.output();
  if (!out.success) throw new Error(`deno fmt: ${new TextDecoder().decode(out.stderr)}`);
  return new TextDecoder().decode(out.stdout);
}

if (import.meta.main) {
  const file = new URL("README.md", CHART_DIR);
  const current = await Deno.readTextFile(file);
  const next = await renderReadme(current);
  if (Deno.args.includes("--check")) {
    if (next !== current) {
      console.error("charts/declarative-conversion-operator/README.md: the values table is stale;");
      console.error("run: bash hack/deno.sh run -A hack/chart_readme.ts");
      Deno.exit(1);
    }
  } else if (next !== current) {
    await Deno.writeTextFile(file, next);
    console.log("wrote charts/declarative-conversion-operator/README.md");
  }
}
