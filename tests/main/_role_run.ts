/** Runs a role's entry file (`src/main/<file>`) as a subprocess and captures its streams. */
export interface RoleRun {
  code: number;
  stdout: string;
  stderr: string;
}

export async function runRole(file: string, args: string[]): Promise<RoleRun> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-all",
      new URL(`../../src/main/${file}`, import.meta.url).pathname,
      ...args,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}
