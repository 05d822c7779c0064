/**
 * Starts hack/_fuzz_server.ts — the real conversion listener serving the synthetic target over TLS
 * with the request bounds a default pod derives — as a child process with a throwaway CA, for the
 * tools that measure or attack it from outside (hack/fuzz_convert.ts, hack/bench_side_by_side.ts).
 */
import { writeServingPair } from "../tests/support/certs.ts";

/** The heap a webhook-server pod gets by default (256 MiB limit × 0.75), as the manager sets it. */
export const POD_HEAP_FLAGS = "--max-old-space-size=192";

export interface ConversionTarget {
  port: number;
  child: Deno.ChildProcess;
  /** The CA that issued the serving pair (`${dir}/ca.crt`). */
  caFile: string;
  /** The review path of the synthetic target. */
  path: string;
}

export interface TargetOptions {
  /** Extra V8 flags after the pod's heap limit. */
  v8Flags?: string;
  /** Pin the server to these CPUs (`taskset -c`), when given. */
  cpus?: string;
  /** Arguments passed to the server after the certificate directory. */
  args?: string[];
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
    env: { DENO_V8_FLAGS: [POD_HEAP_FLAGS, opts.v8Flags ?? ""].join(" ").trim() },
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (!text.includes("\n")) {
    const { done, value } = await reader.read();
    if (done) throw new Error(`the conversion target exited before listening: ${text}`);
    text += value;
  }
  reader.releaseLock();
  child.stdout.cancel().catch(() => {});
  return {
    port: JSON.parse(text.split("\n")[0]).port,
    child,
    caFile: `${dir}/ca.crt`,
    path: "/convert/widgets.bench.example.com",
  };
}
