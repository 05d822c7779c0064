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
{{- if and .Values.admissionWebhook.enabled (not (include "dco.certManagerEnabled" .)) (has .Values.certificates.mode (list "auto" "builtin")) -}}
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
{{- if and .Values.admissionWebhook.enabled (include "dco.crossplaneEnabled" .) .Values.features.crossplane.conversionGuard.enabled -}}
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
{{- printf "%s:%s" $repo (include "dco.imageTag" .) -}}
{{- end -}}
{{- end -}}

{{/* The tag of an image: its own `tag`, else `image.tag`, else the chart's appVersion. Argument: dict root, img. */}}
{{- define "dco.imageTag" -}}
{{- .img.tag | default .root.Values.image.tag | default .root.Chart.AppVersion -}}
{{- end -}}

{{/* The pull policy of an image: its own `pullPolicy`, else `image.pullPolicy`. Argument: dict root, img. */}}
{{- define "dco.imagePullPolicy" -}}
{{- .img.pullPolicy | default .root.Values.image.pullPolicy -}}
{{- end -}}

{{/*
"true" when the chart uses cert-manager: `certManager.enabled` true, or `auto` (the default) and the
cluster serves cert-manager.io/v1 (Helm's discovery at install/upgrade; `helm template` needs
`--api-versions cert-manager.io/v1`).
*/}}
{{- define "dco.certManagerEnabled" -}}
{{- $v := .Values.certManager.enabled -}}
{{- if eq (toString $v) "auto" -}}
{{- if .Capabilities.APIVersions.Has "cert-manager.io/v1" }}true{{ end -}}
{{- else if eq (toString $v) "true" -}}
true
{{- end -}}
{{- end -}}

{{/*
"true" when Crossplane XRD support is on: `features.crossplane.enabled` true, or `auto` (the
default) and the cluster serves apiextensions.crossplane.io/v2 (Crossplane 2.x, which the manager
needs for XRD support).
*/}}
{{- define "dco.crossplaneEnabled" -}}
{{- $v := .Values.features.crossplane.enabled -}}
{{- if eq (toString $v) "auto" -}}
{{- if .Capabilities.APIVersions.Has "apiextensions.crossplane.io/v2" }}true{{ end -}}
{{- else if eq (toString $v) "true" -}}
true
{{- end -}}
{{- end -}}

{{/*
V8 old-space limit in MiB from a memory quantity: floor(bytes * 0.75 / 2^20), the same rule the
operator applies to webhook-server pods (docs/manager.md "V8 heap limit"). Any Kubernetes quantity
(values.schema.json enforces the form): a number with an optional binary (Ki…Ei), decimal
(n, u, m, k…E) or exponent (e3, E-2) suffix, e.g. 1.5Gi, 500M, 1e9, 268435456; prints "" when the
result is below 1 MiB.
*/}}
{{- define "dco.heapLimitMiB" -}}
{{- $q := toString . -}}
{{- $num := regexFind "^[+-]?([0-9]+(\\.[0-9]*)?|\\.[0-9]+)" $q -}}
{{- $suffix := trimPrefix $num $q -}}
{{- $mult := dict "" 1.0 "n" 1e-9 "u" 1e-6 "m" 1e-3 "k" 1e3 "M" 1e6 "G" 1e9 "T" 1e12 "P" 1e15 "E" 1e18 "Ki" 1024.0 "Mi" 1048576.0 "Gi" 1073741824.0 "Ti" 1099511627776.0 "Pi" 1125899906842624.0 "Ei" 1152921504606846976.0 -}}
{{- $bytes := 0.0 -}}
{{- if not $num -}}
{{- fail (printf "manager.resources.limits.memory %q is not a Kubernetes quantity (e.g. 256Mi, 1.5Gi, 1e9)" $q) -}}
{{- else if hasKey $mult $suffix -}}
{{- $bytes = mulf (float64 $num) (get $mult $suffix) -}}
{{- else if regexMatch "^[eE][+-]?[0-9]+$" $suffix -}}
{{- $exp := atoi (trimPrefix "+" (substr 1 -1 $suffix)) -}}
{{- $bytes = float64 $num -}}
{{- range until (int (max $exp (sub 0 $exp))) -}}
{{- if ge $exp 0 }}{{ $bytes = mulf $bytes 10 }}{{ else }}{{ $bytes = divf $bytes 10 }}{{ end -}}
{{- end -}}
{{- else -}}
{{- fail (printf "manager.resources.limits.memory %q is not a Kubernetes quantity (e.g. 256Mi, 1.5Gi, 1e9)" $q) -}}
{{- end -}}
{{- $mib := floor (divf (mulf $bytes 0.75) 1048576) -}}
{{- if ge $mib 1.0 }}{{ int64 $mib }}{{ end -}}
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

{{/*
"true" when the webhook servers serve metrics securely by default (`webhookServers.metrics.secure`,
the manager's --webhook-server-metrics-secure), else "".
*/}}
{{- define "dco.webhookServerMetricsSecure" -}}
{{- if dig "metrics" "secure" false .Values.webhookServers -}}true{{- end -}}
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

{{/*
Values the schema cannot refuse with a clear message. Included by the manager Deployment.
`crds.install` never did anything (Helm installs crds/ on its own): `false` cannot be honoured.
*/}}
{{- define "dco.validate" -}}
{{- if and .Values.crds (eq (toString .Values.crds.install) "false") -}}
{{- fail "crds.install=false is not supported: Helm installs the chart's crds/ itself; use `helm install --skip-crds` to skip them" -}}
{{- end -}}
{{- end -}}
