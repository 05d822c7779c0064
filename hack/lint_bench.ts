/**
 * How long `convctl lint` takes over a tree of 200 config/schema pairs, next to checking the same
 * pairs with 200 separate `convctl validate` invocations (what a shell loop or a pre-commit hook per
 * file would do). Prints the numbers; the tree lives in a temporary directory.
 *
 *   bash hack/deno.sh run -A hack/lint_bench.ts [PAIRS] [--concurrency N]
 */
import { writeLintTree } from "../tests/support/lint_tree.ts";

const ROOT = new URL("../", import.meta.url).pathname;
const pairs = Number(Deno.args.find((a) => /^\d+$/.test(a)) ?? 200);
const concurrencyAt = Deno.args.indexOf("--concurrency");
const concurrency = concurrencyAt >= 0 ? ["--concurrency", Deno.args[concurrencyAt + 1]] : [];

async function convctl(args: string[], cwd: string): Promise<number> {
  const { code } = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--quiet",
      "--allow-read",
      "--allow-env",
      "--allow-write",
      `${ROOT}src/main/convctl.ts`,
      ...args,
    ],
    cwd,
    stdout: "null",
    stderr: "null",
  }).output();
  return code;
}

async function timed(run: () => Promise<void>): Promise<number> {
  const start = performance.now();
  await run();
  return (performance.now() - start) / 1000;
}

const dir = await writeLintTree(pairs);
try {
  await convctl(["version"], dir); // warm the module cache, as any second run is
  const pad = (i: number) => String(i).padStart(3, "0");
  const lint = await timed(async () => {
    const code = await convctl(["lint", ".", ...concurrency], dir);
    if (code !== 0) throw new Error(`lint exited ${code}`);
  });
  const validate = await timed(async () => {
    for (let i = 0; i < pairs; i++) {
      const f = `widget-${pad(i)}.yaml`;
      const code = await convctl(["validate", "-c", `configs/${f}`, "--crd", `crds/${f}`], dir);
      if (code !== 0) throw new Error(`validate ${f} exited ${code}`);
    }
  });
  const cpus = navigator.hardwareConcurrency;
  console.log(`${pairs} config/schema pairs, ${cpus} CPU(s), Deno ${Deno.version.deno}`);
  console.log(
    `  convctl lint (one process${concurrency.length ? `, ${concurrency.join(" ")}` : ""}): ${
      lint.toFixed(2)
    } s`,
  );
  console.log(
    `  ${pairs} × convctl validate:          ${validate.toFixed(2)} s (${
      (validate / pairs).toFixed(2)
    } s each)`,
  );
  console.log(`  speed-up:                           ${(validate / lint).toFixed(1)}×`);
} finally {
  await Deno.remove(dir, { recursive: true });
}
