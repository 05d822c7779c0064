/**
 * Runs the real `convctl` entry point as a subprocess (as users and CI do) and captures its
 * streams and exit code. Paths are relative to the repository root, the subprocess' cwd.
 */
import { stringify } from "yaml";

export const ROOT = new URL("../../", import.meta.url).pathname;

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

export async function convctl(...args: string[]): Promise<RunResult> {
  const command = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--quiet",
      "--allow-read",
      "--allow-env",
      "--allow-write",
      "src/main/convctl.ts",
      ...args,
    ],
    cwd: ROOT,
    env: { NO_COLOR: "1", RUST_BACKTRACE: "0" },
    stdout: "piped",
    stderr: "piped",
  });
  const { code, stdout, stderr } = await command.output();
  const decoder = new TextDecoder();
  return { code, stdout: decoder.decode(stdout), stderr: decoder.decode(stderr) };
}

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

export const FIELD_RENAME = {
  config: "examples/field-rename/config.yaml",
  crd: "examples/field-rename/crd.yaml",
  samples: "examples/field-rename/samples",
};

/** The field-rename example's config with other rules (and optionally other spec fields). */
export function widgetConfig(rules: unknown[], spec: Record<string, unknown> = {}): unknown {
  return {
    apiVersion: "terasky.com/v1alpha1",
    kind: "CRDConversionConfig",
    metadata: { name: "widgets-test" },
    spec: {
      targetCRD: { name: "widgets.demo.example.com" },
      hubVersion: "v2",
      spokes: [{ version: "v1", rules }],
      ...spec,
    },
  };
}

export const RENAME_RULE = {
  strategy: "FieldRename",
  fieldRename: { hubPath: "spec.storageGB", spokePath: "spec.storageSize" },
};
