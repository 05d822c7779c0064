/**
 * The shape most op linkers share: read the value at `op.from`, do nothing when it is absent,
 * otherwise write what the op makes of it at `op.to`. A strategy then writes only the conversion.
 */
import type { OpLinker } from "../strategy.ts";
import type { JsonObject, JsonValue, OpData } from "../types.ts";
import { ABSENT, ConversionError, getPath, type Maybe, setPath, typeName } from "../value.ts";

/**
 * Builds a linker from `make(op, what)`, which runs once at link time and returns the per-value
 * conversion (`what` is the dotted source path, for messages). The conversion returns the value
 * to write, or ABSENT to write nothing; it throws ConversionError on bad data.
 */
export function valueLinker(
  make: (op: OpData, what: string) => (v: JsonValue) => Maybe,
): OpLinker {
  return (op) => {
    const from = op.from as string[];
    const to = op.to as string[];
    const convert = make(op, from.join("."));
    return (input: JsonObject, output: JsonObject) => {
      const v = getPath(input, from);
      if (v === ABSENT) return;
      const out = convert(v);
      if (out !== ABSENT) setPath(output, to, out);
    };
  };
}

/** "`what` is a <type>, not <want>": the error of a value of the wrong JSON type. */
export function wrongType(what: string, v: JsonValue, want: string): ConversionError {
  return new ConversionError(`${what} is a ${typeName(v)}, not ${want}`);
}
