/**
 * `--package FILE.xpkg [--target NAME]`: XRDs read from a local Crossplane package — an OCI image
 * saved as a tarball, in OCI image layout (`index.json`, `blobs/sha256/…`) or as `docker save`
 * writes it (`manifest.json` listing the layers). Each layer (gzip or plain tar) is searched for
 * the package's `package.yaml` stream. No registry and no cluster: references to either are
 * refused with a hint to pull the package to a file first.
 */
import { Buffer } from "node:buffer";
import tar from "tar-stream";
import { XRD_CONFIG_KIND } from "../api/mod.ts";
import type { JsonObject } from "../engine/mod.ts";
import { isJsonObject } from "../lib/json.ts";
import { CliError, type FlagSpec } from "./args.ts";
import { type LoadedSchema, loadSchema, parseYamlDocuments } from "./load.ts";

export const PACKAGE_FLAGS = {
  package: {
    name: "package",
    kind: "string",
    value: "FILE.xpkg",
    help: "a local Crossplane package (OCI tarball) holding the XRD, instead of -x",
  },
  target: {
    name: "target",
    kind: "string",
    value: "NAME",
    help: "the XRD to take from --package when it holds several",
  },
} as const satisfies Record<string, FlagSpec>;

const PULL_HINT =
  "pull it to a file first (`docker pull IMAGE` then `docker save IMAGE -o FILE.xpkg`) " +
  "and pass that file";

/** A cluster or registry reference the user meant as a package: refused with the hint. */
function refuseReference(ref: string): never {
  if (/^(configuration|configurationrevision)(\.[a-z0-9.]+)?\/\S+$/i.test(ref)) {
    throw new CliError(
      `--package ${ref} names a package in a cluster; convctl reads only package files: ${PULL_HINT}`,
    );
  }
  throw new CliError(`--package ${ref} looks like a registry reference; ${PULL_HINT}`);
}

/** Registry (`host/repo:tag`, `repo@sha256:…`) or cluster (`configuration/x`) spelling. */
function looksLikeReference(ref: string): boolean {
  return /^(configuration|configurationrevision)(\.[a-z0-9.]+)?\/\S+$/i.test(ref) ||
    /@sha256:[0-9a-f]{6,}$/i.test(ref) ||
    /^[a-z0-9.-]+(:\d+)?\/[a-z0-9._/-]+(:[\w.-]+)?$/i.test(ref) &&
      !/\.(xpkg|tar|tgz|gz)$/i.test(ref);
}

/** Every regular file of a tar archive (gzip-compressed or not), by path. */
export async function tarFiles(bytes: Uint8Array): Promise<Map<string, Uint8Array>> {
  let data = bytes;
  if (data[0] === 0x1f && data[1] === 0x8b) {
    const stream = new Blob([new Uint8Array(data)]).stream().pipeThrough(
      new DecompressionStream("gzip"),
    );
    data = new Uint8Array(await new Response(stream).arrayBuffer());
  }
  const files = new Map<string, Uint8Array>();
  const extract = tar.extract();
  extract.end(Buffer.from(data.buffer, data.byteOffset, data.byteLength));
  for await (const entry of extract) {
    const chunks: Uint8Array[] = [];
    for await (const chunk of entry) chunks.push(chunk as Uint8Array);
    if (entry.header.type === "file") {
      files.set(String(entry.header.name).replace(/^\.\//, ""), concat(chunks));
    }
  }
  return files;
}

function concat(chunks: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

function json(files: Map<string, Uint8Array>, path: string, file: string): JsonObject | unknown[] {
  const bytes = files.get(path);
  if (bytes === undefined) throw new CliError(`package ${file}: ${path} is missing`);
  try {
    return JSON.parse(new TextDecoder().decode(bytes));
  } catch (e) {
    throw new CliError(`package ${file}: ${path} is not JSON: ${(e as Error).message}`);
  }
}

const blobPath = (digest: unknown) => `blobs/${String(digest).replace(":", "/")}`;

/** The layer paths of the image, in order: OCI image layout or `docker save`. */
function layerPaths(files: Map<string, Uint8Array>, file: string): string[] {
  if (files.has("index.json")) {
    let manifest = json(files, "index.json", file);
    // An index may point at another index (multi-platform); follow to the first image manifest.
    for (
      let depth = 0;
      depth < 3 && isJsonObject(manifest) && Array.isArray(manifest.manifests);
      depth++
    ) {
      const first = manifest.manifests[0];
      if (!isJsonObject(first)) break;
      manifest = json(files, blobPath(first.digest), file);
    }
    if (isJsonObject(manifest) && Array.isArray(manifest.layers)) {
      return manifest.layers.filter(isJsonObject).map((l) => blobPath(l.digest));
    }
    throw new CliError(`package ${file}: index.json leads to no image manifest with layers`);
  }
  if (files.has("manifest.json")) {
    const manifest = json(files, "manifest.json", file);
    const first = Array.isArray(manifest) ? manifest[0] : undefined;
    if (isJsonObject(first) && Array.isArray(first.Layers)) return first.Layers.map(String);
    throw new CliError(`package ${file}: manifest.json lists no layers`);
  }
  throw new CliError(
    `package ${file} is neither an OCI image layout (index.json) nor a docker save tarball ` +
      "(manifest.json)",
  );
}

/** The XRD documents of the package's `package.yaml`. */
export async function packageXRDs(file: string): Promise<JsonObject[]> {
  let bytes: Uint8Array;
  try {
    bytes = await Deno.readFile(file);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound && looksLikeReference(file)) refuseReference(file);
    throw new CliError(`cannot read package ${file}: ${(e as Error).message}`);
  }
  const image = await tarFiles(bytes).catch((e: Error) => {
    if (e instanceof CliError) throw e;
    throw new CliError(`package ${file} is not a tar archive: ${e.message}`);
  });
  for (const path of layerPaths(image, file)) {
    const layer = image.get(path);
    if (layer === undefined) throw new CliError(`package ${file}: layer ${path} is missing`);
    const contents = await tarFiles(layer).catch((e: Error) => {
      throw new CliError(`package ${file}: layer ${path} is not a tar archive: ${e.message}`);
    });
    const stream = contents.get("package.yaml");
    if (stream === undefined) continue;
    const where = `${file}:package.yaml`;
    return parseYamlDocuments(new TextDecoder().decode(stream), where).filter(
      (d): d is JsonObject => isJsonObject(d) && d.kind === "CompositeResourceDefinition",
    );
  }
  throw new CliError(`package ${file} has no package.yaml in any layer`);
}

const nameOf = (d: JsonObject) => isJsonObject(d.metadata) ? String(d.metadata.name ?? "") : "";

/** The XRD `--target` names (or the only one) from the package, loaded as `-x` would load it. */
export async function loadPackageSchema(file: string, target?: string): Promise<LoadedSchema> {
  const xrds = await packageXRDs(file);
  const names = xrds.map(nameOf);
  if (xrds.length === 0) throw new CliError(`package ${file} holds no CompositeResourceDefinition`);
  let chosen: JsonObject | undefined;
  if (target !== undefined) {
    chosen = xrds.find((d) => nameOf(d) === target);
    if (chosen === undefined) {
      throw new CliError(`package ${file} has no XRD ${target} (XRDs: ${names.join(", ")})`);
    }
  } else if (xrds.length === 1) chosen = xrds[0];
  else {
    throw new CliError(
      `package ${file} holds ${xrds.length} XRDs: choose one with --target (${names.join(", ")})`,
    );
  }
  return await loadSchema(XRD_CONFIG_KIND, `${file}#${nameOf(chosen)}`, JSON.stringify(chosen));
}
