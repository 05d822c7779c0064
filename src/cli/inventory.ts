/**
 * A target's objects as exported from a cluster (`kubectl get <plural> -A -o yaml`, and the CRDs
 * with `kubectl get crd <name> -o yaml`), read from a directory: the offline stand-in for the
 * live inventory `versions` and `retarget` walk. `List` documents are unwrapped; documents of
 * other kinds are ignored.
 */
import type { JsonObject } from "../engine/mod.ts";
import type { GeneratedCRD } from "../engine/source.ts";
import { isJsonObject } from "../lib/json.ts";
import { CliError } from "./args.ts";
import {
  groupOf,
  type LoadedSchema,
  parseYamlDocuments,
  readTextFile,
  walkYamlFiles,
} from "./load.ts";
import { targetCRDs } from "./schema_versions.ts";

export interface InventoryObject {
  /** The file it came from, relative to the directory. */
  file: string;
  crd: GeneratedCRD;
  object: JsonObject;
}

export interface Inventory {
  objects: InventoryObject[];
  /** `status.storedVersions` per CRD name, for the CRDs found (or given) with a status. */
  storedVersions: Map<string, string[]>;
}

function storedVersionsOf(crd: JsonObject): string[] | undefined {
  const status = isJsonObject(crd.status) ? crd.status : undefined;
  const stored = status?.storedVersions;
  return Array.isArray(stored) ? stored.filter((v) => typeof v === "string") : undefined;
}

const nameOf = (o: JsonObject) => isJsonObject(o.metadata) ? String(o.metadata.name ?? "") : "";

/** The kind of each CRD's objects: the target kind, or the XRD's claim kind. */
function kindsOf(schema: LoadedSchema, crds: GeneratedCRD[]): Map<string, GeneratedCRD> {
  const spec = isJsonObject(schema.raw.spec) ? schema.raw.spec : {};
  const claim = isJsonObject(spec.claimNames) ? String(spec.claimNames.kind ?? "") : "";
  const kinds = new Map<string, GeneratedCRD>();
  for (const crd of crds) kinds.set(crd.role === "claim" ? claim : schema.source.targetKind, crd);
  return kinds;
}

/** Every object of the target under `dir`; the schema file's own status counts too (a CRD). */
export async function loadInventory(dir: string, schema: LoadedSchema): Promise<Inventory> {
  const st = await Deno.stat(dir).catch((e: Error) => {
    throw new CliError(`cannot read objects directory ${dir}: ${e.message}`);
  });
  if (!st.isDirectory) throw new CliError(`objects path ${dir} is not a directory`);
  const crds = targetCRDs(schema);
  const kinds = kindsOf(schema, crds);
  const crdNames = new Set(crds.map((c) => c.name));
  const inventory: Inventory = { objects: [], storedVersions: new Map() };
  const own = storedVersionsOf(schema.raw);
  if (own !== undefined && schema.source.kind === "CRD") {
    inventory.storedVersions.set(schema.source.name, own);
  }
  const root = dir.replace(/\/+$/, "") || "/";
  const files: string[] = [];
  await walkYamlFiles(root, "", files);
  for (const rel of files) {
    const path = `${root}/${rel}`;
    const docs = parseYamlDocuments(await readTextFile(path, "object file"), path, true);
    const flat = docs.flatMap((d) =>
      isJsonObject(d) && d.kind === "List" && Array.isArray(d.items) ? d.items : [d]
    );
    for (const doc of flat) {
      if (!isJsonObject(doc)) continue;
      if (doc.kind === "CustomResourceDefinition" && crdNames.has(nameOf(doc))) {
        const stored = storedVersionsOf(doc);
        if (stored !== undefined) inventory.storedVersions.set(nameOf(doc), stored);
        continue;
      }
      const crd = kinds.get(String(doc.kind ?? ""));
      const apiVersion = typeof doc.apiVersion === "string" ? doc.apiVersion : "";
      if (crd === undefined || groupOf(apiVersion) !== schema.source.group) continue;
      inventory.objects.push({ file: rel, crd, object: doc });
    }
  }
  return inventory;
}
