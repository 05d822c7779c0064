/**
 * CustomResourceDefinitions for dco's own kinds, generated from the zod schemas (issue #6).
 *
 * `z.toJSONSchema(schema, {io: "input", target: "openapi-3.0"})` gives almost an OpenAPI v3
 * schema; {@link toStructural} turns it into a *structural* one (what the apiserver requires of a CRD schema):
 * - `additionalProperties: false` (strict objects) is dropped: Kubernetes forbids it next to
 *   `properties`, and pruning already drops unknown fields;
 * - loose objects (`additionalProperties: {}`) and untyped nodes (`z.unknown()`) become
 *   `x-kubernetes-preserve-unknown-fields: true`;
 * - `anyOf` of an integer and a string becomes `x-kubernetes-int-or-string: true` (any other
 *   union is an error: it cannot be structural);
 * - integers get `format: int32` (`z.int32()`) or `int64` (anything else); the implied bounds
 *   are dropped, explicit ones kept;
 * - `pattern` is dropped when a `format` is set, and any pattern Go's RE2 cannot compile is an
 *   error; `$ref` / `definitions` are an error.
 */
import { z } from "zod";
import { RE2JS } from "re2js";
import { stringify } from "yaml";
import {
  CONFIG_GROUP,
  CONFIG_VERSION,
  CRD_CONFIG_KIND,
  CRDConversionConfigSpecSchema,
  XRD_CONFIG_KIND,
  XRDConversionConfigSpecSchema,
} from "./config.ts";
import {
  CRDConversionConfigStatusSchema,
  XRDConversionConfigStatusSchema,
} from "./config_status.ts";
import {
  ConversionWebhookServerSpecSchema,
  ConversionWebhookServerStatusSchema,
  WEBHOOK_SERVER_KIND,
} from "./server.ts";

/** A JSON-schema node as emitted / as written into the CRD. */
export type SchemaNode = { [key: string]: unknown };

const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;
const SAFE_MIN = Number.MIN_SAFE_INTEGER;
const SAFE_MAX = Number.MAX_SAFE_INTEGER;

function isNode(v: unknown): v is SchemaNode {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function isEmptyNode(v: unknown): boolean {
  return isNode(v) && Object.keys(v).length === 0;
}

/** True for the `anyOf: [{type: integer}, {type: string}]` zod emits for `int | string`. */
function isIntOrStringUnion(anyOf: unknown): boolean {
  if (!Array.isArray(anyOf) || anyOf.length !== 2) return false;
  const types = anyOf.map((n) => (isNode(n) ? n.type : undefined)).sort();
  return types[0] === "integer" && types[1] === "string";
}

/** The post-processing described in the module doc; returns a new node. `at` names it in errors. */
export function toStructural(node: SchemaNode, at = "<root>"): SchemaNode {
  if ("$ref" in node || "definitions" in node || "$defs" in node) {
    throw new Error(`${at}: $ref/definitions are not allowed in a CRD schema (recursive schema?)`);
  }
  const out: SchemaNode = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === "$schema" || key === "id" || key === "$id") continue;
    out[key] = value;
  }

  if ("anyOf" in out || "oneOf" in out || "allOf" in out) {
    if ("anyOf" in out && isIntOrStringUnion(out.anyOf)) {
      delete out.anyOf;
      delete out.type;
      out["x-kubernetes-int-or-string"] = true;
    } else {
      throw new Error(`${at}: unions other than int|string cannot be expressed structurally`);
    }
  }

  // Untyped node (z.unknown()/z.any()): free-form JSON.
  if (
    out.type === undefined && out["x-kubernetes-int-or-string"] !== true &&
    out["x-kubernetes-preserve-unknown-fields"] !== true
  ) {
    out["x-kubernetes-preserve-unknown-fields"] = true;
  }

  if (out.type === "integer") {
    const min = out.minimum;
    const max = out.maximum;
    out.format ??= min === INT32_MIN || max === INT32_MAX ? "int32" : "int64";
    if (min === INT32_MIN || min === SAFE_MIN) delete out.minimum;
    if (max === INT32_MAX || max === SAFE_MAX) delete out.maximum;
  }

  if (typeof out.pattern === "string") {
    if (out.format !== undefined) {
      delete out.pattern;
    } else {
      try {
        RE2JS.compile(out.pattern);
      } catch (e) {
        throw new Error(`${at}: pattern ${JSON.stringify(out.pattern)} is not RE2: ${e}`);
      }
    }
  }

  if (out.type === "object") {
    const props = isNode(out.properties) ? out.properties : undefined;
    const ap = out.additionalProperties;
    if (ap === false) delete out.additionalProperties;
    else if (ap === true || isEmptyNode(ap)) {
      delete out.additionalProperties;
      out["x-kubernetes-preserve-unknown-fields"] = true;
    } else if (isNode(ap)) {
      if (props !== undefined && Object.keys(props).length > 0) {
        throw new Error(`${at}: additionalProperties next to properties is not structural`);
      }
      delete out.properties;
      out.additionalProperties = toStructural(ap, `${at}.*`);
    }
    if (props !== undefined) {
      if (Object.keys(props).length === 0) delete out.properties;
      else {
        out.properties = Object.fromEntries(
          Object.entries(props).map(([k, v]) => {
            if (!isNode(v)) throw new Error(`${at}.${k}: not a schema`);
            return [k, toStructural(v, `${at}.${k}`)];
          }),
        );
      }
    }
    if (Array.isArray(out.required) && out.required.length === 0) delete out.required;
  }

  if (out.type === "array") {
    if (!isNode(out.items)) throw new Error(`${at}: array without a single items schema`);
    out.items = toStructural(out.items, `${at}[]`);
  }
  return out;
}

/** zod → structural OpenAPI v3 node. */
export function openAPISchemaOf(schema: z.ZodType, at = "<root>"): SchemaNode {
  const json = z.toJSONSchema(schema, {
    io: "input",
    target: "openapi-3.0",
    cycles: "throw",
    reused: "inline",
    unrepresentable: "throw",
    // zod emits no `format` for integers; the schema's own number format tells int32 apart.
    override: (ctx) => {
      const def = ctx.zodSchema._zod.def as { type: string; format?: string };
      if (def.type === "number" && ctx.jsonSchema.type === "integer") {
        ctx.jsonSchema.format = def.format === "int32" || def.format === "uint32"
          ? "int32"
          : "int64";
      }
    },
  }) as SchemaNode;
  return toStructural(json, at);
}

/** The descriptions Kubernetes' own types give `apiVersion` and `kind`. */
const API_VERSION_DESCRIPTION =
  "APIVersion defines the versioned schema of this representation of an object. Servers " +
  "should convert recognized schemas to the latest internal value, and may reject " +
  "unrecognized values.";
const KIND_DESCRIPTION =
  "Kind is a string value representing the REST resource this object represents. Servers may " +
  "infer this from the endpoint the client submits requests to. In CamelCase.";

/** The root `openAPIV3Schema`: apiVersion/kind/metadata as usual, then spec and status. */
function rootSchema(
  kind: string,
  description: string,
  spec: z.ZodType,
  status: z.ZodType,
): SchemaNode {
  return {
    description,
    type: "object",
    properties: {
      apiVersion: { type: "string", description: API_VERSION_DESCRIPTION },
      kind: { type: "string", description: KIND_DESCRIPTION },
      // Nothing but the type: the apiserver forbids more on a CRD's `metadata` (and documents it).
      metadata: { type: "object" },
      spec: openAPISchemaOf(spec, `${kind}.spec`),
      status: openAPISchemaOf(status, `${kind}.status`),
    },
    required: ["spec"],
  };
}

export interface PrinterColumn {
  name: string;
  type: "string" | "boolean" | "integer" | "number" | "date";
  jsonPath: string;
  description?: string;
  /** 0 (the default): always shown; 1: shown by `kubectl get -o wide`. */
  priority?: number;
}

const AGE: PrinterColumn = { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" };

/** The `Ready` condition's message, in `kubectl get -o wide`. */
const MESSAGE: PrinterColumn = {
  name: "Message",
  type: "string",
  jsonPath: '.status.conditions[?(@.type=="Ready")].message',
  priority: 1,
};

interface KindDef {
  kind: string;
  plural: string;
  shortNames: string[];
  description: string;
  spec: z.ZodType;
  status: z.ZodType;
  columns: PrinterColumn[];
}

function configColumns(targetColumn: string, targetField: string): PrinterColumn[] {
  return [
    { name: targetColumn, type: "string", jsonPath: `.spec.${targetField}.name` },
    { name: "Hub", type: "string", jsonPath: ".spec.hubVersion" },
    { name: "Phase", type: "string", jsonPath: ".status.phase" },
    { name: "Lossless", type: "boolean", jsonPath: ".status.overallLossless" },
    AGE,
    MESSAGE,
  ];
}

/**
 * The three kinds, all cluster-scoped. Short names are dco's own choice (the reference CRDs have
 * none): `ccc`, `xcc`, `cws`, the ones the e2e support CRDs already use.
 */
export const KIND_DEFS: readonly KindDef[] = [
  {
    kind: CRD_CONFIG_KIND,
    plural: "crdconversionconfigs",
    shortNames: ["ccc"],
    description:
      "CRDConversionConfig declares how a native CustomResourceDefinition's versions convert " +
      "to and from its storage (hub) version.",
    spec: CRDConversionConfigSpecSchema,
    status: CRDConversionConfigStatusSchema,
    columns: configColumns("CRD", "targetCRD"),
  },
  {
    kind: XRD_CONFIG_KIND,
    plural: "xrdconversionconfigs",
    shortNames: ["xcc"],
    description:
      "XRDConversionConfig declares how a Crossplane CompositeResourceDefinition's versions " +
      "convert to and from its referenceable (hub) version.",
    spec: XRDConversionConfigSpecSchema,
    status: XRDConversionConfigStatusSchema,
    columns: configColumns("XRD", "targetXRD"),
  },
  {
    kind: WEBHOOK_SERVER_KIND,
    plural: "conversionwebhookservers",
    shortNames: ["cws"],
    description: "ConversionWebhookServer is a deployable, independently scalable instance of " +
      "the conversion webhook runtime.",
    spec: ConversionWebhookServerSpecSchema,
    status: ConversionWebhookServerStatusSchema,
    columns: [
      { name: "Default", type: "boolean", jsonPath: ".spec.default" },
      { name: "Ready", type: "integer", jsonPath: ".status.readyReplicas" },
      { name: "Endpoint", type: "string", jsonPath: ".status.endpoint" },
      AGE,
      MESSAGE,
    ],
  },
];

export interface CustomResourceDefinition {
  apiVersion: "apiextensions.k8s.io/v1";
  kind: "CustomResourceDefinition";
  metadata: { name: string };
  spec: {
    group: string;
    names: {
      kind: string;
      listKind: string;
      plural: string;
      singular: string;
      shortNames: string[];
    };
    scope: "Cluster";
    versions: {
      name: string;
      served: boolean;
      storage: boolean;
      subresources: { status: Record<string, never> };
      additionalPrinterColumns: PrinterColumn[];
      schema: { openAPIV3Schema: SchemaNode };
    }[];
  };
}

function crdOf(def: KindDef): CustomResourceDefinition {
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `${def.plural}.${CONFIG_GROUP}` },
    spec: {
      group: CONFIG_GROUP,
      names: {
        kind: def.kind,
        listKind: `${def.kind}List`,
        plural: def.plural,
        singular: def.kind.toLowerCase(),
        shortNames: def.shortNames,
      },
      scope: "Cluster",
      versions: [{
        name: CONFIG_VERSION,
        served: true,
        storage: true,
        subresources: { status: {} },
        additionalPrinterColumns: def.columns,
        schema: {
          openAPIV3Schema: rootSchema(def.kind, def.description, def.spec, def.status),
        },
      }],
    },
  };
}

/** The three CRDs, in KIND_DEFS order. */
export function generateCRDs(): CustomResourceDefinition[] {
  return KIND_DEFS.map(crdOf);
}

/** Where `deno task gen:crds` writes, relative to the repository root. */
export const CRD_DIR = "charts/declarative-conversion-operator/crds";

/**
 * Each file starts a YAML document (`---`): `helm show crds` concatenates the files as they are,
 * and `helm show crds <chart> | kubectl apply -f -` must see three documents, not one.
 */
const HEADER = "---\n# Generated by `deno task gen:crds` from src/api/*.ts. DO NOT EDIT.\n";

/** `{file name (relative to CRD_DIR) → YAML text}`, one file per kind. */
export function renderCRDFiles(): Map<string, string> {
  const files = new Map<string, string>();
  for (const crd of generateCRDs()) {
    const text = stringify(crd, { lineWidth: 0, aliasDuplicateObjects: false });
    files.set(`${crd.metadata.name.replace(/^([^.]+)\.(.*)$/, "$2_$1")}.yaml`, HEADER + text);
  }
  return files;
}
