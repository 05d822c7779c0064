/** Kubernetes timestamps: `metav1.Time` (whole seconds) and `metav1.MicroTime` (microseconds). */

/** RFC 3339 at whole seconds, UTC, as `metav1.Time` serialises (`2026-01-02T03:04:05Z`). */
export function rfc3339(ms: number | Date): string {
  const t = typeof ms === "number" ? ms : ms.getTime();
  return new Date(Math.floor(t / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");
}

/** RFC 3339 with microseconds, as `metav1.MicroTime` serialises (Lease renew and acquire times). */
export function rfc3339Micro(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
}
