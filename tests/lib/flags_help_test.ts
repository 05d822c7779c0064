import assert from "node:assert/strict";
import {
  type FieldFlag,
  FlagError,
  flagRecordUsage,
  HelpRequested,
  parseFlagRecord,
} from "../../src/lib/flags.ts";

interface Settings {
  address: string;
  name: string;
  verbose: boolean;
  workers: number;
  timeoutMs: number;
}

const TABLE: Record<string, FieldFlag<Settings>> = {
  "bind-address": { field: "address", kind: "string" },
  "address": { field: "address", kind: "string" },
  "name": { field: "name", kind: "string" },
  "verbose": { field: "verbose", kind: "bool" },
  "workers": { field: "workers", kind: "int" },
  "timeout": { field: "timeoutMs", parse: (raw) => Number(raw) * 1000 },
  "legacy-flag": { field: undefined, kind: "string" },
};
const DEFAULTS: Settings = {
  address: ":8080",
  name: "",
  verbose: false,
  workers: 2,
  timeoutMs: 90_000,
};

Deno.test("--help and -h ask for the usage instead of parsing, whatever else is given", () => {
  for (const args of [["--help"], ["-h"], ["--workers=x", "--help"], ["--nope", "-h"]]) {
    assert.throws(() => parseFlagRecord(args, TABLE, DEFAULTS), HelpRequested, args.join(" "));
  }
  // After `--` it is an argument, not a request for help.
  assert.throws(() => parseFlagRecord(["--", "--help"], TABLE, DEFAULTS), FlagError);
});

Deno.test("the usage lists every field once, with its aliases and its default", () => {
  assert.equal(
    flagRecordUsage(TABLE, DEFAULTS),
    [
      '  --bind-address, --address (default ":8080")',
      "  --name",
      "  --verbose (default false)",
      "  --workers (default 2)",
      "  --timeout (default 90s)",
    ].join("\n"),
  );
  let err: unknown;
  try {
    parseFlagRecord(["-h"], TABLE, DEFAULTS);
  } catch (e) {
    err = e;
  }
  assert.ok(err instanceof HelpRequested);
  assert.equal(err.usage, flagRecordUsage(TABLE, DEFAULTS));
});
