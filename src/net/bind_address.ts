/** Listen addresses as the roles' flags spell them (Go style, `[host]:port`). */

export interface BindAddress {
  /** "" = every interface (Go's `:port`). */
  hostname: string;
  port: number;
}

/**
 * Parses a Go-style listen address: `:9443`, `0.0.0.0:9443`, `127.0.0.1:9443`, `[::1]:9443`,
 * `localhost:9443`. Port 0 asks for an ephemeral port (tests).
 */
export function parseBindAddress(address: string): BindAddress {
  const m = /^(?:\[([^\]]*)\]|([^:[\]]*)):(\d{1,5})$/.exec(address.trim());
  if (m === null) {
    throw new Error(`invalid bind address ${JSON.stringify(address)}: want [host]:port`);
  }
  const port = Number(m[3]);
  if (port > 65535) throw new Error(`invalid bind address ${JSON.stringify(address)}: port`);
  return { hostname: m[1] ?? m[2] ?? "", port };
}

/** `host:port` for logs, brackets around IPv6. */
export function formatAddr(addr: Deno.NetAddr): string {
  return addr.hostname.includes(":")
    ? `[${addr.hostname}]:${addr.port}`
    : `${addr.hostname}:${addr.port}`;
}

/** A bind address in the flags' spelling (`:9443`, `127.0.0.1:9443`, `[::1]:9443`). */
export function formatBindAddress(b: BindAddress): string {
  return b.hostname.includes(":") ? `[${b.hostname}]:${b.port}` : `${b.hostname}:${b.port}`;
}
