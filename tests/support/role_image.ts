/**
 * A role's "image" for the test kubelet, as the chart's Deployments run it: `deno run <flags of
 * the deno.json task> <entry>`, relative read paths made absolute (the task runs from the repo
 * root; a Pod's process does not). The tasks' flags are what the Dockerfile's binaries are
 * compiled with (tests/repo/dockerfile_test.ts).
 */
import assert from "node:assert/strict";
import type { PodImage } from "./kubelet.ts";

const REPO = new URL("../../", import.meta.url).pathname;

/** The image of the deno.json task `task` (e.g. `manager`, `webhook-server`). */
export async function roleImage(task: string): Promise<PodImage> {
  const tasks = JSON.parse(await Deno.readTextFile(`${REPO}deno.json`)).tasks as Record<
    string,
    string
  >;
  const words = tasks[task].split(/\s+/);
  assert.deepEqual(words.slice(0, 2), ["deno", "run"], `task ${task} is a deno run`);
  const entry = words.at(-1)!;
  const flags = words.slice(2, -1).map((f) => {
    const m = /^(--allow-(?:read|write))=(.*)$/.exec(f);
    if (!m) return f;
    const paths = m[2].split(",").map((p) => (p.startsWith("/") ? p : `${REPO}${p}`));
    return `${m[1]}=${paths.join(",")}`;
  });
  return {
    entrypoint: [Deno.execPath(), "run", ...flags, `${REPO}${entry}`],
    env: { NO_COLOR: "1", RUST_BACKTRACE: "0" },
  };
}
