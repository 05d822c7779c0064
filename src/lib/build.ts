/** What this build is: the version string and source commit every binary reports. */

/** Replaced by release builds ("dev" for local ones). */
export const BUILD_VERSION = "dev";

/** The source commit a release build was made from ("unknown" for local builds). */
export const BUILD_COMMIT = "unknown";
