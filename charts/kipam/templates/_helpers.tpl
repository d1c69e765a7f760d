{{/*
A manifest of config/ (kept in the chart's files/ as links to it), in the chart's namespace:
the manifests name kipam-system wherever they name the namespace, paramRef of the policies'
bindings included.
*/}}
{{- define "kipam.manifest" -}}
{{ .root.Files.Get (printf "files/%s" .file) | replace "kipam-system" .root.Values.namespace.name }}
{{- end -}}

{{- define "kipam.nodeImage" -}}
{{ .Values.images.node.repository }}:{{ .Values.images.node.tag }}
{{- end -}}

{{/* The directory of the socket: mounted into the daemon, and where the executable connects. */}}
{{- define "kipam.socketDir" -}}
{{ dir .Values.cni.socket }}
{{- end -}}
