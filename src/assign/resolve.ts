/**
 * The assignment resolver: which ConversionWebhookServer serves a config's target.
 * Pure and shared by the manager and every webhook-server replica, so all parties agree without
 * talking to each other. Precedence: explicit `webhookServerRef` > shard pool (weighted
 * rendezvous hashing) > the one server marked `default`.
 */

/** The parts of a ConversionWebhookServer the resolver reads. */
export interface ServerInfo {
  name: string;
  default?: boolean;
  /** Absent = not in the pool; present with `enabled` not false = in the pool. */
  sharding?: { enabled?: boolean; weight?: number } | null;
}

/** The parts of a config the resolver reads. */
export interface AssignableConfig {
  /** The target resource name (`<plural>.<group>`): the shard key. */
  target: string;
  webhookServerRef?: { name?: string } | null;
}

export type Resolution =
  | { ok: true; server: string; via: "explicit" | "pool" | "default" }
  | { ok: false; error: string };

const FNV64_OFFSET = 0xcbf29ce484222325n;
const FNV64_PRIME = 0x100000001b3n;
const MASK64 = (1n << 64n) - 1n;
const TWO_POW_53 = 1n << 53n;
const ENCODER = new TextEncoder();

/** FNV-1a-64 of `UTF8(server) ‖ 0x00 ‖ UTF8(target)`, as the reference computes it. */
export function rendezvousHash(server: string, target: string): bigint {
  let h = FNV64_OFFSET;
  const step = (byte: number) => {
    h ^= BigInt(byte);
    h = (h * FNV64_PRIME) & MASK64;
  };
  for (const b of ENCODER.encode(server)) step(b);
  step(0);
  for (const b of ENCODER.encode(target)) step(b);
  return h;
}

/**
 * Weighted rendezvous score `−weight / ln u`, with `u = ((h mod 2^53) + 1) / (2^53 + 1)` in
 * binary64 (`2^53 + 1` rounds to `2^53` exactly as in Go; the one key with `u = 1` scores −∞).
 */
export function rendezvousScore(server: string, target: string, weight: number): number {
  const h = rendezvousHash(server, target);
  const u = (Number(h % TWO_POW_53) + 1) / (2 ** 53 + 1);
  const w = weight > 0 && Number.isFinite(weight) ? weight : 1;
  return -w / Math.log(u);
}

/** Servers in the shard pool, sorted by name. */
export function shardPool(servers: readonly ServerInfo[]): ServerInfo[] {
  return servers
    .filter((s) => s.sharding !== undefined && s.sharding !== null && s.sharding.enabled !== false)
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** The pool member that wins `target`; ties go to the lexicographically smaller name. */
export function poolWinner(pool: readonly ServerInfo[], target: string): string | undefined {
  let best: { name: string; score: number } | undefined;
  for (const s of pool) {
    const score = rendezvousScore(s.name, target, s.sharding?.weight ?? 1);
    if (
      best === undefined || score > best.score || (score === best.score && s.name < best.name)
    ) {
      best = { name: s.name, score };
    }
  }
  return best?.name;
}

/** Resolves the server for one config against the whole server list. */
export function resolveServer(
  config: AssignableConfig,
  servers: readonly ServerInfo[],
): Resolution {
  const explicit = config.webhookServerRef?.name ?? "";
  if (explicit !== "") {
    return servers.some((s) => s.name === explicit)
      ? { ok: true, server: explicit, via: "explicit" }
      : {
        ok: false,
        error: `webhookServerRef ${
          JSON.stringify(explicit)
        } does not match any existing ConversionWebhookServer`,
      };
  }
  const pool = shardPool(servers);
  if (pool.length > 0) return { ok: true, server: poolWinner(pool, config.target)!, via: "pool" };
  const defaults = servers.filter((s) => s.default === true).map((s) => s.name).sort();
  if (defaults.length === 1) return { ok: true, server: defaults[0], via: "default" };
  if (defaults.length === 0) {
    return {
      ok: false,
      error: "no ConversionWebhookServer is marked default and no explicit webhookServerRef is set",
    };
  }
  return {
    ok: false,
    error: `multiple ConversionWebhookServers are marked default: ${defaults.join(", ")}`,
  };
}

/** `IsAssignedTo`: resolution succeeds and names `server` (an error means nobody). */
export function isAssignedTo(
  config: AssignableConfig,
  servers: readonly ServerInfo[],
  server: string,
): boolean {
  const r = resolveServer(config, servers);
  return r.ok && r.server === server;
}
