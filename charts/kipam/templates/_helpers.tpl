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

{{/*
The directory of the socket: mounted from the host into the daemon, and the only directory whose
sockets the executable connects to. So it must be kipam's own: a system directory (values.yaml
lists them at cni.socket) would hand the daemon every socket and file in it, and widen the
executable's confinement to them. Refused at render, with the value and what to do instead.
*/}}
{{- define "kipam.socketDir" -}}
{{- $socket := toString .Values.cni.socket -}}
{{- $instead := "put the socket in a directory of kipam's own, e.g. cni.socket=/run/kipam/kipam.sock" -}}
{{- if not (isAbs $socket) -}}
{{- fail (printf "cni.socket=%s: the socket's path must be absolute; %s" $socket $instead) -}}
{{- end -}}
{{- $dir := dir $socket -}}
{{- $system := list "/" "/bin" "/boot" "/dev" "/etc" "/home" "/lib" "/lib32" "/lib64" "/libx32" "/media" "/mnt" "/opt" "/proc" "/root" "/run" "/sbin" "/srv" "/sys" "/tmp" "/usr" "/usr/bin" "/usr/lib" "/usr/libexec" "/usr/local" "/usr/local/bin" "/usr/sbin" "/var" "/var/lib" "/var/log" "/var/run" "/var/tmp" "/etc/cni" "/etc/cni/net.d" "/etc/kubernetes" "/opt/cni" "/opt/cni/bin" "/usr/libexec/cni" "/var/lib/cni" "/var/lib/containerd" "/var/lib/docker" "/var/lib/kubelet" "/var/lib/kubelet/plugins" "/var/lib/kubelet/plugins_registry" "/var/lib/kubelet/pod-resources" "/run/containerd" "/var/run/containerd" "/run/crio" "/var/run/crio" "/run/docker" "/var/run/docker" "/run/dbus" "/var/run/dbus" "/run/systemd" "/var/run/systemd" "/run/user" "/var/run/user" "/run/netns" "/var/run/netns" "/run/k3s" "/var/run/k3s" -}}
{{- if has $dir $system -}}
{{- fail (printf "cni.socket=%s: the socket's directory %s is a system directory, which is never mounted whole (kipam-node mounts the socket's directory from the host, and the executable connects to any socket in it); %s" $socket $dir $instead) -}}
{{- end -}}
{{- range list "/proc" "/sys" "/dev" "/boot" "/var/lib/kubelet/pods" -}}
{{- if hasPrefix (printf "%s/" .) $dir -}}
{{- fail (printf "cni.socket=%s: the socket's directory %s lies in %s, a system directory, which is never mounted (kipam-node mounts the socket's directory from the host, and the executable connects to any socket in it); %s" $socket $dir . $instead) -}}
{{- end -}}
{{- end -}}
{{- if eq $dir (clean (toString .Values.cni.binDir)) -}}
{{- fail (printf "cni.socket=%s: the socket's directory %s is cni.binDir, the host's CNI executables, which kipam-node must not be able to write; %s" $socket $dir $instead) -}}
{{- end -}}
{{ $dir }}
{{- end -}}

{{/*
node.probeAddress split: "host" (an IPv6 one without its brackets), "port", and "probeHost", the
address kubelet's probes ask: the host itself, or the loopback when the daemon listens on every
address (0.0.0.0 or ::), since kubelet cannot connect to a wildcard.
*/}}
{{- define "kipam.probe" -}}
{{- $address := toString .Values.node.probeAddress -}}
{{- $usage := "it must be host:port, an IPv6 host in brackets, with a port from 1 to 65535 (e.g. 127.0.0.1:9880, 0.0.0.0:9880 or [::1]:9880)" -}}
{{- if not (regexMatch `^(\[[0-9A-Fa-f:.]+\]|[^\[\]:]+):[0-9]{1,5}$` $address) -}}
{{- fail (printf "node.probeAddress=%s: %s" $address $usage) -}}
{{- end -}}
{{- $port := regexReplaceAll `^.*:` $address "" | int -}}
{{- if or (lt $port 1) (gt $port 65535) -}}
{{- fail (printf "node.probeAddress=%s: %s" $address $usage) -}}
{{- end -}}
{{- $host := regexReplaceAll `:[0-9]+$` $address "" | trimPrefix "[" | trimSuffix "]" -}}
{{- $probeHost := $host -}}
{{- if eq $host "0.0.0.0" -}}
{{- $probeHost = "127.0.0.1" -}}
{{- else if has $host (list "::" "::0" "0:0:0:0:0:0:0:0") -}}
{{- $probeHost = "::1" -}}
{{- end -}}
{{- $loopback := or (hasPrefix "127." $host) (eq $host "::1") (eq $host "localhost") -}}
{{- toJson (dict "host" $host "port" $port "probeHost" $probeHost "loopback" $loopback) -}}
{{- end -}}
