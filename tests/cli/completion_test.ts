import assert from "node:assert/strict";
import { COMMANDS } from "../../src/cli/mod.ts";
import { SHELLS } from "../../src/cli/completion.ts";
import { assertToolError, convctl, ROOT } from "./_convctl.ts";

async function script(shell: string, ...flags: string[]): Promise<string> {
  const r = await convctl("completion", shell, ...flags);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stderr, "");
  return r.stdout;
}

/** Runs `shell` with `args`; undefined when the shell is not installed. */
async function runShell(shell: string, args: string[], cwd = ROOT) {
  try {
    const out = await new Deno.Command(shell, { args, cwd, stdout: "piped", stderr: "piped" })
      .output();
    const d = new TextDecoder();
    return { code: out.code, stdout: d.decode(out.stdout), stderr: d.decode(out.stderr) };
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return undefined;
    throw e;
  }
}

Deno.test("completion: every script names every command and every flag of the command table", async () => {
  for (const shell of SHELLS) {
    const text = await script(shell);
    for (const [name, command] of COMMANDS) {
      assert.match(text, new RegExp(`\\b${name}\\b`), `${shell}: ${name}`);
      for (const flag of command.spec.flags) {
        // fish names long flags without their dashes (`-l config`)
        const spelled = shell === "fish" ? `-l ${flag.name}` : `--${flag.name}`;
        assert.ok(text.includes(spelled), `${shell}: ${name} ${spelled}`);
      }
    }
  }
});

Deno.test("completion bash: parses, and completes commands, flags and values", async () => {
  const text = await script("bash");
  const file = await Deno.makeTempFile({ suffix: ".bash" });
  try {
    await Deno.writeTextFile(file, text);
    const syntax = await runShell("bash", ["-n", file]);
    assert.ok(syntax !== undefined, "bash is required to check the bash script");
    assert.equal(syntax.code, 0, syntax.stderr);
    const complete = async (...words: string[]) => {
      const line = words.map((w) => `'${w}'`).join(" ");
      const r = await runShell("bash", [
        "-c",
        `source ${file}; COMP_WORDS=(${line}); COMP_CWORD=${words.length - 1}; _convctl; ` +
        `printf '%s\\n' "\${COMPREPLY[@]}"`,
      ], `${ROOT}docs/examples/cli`);
      assert.equal(r!.code, 0, r!.stderr);
      return r!.stdout.split("\n").filter((l) => l !== "").sort();
    };
    assert.deepEqual(await complete("convctl", "li"), ["lint"]);
    assert.deepEqual(await complete("convctl", "generate", ""), ["kyverno"]);
    assert.deepEqual(await complete("convctl", "lint", "--fail-on", ""), ["loss", "none", "warn"]);
    assert.deepEqual(await complete("convctl", "version", "-o", ""), ["json", "short", "table"]);
    assert.deepEqual(await complete("convctl", "validate", "-c", "widget-c"), [
      "widget-config.yaml",
      "widget-crd.yaml",
    ]);
    assert.deepEqual(await complete("convctl", "test", "-s", "widget"), ["widget-samples"]);
    assert.ok(
      (await complete("convctl", "patch-preview", "--service-n")).includes("--service-name"),
    );
  } finally {
    await Deno.remove(file);
  }
});

Deno.test("completion zsh, fish, powershell: checked by their shell where installed, else by content", async () => {
  const checks: [string, string, string[], RegExp[]][] = [
    ["zsh", "zsh", ["-n"], [/^#compdef convctl$/m, /compdef _convctl convctl/, /_arguments \\/]],
    ["fish", "fish", ["--no-execute"], [
      /^complete -c convctl -f$/m,
      /__fish_seen_subcommand_from lint/,
    ]],
    ["powershell", "pwsh", ["-NoProfile", "-File"], [
      /Register-ArgumentCompleter -Native -CommandName convctl/,
    ]],
  ];
  for (const [shell, binary, args, patterns] of checks) {
    const text = await script(shell);
    for (const p of patterns) assert.match(text, p, shell);
    const file = await Deno.makeTempFile({ suffix: shell === "powershell" ? ".ps1" : `.${shell}` });
    try {
      await Deno.writeTextFile(file, text);
      const r = await runShell(binary, [...args, file]);
      if (r !== undefined) assert.equal(r.code, 0, `${shell}: ${r.stderr}`);
    } finally {
      await Deno.remove(file);
    }
  }
});

Deno.test("completion: --no-descriptions leaves the summaries out", async () => {
  const summary = COMMANDS.get("lint")!.spec.summary;
  assert.ok((await script("fish")).includes(summary));
  assert.ok(!(await script("fish", "--no-descriptions")).includes(summary));
  assert.ok(!(await script("zsh", "--no-descriptions")).includes(summary));
});

Deno.test("completion: an unknown shell is a one-line error, exit 2", async () => {
  assertToolError(
    await convctl("completion", "tcsh"),
    'unsupported shell "tcsh" (expected one of bash, zsh, fish, powershell)',
  );
  assertToolError(
    await convctl("completion"),
    '"convctl completion" needs a shell: bash, zsh, fish, powershell',
  );
});
