/**
 * `convctl version`: the version string and a newline; `-o table` or `-o json` add the rest of the
 * build information (commit, Deno/V8/TypeScript versions, target) for bug reports.
 */
import { type BuildInfo, buildInfo } from "../lib/build_info.ts";
import { outputFlag } from "./args.ts";
import { defineCommand } from "./command.ts";
import { toJson } from "./output.ts";

/** `CONVCTL_VERSION` overrides the version of convctl alone (packaging tests). */
export function convctlBuildInfo(): BuildInfo {
  return buildInfo("CONVCTL_VERSION");
}

/** The version string alone (reports and golden manifests record it). */
export function buildVersion(): string {
  return convctlBuildInfo().version;
}

/** `key:  value` lines, values aligned. */
function buildTable(info: BuildInfo): string {
  const width = Math.max(...Object.keys(info).map((k) => k.length)) + 1;
  return Object.entries(info).map(([k, v]) => `${`${k}:`.padEnd(width)}  ${v}\n`).join("");
}

export const versionCommand = defineCommand({
  name: "version",
  usage: "convctl version [-o short|table|json]",
  summary: "Print the convctl version (with -o table or json, the build information).",
  target: "none",
  flags: [outputFlag("short, table or json", "short")],
  run: convctlBuildInfo,
  output: {
    formats: { short: (info) => `${info.version}\n`, table: buildTable, json: toJson },
    default: "short",
  },
});
