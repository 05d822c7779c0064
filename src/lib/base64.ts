/** Standard and URL-safe base64 over bytes and text, on the Web `btoa`/`atob` primitives. */

/** Standard base64 of bytes (chunked, so large inputs do not overflow the argument list). */
export function bytesToBase64(bytes: Uint8Array): string {
  let s = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(s);
}

/** Bytes of standard base64 text; throws on text that is not base64. */
export function base64ToBytes(text: string): Uint8Array {
  const s = atob(text);
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}

/** Standard base64 of a string's UTF-8 bytes. */
export function textToBase64(text: string): string {
  return bytesToBase64(new TextEncoder().encode(text));
}

/** The UTF-8 text of standard base64; throws on text that is not base64 or not UTF-8. */
export function base64ToText(text: string): string {
  return new TextDecoder("utf-8", { fatal: true }).decode(base64ToBytes(text));
}

/** URL-safe base64 without padding (RFC 4648, section 5), as used in hashes that appear in names. */
export function bytesToBase64Url(bytes: Uint8Array): string {
  return bytesToBase64(bytes).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}
