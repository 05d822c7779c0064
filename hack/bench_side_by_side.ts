/**
 * The conversion endpoint under load from real load generators, for numbers that compare with any
 * other webhook measured the same way:
 *
 *   bash hack/deno.sh run -A hack/bench_side_by_side.ts [--duration 10] [--warmup 2]
 *       [--shapes 1x2,1x10,10x10,100x2] [--connections 1,8] [--tools wrk,h2load]
 *       [--server-cpus 0] [--client-cpus 1] [--workers 1] [--inline-max-bytes auto]
 *       [--v8-flags "..."] [--alloc 10000] [--json]
 *
 * `--v8-flags` is comma-separated, like `DENO_V8_FLAGS`. `--alloc N` also measures what the server
 * allocates per review: it runs the server with `--trace-gc-nvp`, sends N reviews of each shape on
 * one connection with `h2load -n` after a warm-up, and sums the bytes V8 reports allocated between
 * the collections of that window (exact to within one young generation, printed with the result);
 * `--tools ""` skips the latency runs.
 *
 * It starts the real conversion port (hack/_fuzz_server.ts: the synthetic target of
 * src/webhook/convert/_synthetic.ts over TLS, with the request bounds of a default pod) pinned to
 * `--server-cpus` with `--workers` listener Workers and as many pool Workers (reviews up to
 * `--inline-max-bytes` convert on the listener, as in the role with
 * `--conversion-inline-max-bytes`) and the V8 flags the manager derives for that many listeners,
 * checks once per shape that the answer is a `Success` review holding every object
 * at the desired version, then drives it with `wrk` (HTTP/1.1) and `h2load --h1` pinned to
 * `--client-cpus`, and prints reviews/s, p50, p90, p99, p99.9, the mean (milliseconds), the
 * requests in flight that implies, errors, and the CPU the run used (the server's cores and the
 * rest of the machine's: the load generator and anything else running, from /proc) per tool ×
 * shape × connections, then the server's peak resident memory. A shape `NxK` is a review of N objects of about K KB each. The server gets
 * the V8 flags a default pod gets from the manager (hack/_conversion_target.ts).
 *
 * Needs `wrk` and `h2load` (Debian: `apt-get install wrk nghttp2-client`) and `taskset`
 * (util-linux) for pinning; without taskset nothing is pinned and the report says so. Bounds: a
 * measuring tool, not a stress tool — loopback only, duration ≤ 120 s per run.
 */
import { parseArgs } from "node:util";
import { syntheticObject, syntheticReview } from "../src/webhook/convert/_synthetic.ts";
import { startConversionTarget } from "./_conversion_target.ts";
import { RawConnection } from "./_raw_http.ts";

const MAX_DURATION_S = 120;

interface Shape {
  name: string;
  objects: number;
  objectKB: number;
}

interface Row {
  tool: string;
  shape: string;
  connections: number;
  reviewsPerSecond: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  p999Ms: number;
  /** Mean latency: with `reviewsPerSecond`, Little's law gives the requests in flight. */
  meanMs: number;
  errors: number;
  /** CPU over the run, in cores: the server's own, and everything else on the machine. */
  cpu?: CpuShare;
}

function parseShape(text: string): Shape {
  const m = /^(\d+)x(\d+)$/.exec(text.trim());
  if (m === null) throw new Error(`--shapes: "${text}" is not NxK (N objects of K KB)`);
  return { name: `${m[1]} × ${m[2]} KB`, objects: Number(m[1]), objectKB: Number(m[2]) };
}

/** The review body of a shape: objects padded with an annotation to about K KB each. */
function reviewBody(shape: Shape): string {
  const base = JSON.stringify(syntheticObject(0, "v1")).length;
  const pad = Math.max(0, shape.objectKB * 1024 - base - 64);
  return JSON.stringify(syntheticReview(shape.objects, { annotationBytes: pad }));
}

async function have(cmd: string): Promise<boolean> {
  try {
    const out = await new Deno.Command("sh", { args: ["-c", `command -v ${cmd}`], stdout: "null" })
      .output();
    return out.success;
  } catch {
    return false;
  }
}

async function run(argv: string[]): Promise<string> {
  const out = await new Deno.Command(argv[0], {
    args: argv.slice(1),
    stdout: "piped",
    stderr: "piped",
  })
    .output();
  const dec = new TextDecoder();
  if (!out.success) {
    throw new Error(`${argv.join(" ")} failed (${out.code}): ${dec.decode(out.stderr)}`);
  }
  return dec.decode(out.stdout);
}

/** Sends the review once and checks the answer before any load is measured. */
async function verify(port: number, caFile: string, path: string, body: string, n: number) {
  const url = new URL(`https://127.0.0.1:${port}${path}`);
  const conn = await RawConnection.open(url, [await Deno.readTextFile(caFile)]);
  try {
    const bytes = new TextEncoder().encode(body);
    const head = new TextEncoder().encode(
      `POST ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n` +
        `content-length: ${bytes.byteLength}\r\n\r\n`,
    );
    const msg = new Uint8Array(head.byteLength + bytes.byteLength);
    msg.set(head);
    msg.set(bytes, head.byteLength);
    const answer = await conn.request(msg);
    const review = JSON.parse(new TextDecoder().decode(answer.body));
    const objects = review?.response?.convertedObjects;
    if (
      answer.status !== 200 || review?.response?.result?.status !== "Success" ||
      !Array.isArray(objects) || objects.length !== n ||
      objects.some((o: { apiVersion?: string }) => o.apiVersion !== "bench.example.com/v2")
    ) {
      throw new Error(
        `the target did not convert the review: HTTP ${answer.status} ${
          new TextDecoder().decode(answer.body).slice(0, 300)
        }`,
      );
    }
  } finally {
    conn.close();
  }
}

/**
 * The server's memory over the run, from /proc (Linux; nothing elsewhere): the kernel's peak
 * resident set (`VmHWM`, which counts the mapped executable too) and the largest anonymous resident
 * set sampled every 100 ms (`RssAnon`: heap and buffers, what a container cannot reclaim). `taskset`
 * execs the server, so the child's pid is the server's.
 */
class MemoryWatch {
  peakAnonMiB = 0;
  #timer: ReturnType<typeof setInterval>;
  constructor(readonly pid: number) {
    this.#timer = setInterval(() => void this.#sample(), 100);
  }
  async #sample(): Promise<void> {
    const kib = /^RssAnon:\s+(\d+) kB/m.exec(await this.#status());
    if (kib !== null) this.peakAnonMiB = Math.max(this.peakAnonMiB, Number(kib[1]) / 1024);
  }
  #status(): Promise<string> {
    return Deno.readTextFile(`/proc/${this.pid}/status`).catch(() => "");
  }
  /** Stops sampling; the peaks, or undefined without /proc. */
  async stop(): Promise<{ peakRssMiB: number; peakAnonMiB: number } | undefined> {
    clearInterval(this.#timer);
    await this.#sample();
    const hwm = /^VmHWM:\s+(\d+) kB/m.exec(await this.#status());
    return hwm === null
      ? undefined
      : { peakRssMiB: Number(hwm[1]) / 1024, peakAnonMiB: this.peakAnonMiB };
  }
}

/** CPU use over one run, in cores (CPU-seconds per second). */
interface CpuShare {
  server: number;
  /** The machine's busy time minus the server's: the load generator, and anything else running. */
  others: number;
}

/** The machine's busy and total ticks (`/proc/stat`) and the server's (`/proc/<pid>/stat`). */
interface CpuTicks {
  busy: number;
  total: number;
  server: number;
  cpus: number;
}

async function cpuTicks(pid: number): Promise<CpuTicks | undefined> {
  try {
    const stat = await Deno.readTextFile("/proc/stat");
    const fields = stat.split("\n")[0].trim().split(/\s+/).slice(1).map(Number);
    const idle = fields[3] + fields[4]; // idle + iowait
    const total = fields.slice(0, 8).reduce((a, b) => a + b, 0); // guest time is inside user
    const cpus = stat.split("\n").filter((l) => /^cpu\d+ /.test(l)).length;
    // Fields after the parenthesised command: utime and stime are the 12th and 13th.
    const own = await Deno.readTextFile(`/proc/${pid}/stat`);
    const after = own.slice(own.lastIndexOf(")") + 2).split(" ").map(Number);
    return { busy: total - idle, total, server: after[11] + after[12], cpus };
  } catch {
    return undefined; // no /proc: no CPU columns
  }
}

function cpuShare(a: CpuTicks | undefined, b: CpuTicks | undefined): CpuShare | undefined {
  if (a === undefined || b === undefined || b.total <= a.total) return undefined;
  const cores = (ticks: number) => ticks / (b.total - a.total) * b.cpus;
  const server = cores(b.server - a.server);
  return { server, others: Math.max(0, cores(b.busy - a.busy) - server) };
}

/** Requests in flight on average, by Little's law: throughput × mean latency. */
export function inFlight(r: Pick<Row, "reviewsPerSecond" | "meanMs">): number {
  return r.reviewsPerSecond * r.meanMs / 1000;
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1);
  return sorted[Math.max(0, i)];
}

const WRK_SCRIPT = `
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
local f = assert(io.open(os.getenv("DCO_BENCH_BODY"), "rb"))
wrk.body = f:read("*a")
f:close()
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    "DCO_WRK %d %d %d %d %d %d %d %d\\n", summary.requests, summary.duration,
    latency:percentile(50), latency:percentile(90), latency:percentile(99),
    latency:percentile(99.9), latency.mean, e.connect + e.read + e.write + e.status + e.timeout))
end
`;

async function wrk(
  url: string,
  bodyFile: string,
  scriptFile: string,
  connections: number,
  seconds: number,
  pin: string[],
): Promise<Omit<Row, "tool" | "shape" | "connections">> {
  const out = await new Deno.Command(pin[0] ?? "wrk", {
    args: [
      ...pin.slice(1),
      ...(pin.length > 0 ? ["wrk"] : []),
      "-t1",
      `-c${connections}`,
      `-d${seconds}s`,
      "--timeout",
      "10s",
      "-s",
      scriptFile,
      url,
    ],
    env: { DCO_BENCH_BODY: bodyFile },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout);
  const line = text.split("\n").find((l) => l.startsWith("DCO_WRK "));
  if (!out.success || line === undefined) {
    throw new Error(`wrk failed: ${text}${new TextDecoder().decode(out.stderr)}`);
  }
  const [requests, durationUs, p50, p90, p99, p999, mean, errors] = line.split(" ").slice(1)
    .map(Number);
  return {
    reviewsPerSecond: requests / (durationUs / 1e6),
    p50Ms: p50 / 1000,
    p90Ms: p90 / 1000,
    p99Ms: p99 / 1000,
    p999Ms: p999 / 1000,
    meanMs: mean / 1000,
    errors,
  };
}

async function h2load(
  url: string,
  bodyFile: string,
  dir: string,
  connections: number,
  seconds: number,
  pin: string[],
): Promise<Omit<Row, "tool" | "shape" | "connections">> {
  const log = `${dir}/h2load-${connections}.log`;
  await Deno.remove(log).catch(() => {});
  const args = [
    "--h1",
    "-c",
    String(connections),
    "-m",
    "1",
    "-D",
    String(seconds),
    "-d",
    bodyFile,
    "-H",
    "content-type: application/json",
    `--log-file=${log}`,
    url,
  ];
  const argv = pin.length > 0 ? [...pin, "h2load", ...args] : ["h2load", ...args];
  await run(argv);
  // One line per request: start time (µs since epoch), HTTP status, duration (µs).
  const lines = (await Deno.readTextFile(log)).trim().split("\n").filter((l) => l !== "");
  const durations = new Float64Array(lines.length);
  let errors = 0;
  let sum = 0;
  let first = Infinity;
  let last = -Infinity;
  lines.forEach((l, i) => {
    const [start, status, duration] = l.split("\t").map(Number);
    if (status !== 200) errors++;
    durations[i] = duration;
    sum += duration;
    first = Math.min(first, start);
    last = Math.max(last, start + duration);
  });
  durations.sort();
  const wallS = (last - first) / 1e6;
  return {
    reviewsPerSecond: lines.length / wallS,
    p50Ms: percentile(durations, 50) / 1000,
    p90Ms: percentile(durations, 90) / 1000,
    p99Ms: percentile(durations, 99) / 1000,
    p999Ms: percentile(durations, 99.9) / 1000,
    meanMs: sum / lines.length / 1000,
    errors,
  };
}

/**
 * The server's `--trace-gc-nvp` lines (on its stdout): V8 prints one JSON object per collection
 * whose `allocated` is the bytes allocated since the previous one, so a sum over the collections
 * of a window is what the window allocated (to within one young generation at its edges).
 */
/** Bytes one collection cycle of a pod's isolate can report allocated (far above any real one). */
const MAX_PLAUSIBLE_ALLOCATED = 4 * 1024 ** 3;

class GcTape {
  readonly allocated: number[] = [];
  /** Each collection's pause (ms), in the same order. */
  readonly pauses: number[] = [];
  newSpaceCapacity = 0;
  /** Takes one stdout line of the server. */
  line = (line: string) => {
    // Fields, not JSON.parse: the Worker isolates print too, and lines can interleave — two
    // numbers run together read as one absurd one, so a value no young generation holds is dropped.
    const allocated = /"allocated":(\d+)/.exec(line);
    if (allocated === null || Number(allocated[1]) > MAX_PLAUSIBLE_ALLOCATED) return;
    this.allocated.push(Number(allocated[1]));
    this.pauses.push(Number(/"pause":([\d.]+)/.exec(line)?.[1] ?? 0));
    const capacity = /"new_space_capacity":(\d+)/.exec(line);
    if (capacity !== null) this.newSpaceCapacity = Number(capacity[1]);
  };
}

/** h2load `-n`: exactly `requests` reviews on one connection (or `connections`). */
async function h2loadCount(
  url: string,
  bodyFile: string,
  requests: number,
  connections: number,
  pin: string[],
): Promise<void> {
  const args = ["--h1", "-c", String(connections), "-m", "1", "-n", String(requests)];
  args.push("-d", bodyFile, "-H", "content-type: application/json", url);
  const out = await run(pin.length > 0 ? [...pin, "h2load", ...args] : ["h2load", ...args]);
  const m = /(\d+) succeeded/.exec(out);
  if (m === null || Number(m[1]) !== requests) {
    throw new Error(`h2load did not complete ${requests} reviews: ${out}`);
  }
}

const settle = () => new Promise((r) => setTimeout(r, 300));

/** Bytes the server allocated per review over `requests` reviews after a warm-up. */
async function allocationPerReview(
  tape: GcTape,
  url: string,
  bodyFile: string,
  requests: number,
  pin: string[],
): Promise<
  {
    bytesPerReview: number;
    collections: number;
    edgeBytes: number;
    gcMs: number;
    maxPauseMs: number;
  }
> {
  await h2loadCount(url, bodyFile, Math.max(1000, Math.floor(requests / 5)), 1, pin);
  await settle();
  const from = tape.allocated.length;
  await h2loadCount(url, bodyFile, requests, 1, pin);
  await settle();
  const window = tape.allocated.slice(from);
  const sum = window.reduce((a, b) => a + b, 0);
  const pauses = tape.pauses.slice(from);
  return {
    gcMs: pauses.reduce((a, b) => a + b, 0),
    maxPauseMs: Math.max(0, ...pauses),
    bytesPerReview: sum / requests,
    collections: window.length,
    edgeBytes: tape.newSpaceCapacity,
  };
}

function fmt(n: number): string {
  return n >= 100 ? n.toFixed(0) : n >= 10 ? n.toFixed(1) : n.toFixed(2);
}

async function main() {
  const { values } = parseArgs({
    args: Deno.args,
    options: {
      duration: { type: "string", default: "10" },
      warmup: { type: "string", default: "2" },
      shapes: { type: "string", default: "1x2,1x10,10x10,100x2" },
      connections: { type: "string", default: "1,8" },
      tools: { type: "string", default: "wrk,h2load" },
      "server-cpus": { type: "string", default: "0" },
      "client-cpus": { type: "string", default: "1" },
      "v8-flags": { type: "string", default: "" },
      workers: { type: "string", default: "1" },
      "inline-max-bytes": { type: "string", default: "auto" },
      alloc: { type: "string", default: "0" },
      json: { type: "boolean", default: false },
    },
  });
  const seconds = Number(values.duration);
  const warmup = Number(values.warmup);
  if (!(seconds > 0 && seconds <= MAX_DURATION_S) || !(warmup >= 0 && warmup <= MAX_DURATION_S)) {
    throw new Error(`--duration and --warmup must be in (0, ${MAX_DURATION_S}] seconds`);
  }
  const shapes = values.shapes.split(",").map(parseShape);
  const connections = values.connections.split(",").map(Number);
  const tools = values.tools.split(",").map((t) => t.trim()).filter((t) => t !== "");
  for (const t of tools) {
    if (t !== "wrk" && t !== "h2load") throw new Error(`--tools: unknown tool "${t}"`);
    if (!(await have(t))) {
      throw new Error(`${t} is not installed (Debian: apt-get install wrk nghttp2-client)`);
    }
  }
  const pinned = await have("taskset");
  const clientPin = pinned ? ["taskset", "-c", values["client-cpus"]] : [];

  const allocRequests = Number(values.alloc);
  if (!(Number.isInteger(allocRequests) && allocRequests >= 0 && allocRequests <= 1_000_000)) {
    throw new Error("--alloc must be a number of reviews in [0, 1000000]");
  }
  if (allocRequests > 0 && !(await have("h2load"))) throw new Error("--alloc needs h2load");

  const tape = allocRequests > 0 ? new GcTape() : undefined;
  const dir = await Deno.makeTempDir({ prefix: "dco-bench-" });
  const target = await startConversionTarget(dir, {
    cpus: pinned ? values["server-cpus"] : undefined,
    v8Flags: [values["v8-flags"], allocRequests > 0 ? "--trace-gc-nvp" : ""].filter((f) => f !== "")
      .join(","),
    args: [values.workers, values["inline-max-bytes"]],
    listeners: Number(values.workers),
    onLine: tape?.line,
  });
  const allocations: { shape: string; bytesPerReview: number; gcMs: number; maxPauseMs: number }[] =
    [];
  const url = `https://127.0.0.1:${target.port}${target.path}`;
  const scriptFile = `${dir}/post.lua`;
  await Deno.writeTextFile(scriptFile, WRK_SCRIPT);
  const rows: Row[] = [];
  const watch = new MemoryWatch(target.child.pid);
  let memory: Awaited<ReturnType<MemoryWatch["stop"]>>;
  try {
    for (const shape of shapes) {
      const body = reviewBody(shape);
      const bodyFile = `${dir}/review-${shape.objects}x${shape.objectKB}.json`;
      await Deno.writeTextFile(bodyFile, body);
      await verify(target.port, target.caFile, target.path, body, shape.objects);
      if (tape !== undefined) {
        const a = await allocationPerReview(tape, url, bodyFile, allocRequests, clientPin);
        allocations.push({ shape: shape.name, ...a });
        if (!values.json) {
          console.error(
            `${shape.name}: ${fmt(a.bytesPerReview / 1024)} KiB allocated per review ` +
              `(${a.collections} collections over ${allocRequests} reviews, ` +
              `${fmt(a.gcMs)} ms in GC pauses, longest ${fmt(a.maxPauseMs)} ms; ` +
              `± ${fmt(a.edgeBytes / 1048576)} MiB at the edges)`,
          );
        }
      }
      for (const tool of tools) {
        for (const c of connections) {
          const measure = (s: number) =>
            tool === "wrk"
              ? wrk(url, bodyFile, scriptFile, c, s, clientPin)
              : h2load(url, bodyFile, dir, c, s, clientPin);
          if (warmup > 0) await measure(warmup);
          const before = await cpuTicks(target.child.pid);
          const r = await measure(seconds);
          const cpu = cpuShare(before, await cpuTicks(target.child.pid));
          rows.push({ tool, shape: shape.name, connections: c, ...r, cpu });
          if (!values.json) {
            console.error(`${tool} ${shape.name} c=${c}: ${fmt(r.reviewsPerSecond)} reviews/s`);
          }
        }
      }
    }
    memory = await watch.stop();
  } finally {
    target.child.kill("SIGKILL");
    await target.child.status;
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
  if (values.json) {
    const inlineMaxBytes = target.inlineMaxBytes;
    console.log(
      JSON.stringify({ pinned, seconds, inlineMaxBytes, memory, rows, allocations }, null, 2),
    );
    return;
  }
  console.log(
    pinned
      ? `server on CPU ${values["server-cpus"]}, load generator on CPU ${
        values["client-cpus"]
      }, ${seconds} s per run`
      : `taskset not found: server and load generator are not pinned; ${seconds} s per run`,
  );
  console.log(
    `listener Workers (and pool Workers): ${values.workers}; reviews converted on the listener up to ` +
      `${target.inlineMaxBytes ?? "?"} bytes (--inline-max-bytes ${values["inline-max-bytes"]})`,
  );
  if (memory !== undefined) {
    console.log(
      `server memory over all runs: peak resident ${fmt(memory.peakRssMiB)} MiB, ` +
        `peak anonymous (heap and buffers) ${fmt(memory.peakAnonMiB)} MiB`,
    );
  }
  for (const a of allocations) {
    console.log(
      `allocated per review, ${a.shape}: ${fmt(a.bytesPerReview / 1024)} KiB; GC pauses ` +
        `${fmt(a.gcMs)} ms in all, longest ${fmt(a.maxPauseMs)} ms`,
    );
  }
  if (rows.length === 0) return;
  console.log(
    "| tool | review | connections | reviews/s | p50 ms | p90 ms | p99 ms | p99.9 ms | mean ms " +
      "| in flight | errors | server cores | others' cores |",
  );
  console.log("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
  for (const r of rows) {
    console.log(
      `| ${r.tool} | ${r.shape} | ${r.connections} | ${fmt(r.reviewsPerSecond)} | ${
        fmt(r.p50Ms)
      } | ` +
        `${fmt(r.p90Ms)} | ${fmt(r.p99Ms)} | ${fmt(r.p999Ms)} | ${fmt(r.meanMs)} | ` +
        `${fmt(inFlight(r))} | ${r.errors} | ${r.cpu === undefined ? "—" : fmt(r.cpu.server)} | ` +
        `${r.cpu === undefined ? "—" : fmt(r.cpu.others)} |`,
    );
  }
  console.log(
    "in flight = reviews/s × mean latency (Little's law); a closed loop of c connections " +
      "cannot exceed c. wrk's percentiles include the samples its coordinated-omission " +
      "correction adds (docs/operations.md#reading-the-load-generators), so its in flight is " +
      "above c when the server stalls; h2load's are the measured requests.",
  );
}

if (import.meta.main) await main();
