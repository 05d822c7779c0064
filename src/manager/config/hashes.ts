/**
 * The two hashes a config's status carries (docs/design/config-reconcile.md#hashes): the schema
 * hash of what was validated, and the hash of a CA bundle as applied or observed.
 */
import { bytesToBase64Url } from "../../lib/base64.ts";
import { sha256 } from "../../lib/sha256.ts";

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

export { sha256Hex } from "../../api/propagation.ts";
