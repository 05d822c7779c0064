/** `convctl version`: the build version string and a newline. */
import { BUILD_VERSION } from "../lib/build.ts";
import { defineCommand, PLAIN_TEXT } from "./command.ts";

/** src/lib/build.ts's, which `CONVCTL_VERSION` overrides (e.g. for packaging tests). */
export { BUILD_VERSION };

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
