/** SHA-256 digests, on the Web Crypto primitive, and the lower-case hex form hashes are shown in. */

/** SHA-256 of bytes, or of a string's UTF-8 bytes. */
export async function sha256(data: Uint8Array | string): Promise<Uint8Array> {
  const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
  return new Uint8Array(await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>));
}

/** Lower-case hex of bytes, two digits a byte. */
export function bytesToHex(bytes: Uint8Array): string {
  return [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
}
