/**
 * Runs the real `convctl` entry point as a subprocess (as users and CI do) and captures its
 * streams and exit code. Paths are relative to the repository root, the subprocess' cwd.
 */
import assert from "node:assert/strict";

export const ROOT = new URL("../../", import.meta.url).pathname;

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

export async function convctl(...args: string[]): Promise<RunResult> {
  return await convctlWithStdin(undefined, ...args);
}

/** {@link convctl} with `stdin` written to the process' standard input (closed when undefined). */
export async function convctlWithStdin(
  stdin: string | undefined,
  ...args: string[]
): Promise<RunResult> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--quiet",
      "--allow-read",
      "--allow-env",
      "--allow-write",
      "--allow-net",
      "--allow-run=git",
      "src/main/convctl.ts",
      ...args,
    ],
    cwd: ROOT,
    env: { NO_COLOR: "1", RUST_BACKTRACE: "0" },
    stdin: stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  if (stdin !== undefined) {
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(stdin));
    await writer.close();
  }
  const { code, stdout, stderr } = await child.output();
  const decoder = new TextDecoder();
  return { code, stdout: decoder.decode(stdout), stderr: decoder.decode(stderr) };
}

/** `-c <config> --crd <crd>`: the flags most invocations start with. */
export function crdFlags(config: string, crd: string): string[] {
  return ["-c", config, "--crd", crd];
}

const FIELD_RENAME_DIR = "examples/field-rename";

/** The field-rename example's files, and its config and CRD as flags. */
export const FIELD_RENAME = {
  config: `${FIELD_RENAME_DIR}/config.yaml`,
  crd: `${FIELD_RENAME_DIR}/crd.yaml`,
  samples: `${FIELD_RENAME_DIR}/samples`,
  flags: crdFlags(`${FIELD_RENAME_DIR}/config.yaml`, `${FIELD_RENAME_DIR}/crd.yaml`),
};

/** A tool error: exit 2 and `error: <message>` on stderr (the whole line, or matching `message`). */
export function assertToolError(r: RunResult, message: string | RegExp): void {
  assert.equal(r.code, 2, r.stderr);
  if (typeof message === "string") assert.equal(r.stderr, `error: ${message}\n`);
  else assert.match(r.stderr, message);
}
