/** Config, CRD and sample files the convctl tests write into temporary directories. */
import { stringify } from "yaml";

const tempDirs: string[] = [];
globalThis.addEventListener("unload", () => {
  for (const dir of tempDirs) Deno.removeSync(dir, { recursive: true });
});

/** A fresh temporary directory with the given files (YAML-serialised unless given as text). */
export async function tempFiles(files: Record<string, unknown>): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "convctl-test-" });
  tempDirs.push(dir);
  for (const [name, content] of Object.entries(files)) {
    const path = `${dir}/${name}`;
    await Deno.mkdir(path.slice(0, path.lastIndexOf("/")), { recursive: true });
    await Deno.writeTextFile(path, typeof content === "string" ? content : stringify(content));
  }
  return dir;
}

/** A conversion config of `kind` (CRD or XRD) named `name` for the target `target`. */
export function conversionConfig(
  kind: "CRD" | "XRD",
  name: string,
  target: string,
  spec: Record<string, unknown>,
): unknown {
  return {
    apiVersion: "terasky.com/v1alpha1",
    kind: `${kind}ConversionConfig`,
    metadata: { name },
    spec: { [`target${kind}`]: { name: target }, ...spec },
  };
}

/** The field-rename example's config with other rules (and optionally other spec fields). */
export function widgetConfig(rules: unknown[], spec: Record<string, unknown> = {}): unknown {
  return conversionConfig("CRD", "widgets-test", "widgets.demo.example.com", {
    hubVersion: "v2",
    spokes: [{ version: "v1", rules }],
    ...spec,
  });
}

/**
 * A namespaced CRD (or Crossplane v2 XRD) `<plural>.demo.example.com` of kind `kind` in group
 * `demo.example.com`, with these versions.
 */
export function schemaDocument(
  of: "CRD" | "XRD",
  kind: string,
  plural: string,
  versions: unknown[],
): unknown {
  return {
    apiVersion: of === "CRD" ? "apiextensions.k8s.io/v1" : "apiextensions.crossplane.io/v2",
    kind: of === "CRD" ? "CustomResourceDefinition" : "CompositeResourceDefinition",
    metadata: { name: `${plural}.demo.example.com` },
    spec: { group: "demo.example.com", scope: "Namespaced", names: { kind, plural }, versions },
  };
}

/** A version's `openAPIV3Schema`: an object whose `spec` has these properties. */
export function specSchema(properties: Record<string, unknown>): unknown {
  return {
    openAPIV3Schema: { type: "object", properties: { spec: { type: "object", properties } } },
  };
}

export const RENAME_RULE = {
  strategy: "FieldRename",
  fieldRename: { hubPath: "spec.storageGB", spokePath: "spec.storageSize" },
};
