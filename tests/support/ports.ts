/**
 * Ports for the processes a test starts (etcd, kube-apiserver, the manager's listeners, …).
 *
 * Binding port 0 and closing it is not enough: the kernel hands out the same ephemeral range for
 * port-0 binds and for the local side of every outgoing connection, so between our close and the
 * child's bind an apiserver client socket — or a listener of a test running in parallel — can
 * take the port, and the child exits with EADDRINUSE. Ports here are drawn from outside that
 * range, and each is reserved across processes with an exclusively created file, so two parallel
 * tests never receive the same one. See docs/testing.md.
 */

const RESERVATIONS = `${Deno.env.get("TMPDIR") ?? "/tmp"}/dco-test-ports`;
/** A reservation older than this belongs to a finished run (a run's longest test is far shorter). */
const STALE_AFTER_MS = 30 * 60_000;
const ATTEMPTS = 500;
/** Below this the registered, well-known-ish ports are left alone. */
const LOWEST = 10_000;
/** Linux's default ephemeral range, used where /proc cannot be read. */
const DEFAULT_EPHEMERAL: readonly [number, number] = [32_768, 60_999];

/** A TCP port on 127.0.0.1 that nothing listens on, outside the ephemeral range, reserved for us. */
export function freePort(): number {
  const [low, high] = candidateRange();
  Deno.mkdirSync(RESERVATIONS, { recursive: true });
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const port = low + Math.floor(Math.random() * (high - low + 1));
    if (!reserve(port)) continue;
    if (bindable(port)) return port;
  }
  throw new Error(`no free port in ${low}-${high} after ${ATTEMPTS} attempts (${RESERVATIONS})`);
}

/** The larger stretch of non-ephemeral ports above LOWEST. */
function candidateRange(): [number, number] {
  const [ephemeralLow, ephemeralHigh] = ephemeralRange();
  const below: [number, number] = [LOWEST, ephemeralLow - 1];
  const above: [number, number] = [ephemeralHigh + 1, 65_535];
  const size = ([a, b]: [number, number]) => b - a + 1;
  const best = size(below) >= size(above) ? below : above;
  if (size(best) < 1_000) {
    throw new Error(
      `the ephemeral port range ${ephemeralLow}-${ephemeralHigh} leaves too few ports for tests`,
    );
  }
  return best;
}

function ephemeralRange(): readonly [number, number] {
  try {
    const [low, high] = Deno.readTextFileSync("/proc/sys/net/ipv4/ip_local_port_range")
      .trim().split(/\s+/).map(Number);
    if (Number.isInteger(low) && Number.isInteger(high) && low <= high) return [low, high];
  } catch {
    // Not Linux, or /proc not mounted: assume the kernel default.
  }
  return DEFAULT_EPHEMERAL;
}

/** True when this process now owns the reservation for `port`. */
function reserve(port: number): boolean {
  const path = `${RESERVATIONS}/${port}`;
  for (let tries = 0; tries < 2; tries++) {
    try {
      Deno.openSync(path, { write: true, createNew: true }).close();
      return true;
    } catch (e) {
      if (!(e instanceof Deno.errors.AlreadyExists)) throw e;
    }
    try {
      const mtime = Deno.statSync(path).mtime?.getTime() ?? 0;
      if (Date.now() - mtime < STALE_AFTER_MS) return false;
      Deno.removeSync(path);
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) throw e;
    }
  }
  return false;
}

function bindable(port: number): boolean {
  try {
    Deno.listen({ hostname: "127.0.0.1", port }).close();
    return true;
  } catch (e) {
    if (e instanceof Deno.errors.AddrInUse) return false;
    throw e;
  }
}
