/**
 * The versions a CRD or XRD file declares, with the lifecycle fields `plan` and `versions` read:
 * served, hub (XRD `referenceable` / CRD `storage`), deprecated and its warning.
 */
import { generatedCRDNames } from "../engine/mod.ts";
import type { GeneratedCRD } from "../engine/source.ts";
import { isJsonObject } from "../lib/json.ts";
import { CliError } from "./args.ts";
import type { LoadedSchema } from "./load.ts";

export interface DeclaredVersion {
  name: string;
  served: boolean;
  storage: boolean;
  deprecated: boolean;
  deprecationWarning?: string;
}

export function declaredVersions(schema: LoadedSchema): DeclaredVersion[] {
  const spec = isJsonObject(schema.raw.spec) ? schema.raw.spec : {};
  const raw = Array.isArray(spec.versions) ? spec.versions : [];
  return schema.source.versions.map((v) => {
    const block = raw.find((r) => isJsonObject(r) && r.name === v.name);
    const entry = isJsonObject(block) ? block : {};
    const out: DeclaredVersion = {
      name: v.name,
      served: v.served,
      storage: v.storage,
      deprecated: entry.deprecated === true,
    };
    if (typeof entry.deprecationWarning === "string") {
      out.deprecationWarning = entry.deprecationWarning;
    }
    return out;
  });
}

/** The CRDs a target's objects live in: the CRD itself, or the XRD's composite (and claim) CRD. */
export function targetCRDs(schema: LoadedSchema): GeneratedCRD[] {
  if (schema.source.kind === "CRD") {
    return [{ name: schema.source.name, role: "composite", namespaced: true }];
  }
  try {
    return generatedCRDNames(schema.raw);
  } catch (e) {
    throw new CliError(`XRD file ${schema.file}: ${(e as Error).message}`);
  }
}
