#!/usr/bin/env bash
# Builds the node tier's three images with buildah (no registry, no Docker
# engine) and prints, one a line, "NAME REFERENCE ARCHIVE": NAME is distenv,
# train or pause, ARCHIVE a docker-archive tarball `ctr images import` reads.
#
#   distenv  `make image`'s image (scripts/image-build.sh, the Dockerfile), tagged
#            localhost/distenv-e2e-node/distenv:<hash of what the Dockerfile
#            copies>, so that a tree whose sources did not change builds nothing
#   train    Debian's python3-torch (1.13, gloo) on the same debian:bookworm-slim
#            base (train.Containerfile), tagged by the file's hash
#   pause    the sandbox image, built offline from build/pause/linux/pause.c of
#            the k8s.io/kubernetes module in test/e2e/go.mod (gcc -static, from
#            scratch), tagged localhost/distenv-e2e-node/pause:3.10 (the name
#            node.sh pins in containerd)
#
# Archives are cached in $DISTENV_CACHE/node-images by image ID, so a warm run
# only checks that buildah's images are still there.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
# shellcheck source=test/e2e/lib/goenv.sh
. "$root/test/e2e/lib/goenv.sh"
cache="$DISTENV_CACHE/node-images"
mkdir -p "$cache"
export STORAGE_DRIVER=vfs BUILDAH_ISOLATION=chroot
bah() { buildah --storage-driver vfs "$@"; }
log() { echo "images.sh: $*" >&2; }
prefix=localhost/distenv-e2e-node

image_id() { bah inspect --type image --format '{{.FromImageID}}' "$1" 2>/dev/null; }

# archive NAME REF: the image's docker-archive in the cache (made once per image ID).
archive() {
	local name=$1 ref=$2 id out
	id=$(image_id "$ref") || { log "no image $ref"; exit 1; }
	out="$cache/$name-${id:0:16}.tar"
	if [[ ! -s "$out" ]]; then
		rm -f "$cache/$name"-*.tar
		bah push -q "$ref" "docker-archive:$out.tmp:$ref" >/dev/null
		mv -f "$out.tmp" "$out"
	fi
	echo "$name $ref $out"
}

# distenv: the Dockerfile's image, as `make image` builds it (its own checks are
# the image tier's; here only the build).
t0=$(date +%s)
key=$(cd "$root" && find src Makefile Dockerfile VERSION .dockerignore -type f 2>/dev/null | LC_ALL=C sort |
	xargs sha256sum | sha256sum | cut -c1-16)
ref="$prefix/distenv:$key"
if ! image_id "$ref" >/dev/null; then
	bash "$root/scripts/image-build.sh" --no-test -t "$ref" >"$cache/distenv-build.log" 2>&1 ||
		{ tail -n 30 "$cache/distenv-build.log" >&2; log "scripts/image-build.sh failed"; exit 1; }
fi
archive distenv "$ref"
log "distenv image in $(($(date +%s) - t0)) s"

# train: python3-torch on the same base (image-build.sh made the base).
t0=$(date +%s)
# the Containerfile and the scripts it copies: a changed script is a new image
key=$(cat "$here/train.Containerfile" "$here"/train/* | sha256sum | cut -c1-16)
ref="$prefix/train:$key"
if ! image_id "$ref" >/dev/null; then
	log "building $ref (Debian's python3-torch: a few minutes the first time)"
	bah bud --isolation chroot --layers -q -t "$ref" -f "$here/train.Containerfile" "$here" >"$cache/train-build.log" 2>&1 ||
		{ tail -n 30 "$cache/train-build.log" >&2; log "train image failed"; exit 1; }
fi
archive train "$ref"
log "train image in $(($(date +%s) - t0)) s"

# pause: from the kubernetes module's own source.
t0=$(date +%s)
ref="$prefix/pause:3.10"
kdir=$(cd "$root/test/e2e" && go list -m -f '{{.Dir}}' k8s.io/kubernetes)
src="$kdir/build/pause/linux/pause.c"
[[ -f "$src" ]] || { log "no $src"; exit 1; }
key=$(cat "$src" "${BASH_SOURCE[0]}" | sha256sum | cut -c1-16)
if [[ "$(bah inspect --type image --format '{{index .ImageAnnotations "dev.distenv.key"}}' "$ref" 2>/dev/null)" != "$key" ]]; then
	tmp=$(mktemp -d)
	gcc -Os -static -Wall -Werror -DVERSION=v3.10-distenv -o "$tmp/pause" "$src"
	strip "$tmp/pause"
	c=$(bah from --name "distenv-e2e-node-pause-$$" scratch)
	bah copy "$c" "$tmp/pause" /pause >/dev/null
	bah config --entrypoint '["/pause"]' --user 65535:65535 --annotation "dev.distenv.key=$key" "$c"
	bah commit -q --rm "$c" "$ref" >/dev/null
	rm -rf "$tmp"
fi
archive pause "$ref"
log "pause image in $(($(date +%s) - t0)) s"
