/**
 * Where a Worker's script is: `<name>.ts` beside the module that starts it in a source checkout,
 * `<name>.js` beside the role's entry in a bundle (`deno bundle` → dist/*.js, where every module's
 * `import.meta.url` is the bundle's). Loading it needs read access to it.
 */
export function siblingWorkerURL(name: string, importMetaUrl: string): URL {
  const ext = importMetaUrl.endsWith(".ts") ? "ts" : "js";
  return new URL(`./${name}.${ext}`, importMetaUrl);
}
