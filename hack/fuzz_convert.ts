/**
 * A bounded fuzzer for the conversion endpoint: random and mutated ConversionReviews (truncated,
 * flipped bytes, invalid UTF-8, wrong types, wrong uids, huge strings, deep nesting, duplicate
 * keys, mixed and unknown versions, bad metadata, wrong envelopes, random bytes) sent over TLS to
 * the real listener in a process of its own (hack/_fuzz_server.ts), every answer checked against
 * the rules of hack/_kep598.ts, and the process's liveness checked after every batch (still
 * running, and a valid review still answered with Success).
 *
 *   deno run -A hack/fuzz_convert.ts [--count 10000] [--seed 1] [--concurrency 4] [--batch 1000]
 *   deno run -A hack/fuzz_convert.ts --count 1000000          # the documented long run
 *   deno run -A hack/fuzz_convert.ts --seed S --only I        # replay review I of seed S
 *
 * Prints the counts per mutation kind and HTTP status, up to 20 violation samples, and a last line
 * `fuzz: N reviews, C crashes, V violations`; exits 1 when C or V is not 0. Bounds: loopback only,
 * at most 10,000,000 reviews, at most 64 connections, at most `--max-seconds` (default 3600).
 */
import { parseArgs } from "node:util";
import { createCA } from "../tests/support/certs.ts";
import { syntheticReview } from "../src/webhook/convert/_synthetic.ts";
import { type RawAnswer, RawConnection } from "./_raw_http.ts";
import { fuzzReview } from "./_fuzz_reviews.ts";
import { kep598Violations } from "./_kep598.ts";

const MAX_COUNT = 10_000_000;
const MAX_CONCURRENCY = 64;
const SAMPLES = 20;

export interface FuzzReport {
  reviews: number;
  crashes: number;
  violations: number;
  livenessChecks: number;
  seconds: number;
  byKind: Record<string, number>;
  byStatus: Record<string, number>;
  samples: string[];
}

const encoder = new TextEncoder();

function message(path: string, body: Uint8Array): Uint8Array {
  const head = encoder.encode(
    `POST ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n` +
      `content-length: ${body.byteLength}\r\n\r\n`,
  );
  const out = new Uint8Array(head.byteLength + body.byteLength);
  out.set(head);
  out.set(body, head.byteLength);
  return out;
}

async function startTarget(dir: string): Promise<{ port: number; child: Deno.ChildProcess }> {
  const ca = await createCA(dir, "dco-fuzz-ca");
  const leaf = await ca.issue({ commonName: "dco-fuzz", hosts: ["127.0.0.1"] });
  await Deno.writeTextFile(`${dir}/tls.crt`, leaf.cert);
  await Deno.writeTextFile(`${dir}/tls.key`, leaf.key);
  await Deno.writeTextFile(`${dir}/ca.crt`, ca.cert);
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      // The certificates, and the conversion Worker's modules.
      `--allow-read=${dir},${new URL("../src", import.meta.url).pathname}`,
      "--allow-net=127.0.0.1",
      "--allow-env",
      new URL("./_fuzz_server.ts", import.meta.url).pathname,
      dir,
    ],
    // The heap a webhook-server pod gets by default (256 MiB limit × 0.75), set the way the
    // manager sets it, so the listener derives the same request bounds as in a pod.
    env: { DENO_V8_FLAGS: "--max-old-space-size=192" },
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (!text.includes("\n")) {
    const { done, value } = await reader.read();
    if (done) throw new Error(`the fuzz target exited before listening: ${text}`);
    text += value;
  }
  reader.releaseLock();
  child.stdout.cancel().catch(() => {});
  return { port: JSON.parse(text.split("\n")[0]).port, child };
}

export async function fuzz(opts: {
  count: number;
  seed: number;
  concurrency: number;
  batch: number;
  maxSeconds: number;
  only?: number;
}): Promise<FuzzReport> {
  const dir = await Deno.makeTempDir({ prefix: "dco-fuzz-" });
  const { port, child } = await startTarget(dir);
  let exited = false;
  const status = child.status.then((s) => {
    exited = true;
    return s;
  });
  const url = new URL(`https://127.0.0.1:${port}/convert/widgets.bench.example.com`);
  const caCerts = [await Deno.readTextFile(`${dir}/ca.crt`)];
  const report: FuzzReport = {
    reviews: 0,
    crashes: 0,
    violations: 0,
    livenessChecks: 0,
    seconds: 0,
    byKind: {},
    byStatus: {},
    samples: [],
  };
  const note = (s: string) => {
    report.violations++;
    if (report.samples.length < SAMPLES) report.samples.push(s);
  };
  const valid = message(url.pathname, encoder.encode(JSON.stringify(syntheticReview(2))));
  const started = performance.now();
  const stopAt = started + opts.maxSeconds * 1000;
  const first = opts.only ?? 0;
  const last = opts.only === undefined ? opts.count : opts.only + 1;
  let next = first;

  const worker = async () => {
    let conn = await RawConnection.open(url, caCerts);
    const send = async (bytes: Uint8Array): Promise<RawAnswer> => {
      try {
        const answer = await conn.request(bytes);
        if (answer.closing) {
          conn.close();
          conn = await RawConnection.open(url, caCerts);
        }
        return answer;
      } catch (e) {
        conn.close();
        if (exited) throw new Error("the fuzz target exited");
        conn = await RawConnection.open(url, caCerts);
        throw e;
      }
    };
    while (next < last && performance.now() < stopAt && !exited) {
      const index = next++;
      const { kind, bytes } = fuzzReview(opts.seed, index);
      report.byKind[kind] = (report.byKind[kind] ?? 0) + 1;
      try {
        const answer = await send(message(url.pathname, bytes));
        report.byStatus[answer.status] = (report.byStatus[answer.status] ?? 0) + 1;
        for (const v of kep598Violations(bytes, answer)) {
          note(`seed ${opts.seed} review ${index} (${kind}): ${v}`);
        }
      } catch (e) {
        if (exited) break;
        note(`seed ${opts.seed} review ${index} (${kind}): no answer: ${(e as Error).message}`);
      }
      if (++report.reviews % opts.batch === 0) {
        report.livenessChecks++;
        const answer = await send(valid).catch((e) => e as Error);
        if (
          answer instanceof Error || !new TextDecoder().decode(answer.body).includes('"Success"')
        ) {
          note(`liveness after review ${index}: a valid review was not answered with Success`);
        }
      }
    }
    conn.close();
  };
  await Promise.all(Array.from({ length: opts.concurrency }, worker));
  report.seconds = (performance.now() - started) / 1000;
  if (exited) {
    report.crashes++;
    report.samples.push(`the fuzz target exited: ${JSON.stringify(await status)}`);
  } else {
    child.kill("SIGKILL");
    await status;
  }
  await Deno.remove(dir, { recursive: true });
  return report;
}

function formatReport(r: FuzzReport): string {
  const lines = [
    `reviews ${r.reviews} in ${r.seconds.toFixed(1)} s (${
      (r.reviews / r.seconds).toFixed(0)
    }/s), ` +
    `liveness checks ${r.livenessChecks}`,
    `by kind: ${Object.entries(r.byKind).sort().map(([k, n]) => `${k} ${n}`).join(", ")}`,
    `by HTTP status: ${Object.entries(r.byStatus).map(([k, n]) => `${k} ${n}`).join(", ")}`,
    ...r.samples.map((s) => `violation: ${s}`),
    `fuzz: ${r.reviews} reviews, ${r.crashes} crashes, ${r.violations} violations`,
  ];
  return lines.join("\n");
}

if (import.meta.main) {
  const { values } = parseArgs({
    args: Deno.args,
    options: {
      count: { type: "string", default: "10000" },
      seed: { type: "string", default: "1" },
      concurrency: { type: "string", default: "4" },
      batch: { type: "string", default: "1000" },
      "max-seconds": { type: "string", default: "3600" },
      only: { type: "string" },
    },
  });
  const count = Number(values.count);
  const concurrency = Number(values.concurrency);
  if (!(count > 0 && count <= MAX_COUNT) || !(concurrency > 0 && concurrency <= MAX_CONCURRENCY)) {
    console.error(`--count must be 1..${MAX_COUNT} and --concurrency 1..${MAX_CONCURRENCY}`);
    Deno.exit(2);
  }
  const report = await fuzz({
    count,
    seed: Number(values.seed),
    concurrency,
    batch: Number(values.batch),
    maxSeconds: Number(values["max-seconds"]),
    only: values.only === undefined ? undefined : Number(values.only),
  });
  console.log(formatReport(report));
  Deno.exit(report.crashes + report.violations === 0 ? 0 : 1);
}
