/**
 * `convctl version` (cli.md §12): the build version string and a newline.
 */
import { type CommandSpec, noPositionals, type ParsedFlags } from "./args.ts";
import type { Io } from "./output.ts";

/** Replaced by release builds; `CONVCTL_VERSION` overrides it (e.g. for packaging tests). */
export const BUILD_VERSION = "dev";

export function buildVersion(): string {
  try {
    return Deno.env.get("CONVCTL_VERSION") || BUILD_VERSION;
  } catch {
    return BUILD_VERSION; // no env permission: the compiled-in value
  }
}

export const versionCommand: CommandSpec = {
  name: "version",
  usage: "convctl version",
  summary: "Print the convctl version.",
  flags: [],
};

export function runVersion(flags: ParsedFlags, io: Io): Promise<number> {
  noPositionals(flags, "version");
  io.out(`${buildVersion()}\n`);
  return Promise.resolve(0);
}
