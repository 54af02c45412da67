# Sourced by scripts/deps*.sh: one way to install Debian packages.
# apt_install TAG PKG...: installs the packages that are not installed yet,
# under a lock (several tiers may install at once), logging as TAG.
apt_install() {
	local tag=$1 missing=() p sudo=
	shift
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
			missing+=("$p")
	done
	((${#missing[@]})) || return 0
	printf '%s: apt-get install %s\n' "$tag" "${missing[*]}" >&2
	[ "$(id -u)" -eq 0 ] || sudo=sudo
	export DEBIAN_FRONTEND=noninteractive
	$sudo flock /var/lock/distenv-apt.lock apt-get update -q
	$sudo flock /var/lock/distenv-apt.lock apt-get install -y -q --no-install-recommends "${missing[@]}"
}
