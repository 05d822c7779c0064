/** The fleet as YAML manifest files, one file per kind of object, in the order they apply. */
import { stringify } from "yaml";
import type { JsonObject } from "../../src/lib/json.ts";
import type { Fleet } from "./generate.ts";

function documents(objects: readonly JsonObject[]): string {
  return objects.map((o) => `---\n${stringify(o, { lineWidth: 0 })}`).join("");
}

/** File name → text: the namespace, the CRDs, the conversion configs, the instances. */
export function fleetManifests(fleet: Fleet, namespace: string): Map<string, string> {
  const ns: JsonObject = { apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } };
  return new Map([
    ["00-namespace.yaml", documents([ns])],
    ["01-crds.yaml", documents(fleet.targets.map((t) => t.crd))],
    ["02-configs.yaml", documents(fleet.targets.map((t) => t.config))],
    ["03-instances.yaml", documents(fleet.targets.flatMap((t) => t.instances))],
  ]);
}
