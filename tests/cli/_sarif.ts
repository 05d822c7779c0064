/**
 * A validator for SARIF 2.1.0 logs: the official schema (rtm.5) as the `@microsoft/jest-sarif`
 * npm package ships it (MIT), vendored in tests/cli/fixtures. It is draft-04 and uses a pattern JS
 * reads only without the `u` flag.
 */
import AjvModule from "ajv-draft-04";
import { ROOT } from "./_convctl.ts";

// A CommonJS module: its class is the default export's `default`.
const Ajv = (AjvModule as unknown as { default: typeof AjvModule.default }).default;

export interface SarifValidator {
  (log: unknown): boolean;
  errors?: unknown;
}

export async function sarifValidator(): Promise<SarifValidator> {
  const schema = JSON.parse(
    await Deno.readTextFile(`${ROOT}tests/cli/fixtures/sarif-schema-2.1.0.json`),
  );
  const ajv = new Ajv({ allErrors: true, strict: false, unicodeRegExp: false });
  for (const format of ["uri", "uri-reference", "date-time"]) ajv.addFormat(format, true);
  return ajv.compile(schema);
}
