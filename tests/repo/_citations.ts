/**
 * The repository stands on its own: every reference a comment or a document makes must resolve
 * inside it. Checked here, over every text file below the given folders:
 * - a section sign (U+00A7) is a citation of a document we do not ship: write the fact into docs/
 *   and point at it by path and anchor instead;
 * - a phase tag (`P` and a number in brackets) means nothing to a reader: say it in words ("XRD only", "since 0.2");
 * - a repository path (`docs/design/<file>.md#<anchor>`, `src/<folder>/<file>.ts`) must name a
 *   file that exists, and its `#anchor` a heading of that Markdown file (GitHub's slugs).
 * In TypeScript only comments are read (string literals may name paths a test creates); in
 * Markdown and YAML everything outside code fences is read, and inside fences only paths.
 *
 * Run it on part of the tree: `deno run --allow-read tests/repo/_citations.ts src/engine docs`.
 */

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

/** One problem: where it is and what is wrong. */
export interface CitationProblem {
  file: string;
  line: number;
  problem: string;
}

/** The folders at the top of the repository a path citation may start with. */
const ROOTS = ["docs", "src", "tests", "hack", "charts", "examples", ".github", ".ci", "tools"];
const PATH_CITATION = new RegExp(
  `(?<![\\w./-])((?:${ROOTS.map((r) => r.replace(".", "\\.")).join("|")})/[\\w./-]*[\\w-])` +
    `(#[\\w-]+)?`,
  "g",
);
const SECTION_SIGN = /§/;
const PHASE_TAG = /\[P\d{1,2}\]/;
const TEXT_ENDINGS = [".ts", ".md", ".yaml", ".yml", ".tpl", ".sh", ".json", ".txt"];

/** The lines of a file that carry prose: comments of code files, all lines of the rest. */
function proseLines(path: string, text: string): { line: number; text: string; code: boolean }[] {
  const lines = text.split("\n");
  const out: { line: number; text: string; code: boolean }[] = [];
  if (path.endsWith(".ts")) {
    let block = false;
    lines.forEach((l, i) => {
      const t = l.trim();
      if (block || t.startsWith("/*")) {
        out.push({ line: i + 1, text: l, code: false });
        block = !t.includes("*/") || (t.startsWith("/*") && t.endsWith("/*"));
        if (t.startsWith("/*") && t.includes("*/")) block = false;
        return;
      }
      const c = l.indexOf("//");
      // A `//` inside a string or URL is not a comment; "// " after code or at the start is.
      if (c >= 0 && (t.startsWith("//") || / \/\/ /.test(l))) {
        const at = t.startsWith("//") ? c : l.indexOf(" // ") + 1;
        out.push({ line: i + 1, text: l.slice(at), code: false });
      }
    });
    return out;
  }
  let fence = false;
  lines.forEach((l, i) => {
    if (path.endsWith(".md") && /^\s*(```|~~~)/.test(l)) fence = !fence;
    out.push({ line: i + 1, text: l, code: fence });
  });
  return out;
}

function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}

/** The problems of one file's text; `root` is the repository's absolute path with a slash. */
export function problemsOf(root: string, file: string, text: string): CitationProblem[] {
  const problems: CitationProblem[] = [];
  const anchorCache = new Map<string, Set<string>>();
  for (const { line, text: l, code } of proseLines(file, text)) {
    if (!code && SECTION_SIGN.test(l)) {
      problems.push({ file, line, problem: `cites a section (§) of a document the repo lacks` });
    }
    if (!code && PHASE_TAG.test(l)) {
      problems.push({ file, line, problem: `phase tag ${PHASE_TAG.exec(l)![0]}: say it in words` });
    }
    for (const m of l.matchAll(PATH_CITATION)) {
      const [, path, anchor] = m;
      if (/[*<>{}$]/.test(l.slice(m.index, m.index + m[0].length + 1))) continue; // a pattern
      const clean = path.replace(/[.]+$/, "");
      if (!exists(root + clean)) {
        problems.push({ file, line, problem: `${clean}: no such file or folder` });
        continue;
      }
      if (anchor && clean.endsWith(".md")) {
        let anchors = anchorCache.get(clean);
        if (!anchors) {
          anchors = anchorsOf(Deno.readTextFileSync(root + clean));
          anchorCache.set(clean, anchors);
        }
        if (!anchors.has(anchor.slice(1))) {
          problems.push({ file, line, problem: `${clean}${anchor}: no heading with that anchor` });
        }
      }
    }
  }
  return problems;
}

/** Every text file below `paths` (relative to `root`), skipping dependencies and build output. */
export function textFilesBelow(root: string, paths: readonly string[]): string[] {
  const out: string[] = [];
  const skip = new Set(["node_modules", "dist", "cov", ".git", "testdata", "fixtures"]);
  const walk = (rel: string) => {
    const info = Deno.statSync(root + rel);
    if (info.isFile) {
      if (TEXT_ENDINGS.some((e) => rel.endsWith(e))) out.push(rel);
      return;
    }
    for (const e of Deno.readDirSync(root + rel)) {
      if (skip.has(e.name)) continue;
      walk(`${rel}/${e.name}`);
    }
  };
  for (const p of paths) walk(p.replace(/\/+$/, ""));
  return out.sort();
}

/** All problems below `paths`. */
export function citationProblems(root: string, paths: readonly string[]): CitationProblem[] {
  return textFilesBelow(root, paths).flatMap((f) =>
    problemsOf(root, f, Deno.readTextFileSync(root + f))
  );
}

/** What the repository's own check covers. */
export const CHECKED_PATHS = [
  "README.md",
  "src",
  "docs",
  "tests",
  "hack",
  "charts",
  "examples",
  ".github",
];

if (import.meta.main) {
  const root = new URL("../../", import.meta.url).pathname;
  const paths = Deno.args.length ? Deno.args : CHECKED_PATHS;
  const problems = citationProblems(root, paths);
  for (const p of problems) console.log(`${p.file}:${p.line}: ${p.problem}`);
  console.log(`${problems.length} problem(s)`);
  Deno.exit(problems.length ? 1 : 0);
}
