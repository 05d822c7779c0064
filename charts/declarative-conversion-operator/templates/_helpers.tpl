{{/*
fullname: fullnameOverride, else nameOverride, else the chart name (NOT release-prefixed).
*/}}
{{- define "dco.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "dco.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- include "dco.name" . -}}
{{- end -}}
{{- end -}}

{{- define "dco.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* User labels without the reserved keys (commonLabels, podLabels). Argument: a dict. */}}
{{- define "dco.strip" -}}
{{- $out := omit (. | default dict) "app.kubernetes.io/name" "app.kubernetes.io/instance" "app.kubernetes.io/managed-by" "app.kubernetes.io/version" "helm.sh/chart" "control-plane" -}}
{{- if $out }}
{{ toYaml $out }}
{{- end -}}
{{- end -}}

{{/* Labels of every chart object. */}}
{{- define "dco.labels" -}}
helm.sh/chart: {{ include "dco.chart" . }}
app.kubernetes.io/name: {{ include "dco.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- include "dco.strip" .Values.commonLabels }}
{{- end -}}

{{/* Manager selector labels. */}}
{{- define "dco.managerSelectorLabels" -}}
app.kubernetes.io/name: {{ include "dco.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
control-plane: controller-manager
{{- end -}}

{{- define "dco.managerServiceAccountName" -}}
{{- default (printf "%s-manager" (include "dco.fullname" .)) .Values.serviceAccount.name -}}
{{- end -}}

{{- define "dco.webhookServerServiceAccountName" -}}
{{- default (printf "%s-webhook-server" (include "dco.fullname" .)) .Values.serviceAccount.webhookServerName -}}
{{- end -}}

{{/* Namespace of the default ConversionWebhookServer's children (and its Lease Role). */}}
{{- define "dco.cwsNamespace" -}}
{{- default .Release.Namespace .Values.conversionWebhookServer.namespace -}}
{{- end -}}

{{- define "dco.webhookCertSecret" -}}
{{- printf "%s-webhook-cert" (include "dco.fullname" .) -}}
{{- end -}}

{{/*
"true" when the manager issues its own admission certificate from its built-in CA into
`dco.webhookCertSecret` and sets the ValidatingWebhookConfiguration's caBundle itself
(`--admission-*` flags): admission on, cert-manager off, certificates.mode auto or builtin.
*/}}
{{- define "dco.admissionSelfIssued" -}}
{{- if and .Values.admissionWebhook.enabled (not .Values.certManager.enabled) (has .Values.certificates.mode (list "auto" "builtin")) -}}
true
{{- end -}}
{{- end -}}

{{- define "dco.validatingWebhookConfigurationName" -}}
{{- printf "%s-validating-webhook-configuration" (include "dco.fullname" .) -}}
{{- end -}}

{{- define "dco.mutatingWebhookConfigurationName" -}}
{{- printf "%s-mutating-webhook-configuration" (include "dco.fullname" .) -}}
{{- end -}}

{{/*
XRD only. "true" when the XRD conversion guard's MutatingWebhookConfiguration is rendered:
admission webhooks, Crossplane support and features.crossplane.conversionGuard.enabled all on.
*/}}
{{- define "dco.xrdGuardRendered" -}}
{{- if and .Values.admissionWebhook.enabled .Values.features.crossplane.enabled .Values.features.crossplane.conversionGuard.enabled -}}
true
{{- end -}}
{{- end -}}

{{- define "dco.webhookServiceName" -}}
{{- printf "%s-webhook-service" (include "dco.fullname" .) -}}
{{- end -}}

{{- define "dco.selfSignedIssuer" -}}
{{- printf "%s-selfsigned-issuer" (include "dco.fullname" .) -}}
{{- end -}}

{{/* <registry>/<repository>[@digest|:tag]. Argument: dict root, img. */}}
{{- define "dco.image" -}}
{{- $repo := .img.repository -}}
{{- if .root.Values.image.registry -}}{{- $repo = printf "%s/%s" .root.Values.image.registry .img.repository -}}{{- end -}}
{{- if .img.digest -}}
{{- printf "%s@%s" $repo .img.digest -}}
{{- else -}}
{{- printf "%s:%s" $repo (default .root.Chart.AppVersion .img.tag) -}}
{{- end -}}
{{- end -}}

{{/*
V8 old-space limit in MiB from a memory quantity: floor(bytes * 0.75 / 2^20), the same rule the
operator applies to webhook-server pods (docs/manager.md "V8 heap limit"). Integers with an
optional k/M/G/T or Ki/Mi/Gi/Ti suffix (values.schema.json enforces it); prints "" when the
result is below 1 MiB.
*/}}
{{- define "dco.heapLimitMiB" -}}
{{- $q := toString . -}}
{{- $num := regexFind "^[0-9]+" $q -}}
{{- $suffix := trimPrefix $num $q -}}
{{- $mult := dict "" 1 "k" 1000 "M" 1000000 "G" 1000000000 "T" 1000000000000 "Ki" 1024 "Mi" 1048576 "Gi" 1073741824 "Ti" 1099511627776 -}}
{{- if or (not $num) (not (hasKey $mult $suffix)) -}}
{{- fail (printf "manager.resources.limits.memory %q: use an integer with an optional k/M/G/T or Ki/Mi/Gi/Ti suffix" $q) -}}
{{- end -}}
{{- $mib := div (mul (atoi $num) (get $mult $suffix) 3) 4194304 -}}
{{- if ge (int64 $mib) 1 -}}{{ $mib }}{{- end -}}
{{- end -}}

{{/* The issuerRef of the default CWS certificate: own -> certManager.issuerRef -> self-signed. */}}
{{- define "dco.cwsIssuerRef" -}}
{{- $own := .Values.conversionWebhookServer.certificate.issuerRef | default dict -}}
{{- if $own.name -}}
name: {{ $own.name }}
kind: {{ $own.kind | default "ClusterIssuer" }}
{{- else if .Values.certManager.issuerRef.name -}}
name: {{ .Values.certManager.issuerRef.name }}
kind: {{ .Values.certManager.issuerRef.kind | default "ClusterIssuer" }}
{{- else -}}
name: {{ include "dco.selfSignedIssuer" . }}
kind: ClusterIssuer
{{- end -}}
{{- end -}}

{{/*
The namespaces ConversionWebhookServers may place their children in, comma-separated: the default
server's namespace, `webhookServers.namespaces` and (older values) `certificates.secretNamespaces`.
The manager gets them as `--webhook-server-namespaces` (admission and its watches); the chart's
namespaced Roles, webhook-server ServiceAccounts and NetworkPolicies go into each of them.
*/}}
{{- define "dco.webhookServerNamespaces" -}}
{{- $ns := list (include "dco.cwsNamespace" .) -}}
{{- $ns = concat $ns (.Values.webhookServers.namespaces | default list) (.Values.certificates.secretNamespaces | default list) -}}
{{- uniq $ns | join "," -}}
{{- end -}}

{{/* The allowed spec.image.repository values: the chart's webhook-server image, then the value's. */}}
{{- define "dco.webhookServerImageRepositories" -}}
{{- $img := .Values.image.webhookServer -}}
{{- $repo := $img.repository -}}
{{- if .Values.image.registry -}}{{- $repo = printf "%s/%s" .Values.image.registry $img.repository -}}{{- end -}}
{{- uniq (concat (list $repo) (.Values.webhookServers.imageRepositories | default list)) | join "," -}}
{{- end -}}

{{/* The allowed spec.serviceAccountName values: the chart's webhook-server SA, then the value's. */}}
{{- define "dco.webhookServerServiceAccounts" -}}
{{- uniq (concat (list (include "dco.webhookServerServiceAccountName" .)) (.Values.webhookServers.serviceAccounts | default list)) | join "," -}}
{{- end -}}

{{/* "true" when the manager writes Secrets itself (built-in CA): certificates.mode auto or builtin. */}}
{{- define "dco.builtinCA" -}}
{{- if has .Values.certificates.mode (list "auto" "builtin") -}}
true
{{- end -}}
{{- end -}}

{{/* "true" when the manager may apply cert-manager Certificates: certificates.mode auto or cert-manager. */}}
{{- define "dco.certManagerCertificates" -}}
{{- if has .Values.certificates.mode (list "auto" "cert-manager") -}}
true
{{- end -}}
{{- end -}}

{{/* The manager's leader-election Lease (src/kube/leader.ts MANAGER_LEASE_NAME). */}}
{{- define "dco.managerLeaseName" -}}
declarative-conversion-operator.terasky.com
{{- end -}}

{{/* The CA Secret of the built-in CA (src/manager/builtin_certs.ts CA_SECRET_NAME). */}}
{{- define "dco.caSecretName" -}}
dco-webhook-ca
{{- end -}}
