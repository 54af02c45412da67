#!/usr/bin/env bash
# One real Kubernetes node beside the e2e control plane (test/e2e/cluster.sh):
# containerd v2 + Debian's runc, the CNI bridge on a private /24 of its own,
# CoreDNS, kubelet, kube-scheduler and kube-proxy, every one a process of ours.
#
#   node.sh net-up DIR     make the bridge (before cluster.sh up: the API server
#                          binds to its address) and record the machine's state
#   node.sh up DIR         start the node against the cluster in DIR (after
#                          cluster.sh up DIR), import the images, wait until Ready
#   node.sh down DIR       stop it all, by PID, and restore what it changed but
#                          the bridge
#   node.sh net-down DIR   remove the bridge (after cluster.sh down: the API
#                          server's own client uses its address)
#   node.sh check DIR      compare the machine with what net-up recorded; fails
#                          (exit 1) naming every difference
#   node.sh state          print what `check` compares
#
# Cluster domain: ml.example (DISTENV_NODE_CLUSTER_DOMAIN), kubelet's clusterDomain
# and CoreDNS's zone both.
# Addresses (all inside 198.19.0.0/16, DISTENV_NODE_NET to move them): the bridge
# and node 198.19.0.1/24 (API server, CoreDNS, CNI gateway), pods 198.19.0.0/24,
# Services 198.19.128.0/20 (set by run.sh for cluster.sh). Fixed ports 19548-19581.
#
# What it changes on the machine, and restores on `down` (`check` verifies):
#   - sysctls kubelet and the bridge plugin write (vm.overcommit_memory,
#     vm.panic_on_oom, kernel.panic, kernel.panic_on_oops, kernel.keys.root_max*,
#     net.ipv4.ip_forward, ...): recorded at net-up, written back at down;
#   - nft tables of kube-proxy (and any kubelet adds): removed by
#     `kube-proxy --cleanup` and checked;
#   - the bridge and the pods' veths; cgroups under /$cgroup_root in every
#     hierarchy; kubelet's and containerd's mounts under DIR/node; shim sockets
#     under /run/containerd/s.
# Images: DISTENV_NODE_IMAGES names docker-archive tarballs (images.sh) to import.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
e2e=$(cd "$here/../e2e" && pwd)

net=${DISTENV_NODE_NET:-198.19}
# Not cluster.local: kubelet writes it into every pod's resolv.conf and CoreDNS
# serves only it, so a name distenv wrote with another domain would not resolve.
cluster_domain=${DISTENV_NODE_CLUSTER_DOMAIN:-ml.example}
node_ip=$net.0.1
pod_cidr=$net.0.0/24
bridge=distenv-node0
node_name=distenv-node
cgroup_root=distenv-e2e-node
# Fixed ports (19500-19999 are this tier's).
kubelet_port=19550
kubelet_healthz=19548
proxy_metrics=19549
proxy_healthz=19556
scheduler_port=19559
stream_port=19570
dns_health=19580
dns_ready=19581
# What kubelet, kube-proxy and the CNI bridge plugin may write.
sysctls=(vm.overcommit_memory vm.panic_on_oom kernel.panic kernel.panic_on_oops
	kernel.keys.root_maxkeys kernel.keys.root_maxbytes
	net.ipv4.ip_forward net.ipv4.conf.all.forwarding net.ipv4.conf.default.forwarding
	net.ipv6.conf.all.forwarding net.ipv4.conf.all.route_localnet
	net.bridge.bridge-nf-call-iptables net.bridge.bridge-nf-call-ip6tables
	net.netfilter.nf_conntrack_max net.netfilter.nf_conntrack_tcp_be_liberal
	net.netfilter.nf_conntrack_tcp_timeout_established net.netfilter.nf_conntrack_tcp_timeout_close_wait
	net.netfilter.nf_conntrack_udp_timeout net.netfilter.nf_conntrack_udp_timeout_stream)

die() {
	echo "node.sh: $*" >&2
	exit 1
}
log() { echo "node.sh: $*" >&2; }
ms_since() { echo $((($(date +%s%N) - $1) / 1000000)); }
secs() { printf '%d.%03d' $(($1 / 1000)) $(($1 % 1000)); }

sysctl_path() { echo "/proc/sys/${1//.//}"; }

# state: what `check` compares, one fact a line. Only what this tier touches, so
# that other work on the machine does not make it fail.
state() {
	local s p c
	for s in "${sysctls[@]}"; do
		p=$(sysctl_path "$s")
		[[ -r "$p" ]] && echo "sysctl $s=$(<"$p")"
	done
	if command -v nft >/dev/null; then
		nft list tables 2>/dev/null | sed 's/^/nft /' | sort
	fi
	ip -o link show 2>/dev/null | awk -F': ' -v b="$bridge" '$2 == b || $0 ~ " master " b " " { print "link " $2 }'
	ip -o addr show 2>/dev/null | awk -v n="$net." 'index($4, n) == 1 { print "addr " $2 " " $4 }'
	for c in /sys/fs/cgroup/*/; do
		[[ -d "$c$cgroup_root" ]] && echo "cgroup $c$cgroup_root"
		[[ -d "${c}kubepods" ]] && echo "cgroup ${c}kubepods"
	done
	awk '$5 ~ /distenv-e2e\.|^\/run\/containerd|^\/var\/lib\/kubelet|^\/run\/netns\/cni-|^\/var\/run\/netns\/cni-/ { print "mount " $5 }' \
		/proc/self/mountinfo
	[[ -d /run/containerd/s ]] && echo "dir /run/containerd/s"
	[[ -d /var/lib/cni ]] && echo "dir /var/lib/cni"
	[[ -d /etc/cni ]] && echo "dir /etc/cni"
	[[ -d /opt/containerd ]] && echo "dir /opt/containerd"
	true
}

check() {
	local dir=$1 nd="$1/node"
	[[ -f "$nd/state.before" ]] || die "no $nd/state.before (node.sh net-up records it)"
	state >"$nd/state.after"
	if diff -u "$nd/state.before" "$nd/state.after" >"$nd/state.diff"; then
		log "machine state as found ($(wc -l <"$nd/state.before") facts: sysctls, nft tables, links, addresses, cgroups, mounts, directories)"
		return 0
	fi
	echo "node.sh: the machine is not as it was found (- before, + after):" >&2
	sed -n '3,$p' "$nd/state.diff" | grep '^[-+]' >&2
	return 1
}

net_up() {
	local dir=$1 nd="$1/node"
	mkdir -p "$nd/pids" "$nd/logs"
	touch "$dir/.distenv-e2e" # cluster.sh down accepts the directory
	state >"$nd/state.before"
	if ip link show "$bridge" >/dev/null 2>&1; then
		die "bridge $bridge exists already (left by an earlier run? see docs/e2e-node.md, 'Cleaning up by hand')"
	fi
	if ip -o addr show | awk -v want="$node_ip/" 'index($4, want) == 1 { found = 1 } END { exit !found }'; then
		die "$node_ip is already assigned on this machine"
	fi
	ip link add "$bridge" type bridge
	echo "$bridge" >"$nd/bridge"
	ip addr add "$node_ip/24" dev "$bridge"
	ip link set "$bridge" up
}

# client_kubeconfig DIR NAME CERT: DIR/node/NAME.kubeconfig for DIR/pki/CERT.{crt,key}.
client_kubeconfig() {
	local dir=$1 f="$1/node/$2.kubeconfig" server
	server=$(sed -n 's/^export DISTENV_E2E_SERVER=//p' "$dir/env")
	local k=("$dir/bin/kubectl" --kubeconfig "$f" config)
	"${k[@]}" set-cluster e2e --server "$server" --certificate-authority "$dir/pki/ca.crt" --embed-certs >/dev/null
	"${k[@]}" set-credentials "$2" --client-certificate "$dir/pki/$3.crt" --client-key "$dir/pki/$3.key" --embed-certs >/dev/null
	"${k[@]}" set-context e2e --cluster e2e --user "$2" >/dev/null
	"${k[@]}" use-context e2e >/dev/null
	chmod 600 "$f"
}

# start NAME DIR CMD...: CMD in its own session, logging to node/logs/NAME.log.
start() {
	local name=$1 nd="$2/node"
	shift 2
	setsid "$@" >"$nd/logs/$name.log" 2>&1 </dev/null &
	echo $! >"$nd/pids/$name.pid"
}

wait_for() { # WHAT DIR NAME SECONDS CMD...
	local what=$1 nd="$2/node" name=$3 secs=$4 i
	shift 4
	for ((i = 0; i < secs * 4; i++)); do
		"$@" >/dev/null 2>&1 && return 0
		if ! kill -0 "$(<"$nd/pids/$name.pid")" 2>/dev/null; then
			tail -n 30 "$nd/logs/$name.log" >&2 || true
			die "$name exited while waiting for $what (log: $nd/logs/$name.log)"
		fi
		sleep 0.25
	done
	tail -n 30 "$nd/logs/$name.log" >&2 || true
	die "$what not ready after $secs s (log: $nd/logs/$name.log)"
}

up() {
	local dir=$1 nd="$1/node" t0 t1 nodebin tools pki="$1/pki" kc
	[[ -f "$dir/env" ]] || die "no cluster in $dir (cluster.sh up first)"
	[[ -f "$nd/bridge" ]] || die "no bridge (node.sh net-up first)"
	t0=$(date +%s%N)
	nodebin=$("$e2e/build.sh" node)
	tools=$("$here/build-tools.sh")
	mkdir -p "$nd/bin" "$nd/cni/net.d" "$nd/cni/ipam" "$nd/containerd" "$nd/kubelet" "$nd/pod-logs"
	for p in kubelet kube-scheduler kube-proxy; do ln -sf "$nodebin" "$nd/bin/$p"; done
	for p in containerd ctr containerd-shim-runc-v2 crictl coredns; do ln -sf "$tools/$p" "$nd/bin/$p"; done
	[[ -x /usr/sbin/runc ]] || die "no /usr/sbin/runc (scripts/deps-node.sh installs Debian's runc)"
	[[ -x /usr/lib/cni/bridge ]] || die "no /usr/lib/cni/bridge (scripts/deps-node.sh installs containernetworking-plugins)"
	command -v nft >/dev/null || die "no nft (scripts/deps-node.sh installs nftables)"

	client_kubeconfig "$dir" kubelet kubelet
	client_kubeconfig "$dir" scheduler scheduler
	client_kubeconfig "$dir" proxy proxy

	# --- containerd ---------------------------------------------------------------
	local sock="$nd/containerd/containerd.sock"
	cat >"$nd/containerd.toml" <<EOF
version = 3
root = "$nd/containerd/root"
state = "$nd/containerd/state"
temp = "$nd/containerd/tmp"
[grpc]
  address = "$sock"
[ttrpc]
  address = "$sock.ttrpc"
[plugins.'io.containerd.internal.v1.opt']
  path = "$nd/containerd/opt"
[plugins.'io.containerd.nri.v1.nri']
  disable = true
[plugins.'io.containerd.grpc.v1.cri']
  stream_server_address = "127.0.0.1"
  stream_server_port = "$stream_port"
[plugins.'io.containerd.cri.v1.images']
  [plugins.'io.containerd.cri.v1.images'.pinned_images]
    sandbox = "localhost/distenv-e2e-node/pause:3.10"
[plugins.'io.containerd.cri.v1.runtime']
  # The VM drops CAP_SYS_RESOURCE: a negative oom_score_adj fails in runc with
  # only "can't get final child's PID from pipe: EOF".
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  enable_cdi = false
  [plugins.'io.containerd.cri.v1.runtime'.containerd]
    default_runtime_name = "runc"
    [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
        BinaryName = "/usr/sbin/runc"
        Root = "$nd/runc"
        SystemdCgroup = false
  [plugins.'io.containerd.cri.v1.runtime'.cni]
    bin_dirs = ["/usr/lib/cni"]
    conf_dir = "$nd/cni/net.d"
EOF
	cat >"$nd/cni/net.d/10-distenv-node.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "distenv-node",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "$bridge",
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "dataDir": "$nd/cni/ipam",
        "ranges": [[{"subnet": "$pod_cidr", "rangeStart": "$net.0.10", "gateway": "$node_ip"}]],
        "routes": [{"dst": "0.0.0.0/0"}]
      }
    },
    {"type": "loopback"}
  ]
}
EOF
	t1=$(date +%s%N)
	start containerd "$dir" "$nd/bin/containerd" --config "$nd/containerd.toml"
	local ctr=("$nd/bin/ctr" --address "$sock" -n k8s.io)
	wait_for containerd "$dir" containerd 60 "${ctr[@]}" version
	log "containerd $("${ctr[@]}" version 2>/dev/null | awk '/Server:/ { s = 1 } s && /Version:/ { print $2; exit }') up in $(secs "$(ms_since "$t1")") s"

	# --- images -------------------------------------------------------------------
	local img
	t1=$(date +%s%N)
	for img in ${DISTENV_NODE_IMAGES:-}; do
		"${ctr[@]}" images import --no-unpack=false "$img" >"$nd/logs/import.log" 2>&1 ||
			{ cat "$nd/logs/import.log" >&2; die "ctr images import $img failed"; }
	done
	log "images imported in $(secs "$(ms_since "$t1")") s: $("${ctr[@]}" images ls -q | grep -v '^sha256:' | tr '\n' ' ')"

	# --- CoreDNS, on the host at the node's address ---------------------------------
	cat >"$nd/Corefile" <<EOF
.:53 {
    bind $node_ip
    errors
    health $node_ip:$dns_health
    ready $node_ip:$dns_ready
    kubernetes $cluster_domain in-addr.arpa ip6.arpa {
        kubeconfig $dir/admin.kubeconfig distenv-e2e
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
    }
    cache 5
}
EOF
	start coredns "$dir" "$nd/bin/coredns" -conf "$nd/Corefile"
	wait_for "CoreDNS /ready" "$dir" coredns 60 curl -sf --max-time 2 "http://$node_ip:$dns_ready/ready"

	# --- kubelet ------------------------------------------------------------------
	local c
	for c in /sys/fs/cgroup/*/; do
		[[ -L "${c%/}" ]] && continue # cpu,cpuacct style links to a hierarchy
		mkdir -p "$c$cgroup_root" 2>/dev/null || true
	done
	# Pods' own resolv.conf options come from this file (search list, no nameserver:
	# clusterDNS is the only one).
	printf 'nameserver %s\n' "$node_ip" >"$nd/resolv.conf"
	cat >"$nd/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $node_ip
port: $kubelet_port
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $kubelet_healthz
tlsCertFile: $pki/kubelet-serving.crt
tlsPrivateKeyFile: $pki/kubelet-serving.key
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $pki/ca.crt}
authorization: {mode: Webhook}
containerRuntimeEndpoint: unix://$sock
imageServiceEndpoint: unix://$sock
# Forced by this VM: cgroup v1 only (refused by default since 1.35), no
# CAP_SYS_RESOURCE for a negative oom_score_adj.
failCgroupV1: false
cgroupDriver: cgroupfs
oomScoreAdj: 0
# Pods under a root of our own, not /kubepods.
cgroupRoot: /$cgroup_root
failSwapOn: false
protectKernelDefaults: false
clusterDNS: [$node_ip]
clusterDomain: $cluster_domain
resolvConf: $nd/resolv.conf
podLogsDir: $nd/pod-logs
serializeImagePulls: false
maxPods: 110
evictionHard: {memory.available: 100Mi, nodefs.available: 2%, imagefs.available: 2%}
imageGCHighThresholdPercent: 99
imageGCLowThresholdPercent: 98
EOF
	t1=$(date +%s%N)
	start kubelet "$dir" "$nd/bin/kubelet" --config "$nd/kubelet.yaml" \
		--kubeconfig "$nd/kubelet.kubeconfig" --root-dir "$nd/kubelet" --cert-dir "$nd/kubelet/pki" \
		--hostname-override "$node_name" --node-ip "$node_ip" --v 1
	kc=("$dir/bin/kubectl" --kubeconfig "$dir/admin.kubeconfig")
	wait_for "kubelet /healthz" "$dir" kubelet 120 curl -sf --max-time 2 "http://127.0.0.1:$kubelet_healthz/healthz"

	# --- kube-scheduler, kube-proxy --------------------------------------------------
	start kube-scheduler "$dir" "$nd/bin/kube-scheduler" \
		--kubeconfig "$nd/scheduler.kubeconfig" \
		--authentication-kubeconfig "$nd/scheduler.kubeconfig" --authorization-kubeconfig "$nd/scheduler.kubeconfig" \
		--leader-elect=false --bind-address 127.0.0.1 --secure-port "$scheduler_port"
	cat >"$nd/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection:
  kubeconfig: $nd/proxy.kubeconfig
mode: nftables
hostnameOverride: $node_name
bindAddress: $node_ip
clusterCIDR: $pod_cidr
nodePortAddresses: ["$node_ip/32"]
healthzBindAddress: 127.0.0.1:$proxy_healthz
metricsBindAddress: 127.0.0.1:$proxy_metrics
# Leave the machine's conntrack settings alone.
conntrack:
  maxPerCore: 0
  min: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
  udpTimeout: 0s
  udpStreamTimeout: 0s
EOF
	start kube-proxy "$dir" "$nd/bin/kube-proxy" --config "$nd/kube-proxy.yaml"
	wait_for "kube-scheduler /readyz" "$dir" kube-scheduler 120 curl -sfk --max-time 2 "https://127.0.0.1:$scheduler_port/readyz"
	wait_for "node $node_name Ready" "$dir" kubelet 180 \
		"${kc[@]}" wait --for condition=Ready --timeout 5s "node/$node_name"
	wait_for "kube-proxy /healthz" "$dir" kube-proxy 120 curl -sf --max-time 2 "http://127.0.0.1:$proxy_healthz/healthz"

	cat >>"$dir/env" <<EOF
export DISTENV_NODE_DIR=$nd
export DISTENV_NODE_NAME=$node_name
export DISTENV_NODE_IP=$node_ip
export CONTAINER_RUNTIME_ENDPOINT=unix://$sock
export PATH=$nd/bin:\$PATH
EOF
	log "node $node_name ($("$nodebin" version), containerd, runc $(/usr/sbin/runc --version | awk 'NR==1 { print $3 }')) Ready in $(secs "$(ms_since "$t0")") s"
}

stop_pid() { # NAME DIR [SECONDS]
	local name=$1 pidfile="$2/node/pids/$1.pid" secs=${3:-15} pid i
	[[ -f "$pidfile" ]] || return 0
	pid=$(<"$pidfile")
	if [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid" 2>/dev/null || true
		for ((i = 0; i < secs * 10; i++)); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		if kill -0 "$pid" 2>/dev/null; then
			log "$name (pid $pid) did not stop in $secs s, killing it"
			kill -KILL "$pid" 2>/dev/null || true
		fi
	fi
	rm -f "$pidfile"
}

# shims DIR: PIDs of the containerd shims of this node's containerd (they outlive
# containerd by design; each names our socket in its arguments).
shims() {
	local sock="$1/node/containerd/containerd.sock" p cmd
	for p in /proc/[0-9]*; do
		cmd=$(tr '\0' ' ' 2>/dev/null <"$p/cmdline") || continue
		[[ $cmd == *"-address $sock "* ]] && echo "${p#/proc/}"
	done
	true
}

# cgroup_pids: the processes in the node's cgroup tree (pids hierarchy).
cgroup_pids() {
	local d=/sys/fs/cgroup/pids/$cgroup_root
	[[ -d "$d" ]] || return 0
	find "$d" -name cgroup.procs -exec cat {} + 2>/dev/null | sort -u
}

down() {
	local dir=$1 nd="$1/node" sock pid s p c m i rc=0
	[[ -d "$nd" ]] || return 0
	sock="$nd/containerd/containerd.sock"
	# Pods first, through the CRI while kubelet cannot restart them: every
	# sandbox's network is torn down by the CNI plugins (veth, IP address).
	stop_pid kube-scheduler "$dir"
	stop_pid kubelet "$dir" 30
	# A container kubelet was still starting cannot be removed until it has
	# started ("container is in starting state"): try again for a while.
	if [[ -S "$sock" && -x "$nd/bin/crictl" ]]; then
		local i
		for ((i = 1; i <= 10; i++)); do
			"$nd/bin/crictl" --runtime-endpoint "unix://$sock" --timeout 60s rmp -fa >"$nd/logs/crictl-rmp.log" 2>&1 && break
			sleep 2
		done
		[[ $i -le 10 ]] || log "crictl rmp -fa failed 10 times: $(tail -n 3 "$nd/logs/crictl-rmp.log" | cut -c1-300)"
	fi
	stop_pid kube-proxy "$dir"
	if [[ -x "$nd/bin/kube-proxy" ]]; then
		"$nd/bin/kube-proxy" --cleanup >"$nd/logs/kube-proxy-cleanup.log" 2>&1 || true
	fi
	# Tables kubelet made through iptables-nft (KUBE-FIREWALL, the canaries) and
	# anything --cleanup left: every table that was not there before.
	if [[ -f "$nd/state.before" ]] && command -v nft >/dev/null; then
		while read -r _ fam tbl; do
			grep -qx "nft table $fam $tbl" "$nd/state.before" || nft delete table "$fam" "$tbl" || rc=1
		done < <(nft list tables 2>/dev/null)
	fi
	stop_pid coredns "$dir"
	stop_pid containerd "$dir" 30
	for pid in $(shims "$dir"); do
		log "containerd shim $pid outlived its containers; stopping it"
		kill -KILL "$pid" 2>/dev/null || true
	done
	# Any process still in the node's cgroups (e.g. a "runc init" whose shim is
	# gone) is one of this node's containers.
	for pid in $(cgroup_pids); do
		log "process $pid ($(tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline" | cut -c1-60)) left in /$cgroup_root; killing it"
		kill -KILL "$pid" 2>/dev/null || true
	done
	for ((i = 0; i < 50; i++)); do
		[[ -z "$(cgroup_pids)" ]] && break
		sleep 0.1
	done
	# Mounts under the node's directory (kubelet volumes, containerd's rootfs and
	# netns), deepest first.
	while read -r m; do
		umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || { log "cannot unmount $m"; rc=1; }
	done < <(awk -v d="$nd/" 'index($5, d) == 1 { print $5 }' /proc/self/mountinfo | sort -r)
	# Cgroups: kubelet's QoS tree and anything runc left under our root.
	for c in /sys/fs/cgroup/*/; do
		[[ -L "${c%/}" ]] && continue
		[[ -d "$c$cgroup_root" ]] || continue
		find "$c$cgroup_root" -depth -type d -exec rmdir {} + 2>/dev/null || true
		[[ -d "$c$cgroup_root" ]] && { log "cannot remove $c$cgroup_root"; rc=1; }
	done
	# Shim sockets' directory, if this run made it.
	if [[ -f "$nd/state.before" ]] && ! grep -qx 'dir /run/containerd/s' "$nd/state.before"; then
		rm -rf /run/containerd/s
		rmdir /run/containerd 2>/dev/null || true
	fi
	# libcni's result cache (/var/lib/cni/results, not configurable through the
	# CRI): our network's entries, then the directory if this run made it.
	rm -f /var/lib/cni/results/distenv-node-* 2>/dev/null || true
	if [[ -f "$nd/state.before" ]] && ! grep -qx 'dir /var/lib/cni' "$nd/state.before" && [[ -d /var/lib/cni ]]; then
		find /var/lib/cni -depth -type d -empty -delete 2>/dev/null || true
	fi
	# Sysctls as recorded.
	if [[ -f "$nd/state.before" ]]; then
		while IFS='=' read -r s p; do
			s=${s#sysctl }
			[[ "$(<"$(sysctl_path "$s")")" == "$p" ]] || echo "$p" >"$(sysctl_path "$s")" || rc=1
		done < <(grep '^sysctl ' "$nd/state.before")
	fi
	return $rc
}

# net_down DIR: the pods' veths crictl could not remove, then the bridge. After
# the control plane has stopped: the API server's own client talks to itself at
# the bridge's address (without it, its shutdown waits 30 s for nothing).
net_down() {
	local nd="$1/node" p rc=0
	for p in $(ip -o link show master "$bridge" 2>/dev/null | awk -F': ' '{ print $2 }' | sed 's/@.*//'); do
		ip link del "$p" 2>/dev/null || true
	done
	if [[ -f "$nd/bridge" ]] && ip link show "$bridge" >/dev/null 2>&1; then
		ip link del "$bridge" || rc=1
	fi
	rm -f "$nd/bridge"
	return $rc
}

cmd=${1:-}
case "$cmd" in
net-up | up | down | net-down | check)
	[[ -n "${2:-}" ]] || die "usage: node.sh $cmd DIR"
	"${cmd//-/_}" "$2"
	;;
state) state ;;
*)
	sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed -e '/^set -euo/d' -e 's/^# \{0,1\}//' >&2
	exit 2
	;;
esac
