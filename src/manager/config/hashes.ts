/**
 * The two hashes a config's status carries (docs/design/config-reconcile.md#hashes): the schema
 * hash of what was validated, and the hash of a CA bundle as applied or observed.
 */
import { bytesToBase64Url } from "../../lib/base64.ts";
import { bytesToHex, sha256 } from "../../lib/sha256.ts";

/**
 * `status.schemaHash`:
 * `"sha256:" + base64url-no-padding(SHA-256("gen=<targetGen>;hub=<hub>;cfgGen=<cfgGen>"))`.
 */
export async function schemaHash(
  targetGeneration: number,
  hubVersion: string,
  configGeneration: number,
): Promise<string> {
  const input = `gen=${targetGeneration};hub=${hubVersion};cfgGen=${configGeneration}`;
  return "sha256:" + bytesToBase64Url(await sha256(input));
}

/** `"sha256:" + hex(SHA-256(bytes))`, as `status.generatedCRDs[].observedCABundleHash`. */
export async function sha256Hex(bytes: Uint8Array): Promise<string> {
  return "sha256:" + bytesToHex(await sha256(bytes));
}
