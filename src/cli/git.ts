/**
 * Reading a file as it was at a git revision (`git show REV:./PATH`), for `convctl compat`. git
 * runs in the file's directory, so the repository is the one that holds the file and the path may
 * be relative or absolute. Needs `--allow-run=git`.
 */
import { CliError } from "./args.ts";

function split(path: string): { dir: string; name: string } {
  const i = path.lastIndexOf("/");
  if (i < 0) return { dir: ".", name: path };
  return { dir: i === 0 ? "/" : path.slice(0, i), name: path.slice(i + 1) };
}

/** The text of `path` at `rev`; an unknown revision or a file absent there is a CliError. */
export async function showAtRevision(rev: string, path: string): Promise<string> {
  if (rev === "" || rev.startsWith("-")) {
    throw new CliError(`invalid git revision ${JSON.stringify(rev)}`);
  }
  const { dir, name } = split(path);
  let output: Deno.CommandOutput;
  try {
    output = await new Deno.Command("git", {
      args: ["show", `${rev}:./${name}`],
      cwd: dir,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
  } catch (e) {
    if (e instanceof Deno.errors.NotCapable || e instanceof Deno.errors.PermissionDenied) {
      throw new CliError("reading git revisions needs the permission --allow-run=git");
    }
    throw new CliError(`cannot run git to read ${path} at ${rev}: ${(e as Error).message}`);
  }
  if (!output.success) {
    const why = new TextDecoder().decode(output.stderr).trim().split("\n")[0] || "git show failed";
    throw new CliError(`cannot read ${path} at revision ${rev}: ${why}`);
  }
  return new TextDecoder().decode(output.stdout);
}
