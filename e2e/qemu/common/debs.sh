# Shared shell functions of the QEMU system tests (source this file; bash).
#
# Debian packages of a foreign architecture (the guest's kernel, busybox,
# headers) are downloaded with a PRIVATE apt configuration under the cache:
# the machine's own apt sources, lists and dpkg state are never changed.
# Mirror: $GATEWAY_QEMU_MIRROR (default http://deb.debian.org/debian),
# security archive: $GATEWAY_QEMU_SECURITY (default .../debian-security;
# "none" leaves it out). The suites are bookworm and bookworm-updates,
# which must download, and bookworm-security, which is optional: when its
# index fails (this mirror's armhf one has failed with "File has
# unexpected size"), the lists are fetched again without it, a warning is
# logged, and it is left out until the next daily refresh of the lists.
#
# Interface (kept stable: the arm64 and armhf harnesses both use it):
#   qemu_cache_root                 print ${XDG_CACHE_HOME:-~/.cache}/gateway-qemu
#   ensure_host_pkgs PKG...         apt-get install the host packages not installed
#   private_apt ARCH CACHE ARGS...  run apt-get with the private configuration
#   private_apt_cache ARCH CACHE ARGS...  the same for apt-cache
#   deb_depends ARCH CACHE PKG      print PKG's Depends line (private lists)
#   fetch_debs ARCH CACHE PKG...    download PKG (exact names, no dependencies)
#                                   into CACHE/debs-ARCH once; print each .deb path
#   extract_debs DEST DEB...        unpack .deb files into DEST (dpkg-deb -x)
#   fetch_and_extract ARCH CACHE DEST PKG...  both of the above

qemu_cache_root() {
	printf '%s\n' "${XDG_CACHE_HOME:-$HOME/.cache}/gateway-qemu"
}

qlog() { printf '[qemu-assets] %s\n' "$*" >&2; }

ensure_host_pkgs() {
	local missing=() p
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	qlog "apt-get install ${missing[*]}"
	apt-get update -qq || return 1
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
		-o DPkg::Lock::Timeout=600 "${missing[@]}" >&2
}

# _apt_dir ARCH CACHE: the private apt tree, made on first use.
_apt_dir() {
	local arch=$1 cache=$2 d
	d="$cache/apt-$arch"
	local mirror=${GATEWAY_QEMU_MIRROR:-http://deb.debian.org/debian}
	local security=${GATEWAY_QEMU_SECURITY:-http://deb.debian.org/debian-security}
	mkdir -p "$d/lists/partial" "$d/archives/partial" "$d/etc/preferences.d" "$d/etc/sources.list.d" || return 1
	[ -f "$d/status" ] || : >"$d/status"
	local key=/usr/share/keyrings/debian-archive-keyring.gpg
	{
		echo "deb [arch=$arch signed-by=$key] $mirror bookworm main"
		echo "deb [arch=$arch signed-by=$key] $mirror bookworm-updates main"
		if [ "$security" != none ] && [ ! -f "$d/security-skipped" ]; then
			echo "deb [arch=$arch signed-by=$key] $security bookworm-security main"
		fi
	} >"$d/etc/sources.list.tmp"
	mv "$d/etc/sources.list.tmp" "$d/etc/sources.list"
	printf '%s\n' "$d"
}

_apt_opts() {
	local arch=$1 d=$2
	printf '%s\n' \
		-o "APT::Architecture=$arch" -o "APT::Architectures=$arch" \
		-o "Dir::State=$d" -o "Dir::State::Lists=$d/lists" -o "Dir::State::status=$d/status" \
		-o "Dir::Cache=$d" -o "Dir::Cache::Archives=$d/archives" \
		-o "Dir::Etc::SourceList=$d/etc/sources.list" -o "Dir::Etc::SourceParts=$d/etc/sources.list.d" \
		-o "Dir::Etc::Preferences=$d/etc/preferences" -o "Dir::Etc::PreferencesParts=$d/etc/preferences.d" \
		-o "APT::Get::List-Cleanup=0" -o "Debug::NoLocking=1" -o "APT::Sandbox::User=root"
}

private_apt() {
	local arch=$1 cache=$2 d
	shift 2
	d=$(_apt_dir "$arch" "$cache") || return 1
	local opts
	mapfile -t opts < <(_apt_opts "$arch" "$d")
	apt-get "${opts[@]}" "$@"
}

private_apt_cache() {
	local arch=$1 cache=$2 d
	shift 2
	d=$(_apt_dir "$arch" "$cache") || return 1
	local opts
	mapfile -t opts < <(_apt_opts "$arch" "$d")
	# Lists older than a day are refreshed once.
	if [ -z "$(find "$d/updated" -mmin -1440 2>/dev/null)" ]; then
		_apt_update "$arch" "$cache" "$d" || return 1
		touch "$d/updated"
	fi
	apt-cache "${opts[@]}" "$@"
}

# _apt_update ARCH CACHE DIR: apt-get update of the private lists, with
# bookworm-security if its index downloads, without it (and a warning)
# if not; bookworm and bookworm-updates must download.
_apt_update() {
	local arch=$1 cache=$2 d=$3 opts
	rm -f "$d/security-skipped"
	_apt_dir "$arch" "$cache" >/dev/null || return 1
	mapfile -t opts < <(_apt_opts "$arch" "$d")
	qlog "apt-get update ($arch, private lists in $d)"
	apt-get "${opts[@]}" -qq update >&2 && return 0
	grep -q bookworm-security "$d/etc/sources.list" || return 1
	qlog "warning: apt-get update ($arch) failed; trying again without the optional bookworm-security suite"
	touch "$d/security-skipped"
	_apt_dir "$arch" "$cache" >/dev/null || return 1
	rm -f "$d"/lists/*_bookworm-security_*
	apt-get "${opts[@]}" -qq update >&2
}

deb_depends() {
	private_apt_cache "$1" "$2" show --no-all-versions "$3" | sed -n 's/^Depends: //p' | head -1
}

fetch_debs() {
	local arch=$1 cache=$2 p f dir
	shift 2
	dir="$cache/debs-$arch"
	mkdir -p "$dir" || return 1
	for p in "$@"; do
		f=$(ls "$dir/${p}_"*"_${arch}.deb" "$dir/${p}_"*"_all.deb" 2>/dev/null | head -1)
		if [ -z "$f" ]; then
			private_apt_cache "$arch" "$cache" policy "$p" >/dev/null || return 1
			qlog "download $p ($arch)"
			(cd "$dir" && private_apt "$arch" "$cache" -qq download "$p" >&2) || {
				echo "fetch_debs: download $p for $arch failed" >&2
				return 1
			}
			f=$(ls "$dir/${p}_"*"_${arch}.deb" "$dir/${p}_"*"_all.deb" 2>/dev/null | head -1)
		fi
		[ -n "$f" ] || { echo "fetch_debs: no .deb for $p in $dir" >&2; return 1; }
		printf '%s\n' "$f"
	done
}

extract_debs() {
	local dest=$1 deb
	shift
	mkdir -p "$dest" || return 1
	for deb in "$@"; do
		dpkg-deb -x "$deb" "$dest" || { echo "extract_debs: $deb" >&2; return 1; }
	done
}

fetch_and_extract() {
	local arch=$1 cache=$2 dest=$3 debs
	shift 3
	debs=$(fetch_debs "$arch" "$cache" "$@") || return 1
	# shellcheck disable=SC2086 # paths have no spaces (cache dir is ours)
	extract_debs "$dest" $debs
}
