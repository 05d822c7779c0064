/** The soak's flags (hack/e2e_soak.ts). */
import { parseArgs } from "node:util";
import { DEFAULT_LEAK_RULE, type LeakRule } from "./leak.ts";
import type { SoakEnvelope } from "./result.ts";

/** Objects each worker owns. */
export const OBJECTS_PER_WORKER = 2;

/** The run's inputs. */
export interface SoakOptions {
  envelope: SoakEnvelope;
  leak: LeakRule;
  /** Fail the run when no replica could be judged. */
  requireLeakVerdict: boolean;
  out?: string;
}

/** Seconds from `480`, `480s` or `8m` (`--duration`, `--hold`). */
export function parseDuration(s: string): number {
  const m = /^(\d+(?:\.\d+)?)(s|m)?$/.exec(s.trim());
  if (!m) throw new Error(`duration ${s}: want seconds (480, 480s) or minutes (8m)`);
  return Number(m[1]) * (m[2] === "m" ? 60 : 1);
}

/** The flags, or an error message. */
export function parseSoakArgs(args: string[]): SoakOptions {
  const { values } = parseArgs({
    args,
    options: {
      duration: { type: "string", default: "480" },
      restarts: { type: "string", default: "4" },
      hold: { type: "string", default: "240" },
      out: { type: "string" },
      replicas: { type: "string", default: "2" },
      workers: { type: "string", default: "4" },
      "sample-interval": { type: "string", default: "2" },
      "leak-warmup": { type: "string", default: String(DEFAULT_LEAK_RULE.warmupSeconds) },
      "leak-window": { type: "string", default: String(DEFAULT_LEAK_RULE.windowSeconds) },
      "leak-drop": { type: "string", default: String(DEFAULT_LEAK_RULE.dropFraction) },
      "leak-min-span": { type: "string", default: String(DEFAULT_LEAK_RULE.minSpanSeconds) },
      "leak-max-slope": {
        type: "string",
        default: String(DEFAULT_LEAK_RULE.maxSlopeBytesPerSecond),
      },
      "require-leak-verdict": { type: "string", default: "true" },
    },
  });
  const int = (name: string, v: string, min: number) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < min) {
      throw new Error(`--${name} ${v}: want an integer ≥ ${min}`);
    }
    return n;
  };
  const pos = (name: string, v: string) => {
    const n = Number(v);
    if (!(n > 0)) throw new Error(`--${name} ${v}: want a positive number`);
    return n;
  };
  const nonNegative = (name: string, v: string) => {
    const n = Number(v);
    if (!(n >= 0)) throw new Error(`--${name} ${v}: want a number ≥ 0`);
    return n;
  };
  const fraction = (name: string, v: string) => {
    const n = Number(v);
    if (!(n > 0 && n < 1)) throw new Error(`--${name} ${v}: want a fraction between 0 and 1`);
    return n;
  };
  const bool = (name: string, v: string) => {
    if (v !== "true" && v !== "false") throw new Error(`--${name} ${v}: want true or false`);
    return v === "true";
  };
  const workers = int("workers", values.workers!, 1);
  return {
    envelope: {
      durationSeconds: parseDuration(values.duration!),
      restarts: int("restarts", values.restarts!, 0),
      holdSeconds: parseDuration(values.hold!),
      replicas: int("replicas", values.replicas!, 1),
      workers,
      objects: workers * OBJECTS_PER_WORKER,
      sampleIntervalSeconds: pos("sample-interval", values["sample-interval"]!),
    },
    leak: {
      warmupSeconds: nonNegative("leak-warmup", values["leak-warmup"]!),
      windowSeconds: pos("leak-window", values["leak-window"]!),
      dropFraction: fraction("leak-drop", values["leak-drop"]!),
      minSpanSeconds: nonNegative("leak-min-span", values["leak-min-span"]!),
      maxSlopeBytesPerSecond: pos("leak-max-slope", values["leak-max-slope"]!),
    },
    requireLeakVerdict: bool("require-leak-verdict", values["require-leak-verdict"]!),
    out: values.out,
  };
}
