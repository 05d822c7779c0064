/**
 * convctl entry point: pick the command, parse its flags, run it, exit with its code.
 * Tool and usage errors print `error: <message>` on stderr and exit 2.
 */
import {
  CliError,
  commandHelp,
  COMMANDS,
  errorLine,
  type Io,
  parseFlags,
  processIo,
  topLevelHelp,
} from "../cli/mod.ts";
import { didYouMean } from "../lib/edit_distance.ts";

export async function convctl(args: readonly string[], io: Io): Promise<number> {
  const [name, ...rest] = args;
  if (name === undefined || name === "help" || name === "-h" || name === "--help") {
    const topic = name === "help" ? COMMANDS.get(rest[0] ?? "") : undefined;
    io.out(topic !== undefined ? commandHelp(topic.spec) : topLevelHelp());
    return 0;
  }
  try {
    const command = COMMANDS.get(name);
    if (command === undefined) {
      const hint = didYouMean(name, COMMANDS.keys());
      throw new CliError(`unknown command "${name}" for "convctl"${hint} (run "convctl help")`);
    }
    const flags = parseFlags(rest, command.spec.flags);
    if (flags.bool("help")) {
      io.out(commandHelp(command.spec));
      return 0;
    }
    return await command.run(flags, io);
  } catch (e) {
    if (!(e instanceof CliError)) throw e;
    io.err(errorLine(io, e.message));
    return 2;
  }
}

if (import.meta.main) {
  Deno.exit(await convctl(Deno.args, processIo()));
}
