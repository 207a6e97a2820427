{{/*
The chart's objects are the files of deploy/kubernetes (copied into files/ by ../../sync.sh),
parsed and changed only where a value asks for it. Helm's maps are references: the "ql.*"
templates below change the document they are given in place and print nothing.
*/}}

{{/* Labels every object gets: kustomize's (part-of) and Helm's own. */}}
{{- define "ql.labels" -}}
app.kubernetes.io/part-of: quota-ledger
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end }}

{{- define "ql.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end }}

{{/* The documents of one file of files/, as YAML separated by ---, each printed once changed ("ql.object"). */}}
{{- define "ql.file" -}}
{{- $root := .root }}
{{- range $text := regexSplit "(?m)^---[ \\t]*$" ($root.Files.Get .path) -1 }}
{{- $doc := fromYaml $text }}
{{- if and $doc (hasKey $doc "kind") }}
{{- if not (and (eq $doc.kind "Namespace") (not $root.Values.namespace.create)) }}
{{- include "ql.object" (dict "root" $root "doc" $doc) }}
---
{{ toYaml $doc }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}

{{- define "ql.clusterScoped" -}}
{{- if has .kind (list "Namespace" "CustomResourceDefinition" "ClusterRole" "ClusterRoleBinding" "MutatingWebhookConfiguration" "ValidatingWebhookConfiguration") }}true{{ end }}
{{- end }}

{{/* What every object gets (labels, namespace), then what its kind gets. */}}
{{- define "ql.object" -}}
{{- $doc := .doc }}
{{- $labels := $doc.metadata.labels | default dict }}
{{- range $key, $value := include "ql.labels" .root | fromYaml }}{{ $_ := set $labels $key $value }}{{ end }}
{{- $_ := set $doc.metadata "labels" $labels }}
{{- if not (include "ql.clusterScoped" $doc) }}{{ $_ := set $doc.metadata "namespace" "quota-ledger" }}{{ end }}
{{- if or (eq $doc.kind "Deployment") (eq $doc.kind "Job") }}{{ include "ql.workload" . }}{{ end }}
{{- if and (eq $doc.kind "Service") (eq $doc.metadata.name "quota-ledger") .root.Values.managedControlPlane.enabled }}
{{- $_ := set $doc.spec "ports" (append $doc.spec.ports (dict "name" "webhook-unauth" "port" (int .root.Values.managedControlPlane.port) "targetPort" "webhook-unauth" "protocol" "TCP")) }}
{{- end }}
{{- if hasSuffix "WebhookConfiguration" $doc.kind }}{{ include "ql.webhooks" . }}{{ end }}
{{- if eq $doc.kind "NetworkPolicy" }}{{ include "ql.egress" . }}{{ end }}
{{- end }}

{{/*
Egress to PostgreSQL, Redis and the Kubernetes API: to the peers networkPolicy names (the
defaults are base/network-policies.yaml's), PostgreSQL to the CloudNativePG Cluster's pods when it
is enabled. The Cluster's own policy keeps its 5432 rule (between its instances).
*/}}
{{- define "ql.egress" -}}
{{- $v := .root.Values }}{{ $doc := .doc }}
{{- $database := ternary (list (dict "podSelector" (dict "matchLabels" (dict "cnpg.io/cluster" "quota-ledger-pg")))) $v.networkPolicy.databasePeers $v.database.cloudnativePG.enabled }}
{{- range $rule := $doc.spec.egress | default list }}
{{- $ports := list }}{{ range $p := $rule.ports | default list }}{{ $ports = append $ports (int $p.port) }}{{ end }}
{{- if and (has 5432 $ports) (ne $doc.metadata.name "quota-ledger-pg") }}{{ $_ := set $rule "to" $database }}{{ end }}
{{- if has 6379 $ports }}{{ $_ := set $rule "to" $v.networkPolicy.redisPeers }}{{ end }}
{{- if has 443 $ports }}{{ $_ := set $rule "to" $v.networkPolicy.apiServerPeers }}{{ end }}
{{- end }}
{{- end }}

{{/* A Deployment or the Job: replicas, the image, the database's Secret, resources, the managed-plane listener. */}}
{{- define "ql.workload" -}}
{{- $root := .root }}{{ $v := .root.Values }}{{ $doc := .doc }}
{{- $settings := get (dict "quota-ledger-api" $v.api "quota-ledger-projection-worker" $v.projectionWorker "quota-ledger-reconciler" $v.reconciler "quota-ledger-migrate" $v.migration) $doc.metadata.name }}
{{- if and $settings (hasKey $settings "replicas") }}{{ $_ := set $doc.spec "replicas" (int $settings.replicas) }}{{ end }}
{{- $pod := $doc.spec.template.spec }}
{{- range $container := concat ($pod.initContainers | default list) $pod.containers }}
{{- $_ := set $container "image" (include "ql.image" $root) }}
{{- $_ := set $container "imagePullPolicy" $v.image.pullPolicy }}
{{- if and $settings $settings.resources (ne $container.name "migrate") }}{{ $_ := set $container "resources" $settings.resources }}{{ end }}
{{- if and (eq $container.name "migrate") $v.migration.resources }}{{ $_ := set $container "resources" $v.migration.resources }}{{ end }}
{{- range $env := $container.env | default list }}
{{- $ref := dig "valueFrom" "secretKeyRef" dict $env }}
{{- if and $ref (eq (get $ref "name") "quota-ledger-db") }}
{{- $migration := eq (get $ref "key") "migration-database-url" }}
{{- if eq $env.name "DATABASE_URL" }}
{{- if $v.database.cloudnativePG.enabled }}{{ $_ := set $ref "name" (ternary "quota-ledger-pg-app" "quota-ledger-pg-runtime" $migration) }}{{ $_ := set $ref "key" "uri" }}
{{- else }}{{ $_ := set $ref "name" $v.database.existingSecret }}{{ $_ := set $ref "key" (ternary $v.database.migrationUrlKey $v.database.urlKey $migration) }}{{ end }}
{{- else if eq $env.name "REDIS_URL" }}{{ $_ := set $ref "name" $v.database.existingSecret }}{{ $_ := set $ref "key" $v.database.redisUrlKey }}
{{- end }}
{{- end }}
{{- if eq $env.name "DATABASE_RUNTIME_ROLE" }}{{ $_ := set $env "value" $v.database.runtimeRole }}{{ end }}
{{- end }}
{{- /* The Cluster promises a synchronous standby: the API requires it, right after DATABASE_URL as components/cloudnative-pg's patch puts it. */}}
{{- if and (eq $container.name "api") $v.database.cloudnativePG.enabled }}
{{- $env := list }}
{{- range $e := $container.env }}{{ $env = append $env $e }}{{ if eq $e.name "DATABASE_URL" }}{{ $env = append $env (dict "name" "DATABASE_REQUIRE_SYNCHRONOUS_STANDBY" "value" "true") }}{{ end }}{{ end }}
{{- $_ := set $container "env" $env }}
{{- end }}
{{- if and (eq $container.name "api") $v.managedControlPlane.enabled }}
{{- $_ := set $container "env" (append $container.env (dict "name" "WEBHOOK_UNAUTHENTICATED_PORT" "value" (toString $v.managedControlPlane.port))) }}
{{- $_ := set $container "ports" (append $container.ports (dict "name" "webhook-unauth" "containerPort" (int $v.managedControlPlane.port) "protocol" "TCP")) }}
{{- end }}
{{- end }}
{{- end }}

{{/* The webhooks: failure policies by webhook, the CA (cert-manager's injector or tls.caBundle), the managed-plane port. */}}
{{- define "ql.webhooks" -}}
{{- $v := .root.Values }}{{ $doc := .doc }}
{{- if $v.tls.certManager }}
{{- $_ := set $doc.metadata "annotations" (merge ($doc.metadata.annotations | default dict) (dict "cert-manager.io/inject-ca-from" "quota-ledger/quota-ledger-tls")) }}
{{- else if not (contains "-----BEGIN CERTIFICATE-----" $v.tls.caBundle) }}
{{- fail "tls.certManager is false, so tls.caBundle must be the PEM certificate of the CA that signed quota-ledger-tls (--set-file tls.caBundle=ca.crt; deploy/kubernetes/overlays/no-cert-manager/make-ca.sh makes both)" }}
{{- end }}
{{- if not (has $v.webhooks.namespaces (list "managed" "all")) }}{{ fail (printf "webhooks.namespaces must be managed or all, got %q" $v.webhooks.namespaces) }}{{ end }}
{{- if eq $v.webhooks.namespaces "all" }}{{ include "ql.allNamespaces" $doc }}{{ end }}
{{- range $webhook := $doc.webhooks }}
{{- $policy := ternary $v.webhooks.countFailurePolicy $v.webhooks.failurePolicy (hasPrefix "validate-count." $webhook.name) }}
{{- if hasPrefix "validate-unmanaged-namespaces." $webhook.name }}{{ $policy = "Ignore" }}{{ end }}
{{- if not (has $policy (list "Fail" "Ignore")) }}{{ fail (printf "webhooks failure policies must be Fail or Ignore, got %q" $policy) }}{{ end }}
{{- $_ := set $webhook "failurePolicy" $policy }}
{{- if not $v.tls.certManager }}{{ $_ := set $webhook.clientConfig "caBundle" (b64enc $v.tls.caBundle) }}{{ end }}
{{- if $v.managedControlPlane.enabled }}{{ $_ := set $webhook.clientConfig.service "port" (int $v.managedControlPlane.port) }}{{ end }}
{{- end }}
{{- end }}

{{/* webhooks.namespaces=all: every namespace sent, as components/all-namespaces does (and quotactl --namespaces all). */}}
{{- define "ql.allNamespaces" -}}
{{- $everywhere := dict "matchExpressions" (list (dict "key" "kubernetes.io/metadata.name" "operator" "NotIn" "values" (list "kube-system" "quota-ledger"))) }}
{{- $kept := list }}
{{- range $webhook := .webhooks }}
{{- if has (regexReplaceAll "\\..*" $webhook.name "") (list "mutate" "validate" "validate-count") }}{{ $_ := set $webhook "namespaceSelector" $everywhere }}{{ end }}
{{- if hasPrefix "validate-namespaces." $webhook.name }}{{ $_ := set $webhook "objectSelector" dict }}{{ end }}
{{- if not (hasPrefix "validate-unmanaged-namespaces." $webhook.name) }}{{ $kept = append $kept $webhook }}{{ end }}
{{- end }}
{{- $_ := set . "webhooks" $kept }}
{{- end }}
