/**
 * The docs' links resolve: in README.md, docs/*.md and examples/**\/README.md, every relative link
 * points at an existing file or directory, and every `#anchor` (same page or another Markdown page)
 * matches a heading there (GitHub's slugs). External links are not fetched.
 */
import assert from "node:assert/strict";

const ROOT = new URL("../../", import.meta.url).pathname;

function markdownFiles(): string[] {
  const files = ["README.md"];
  for (const e of Deno.readDirSync(`${ROOT}docs`)) {
    if (e.name.endsWith(".md")) files.push(`docs/${e.name}`);
  }
  const walk = (dir: string) => {
    for (const e of Deno.readDirSync(`${ROOT}${dir}`)) {
      if (e.isDirectory) walk(`${dir}/${e.name}`);
      else if (e.name === "README.md") files.push(`${dir}/${e.name}`);
    }
  };
  walk("examples");
  return files.sort();
}

/** GitHub's heading anchor: lower case, punctuation dropped, spaces to `-`, duplicates `-N`. */
export function anchorsOf(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  let fence = false;
  for (const line of markdown.split("\n")) {
    if (/^\s*(```|~~~)/.test(line)) fence = !fence;
    if (fence) continue;
    const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = m[1].replace(/<[^>]+>/g, "").replace(/\[([^\]]*)\]\([^)]*\)/g, "$1").toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, "").replace(/ /g, "-");
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** `[text](target)` links outside code fences and inline code. */
function linksOf(markdown: string): string[] {
  const links: string[] = [];
  let fence = false;
  for (const line of markdown.split("\n")) {
    if (/^\s*(```|~~~)/.test(line)) fence = !fence;
    if (fence) continue;
    const text = line.replace(/`[^`]*`/g, "");
    for (const m of text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) links.push(m[1]);
  }
  return links;
}

function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}

Deno.test("docs: the anchor slugger follows GitHub", () => {
  const a = anchorsOf("# Title\n## ScalarToObject / ObjectToScalar\n### `when`\n## Title\n");
  assert.deepEqual([...a], ["title", "scalartoobject--objecttoscalar", "when", "title-1"]);
});

for (const file of markdownFiles()) {
  Deno.test(`docs: links in ${file} resolve`, () => {
    const text = Deno.readTextFileSync(`${ROOT}${file}`);
    const dir = file.includes("/") ? file.slice(0, file.lastIndexOf("/") + 1) : "";
    const broken: string[] = [];
    for (const link of linksOf(text)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(link)) continue; // https:, mailto:
      const [target, anchor] = link.split("#", 2);
      const path = target === ""
        ? `${ROOT}${file}`
        : new URL(target, `file://${ROOT}${dir}`).pathname;
      if (!exists(path)) {
        broken.push(`${link}: no such file`);
        continue;
      }
      if (anchor !== undefined && anchor !== "" && path.endsWith(".md")) {
        if (!anchorsOf(Deno.readTextFileSync(path)).has(decodeURIComponent(anchor))) {
          broken.push(`${link}: no heading with anchor #${anchor}`);
        }
      }
    }
    assert.deepEqual(broken, [], `broken links in ${file}`);
  });
}
