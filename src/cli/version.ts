/** `convctl version`: the build version string and a newline. */
import { defineCommand, PLAIN_TEXT } from "./command.ts";

/** Replaced by release builds; `CONVCTL_VERSION` overrides it (e.g. for packaging tests). */
export const BUILD_VERSION = "dev";

export function buildVersion(): string {
  try {
    return Deno.env.get("CONVCTL_VERSION") || BUILD_VERSION;
  } catch {
    return BUILD_VERSION; // no env permission: the compiled-in value
  }
}

export const versionCommand = defineCommand({
  name: "version",
  usage: "convctl version",
  summary: "Print the convctl version.",
  target: "none",
  flags: [],
  run: () => `${buildVersion()}\n`,
  output: PLAIN_TEXT,
});
