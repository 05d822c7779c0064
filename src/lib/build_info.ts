/**
 * What a binary says about its build (convctl's `version`, and the roles' build-info metric): the
 * product version, the source commit, and the runtime it runs on. Release builds replace the two
 * constants; the `DCO_VERSION` / `DCO_COMMIT` environment variables override them (packaging
 * tests, images built from a tree without the replacement).
 */

/** The version of a local build; release builds replace it. */
export const BUILD_VERSION = "dev";
/** The commit of a local build: not recorded. */
export const BUILD_COMMIT = "unknown";

export interface BuildInfo {
  version: string;
  commit: string;
  deno: string;
  v8: string;
  typescript: string;
  /** The platform triple the runtime was built for, e.g. `x86_64-unknown-linux-gnu`. */
  target: string;
}

function env(name: string): string | undefined {
  try {
    return Deno.env.get(name) || undefined;
  } catch {
    return undefined; // no env permission: the compiled-in values
  }
}

/** The build information of this process; `versionOverride` names a binary's own env override. */
export function buildInfo(versionOverride?: string): BuildInfo {
  return {
    version: (versionOverride !== undefined ? env(versionOverride) : undefined) ??
      env("DCO_VERSION") ?? BUILD_VERSION,
    commit: env("DCO_COMMIT") ?? BUILD_COMMIT,
    deno: Deno.version.deno,
    v8: Deno.version.v8,
    typescript: Deno.version.typescript,
    target: Deno.build.target,
  };
}
