# Sourced by scripts/deps*.sh: one way to install Debian packages.
# apt_install TAG PKG...: installs the packages that are not installed yet,
# under a lock (several tiers may install at once), logging as TAG.
apt_install() {
	local tag=$1 missing=() p sudo=
	shift
	for p in "$@"; do
		[[ $(dpkg-query -W -f='${Status}' "$p" 2>/dev/null) == *'install ok installed'* ]] ||
			missing+=("$p")
	done
	((${#missing[@]})) || return 0
	printf '%s: apt-get install %s\n' "$tag" "${missing[*]}" >&2
	[ "$(id -u)" -eq 0 ] || sudo=sudo
	export DEBIAN_FRONTEND=noninteractive
	$sudo flock /var/lock/distenv-apt.lock apt-get update -q
	$sudo flock /var/lock/distenv-apt.lock apt-get install -y -q --no-install-recommends "${missing[@]}"
}

# apt_extract TAG PKG FILE DEST: copies FILE (an absolute path inside the
# package, e.g. /usr/bin/promtool) out of Debian's PKG to DEST, without
# installing the package (no maintainer scripts, no services, no dependencies).
apt_extract() {
	local tag=$1 pkg=$2 file=$3 dest=$4 sudo= tmp rc=0
	[ "$(id -u)" -eq 0 ] || sudo=sudo
	tmp=$(mktemp -d)
	chmod 755 "$tmp" # apt-get download drops to the _apt user
	printf '%s: apt-get download %s (for %s)\n' "$tag" "$pkg" "$file" >&2
	$sudo flock /var/lock/distenv-apt.lock apt-get update -q >&2 &&
		(cd "$tmp" && $sudo flock /var/lock/distenv-apt.lock apt-get download -q "$pkg" >&2) &&
		dpkg-deb -x "$tmp"/"${pkg}"_*.deb "$tmp/root" &&
		install -m 0755 "$tmp/root$file" "$dest" || rc=1
	rm -rf "$tmp"
	return $rc
}
