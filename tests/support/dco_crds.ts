/**
 * dco's own CustomResourceDefinitions (`terasky.com/v1alpha1`) as the chart ships them
 * (generated from the zod schemas by `deno task gen:crds`), for e2e tests that create configs and
 * servers in the test apiserver.
 */
import type * as k8s from "@kubernetes/client-node";
import { parse } from "yaml";

const CRD_DIR = new URL("../../charts/declarative-conversion-operator/crds/", import.meta.url);

export const DCO_CRDS: readonly k8s.V1CustomResourceDefinition[] = [
  "terasky.com_crdconversionconfigs.yaml",
  "terasky.com_xrdconversionconfigs.yaml",
  "terasky.com_conversionwebhookservers.yaml",
].map((file) =>
  parse(Deno.readTextFileSync(new URL(file, CRD_DIR))) as k8s.V1CustomResourceDefinition
);
