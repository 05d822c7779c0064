/**
 * A pod network for the test kubelet: one Linux bridge on the host with a /24 and, per pod, a
 * network namespace joined to it by a veth pair. The bridge's address (the "gateway") is where
 * pods reach the apiserver; a pod's own address is what the kubelet reports as its IP, and what
 * the apiserver dials when it resolves a Service through EndpointSlices
 * (`--enable-aggregator-routing`). Needs root and iproute2 (`ip`), as CI has.
 *
 * Names carry the test process's pid and a random id (`dcob<pid>x<id>`, `dco-<pid>-<id>-<k>`):
 * `deno test --parallel` runs test files as workers of one process (one pid, one module instance
 * each), so the id, not a counter, keeps their networks apart; the pid lets a later run sweep what
 * a run that died left behind ({@link sweepStaleNetworks}).
 */

export interface PodInterface {
  /** Network namespace name (for `ip netns exec`). */
  readonly netns: string;
  /** The pod IP. */
  readonly ip: string;
}

async function ip(...args: string[]): Promise<string> {
  let out: Deno.CommandOutput;
  try {
    out = await new Deno.Command("ip", { args, stdout: "piped", stderr: "piped" }).output();
  } catch (e) {
    throw new Error(`the pod network needs iproute2 ('ip'): ${(e as Error).message}`);
  }
  if (!out.success) {
    const err = new TextDecoder().decode(out.stderr).trim();
    throw new Error(`ip ${args.join(" ")} failed (exit ${out.code}): ${err}`);
  }
  return new TextDecoder().decode(out.stdout);
}

function ipSync(...args: string[]): void {
  try {
    new Deno.Command("ip", { args, stdout: "null", stderr: "null" }).outputSync();
  } catch {
    // best effort
  }
}

function alive(pid: number): boolean {
  try {
    Deno.kill(pid, "SIGCONT"); // harmless probe; ESRCH when gone
    return true;
  } catch (e) {
    return !(e instanceof Deno.errors.NotFound) &&
      !/ESRCH|No such process/i.test((e as Error).message);
  }
}

/** Removes bridges and namespaces left by test processes that no longer exist. */
export async function sweepStaleNetworks(): Promise<void> {
  const links = await ip("-o", "link", "show", "type", "bridge");
  for (const m of links.matchAll(/^\d+: (dcob(\d+)x[0-9a-z]+)[:@]/gm)) {
    if (!alive(Number(m[2]))) await ip("link", "del", m[1]).catch(() => {});
  }
  const spaces = await ip("netns", "list");
  for (const m of spaces.matchAll(/^(dco-(\d+)-[0-9a-z]+-\d+)\b/gm)) {
    if (!alive(Number(m[2]))) await ip("netns", "del", m[1]).catch(() => {});
  }
}

/** A random base-36 id of `n` characters. */
function randomId(n: number): string {
  const bytes = crypto.getRandomValues(new Uint8Array(n));
  return Array.from(bytes, (b) => (b % 36).toString(36)).join("");
}

export class PodNetwork {
  readonly bridge: string;
  /** The host side of the bridge: the address pods use for the apiserver. */
  readonly gateway: string;
  readonly #prefix: string;
  readonly #id: string;
  #next = 2;
  readonly #pods = new Map<string, PodInterface>();
  #destroyed = false;

  private constructor(id: string, prefix: string) {
    this.#id = id;
    this.#prefix = prefix;
    this.bridge = `dcob${Deno.pid}x${id}`;
    this.gateway = `${prefix}.1`;
  }

  /** Creates the bridge on the first free 10.2xx.y.0/24. */
  static async create(): Promise<PodNetwork> {
    if (Deno.uid?.() !== 0) {
      throw new Error("the pod network needs root (network namespaces, veth pairs, bridges)");
    }
    await sweepStaleNetworks();
    const used = await ip("-4", "-o", "addr");
    // Bridge names are at most 15 characters: "dcob" + pid (≤ 7) + "x" + 3.
    const id = randomId(3);
    for (let attempt = 0; attempt < 64; attempt++) {
      // Random, so concurrent networks (parallel test files) rarely even try the same one.
      const [a, b] = crypto.getRandomValues(new Uint8Array(2));
      const prefix = `10.${244 + (a % 8)}.${b % 250}`;
      if (used.includes(` ${prefix}.`)) continue;
      const net = new PodNetwork(id, prefix);
      await ip("link", "add", net.bridge, "type", "bridge");
      try {
        await ip("addr", "add", `${net.gateway}/24`, "dev", net.bridge);
        await ip("link", "set", net.bridge, "up");
      } catch (e) {
        await ip("link", "del", net.bridge).catch(() => {});
        throw e;
      }
      return net;
    }
    throw new Error("no free /24 for the pod network");
  }

  /** Makes a namespace for `key` (one per pod) with the next free address. */
  async attach(key: string): Promise<PodInterface> {
    if (this.#destroyed) throw new Error("the pod network is gone");
    const existing = this.#pods.get(key);
    if (existing) return existing;
    const n = this.#next++;
    if (n > 254) throw new Error("the pod network is out of addresses");
    const netns = `dco-${Deno.pid}-${this.#id}-${n}`;
    const hostVeth = `dcov${this.#id}${randomId(3)}y${n}`; // ≤ 14 characters
    const podIP = `${this.#prefix}.${n}`;
    await ip("netns", "add", netns);
    try {
      await ip("link", "add", hostVeth, "type", "veth", "peer", "name", "eth0", "netns", netns);
      await ip("link", "set", hostVeth, "master", this.bridge, "up");
      await ip("-n", netns, "addr", "add", `${podIP}/24`, "dev", "eth0");
      await ip("-n", netns, "link", "set", "eth0", "up");
      await ip("-n", netns, "link", "set", "lo", "up");
      await ip("-n", netns, "route", "add", "default", "via", this.gateway);
    } catch (e) {
      await ip("netns", "del", netns).catch(() => {});
      throw e;
    }
    const pod = { netns, ip: podIP };
    this.#pods.set(key, pod);
    return pod;
  }

  /** Deletes a pod's namespace (its veth pair goes with it). */
  async detach(key: string): Promise<void> {
    const pod = this.#pods.get(key);
    if (!pod) return;
    this.#pods.delete(key);
    await ip("netns", "del", pod.netns).catch(() => {});
  }

  async destroy(): Promise<void> {
    if (this.#destroyed) return;
    for (const key of [...this.#pods.keys()]) await this.detach(key);
    this.#destroyed = true;
    await ip("link", "del", this.bridge).catch(() => {});
  }

  /** For signal and exit handlers. */
  destroySync(): void {
    if (this.#destroyed) return;
    this.#destroyed = true;
    for (const pod of this.#pods.values()) ipSync("netns", "del", pod.netns);
    this.#pods.clear();
    ipSync("link", "del", this.bridge);
  }
}
