/**
 * Runs a dco role (`src/main/<role>.ts`) as a real child process with exactly the Deno permission
 * flags given, capturing its log, and stops it with SIGTERM when disposed. Shared by the e2e tests
 * of the webhook server and the manager.
 */

export interface RoleProcess extends AsyncDisposable {
  readonly child: Deno.ChildProcess;
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string;
}

/** `env` adds variables to the child's environment (e.g. `DENO_V8_FLAGS`). */
export function startRoleProcess(
  entry: string,
  denoFlags: string[],
  args: string[],
  env: Record<string, string> = {},
): RoleProcess {
  return startProcess(Deno.execPath(), ["run", ...denoFlags, entry, ...args], env);
}

/** Any program run the same way: its output captured, SIGTERM and awaited on dispose. */
export function startProcess(
  command: string,
  args: string[],
  env: Record<string, string> = {},
): RoleProcess {
  const child = new Deno.Command(command, {
    args,
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1", RUST_BACKTRACE: "0", ...env },
  }).spawn();
  let log = "";
  const decoder = new TextDecoder();
  const drain = async (s: ReadableStream<Uint8Array>) => {
    for await (const chunk of s) log += decoder.decode(chunk);
  };
  const drained = Promise.all([drain(child.stdout), drain(child.stderr)]);
  return {
    child,
    output: () => log,
    async [Symbol.asyncDispose]() {
      try {
        child.kill("SIGTERM");
      } catch {
        // already exited
      }
      await child.status;
      await drained;
    },
  };
}

/** GET that never throws: status 0 when nothing answers (yet). */
export async function httpGet(url: string): Promise<{ status: number; text: string }> {
  try {
    const res = await fetch(url);
    return { status: res.status, text: await res.text() };
  } catch {
    return { status: 0, text: "" };
  }
}
