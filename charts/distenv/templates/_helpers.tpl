{{/* Names, labels and values derived once for every template. */}}

{{- define "distenv.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "distenv.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "distenv.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "distenv.selectorLabels" -}}
app.kubernetes.io/name: {{ include "distenv.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "distenv.labels" -}}
helm.sh/chart: {{ include "distenv.chart" . }}
{{ include "distenv.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/component: admission-webhook
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{- define "distenv.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "distenv.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "distenv.secretName" -}}
{{- default (printf "%s-tls" (include "distenv.fullname" .)) .Values.certificates.secretName }}
{{- end }}

{{- define "distenv.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}
{{- end }}

{{/* DNS names the serving certificate must cover (first one is the CN). */}}
{{- define "distenv.dnsNames" -}}
{{- $svc := include "distenv.fullname" . }}
{{- $ns := .Release.Namespace }}
{{- $names := list (printf "%s.%s.svc" $svc $ns) $svc (printf "%s.%s" $svc $ns) }}
{{- /* the fully-qualified name only for a domain the chart knows (the API server calls <svc>.<ns>.svc) */}}
{{- with .Values.config.clusterDomain }}
{{- $names = append $names (printf "%s.%s.svc.%s" $svc $ns .) }}
{{- end }}
{{- range .Values.certificates.extraDNSNames }}
{{- $names = append $names . }}
{{- end }}
{{- toJson (uniq $names) }}
{{- end }}

{{/* Seconds the pod needs to stop: preStop sleep plus the server's drain deadline. */}}
{{- define "distenv.stopSeconds" -}}
{{- $sleep := 0 }}
{{- if .Values.preStop.enabled }}{{ $sleep = int .Values.preStop.sleepSeconds }}{{ end }}
{{- add $sleep (int .Values.config.server.drainTimeoutSeconds) }}
{{- end }}

{{- define "distenv.preStopSleep" -}}
{{- if .Values.preStop.enabled -}}
true
{{- end }}
{{- end }}

{{/* config.yaml as the server reads it: the user's config plus what the chart owns. */}}
{{- define "distenv.configYaml" -}}
{{- $cfg := deepCopy .Values.config }}
{{- /* no domain given: the server reads its pod's resolv.conf (a key left out, not an empty one) */}}
{{- if not $cfg.clusterDomain }}
{{- $_ := unset $cfg "clusterDomain" }}
{{- end }}
{{- $_ := set $cfg "listen" (printf ":%d" (int .Values.containerPort)) }}
{{- $tls := default (dict) $cfg.tls }}
{{- $_ = set $tls "certFile" "/etc/distenv/tls/tls.crt" }}
{{- $_ = set $tls "keyFile" "/etc/distenv/tls/tls.key" }}
{{- $_ = set $cfg "tls" $tls }}
{{- $server := default (dict) $cfg.server }}
{{- $_ = set $server "probeListen" (printf ":%d" (int .Values.probePort)) }}
{{- $_ = set $cfg "server" $server }}
{{- /* distenv.dev/wait-for-master runs `distenv-webhook wait` from the webhook's own image */}}
{{- $_ = set $cfg "waitInit" (dict "image" (include "distenv.image" .) "imagePullPolicy" .Values.image.pullPolicy) }}
{{- toYaml $cfg }}
{{- end }}

{{/* Fails the render on combinations the schema cannot express. */}}
{{- define "distenv.validate" -}}
{{- if and (eq .Release.Namespace "default") (not .Values.allowDefaultNamespace) }}
{{- fail "distenv: refusing to install into namespace default: the webhook never injects into its own namespace, so workloads there (and deploy/examples) would run without their env. Install with -n distenv --create-namespace, or set allowDefaultNamespace=true" }}
{{- end }}
{{- if eq (int .Values.probePort) (int .Values.containerPort) }}
{{- fail (printf "probePort %d is the webhook's containerPort: the probes need a port of their own" (int .Values.probePort)) }}
{{- end }}
{{- if and .Values.hostNetwork (lt (int .Values.probePort) 1024) }}
{{- fail (printf "probePort %d is below 1024: with hostNetwork the non-root server cannot bind it; pick a free port >= 1024" (int .Values.probePort)) }}
{{- end }}
{{- if and .Values.hostNetwork (lt (int .Values.containerPort) 1024) }}
{{- fail (printf "containerPort %d is below 1024: with hostNetwork the non-root server cannot bind it; pick a free port >= 1024" (int .Values.containerPort)) }}
{{- end }}
{{- if and (not (kindIs "invalid" .Values.terminationGracePeriodSeconds)) (le (int .Values.terminationGracePeriodSeconds) (int (include "distenv.stopSeconds" .))) }}
{{- fail (printf "terminationGracePeriodSeconds %d must be larger than preStop.sleepSeconds + config.server.drainTimeoutSeconds (%s)" (int .Values.terminationGracePeriodSeconds) (include "distenv.stopSeconds" .)) }}
{{- end }}
{{- if and .Values.config.lookups.enabled (not .Values.rbac.create) (not .Values.serviceAccount.name) }}
{{- fail "config.lookups.enabled needs RBAC: set rbac.create=true, or serviceAccount.name to an account allowed to get statefulsets and jobs" }}
{{- end }}
{{- end }}

{{/* The securityContext of every container the chart runs (restricted Pod Security Standard). */}}
{{- define "distenv.containerSecurityContext" -}}
{{- $sc := dict
  "runAsNonRoot" true
  "allowPrivilegeEscalation" false
  "privileged" false
  "readOnlyRootFilesystem" true
  "capabilities" (dict "drop" (list "ALL"))
  "seccompProfile" (dict "type" "RuntimeDefault") }}
{{- if not (kindIs "invalid" .Values.runAsUser) }}{{ $_ := set $sc "runAsUser" (int .Values.runAsUser) }}{{ end }}
{{- if not (kindIs "invalid" .Values.runAsGroup) }}{{ $_ := set $sc "runAsGroup" (int .Values.runAsGroup) }}{{ end }}
{{- toYaml (mergeOverwrite $sc (deepCopy .Values.containerSecurityContext)) }}
{{- end }}

{{/* The pod securityContext before the Deployment's own additions (fsGroup, sysctls) and podSecurityContext. */}}
{{- define "distenv.podSecurityContextBase" -}}
{{- $sc := dict "runAsNonRoot" true "seccompProfile" (dict "type" "RuntimeDefault") }}
{{- if not (kindIs "invalid" .Values.runAsUser) }}{{ $_ := set $sc "runAsUser" (int .Values.runAsUser) }}{{ end }}
{{- if not (kindIs "invalid" .Values.runAsGroup) }}{{ $_ := set $sc "runAsGroup" (int .Values.runAsGroup) }}{{ end }}
{{- toYaml $sc }}
{{- end }}
