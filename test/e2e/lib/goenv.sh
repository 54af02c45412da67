# Go toolchain and cache locations shared by the e2e scripts (sourced).
# Caches live under ~/.cache so that they survive between runs on one machine.
if ! command -v go >/dev/null 2>&1 && [[ -x /usr/local/go/bin/go ]]; then
	export PATH="/usr/local/go/bin:$PATH"
fi
if ! command -v go >/dev/null 2>&1; then
	echo "e2e: no Go toolchain found (run scripts/deps-e2e.sh)" >&2
	exit 1
fi
export GOCACHE="${GOCACHE:-$HOME/.cache/go-build}"
export GOMODCACHE="${GOMODCACHE:-$HOME/.cache/go-mod}"
export GOFLAGS="${GOFLAGS:+$GOFLAGS }-modcacherw -mod=readonly -buildvcs=false"
# A Go older than go.mod asks for fetches the right toolchain through the module proxy.
export GOTOOLCHAIN="${GOTOOLCHAIN:-auto}"
export DISTENV_CACHE="${DISTENV_CACHE:-$HOME/.cache/distenv}"
