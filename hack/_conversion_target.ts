/**
 * Starts hack/_fuzz_server.ts — the real conversion listener serving the synthetic target over TLS
 * with the request bounds a default pod derives — as a child process with a throwaway CA, for the
 * tools that measure or attack it from outside (hack/fuzz_convert.ts, hack/bench_side_by_side.ts).
 */
import { derivedV8Flags, heapLimitMiB } from "../src/manager/server/container_env.ts";
import { writeServingPair } from "../tests/support/certs.ts";

/**
 * The V8 flags a webhook-server pod of a 256 MiB limit gets for `listeners` listener Workers (a
 * 192 MiB heap, the young generation and the first old-generation limit split over the
 * listeners), as the manager sets them.
 */
export function podHeapFlags(listeners: number): string {
  return derivedV8Flags(heapLimitMiB("256Mi") ?? 192, listeners).join(",");
}

export interface ConversionTarget {
  port: number;
  child: Deno.ChildProcess;
  /** The CA that issued the serving pair (`${dir}/ca.crt`). */
  caFile: string;
  /** The review path of the synthetic target. */
  path: string;
  /** The inline bound the server resolved (`auto` by its CPUs), as it printed it. */
  inlineMaxBytes: number | undefined;
}

export interface TargetOptions {
  /** Extra V8 flags after the pod's heap limit. */
  v8Flags?: string;
  /** The listener Workers the server runs (the pod's V8 flags are derived for them); default 2. */
  listeners?: number;
  /** Pin the server to these CPUs (`taskset -c`), when given. */
  cpus?: string;
  /** Arguments passed to the server after the certificate directory. */
  args?: string[];
  /**
   * Every other line the server prints on stdout (V8's `--trace-gc*` output goes there), as it
   * arrives; without it stdout is dropped once the server listens.
   */
  onLine?: (line: string) => void;
}

export async function startConversionTarget(
  dir: string,
  opts: TargetOptions = {},
): Promise<ConversionTarget> {
  await writeServingPair(dir, {
    caName: "dco-target-ca",
    commonName: "dco-target",
    hosts: ["127.0.0.1"],
  });
  const deno = [
    Deno.execPath(),
    "run",
    // The certificates, and the conversion Worker's modules.
    `--allow-read=${dir},${new URL("../src", import.meta.url).pathname}`,
    "--allow-net=127.0.0.1",
    "--allow-env",
    new URL("./_fuzz_server.ts", import.meta.url).pathname,
    dir,
    ...(opts.args ?? []),
  ];
  const argv = opts.cpus === undefined ? deno : ["taskset", "-c", opts.cpus, ...deno];
  const child = new Deno.Command(argv[0], {
    args: argv.slice(1),
    env: {
      DENO_V8_FLAGS: [podHeapFlags(opts.listeners ?? 2), opts.v8Flags ?? ""]
        .filter((f) => f !== "").join(","),
    },
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let rest = "";
  const lines = async function* () {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      const parts = (rest + value).split("\n");
      rest = parts.pop() ?? "";
      yield* parts;
    }
  }();
  let port: number | undefined;
  let inlineMaxBytes: number | undefined;
  // next(), not for-await: leaving a for-await loop would close the generator.
  while (port === undefined) {
    const { done, value: line } = await lines.next();
    if (done) break;
    // A match, not the whole line: V8's trace output from the Worker threads can interleave.
    const listening = /\{"port":(\d+)/.exec(line);
    if (listening !== null) {
      port = Number(listening[1]);
      const inline = /"inlineMaxBytes":(\d+)/.exec(line);
      inlineMaxBytes = inline === null ? undefined : Number(inline[1]);
    } else opts.onLine?.(line);
  }
  if (port === undefined) throw new Error(`the conversion target exited before listening`);
  if (opts.onLine === undefined) {
    reader.releaseLock();
    child.stdout.cancel().catch(() => {});
  } else {
    void (async () => {
      for await (const line of lines) opts.onLine?.(line);
    })();
  }
  return {
    port,
    child,
    caFile: `${dir}/ca.crt`,
    path: "/convert/widgets.bench.example.com",
    inlineMaxBytes,
  };
}
