/**
 * The conversion engine: pure TypeScript shared by convctl, the manager and the webhook server.
 *
 *   const source = schemaSourceFromCRD(crd);          // or schemaSourceFromXRD(xrd)
 *   const result = analyze(source, config.spec);      // diagnostics, verdicts, plans (data)
 *   const router = createRouter(result);              // link plans into closures once
 *   const out = convertObject(router, obj, "example.com/v2");
 *
 * Plans are plain structured-cloneable data (`PlanData`), so they can be compiled in a Worker and
 * linked where they are used. Nothing here imports a runtime API.
 */
export * from "./types.ts";
export { analyze } from "./analyze.ts";
export { structuralError, translateRules } from "./translate.ts";
export {
  convertObject,
  convertWithPlan,
  createRouter,
  type DeferredPlans,
  type LinkedPlan,
  linkPlan,
  Router,
  versionOf,
} from "./convert.ts";
export { ConversionError, deepCopy, jsonEqual } from "./value.ts";
export {
  generatedCRDNames,
  injectedPathsForXRD,
  resolveXRDScope,
  schemaSourceFromCRD,
  schemaSourceFromXRD,
} from "./source.ts";
export { classify, flatten, type Leaf, type NodeInfo, type NodeKind } from "./schema.ts";
export { invertRule, RehubError, rehubSpec, withStorageVersion } from "./rehub.ts";
export { implementedStrategies } from "./strategies/mod.ts";
export { TranslationError } from "./strategy.ts";
