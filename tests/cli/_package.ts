/**
 * Crossplane package tarballs for the `--package` tests: a `package.yaml` stream in one gzip layer
 * of an OCI image layout, or of a `docker save` tarball.
 */
import { Buffer } from "node:buffer";
import tar from "tar-stream";
import { stringify } from "yaml";

async function tarOf(files: Record<string, Uint8Array | string>): Promise<Uint8Array> {
  const pack = tar.pack();
  for (const [name, content] of Object.entries(files)) {
    pack.entry({ name }, typeof content === "string" ? content : Buffer.from(content));
  }
  pack.finalize();
  const chunks: Uint8Array[] = [];
  for await (const chunk of pack) chunks.push(chunk as Uint8Array);
  return new Uint8Array(Buffer.concat(chunks));
}

async function gzip(bytes: Uint8Array): Promise<Uint8Array> {
  const stream = new Blob([new Uint8Array(bytes)]).stream().pipeThrough(
    new CompressionStream("gzip"),
  );
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

async function digest(bytes: Uint8Array): Promise<string> {
  const hash = new Uint8Array(await crypto.subtle.digest("SHA-256", new Uint8Array(bytes)));
  return [...hash].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** A package holding these documents (plus a Configuration) as `layout` writes images. */
export async function packageTarball(
  docs: unknown[],
  layout: "oci" | "docker-save",
): Promise<Uint8Array> {
  const meta = {
    apiVersion: "meta.pkg.crossplane.io/v1",
    kind: "Configuration",
    metadata: { name: "platform" },
  };
  const stream = [meta, ...docs].map((d) => stringify(d)).join("---\n");
  const layer = await gzip(await tarOf({ "package.yaml": stream }));
  const layerHex = await digest(layer);
  if (layout === "docker-save") {
    const manifest = [{
      Config: "config.json",
      RepoTags: ["platform:v1"],
      Layers: [`${layerHex}/layer.tar`],
    }];
    return await tarOf({
      "manifest.json": JSON.stringify(manifest),
      "config.json": "{}",
      [`${layerHex}/layer.tar`]: layer,
    });
  }
  const config = new TextEncoder().encode("{}");
  const configHex = await digest(config);
  const manifest = new TextEncoder().encode(JSON.stringify({
    schemaVersion: 2,
    config: { digest: `sha256:${configHex}`, size: config.length },
    layers: [{ digest: `sha256:${layerHex}`, size: layer.length }],
  }));
  const manifestHex = await digest(manifest);
  return await tarOf({
    "oci-layout": JSON.stringify({ imageLayoutVersion: "1.0.0" }),
    "index.json": JSON.stringify({
      schemaVersion: 2,
      manifests: [{ digest: `sha256:${manifestHex}`, size: manifest.length }],
    }),
    [`blobs/sha256/${configHex}`]: config,
    [`blobs/sha256/${manifestHex}`]: manifest,
    [`blobs/sha256/${layerHex}`]: layer,
  });
}
