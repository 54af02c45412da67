#!/usr/bin/env bash
# Builds the distenv container image from the Dockerfile without a Docker engine
# and checks the result.
#
#   scripts/image-build.sh [--refresh-base] [--no-test] [-t NAME:TAG]
#
# 1. If debian:bookworm-slim is not in local buildah storage (vfs driver), make
#    it: `debootstrap --variant=minbase bookworm` from the Debian mirror this
#    machine's apt uses (read from /etc/apt/sources.list* at run time), trimmed
#    like the slim image, cached as a tarball under $DISTENV_CACHE, imported
#    with buildah from scratch + mount + commit. --refresh-base remakes it.
# 2. buildah --storage-driver vfs bud --isolation chroot --layers -t distenv:VERSION .
# 3. Checks the built image: its config (user, entrypoint, cmd), that its binary
#    resolves every shared library and that no compiler was left in it, runs
#    `version` and `certs` with `buildah run`, then runs `serve --no-lookups`
#    from the image's root filesystem on loopback and sends it one
#    AdmissionReview over HTTPS. Ends with "image: N passed, N failed".
# Environment: DISTENV_CACHE (default ~/.cache/distenv) holds the base tarball
# and the build log; DISTENV_IMAGE_ROOT selects a buildah storage other than
# the default /var/lib/containers/storage.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
cache=${DISTENV_CACHE:-$HOME/.cache/distenv}
version=$(cat VERSION)
tag="distenv:$version"
refresh_base=0
run_tests=1
base_name="docker.io/library/debian:bookworm-slim"
base_tar="$cache/debian-bookworm-minbase.tar.gz"
py=/usr/bin/python3

while (($#)); do
	case "$1" in
	--refresh-base) refresh_base=1 ;;
	--no-test) run_tests=0 ;;
	-t)
		tag=$2
		shift
		;;
	-h | --help)
		sed -n '2,/^set -euo/p' "$0" | sed -e '/^set -euo/d' -e 's/^# \{0,1\}//'
		exit 0
		;;
	*)
		echo "image-build: unknown argument $1" >&2
		exit 2
		;;
	esac
	shift
done

bash scripts/deps-image.sh image >/dev/null
export STORAGE_DRIVER=vfs BUILDAH_ISOLATION=chroot
# DISTENV_IMAGE_ROOT: a separate buildah storage (e.g. to time a cold build).
storage=()
if [[ -n "${DISTENV_IMAGE_ROOT:-}" ]]; then
	storage=(--root "$DISTENV_IMAGE_ROOT/storage" --runroot "$DISTENV_IMAGE_ROOT/run")
fi
bah() { buildah --storage-driver vfs "${storage[@]}" "$@"; }
now() { date +%s.%N; }
since() { $py -c 'import sys, time; print("%.1f" % (time.time() - float(sys.argv[1])))' "$1"; }
log() { echo "image-build: $*" >&2; }

# Debian mirrors this machine's apt uses, from deb822 and one-line sources:
# prints "SUITE URI" for bookworm, bookworm-updates and bookworm-security.
mirrors() {
	$py - <<'EOF'
import glob, re
want = {"bookworm", "bookworm-updates", "bookworm-security"}
found = {}
files = glob.glob("/etc/apt/sources.list") + sorted(glob.glob("/etc/apt/sources.list.d/*"))
for path in files:
    try:
        text = open(path, encoding="utf-8", errors="replace").read()
    except OSError:
        continue
    if path.endswith(".sources"):
        for stanza in re.split(r"\n\s*\n", text):
            fields = {}
            for line in stanza.splitlines():
                if line.startswith("#") or ":" not in line or line[:1].isspace():
                    continue
                k, v = line.split(":", 1)
                fields[k.strip().lower()] = v.split()
            if "deb" not in fields.get("types", []) or fields.get("enabled", ["yes"])[0] == "no":
                continue
            for suite in fields.get("suites", []):
                for uri in fields.get("uris", []):
                    if suite in want:
                        found.setdefault(suite, uri)
    elif path.endswith(".list"):
        for line in text.splitlines():
            parts = re.sub(r"\[[^]]*\]", "", line.split("#", 1)[0]).split()
            if len(parts) >= 3 and parts[0] == "deb" and parts[2] in want:
                found.setdefault(parts[2], parts[1])
for suite in sorted(found):
    print(suite, found[suite])
EOF
}

make_base_tarball() {
	local main_uri security_uri updates_uri dir t0
	main_uri=$(mirrors | awk '$1 == "bookworm" { print $2 }')
	updates_uri=$(mirrors | awk '$1 == "bookworm-updates" { print $2 }')
	security_uri=$(mirrors | awk '$1 == "bookworm-security" { print $2 }')
	if [[ -z "$main_uri" ]]; then
		log "no Debian bookworm mirror found in /etc/apt/sources.list*"
		return 1
	fi
	dir=$(mktemp -d "${TMPDIR:-/tmp}/distenv-base.XXXXXX")
	t0=$(now)
	log "debootstrap --variant=minbase bookworm from $main_uri (once; cached in $base_tar)"
	if ! debootstrap --variant=minbase bookworm "$dir/root" "$main_uri" >"$dir/debootstrap.log" 2>&1; then
		tail -n 20 "$dir/debootstrap.log" >&2
		rm -rf "$dir"
		return 1
	fi
	local r="$dir/root"
	# The same trimming and apt settings as the official slim image.
	cat >"$r/etc/dpkg/dpkg.cfg.d/docker" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/lintian/*
path-exclude /usr/share/linda/*
path-exclude /var/cache/man/*
path-exclude /usr/share/locale/*
EOF
	cat >"$r/etc/apt/apt.conf.d/docker-clean" <<'EOF'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
EOF
	echo 'Acquire::Languages "none";' >"$r/etc/apt/apt.conf.d/docker-no-languages"
	printf 'Acquire::GzipIndexes "true";\nAcquire::CompressionTypes::Order:: "gz";\n' >"$r/etc/apt/apt.conf.d/docker-gzip-indexes"
	printf 'Apt::AutoRemove::SuggestsImportant "false";\n' >"$r/etc/apt/apt.conf.d/docker-autoremove-suggests"
	rm -f "$r/etc/apt/sources.list"
	{
		echo "Types: deb"
		echo "URIs: $main_uri"
		echo "Suites: bookworm${updates_uri:+ bookworm-updates}"
		echo "Components: main"
		echo "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg"
		if [[ -n "$security_uri" ]]; then
			echo
			echo "Types: deb"
			echo "URIs: $security_uri"
			echo "Suites: bookworm-security"
			echo "Components: main"
			echo "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg"
		fi
	} >"$r/etc/apt/sources.list.d/debian.sources"
	find "$r/usr/share/doc" -mindepth 2 ! -name copyright ! -type d -delete 2>/dev/null || true
	find "$r/usr/share/doc" -mindepth 1 -type d -empty -delete 2>/dev/null || true
	rm -rf "$r"/usr/share/{man,info,groff,lintian,linda}/* "$r"/usr/share/locale/* \
		"$r"/var/cache/apt/archives/*.deb "$r"/var/cache/apt/*.bin "$r"/var/lib/apt/lists/* \
		"$r"/var/log/* "$r"/var/cache/debconf/*-old "$r"/var/lib/dpkg/*-old "$r"/tmp/* "$r"/root/.cache
	: >"$r/etc/machine-id"
	: >"$r/etc/resolv.conf"
	echo localhost >"$r/etc/hostname"
	mkdir -p "$cache"
	tar --numeric-owner --xattrs -czf "$base_tar.tmp" -C "$r" .
	mv -f "$base_tar.tmp" "$base_tar"
	rm -rf "$dir"
	log "base tarball made in $(since "$t0") s ($(du -h "$base_tar" | cut -f1))"
}

import_base() {
	local ctr mnt
	ctr=$(bah from scratch)
	mnt=$(bah mount "$ctr")
	if ! tar --numeric-owner --xattrs -xzf "$base_tar" -C "$mnt"; then
		bah rm "$ctr" >/dev/null 2>&1 || true
		rm -f "$base_tar"
		log "the cached base tarball was unreadable and is removed; run again"
		return 1
	fi
	bah umount "$ctr" >/dev/null
	bah config --os linux --arch "$(dpkg --print-architecture)" --cmd '["bash"]' \
		--env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		--label distenv.base=debootstrap-minbase "$ctr"
	bah commit --rm -q "$ctr" "$base_name" >/dev/null
	log "imported $base_name from $base_tar"
}

t_all=$(now)
t_base=$(now)
base_made=0
if ((refresh_base)); then
	rm -f "$base_tar"
	bah rmi -f "$base_name" >/dev/null 2>&1 || true
fi
if ! bah inspect --type image "$base_name" >/dev/null 2>&1; then
	[[ -s "$base_tar" ]] || make_base_tarball
	import_base
	base_made=1
fi
base_s=$(since "$t_base")

t_build=$(now)
git_rev=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
log "buildah bud -t $tag (base ready in $base_s s, imported: $base_made)"
bah bud --isolation chroot --pull=never --layers --force-rm \
	--build-arg GIT_REV="$git_rev" --build-arg VERSION="$version" \
	-t "$tag" -f Dockerfile . >"$cache/image-build.log" 2>&1 || {
	tail -n 40 "$cache/image-build.log" >&2
	log "build failed (full log: $cache/image-build.log)"
	exit 1
}
build_s=$(since "$t_build")
# awk reads every line: head would leave buildah writing to a closed pipe (a
# second name of the same image is a second line), and pipefail would stop here.
size=$(bah images --format '{{.Size}}' "$tag" | awk 'NR == 1')
log "built $tag in $build_s s, size $size"
# Intermediate images of older builds pile up in vfs storage; drop dangling ones.
bah rmi --prune >/dev/null 2>&1 || true

if ((!run_tests)); then
	echo "image: built $tag (base $base_s s, build $build_s s, total $(since "$t_all") s)"
	exit 0
fi

# --- checks on the built image -------------------------------------------------
t_test=$(now)
pass=0
fail=0
ok() {
	pass=$((pass + 1))
	echo "ok   - $*"
}
nok() {
	fail=$((fail + 1))
	echo "FAIL - $*"
}
ctr=""
server_pid=""
work=$(mktemp -d "${TMPDIR:-/tmp}/distenv-image-test.XXXXXX")
cleanup() {
	if [[ -n "$server_pid" ]] && kill -0 "$server_pid" 2>/dev/null; then
		kill -TERM "$server_pid" 2>/dev/null || true
		for _ in $(seq 1 50); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$server_pid" 2>/dev/null || true
	fi
	if [[ -n "$ctr" ]]; then
		bah umount "$ctr" >/dev/null 2>&1 || true
		bah rm "$ctr" >/dev/null 2>&1 || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT

bah inspect --type image "$tag" >"$work/inspect.json"
if $py - "$work/inspect.json" <<'EOF'; then
import json, sys
c = json.load(open(sys.argv[1]))["OCIv1"]["config"]
want = {"User": "65532:65532",
        "Entrypoint": ["/usr/local/bin/distenv-webhook"],
        "Cmd": ["serve", "--config", "/etc/distenv/config.yaml"]}
bad = {k: c.get(k) for k, v in want.items() if c.get(k) != v}
if bad:
    print("image config differs:", bad, file=sys.stderr)
    sys.exit(1)
EOF
	ok "image config: User 65532:65532, Entrypoint distenv-webhook, Cmd serve --config /etc/distenv/config.yaml"
else
	nok "image config"
fi

ctr=$(bah from --pull=never "$tag")
mnt=$(bah mount "$ctr")

if out=$(chroot "$mnt" /usr/bin/ldd /usr/local/bin/distenv-webhook 2>&1) && ! grep -q 'not found' <<<"$out"; then
	ok "every shared library of the binary is in the image ($(grep -c '=>' <<<"$out") libraries)"
else
	nok "ldd: $out"
fi
leftovers=$(cd "$mnt" && ls usr/bin/gcc* usr/bin/cc usr/bin/make usr/include/microhttpd.h 2>/dev/null || true)
if [[ -z "$leftovers" ]]; then
	ok "no compiler, make or headers in the runtime image"
else
	nok "build tools in the runtime image: $leftovers"
fi

if out=$(bah run --isolation chroot --user 65532:65532 "$ctr" -- /usr/local/bin/distenv-webhook version 2>&1) &&
	grep -q "$version" <<<"$out"; then
	ok "buildah run: distenv-webhook version -> $(head -n 1 <<<"$out")"
else
	nok "buildah run version: $out"
fi

mkdir -p "$mnt/smoke" && chmod 1777 "$mnt/smoke"
if out=$(bah run --isolation chroot --user 65532:65532 "$ctr" -- \
	/usr/local/bin/distenv-webhook certs --service distenv --namespace distenv --out /smoke/certs 2>&1) &&
	[[ -s "$mnt/smoke/certs/ca.crt" && -s "$mnt/smoke/certs/tls.crt" && -s "$mnt/smoke/certs/tls.key" ]]; then
	ok "buildah run: distenv-webhook certs wrote ca.crt, tls.crt, tls.key"
else
	nok "buildah run certs: $out"
fi

# serve from the image's root filesystem, as the image's user, on loopback. No
# resolv.conf (serve's test hook names none): the check below expects the default
# cluster domain, whatever the base image copied from the build host.
port=$($py -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
DISTENV_RESOLV_CONF=/nonexistent/resolv.conf chroot --userspec=65532:65532 "$mnt" /usr/local/bin/distenv-webhook serve --no-lookups \
	--listen "127.0.0.1:$port" --tls-cert /smoke/certs/tls.crt --tls-key /smoke/certs/tls.key \
	>"$work/serve.log" 2>&1 &
server_pid=$!
up=0
for _ in $(seq 1 100); do
	if curl -fsS --max-time 2 --cacert "$mnt/smoke/certs/ca.crt" \
		--resolve "distenv.distenv.svc:$port:127.0.0.1" "https://distenv.distenv.svc:$port/healthz" >/dev/null 2>&1; then
		up=1
		break
	fi
	kill -0 "$server_pid" 2>/dev/null || break
	sleep 0.1
done
if ((up)); then
	ok "serve --no-lookups from the image answers /healthz over HTTPS on 127.0.0.1:$port"
	cat >"$work/review.json" <<'EOF'
{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{
 "uid":"7f0e3c9a-image-smoke","kind":{"group":"","version":"v1","kind":"Pod"},
 "resource":{"group":"","version":"v1","resource":"pods"},"namespace":"default","operation":"CREATE",
 "object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"ddp-1","namespace":"default",
  "labels":{"distenv.dev/inject":"true","apps.kubernetes.io/pod-index":"1"},
  "annotations":{"distenv.dev/world-size":"2"},
  "ownerReferences":[{"apiVersion":"apps/v1","kind":"StatefulSet","name":"ddp","uid":"a1","controller":true}]},
  "spec":{"hostname":"ddp-1","subdomain":"ddp","containers":[{"name":"train","image":"trainer"}]}}}}
EOF
	if curl -sS --max-time 10 --cacert "$mnt/smoke/certs/ca.crt" \
		--resolve "distenv.distenv.svc:$port:127.0.0.1" -H 'Content-Type: application/json' \
		--data-binary @"$work/review.json" "https://distenv.distenv.svc:$port/mutate" >"$work/answer.json" 2>"$work/curl.err" &&
		$py - "$work/answer.json" <<'EOF'; then
import base64, json, sys
a = json.load(open(sys.argv[1]))
r = a["response"]
assert a["apiVersion"] == "admission.k8s.io/v1" and a["kind"] == "AdmissionReview", a
assert r["uid"] == "7f0e3c9a-image-smoke", r
assert r["allowed"] is True, r
assert r["patchType"] == "JSONPatch", r
patch = json.loads(base64.b64decode(r["patch"]))
env = {}
for op in patch:
    vals = op["value"] if isinstance(op.get("value"), list) else [op.get("value")]
    for v in vals:
        if isinstance(v, dict) and "name" in v:
            env[v["name"]] = v.get("value")
want = {"MASTER_ADDR": "ddp-0.ddp.default.svc.cluster.local", "MASTER_PORT": "29500",
        "RANK": "1", "WORLD_SIZE": "2"}
bad = {k: env.get(k) for k in want if env.get(k) != want[k]}
assert not bad, ("env differs", bad)
EOF
		ok "serve from the image: one AdmissionReview -> allowed, RANK=1 WORLD_SIZE=2 MASTER_ADDR=ddp-0.ddp.default.svc.cluster.local"
	else
		nok "AdmissionReview answer: $(cat "$work/answer.json" "$work/curl.err" 2>/dev/null | head -c 600)"
	fi
	kill -TERM "$server_pid" 2>/dev/null || true
	rc=0
	for _ in $(seq 1 100); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
	if kill -0 "$server_pid" 2>/dev/null; then
		nok "serve did not exit within 10 s of SIGTERM"
	else
		wait "$server_pid" || rc=$?
		server_pid=""
		if ((rc == 0)); then ok "serve exits 0 on SIGTERM"; else nok "serve exit status $rc on SIGTERM"; fi
	fi
else
	nok "serve from the image did not come up: $(tail -n 5 "$work/serve.log")"
fi

echo "image-build: base $base_s s, build $build_s s, checks $(since "$t_test") s, total $(since "$t_all") s" >&2
echo "image: $pass passed, $fail failed"
((fail == 0))
