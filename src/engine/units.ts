/**
 * Kubernetes quantities and Go durations: parsing with exact integer
 * arithmetic and canonical formatting, as `resource.Quantity` and `time.Duration` do.
 */

const QUANTITY = /^([+-]?)(\d+\.?\d*|\.\d+)(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?\d+)?$/;
const BINARY: Record<string, number> = { Ki: 1, Mi: 2, Gi: 3, Ti: 4, Pi: 5, Ei: 6 };
const DECIMAL: Record<string, number> = {
  n: -9,
  u: -6,
  m: -3,
  k: 3,
  M: 6,
  G: 9,
  T: 12,
  P: 15,
  E: 18,
};

function pow10(n: number): bigint {
  return 10n ** BigInt(n);
}

/** Parses a quantity into its milli-value, rounded away from zero; undefined when invalid. */
export function quantityToMillis(text: string): bigint | undefined {
  const m = QUANTITY.exec(text);
  if (m === null) return undefined;
  const [, sign, number, suffix = ""] = m;
  const dot = number.indexOf(".");
  const digits = dot < 0 ? number : number.slice(0, dot) + number.slice(dot + 1);
  let num = BigInt(digits === "" ? "0" : digits) * 1000n;
  let den = dot < 0 ? 1n : pow10(number.length - dot - 1);
  if (suffix in BINARY) {
    num *= 1024n ** BigInt(BINARY[suffix]);
  } else if (suffix !== "") {
    const exp = suffix in DECIMAL ? DECIMAL[suffix] : Number(suffix.slice(1));
    if (Math.abs(exp) > 1000) return undefined;
    if (exp >= 0) num *= pow10(exp);
    else den *= pow10(-exp);
  }
  let millis = num / den;
  if (num % den !== 0n) millis += 1n; // away from zero (num is non-negative here)
  return sign === "-" ? -millis : millis;
}

const SI_SUFFIX: Record<number, string> = {
  [-3]: "m",
  0: "",
  3: "k",
  6: "M",
  9: "G",
  12: "T",
  15: "P",
  18: "E",
};

/** Canonical decimal-SI spelling of a milli-value (`500m`, `1`, `2k`); never binary suffixes. */
export function formatMillis(millis: bigint): string {
  if (millis === 0n) return "0";
  const negative = millis < 0n;
  let mantissa = negative ? -millis : millis;
  let exp = -3;
  while (mantissa % 10n === 0n) {
    mantissa /= 10n;
    exp++;
  }
  const down = ((exp % 3) + 3) % 3;
  mantissa *= pow10(down);
  exp -= down;
  if (exp > 18) {
    mantissa *= pow10(exp - 18);
    exp = 18;
  }
  return (negative ? "-" : "") + mantissa.toString() + SI_SUFFIX[exp];
}

const NS_PER_UNIT: Record<string, number> = {
  ns: 1,
  us: 1e3,
  "\u00b5s": 1e3,
  "\u03bcs": 1e3,
  ms: 1e6,
  s: 1e9,
  m: 60e9,
  h: 3600e9,
};
const DURATION_PART = /(\d*)(?:\.(\d*))?(ns|us|\u00b5s|\u03bcs|ms|s|m|h)/y;
const INT64_MAX = (1n << 63n) - 1n;

/** Go `time.ParseDuration` in nanoseconds; undefined when invalid or out of int64 range. */
export function parseGoDuration(text: string): bigint | undefined {
  let s = text;
  let negative = false;
  if (s.startsWith("-") || s.startsWith("+")) {
    negative = s[0] === "-";
    s = s.slice(1);
  }
  if (s === "0") return 0n;
  if (s === "") return undefined;
  let total = 0n;
  let at = 0;
  while (at < s.length) {
    DURATION_PART.lastIndex = at;
    const m = DURATION_PART.exec(s);
    if (m === null) return undefined;
    const [whole, int, frac = "", unit] = m;
    if (int === "" && frac === "") return undefined;
    const perUnit = NS_PER_UNIT[unit];
    let part = BigInt(int === "" ? "0" : int) * BigInt(perUnit);
    if (frac !== "") {
      // Go computes the fraction in float64 and truncates, as here.
      part += BigInt(Math.trunc(Number(frac) * (perUnit / Math.pow(10, frac.length))));
    }
    total += part;
    if (total > INT64_MAX + (negative ? 1n : 0n)) return undefined;
    at += whole.length;
  }
  return negative ? -total : total;
}

/** Go `Duration.String` for a whole number of seconds (`300` → `5m0s`). */
export function formatGoSeconds(seconds: bigint): string {
  if (seconds === 0n) return "0s";
  const negative = seconds < 0n;
  let s = negative ? -seconds : seconds;
  const h = s / 3600n;
  s %= 3600n;
  const m = s / 60n;
  s %= 60n;
  let out: string;
  if (h > 0n) out = `${h}h${m}m${s}s`;
  else if (m > 0n) out = `${m}m${s}s`;
  else out = `${s}s`;
  return (negative ? "-" : "") + out;
}

/** Whether whole seconds fit Go's int64 nanoseconds (the reference wraps silently; we error). */
export function secondsFitDuration(seconds: bigint): boolean {
  const ns = seconds * 1_000_000_000n;
  return ns <= INT64_MAX && ns >= -INT64_MAX - 1n;
}
