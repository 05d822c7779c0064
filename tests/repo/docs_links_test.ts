/**
 * The docs' links resolve: in README.md, every Markdown file below docs/ and in every
 * examples/**\/README.md, every relative link points at an existing file or directory, and every `#anchor` (same page or another Markdown page)
 * matches a heading there (GitHub's slugs). External links are not fetched.
 */
import assert from "node:assert/strict";
import { existsSync as exists } from "node:fs";
import { anchorsOf } from "./_citations.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

function markdownFiles(): string[] {
  const files = ["README.md"];
  const walk = (dir: string, keep: (name: string) => boolean) => {
    for (const e of Deno.readDirSync(`${ROOT}${dir}`)) {
      if (e.isDirectory) walk(`${dir}/${e.name}`, keep);
      else if (keep(e.name)) files.push(`${dir}/${e.name}`);
    }
  };
  walk("docs", (name) => name.endsWith(".md"));
  walk("examples", (name) => name === "README.md");
  return files.sort();
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
