{{- define "linode-operator.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "linode-operator.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- /* Quoted: a release named y, yes, on or true would otherwise be a YAML boolean, not a label value. */ -}}
{{- define "linode-operator.selectorLabels" -}}
app.kubernetes.io/name: {{ include "linode-operator.name" . | quote }}
app.kubernetes.io/instance: {{ .Release.Name | quote }}
{{- end -}}

{{- define "linode-operator.labels" -}}
{{ include "linode-operator.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "linode-operator.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "linode-operator.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "linode-operator.tokenSecret" -}}
{{- default (printf "%s-token" (include "linode-operator.fullname" .)) .Values.linode.existingSecret -}}
{{- end -}}

{{/* What the operator does with the objects it manages, in any namespace it watches. */}}
{{- define "linode-operator.rules" -}}
# Exactly the verbs the operator uses: it reads and patches its resources (finalizers, the
# external-id annotation copying status.externalId), patches their status (where what it owns
# is recorded), never creates, updates or deletes them.
# Setting blockOwnerDeletion on the Secrets it owns needs update on the owner's finalizers.
# The kinds' plurals come from the one list of kinds (_kinds.tpl, generated).
{{ include "linode-operator.kindRules" . }}
# Connection Secrets: created by the operator (a name someone else holds is read, never
# written), updated with server-side apply, watched by label (only those its resources control
# are kept), deleted after a rename. Token and TLS Secrets: listed and watched as metadata only
# (by label, by type), the one a resource names read by name (get); token Secrets get the
# in-use finalizer (patch) while a resource uses them. RBAC cannot restrict list/watch to a
# label, so these verbs cover the namespace's Secrets: with watchNamespaces, a Role in each of
# those namespaces grants them, and nothing grants them anywhere else.
- apiGroups: [""]
  resources: ["secrets"]
  verbs: ["get", "list", "watch", "create", "patch", "delete"]
# What the kinds read besides their own objects and Secrets, read only: generated from the reads
# their definitions declare (_kinds.tpl); a gated read only while its value (rbac.readNodes) is set.
{{ include "linode-operator.readRules" . }}
- apiGroups: ["events.k8s.io"]
  resources: ["events"]
  verbs: ["create", "patch"]
{{- end -}}

{{/* The operator's image: [registry/]repository, then @digest when set (it wins), else :tag (default: appVersion). */}}
{{- define "linode-operator.image" -}}
{{- $repository := .Values.image.repository -}}
{{- with .Values.image.registry }}{{ $repository = printf "%s/%s" (trimSuffix "/" .) $repository }}{{ end -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" $repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" $repository (.Values.image.tag | default .Chart.AppVersion | toString) -}}
{{- end -}}
{{- end -}}
