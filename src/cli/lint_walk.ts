/**
 * The files `convctl lint` reads: every YAML or JSON file under the given paths, in walk order
 * (each path in the order given, a directory's entries in lexical order, depth first), minus what
 * an `--exclude` glob matches by path or base name. A path that does not exist is a tool error.
 */
import { CliError } from "./args.ts";

const MANIFEST = /\.(ya?ml|json)$/i;

/** A glob as a whole-string regexp: `**` crosses `/`, `*` and `?` do not. */
export function globRegExp(glob: string): RegExp {
  let re = "";
  for (let i = 0; i < glob.length; i++) {
    const ch = glob[i];
    if (ch === "*" && glob[i + 1] === "*") {
      re += ".*";
      i++;
      if (glob[i + 1] === "/") i++; // `**/` also matches no directory at all
    } else if (ch === "*") re += "[^/]*";
    else if (ch === "?") re += "[^/]";
    else re += ch.replace(/[.+^${}()|[\]\\]/g, "\\$&");
  }
  return new RegExp(`^${re}$`);
}

/** Whether an `--exclude` glob matches `path` or its base name. */
export function excluded(path: string, globs: readonly RegExp[]): boolean {
  const base = path.slice(path.lastIndexOf("/") + 1);
  const clean = path.replace(/^\.\//, "");
  return globs.some((g) => g.test(clean) || g.test(base));
}

async function kindOf(path: string): Promise<"dir" | "file" | undefined> {
  const st = await Deno.stat(path).catch(() => undefined);
  return st?.isDirectory ? "dir" : st?.isFile ? "file" : undefined;
}

async function walkDir(dir: string, globs: readonly RegExp[], out: string[]): Promise<void> {
  const names: string[] = [];
  try {
    for await (const e of Deno.readDir(dir)) names.push(e.name);
  } catch (e) {
    throw new CliError(`cannot read directory ${dir}: ${(e as Error).message}`);
  }
  names.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  for (const name of names) {
    const path = dir === "." ? name : `${dir}/${name}`;
    if (excluded(path, globs)) continue;
    const kind = await kindOf(path); // follows symlinks
    if (kind === "dir") await walkDir(path, globs, out);
    else if (kind === "file" && MANIFEST.test(name)) out.push(path);
  }
}

/** The manifest files under `paths`, each once, in walk order. */
export async function walkManifests(
  paths: readonly string[],
  globs: readonly RegExp[],
): Promise<string[]> {
  const out: string[] = [];
  for (const given of paths) {
    const path = given.length > 1 ? given.replace(/\/+$/, "") : given;
    const st = await Deno.stat(path).catch((e: Error) => {
      throw new CliError(`cannot read path ${given}: ${e.message}`);
    });
    if (st.isDirectory) await walkDir(path, globs, out);
    else if (!excluded(path, globs)) out.push(path); // a file named on the command line is read
  }
  return [...new Set(out)];
}
