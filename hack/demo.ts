/**
 * `deno task demo [--once] [--example NAME] [--offline]`
 *
 * Default: the live demo (hack/demo/live.ts): a local control plane with dco's manager and
 * webhook server running as real processes, one example applied, its objects created and read at
 * every version; keeps running until Ctrl-C. `--once` exits after the story (0 on success).
 * `--example NAME` picks the story (default field-rename; the CRD stories run live).
 * `--offline`: the conversion engine over the examples, no cluster (hack/demo/offline.ts).
 */
import { CliError } from "../src/cli/args.ts";
import { checkExampleName, DEFAULT_LIVE_EXAMPLE } from "./demo/examples.ts";

const USAGE = `usage: deno task demo [--once] [--example NAME] [--offline]
  (none)          live: a local control plane, the manager and a webhook server as real
                  processes, example ${DEFAULT_LIVE_EXAMPLE} applied; keeps running until Ctrl-C
  --once          run the live story and exit (0 when every read matched)
  --example NAME  the story to run (see examples/README.md); with --offline, only that one
  --offline       the conversion engine over the examples, no cluster, no root needed`;

interface Args {
  once: boolean;
  offline: boolean;
  example?: string;
}

function parseArgs(argv: string[]): Args {
  const args: Args = { once: false, offline: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--once") args.once = true;
    else if (a === "--offline") args.offline = true;
    else if (a === "--example" || a.startsWith("--example=")) {
      const v = a.includes("=") ? a.slice(a.indexOf("=") + 1) : argv[++i];
      if (!v) throw new CliError("--example needs a name");
      args.example = v;
    } else if (a === "-h" || a === "--help") {
      console.log(USAGE);
      Deno.exit(0);
    } else throw new CliError(`unknown argument ${JSON.stringify(a)}`);
  }
  return args;
}

async function main(): Promise<number> {
  let args: Args;
  try {
    args = parseArgs(Deno.args);
    if (args.example !== undefined) await checkExampleName(args.example);
  } catch (e) {
    if (!(e instanceof CliError)) throw e;
    console.error(`error: ${e.message}\n${USAGE}`);
    return 2;
  }
  if (args.offline) {
    const { runOffline } = await import("./demo/offline.ts");
    return await runOffline(args.example);
  }
  const { runLive } = await import("./demo/live.ts");
  return await runLive({ example: args.example ?? DEFAULT_LIVE_EXAMPLE, once: args.once });
}

Deno.exit(await main());
