/** Integer flag values (`--count`, `--port`, `--concurrency`): digits only, within a range. */
import { CliError } from "./args.ts";

/** A non-negative integer flag within [min, max], or `dflt` when the flag is absent. */
export function parseInteger(
  flag: string,
  raw: string | undefined,
  dflt: number,
  range: [number, number],
): number {
  if (raw === undefined) return dflt;
  const [min, max] = range;
  const n = /^\d+$/.test(raw.trim()) ? Number(raw.trim()) : NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    const shown = JSON.stringify(raw);
    throw new CliError(
      `invalid value ${shown} for --${flag}: expected an integer from ${min} to ${max}`,
    );
  }
  return n;
}
