/** Law cases: ScalarToFields, FieldsToScalar. */
import { int, obj, root, str } from "../../_schemas.ts";
import { registerLawCase } from "../registry.ts";

const family = "regex_fields";
const UNITS = ["Ki", "Mi", "Gi"];

registerLawCase({
  family,
  name: "ScalarToFields: a size split into value and unit, declared lossless by override",
  noMirror: "the mirrored FieldsToScalar writes the required spec.size.unit only when its " +
    "optional source is present (RequiredFieldConditional)",
  strategy: "ScalarToFields",
  // Every hub string is canonical (no leading zeros, value below 1e6 so Go's %v prints it
  // positionally): that is the precondition under which the override is honest.
  hub: root({ size: str({ enum: ["0Ki", "5Mi", "123Gi", "999999Gi", "42Ki"] }), name: str() }, {
    requireSpec: true,
  }),
  spoke: root({
    size: obj({ value: int({ minimum: 0, maximum: 999999 }), unit: str({ enum: UNITS }) }, {
      required: ["value", "unit"],
    }),
    name: str(),
  }, { requireSpec: true }),
  rules: [{
    strategy: "ScalarToFields",
    scalarToFields: {
      hubPath: "spec.size",
      pattern: "^(?P<value>0|[1-9][0-9]*)(?P<unit>Ki|Mi|Gi)$",
      spokeFields: { value: "spec.size.value", unit: "spec.size.unit" },
      joinTemplate: "{{.value}}{{.unit}}",
      losslessOverride: true,
    },
  }],
  lossless: { hubToSpoke: true, spokeToHub: true },
});

registerLawCase({
  family,
  name: "ScalarToFields: free-form strings, lossy and acknowledged",
  strategy: "ScalarToFields",
  hub: root({ version: str() }, { requireSpec: true }),
  spoke: root({ major: int(), minor: str() }, { requireSpec: true }),
  rules: [{
    strategy: "ScalarToFields",
    scalarToFields: {
      hubPath: "spec.version",
      pattern: "(?P<major>\\d+)(?:\\.(?P<minor>\\w+))?",
      spokeFields: { major: "spec.major", minor: "spec.minor" },
      joinTemplate: "{{- .major -}} . {{- .minor}}",
    },
    acknowledgeLossy: true,
    reason: "strings that do not match fail; non-canonical numbers are normalised",
  }],
  lossless: { hubToSpoke: false, spokeToHub: false },
});

registerLawCase({
  family,
  name: "FieldsToScalar: name and email joined into one contact string, lossless by override",
  strategy: "FieldsToScalar",
  hub: root({
    contactName: str({ enum: ["Jane Doe", "Ed", "J. R. R. Tolkien"] }),
    contactEmail: str({ enum: ["jane@example.com", "ed+ops@example.org"] }),
  }, { requireSpec: true, specRequired: ["contactName", "contactEmail"] }),
  spoke: root({
    contact: str({ enum: ["Jane Doe <jane@example.com>", "Ed <ed+ops@example.org>"] }),
  }, { requireSpec: true, specRequired: ["contact"] }),
  rules: [{
    strategy: "FieldsToScalar",
    fieldsToScalar: {
      hubFields: { name: "spec.contactName", email: "spec.contactEmail" },
      pattern: "^(?P<name>[^<]*[^<\\s]) <(?P<email>[^>]+)>$",
      spokePath: "spec.contact",
      joinTemplate: "{{.name}} <{{.email}}>",
      losslessOverride: true,
    },
  }],
  lossless: { hubToSpoke: true, spokeToHub: true },
});
