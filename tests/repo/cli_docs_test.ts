/**
 * The worked examples of docs/cli.md run as written. Every ```console block is one scenario: it
 * runs in a fresh copy of docs/examples/cli/ (so `cd docs/examples/cli` reproduces it by hand, and
 * a command that writes files cannot touch the repository), its `$ convctl …` lines in order.
 * The lines under a command are expected output: each must appear, in order, in what the command
 * printed (stdout then stderr); a `...` line stands for anything. A command expects exit 0 unless
 * it ends with `# exit N`. Arguments are split on spaces; single or double quotes group words;
 * `< FILE` feeds a file to stdin.
 */
import assert from "node:assert/strict";
import { ROOT } from "../cli/_convctl.ts";

const DOC = "docs/cli.md";
const EXAMPLES = `${ROOT}docs/examples/cli`;

export interface Step {
  line: number;
  args: string[];
  stdin?: string;
  exit: number;
  expected: string[];
}

/** Shell-like word splitting: whitespace separates, quotes group, no escapes or expansions. */
export function splitWords(text: string): string[] {
  const words: string[] = [];
  let word = "";
  let quote: string | undefined;
  let inWord = false;
  for (const ch of text) {
    if (quote !== undefined) {
      if (ch === quote) quote = undefined;
      else word += ch;
    } else if (ch === "'" || ch === '"') {
      quote = ch;
      inWord = true;
    } else if (/\s/.test(ch)) {
      if (inWord) words.push(word);
      word = "";
      inWord = false;
    } else {
      word += ch;
      inWord = true;
    }
  }
  if (quote !== undefined) throw new Error(`unterminated ${quote} in: ${text}`);
  if (inWord) words.push(word);
  return words;
}

/** The scenarios of a markdown text: one list of steps per ```console block. */
export function scenarios(markdown: string): { line: number; steps: Step[] }[] {
  const out: { line: number; steps: Step[] }[] = [];
  const lines = markdown.split("\n");
  for (let i = 0; i < lines.length; i++) {
    if (lines[i].trim() !== "```console") continue;
    const block = { line: i + 1, steps: [] as Step[] };
    for (i++; i < lines.length && lines[i].trim() !== "```"; i++) {
      const text = lines[i];
      if (text.startsWith("$ ")) {
        const exitMatch = /\s+#\s*exit\s+(\d+)\s*$/.exec(text);
        const command = exitMatch ? text.slice(2, exitMatch.index) : text.slice(2);
        const words = splitWords(command);
        let stdin: string | undefined;
        const lt = words.indexOf("<");
        if (lt >= 0) {
          stdin = words[lt + 1];
          words.splice(lt, 2);
        }
        if (words[0] !== "convctl") {
          throw new Error(`${DOC}:${i + 1}: a console example runs convctl, not ${words[0]}`);
        }
        block.steps.push({
          line: i + 1,
          args: words.slice(1),
          stdin,
          exit: exitMatch ? Number(exitMatch[1]) : 0,
          expected: [],
        });
      } else if (block.steps.length > 0 && text.trim() !== "") {
        block.steps[block.steps.length - 1].expected.push(text);
      }
    }
    out.push(block);
  }
  return out;
}

/** The expected lines, in order, each a whole line of the output (`...` skips any lines). */
export function missingLine(output: string, expected: readonly string[]): string | undefined {
  const got = output.split("\n").map((l) => l.trimEnd());
  let at = 0;
  for (const want of expected) {
    if (want.trim() === "...") continue;
    const found = got.indexOf(want.trimEnd(), at);
    if (found < 0) return want;
    at = found + 1;
  }
  return undefined;
}

async function copyDir(from: string, to: string): Promise<void> {
  await Deno.mkdir(to, { recursive: true });
  for await (const e of Deno.readDir(from)) {
    if (e.isDirectory) await copyDir(`${from}/${e.name}`, `${to}/${e.name}`);
    else await Deno.copyFile(`${from}/${e.name}`, `${to}/${e.name}`);
  }
}

async function run(step: Step, cwd: string): Promise<{ code: number; output: string }> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--quiet",
      "--allow-read",
      "--allow-env",
      "--allow-write",
      "--allow-net",
      "--allow-run=git",
      `${ROOT}src/main/convctl.ts`,
      ...step.args,
    ],
    cwd,
    env: { NO_COLOR: "1", RUST_BACKTRACE: "0" },
    stdin: step.stdin !== undefined ? "piped" : "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  if (step.stdin !== undefined) {
    const writer = child.stdin.getWriter();
    await writer.write(await Deno.readFile(`${cwd}/${step.stdin}`));
    await writer.close();
  }
  const { code, stdout, stderr } = await child.output();
  const d = new TextDecoder();
  return { code, output: d.decode(stdout) + d.decode(stderr) };
}

Deno.test("cli docs: the console-block parser reads commands, stdin, exit codes and output", () => {
  const [block] = scenarios(
    [
      "```console",
      "$ convctl validate -c 'a b.yaml' --crd c.yaml  # exit 1",
      "config: x",
      "...",
      "$ convctl convert --sample - < s.yaml",
      "```",
    ].join("\n"),
  );
  assert.deepEqual(block.steps.map((s) => [s.args, s.exit, s.stdin, s.expected]), [
    [["validate", "-c", "a b.yaml", "--crd", "c.yaml"], 1, undefined, ["config: x", "..."]],
    [["convert", "--sample", "-"], 0, "s.yaml", []],
  ]);
  assert.equal(missingLine("a\nb\nc\n", ["a", "...", "c"]), undefined);
  assert.equal(missingLine("a\nb\n", ["b", "a"]), "a");
});

const markdown = Deno.readTextFileSync(`${ROOT}${DOC}`);
const all = scenarios(markdown);

Deno.test("cli docs: docs/cli.md has worked examples", () => {
  assert.ok(all.length > 0, "no ```console block in docs/cli.md");
});

for (const scenario of all) {
  const first = scenario.steps[0];
  const name = first ? first.args.slice(0, 1).join(" ") : "(empty)";
  Deno.test(`cli docs: ${DOC}:${scenario.line} (convctl ${name})`, async () => {
    assert.ok(
      scenario.steps.length > 0,
      `${DOC}:${scenario.line}: a console block with no command`,
    );
    const dir = await Deno.makeTempDir({ prefix: "dco-cli-docs-" });
    try {
      await copyDir(EXAMPLES, dir);
      for (const step of scenario.steps) {
        const { code, output } = await run(step, dir);
        const where = `${DOC}:${step.line}: convctl ${step.args.join(" ")}`;
        assert.equal(code, step.exit, `${where}: exit ${code}, want ${step.exit}\n${output}`);
        const missing = missingLine(output, step.expected);
        assert.equal(
          missing,
          undefined,
          `${where}: output lacks ${JSON.stringify(missing)}\n${output}`,
        );
      }
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
}
