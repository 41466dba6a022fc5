#!/usr/bin/env bash
# Builds, once, what the armhf QEMU system test boots: Debian's armhf
# kernel (linux-image-6.1.0-NN-armmp) with the vexpress-a15 device tree,
# and a busybox initramfs holding the kernel modules the test needs and
# the guest's /init (init.sh here). The gateway binary and its
# configuration are not in it: the test appends them at run time as a
# second cpio archive, so rebuilding the gateway does not rebuild this.
#
# Packages come from Debian's archive (bookworm and bookworm-updates: the
# point release's kernel; bookworm-security is left out because its armhf
# index failed to download from this mirror, "File has unexpected size",
# which is also why ../common/debs.sh is not used here yet) through a private apt configuration
# under the cache (APT::Architecture=armhf, its own sources and lists):
# the machine's apt sources are never changed. Missing host tools
# (qemu-system-arm, kmod, cpio) are installed with apt-get as root.
#
# Output, in ${XDG_CACHE_HOME:-~/.cache}/gateway-qemu/armhf:
#   vmlinuz  vexpress-v2p-ca15-tc1.dtb  base.cpio.gz  kernel-version
# A stamp (the hash of this script and init.sh plus the kernel's
# version) makes a warm run a no-op. Prints the directory on stdout.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=${XDG_CACHE_HOME:-$HOME/.cache}/gateway-qemu
out=$cache/armhf
aptdir=$cache/armhf-apt
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
log() { echo "assets-armhf: $*" >&2; }

install_tools() {
	local need=()
	command -v qemu-system-arm >/dev/null || need+=(qemu-system-arm)
	command -v depmod >/dev/null || need+=(kmod)
	command -v cpio >/dev/null || need+=(cpio)
	[ ${#need[@]} -eq 0 ] && return 0
	if [ "$(id -u)" -ne 0 ]; then
		log "needs ${need[*]} (apt-get install ${need[*]})"
		exit 1
	fi
	log "installing ${need[*]}"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >&2 ||
		{ apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >&2; }
}

# papt runs apt-get/apt-cache with the private armhf configuration.
papt() {
	local tool=$1
	shift
	"$tool" -q -o APT::Architecture=armhf -o APT::Architectures=armhf \
		-o Dir::Etc::SourceList="$aptdir/sources.list" -o Dir::Etc::SourceParts="$aptdir/sources.list.d" \
		-o Dir::Etc::Preferences="$aptdir/preferences" -o Dir::Etc::PreferencesParts="$aptdir/preferences.d" \
		-o Dir::State::Lists="$aptdir/lists" -o Dir::State::status="$aptdir/status" \
		-o Dir::Cache="$aptdir/cache" -o Debug::NoLocking=1 -o APT::Sandbox::User=root \
		-o Acquire::IndexTargets::deb::DEP-11::DefaultEnabled=false \
		-o Acquire::IndexTargets::deb::DEP-11-icons::DefaultEnabled=false "$@"
}

apt_setup() {
	mkdir -p "$aptdir"/{lists/partial,cache/archives/partial,sources.list.d,preferences.d,debs}
	: >"$aptdir/status"
	: >"$aptdir/preferences"
	local key=/usr/share/keyrings/debian-archive-keyring.gpg
	cat >"$aptdir/sources.list" <<-SRC
		deb [arch=armhf signed-by=$key] $mirror bookworm main
		deb [arch=armhf signed-by=$key] $mirror bookworm-updates main
	SRC
	# Lists younger than a day are reused: a warm run stays offline.
	if [ -z "$(find "$aptdir/lists" -maxdepth 1 -name '*Packages*' -mmin -1440 2>/dev/null | head -1)" ]; then
		log "apt-get update (private armhf lists)"
		papt apt-get update >&2
	fi
}

# fetch downloads package $1 into $aptdir/debs unless it is there; prints the file.
fetch() {
	local f
	f=$(ls "$aptdir/debs/$1"_*.deb 2>/dev/null | head -1 || true)
	if [ -z "$f" ]; then
		log "download $1"
		(cd "$aptdir/debs" && papt apt-get download "$1" >&2)
		f=$(ls "$aptdir/debs/$1"_*.deb | head -1)
	fi
	echo "$f"
}

install_tools
mkdir -p "$out"
apt_setup
kpkg=$(papt apt-cache depends linux-image-armmp | sed -n 's/.*Depends: \(linux-image-6[^ ]*-armmp\)$/\1/p' | head -1)
[ -n "$kpkg" ] || { log "no linux-image-*-armmp found"; exit 1; }
kver=${kpkg#linux-image-}
stamp="$kver $(cat "$0" "$here/init.sh" | sha256sum | cut -c1-16)"
if [ -f "$out/stamp" ] && [ "$(cat "$out/stamp")" = "$stamp" ] &&
	[ -f "$out/vmlinuz" ] && [ -f "$out/base.cpio.gz" ] && [ -f "$out/vexpress-v2p-ca15-tc1.dtb" ]; then
	log "cached: $out ($kver)"
	echo "$out"
	exit 0
fi

kdeb=$(fetch "$kpkg")
bdeb=$(fetch busybox-static)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
log "unpack $kpkg"
dpkg-deb -x "$kdeb" "$work/k"
dpkg-deb -x "$bdeb" "$work/bb"
cp "$work/k/boot/vmlinuz-$kver" "$out/vmlinuz"
dtb=$(find "$work/k/usr/lib" -name vexpress-v2p-ca15-tc1.dtb | head -1)
[ -n "$dtb" ] || { log "vexpress-v2p-ca15-tc1.dtb not in $kpkg"; exit 1; }
cp "$dtb" "$out/vexpress-v2p-ca15-tc1.dtb"
# Debian ships no modules.dep: make one, then let modprobe list each
# module the guest needs after its dependencies.
depmod -b "$work/k" "$kver"
root=$work/root
mkdir -p "$root"/{bin,sbin,dev,proc,sys,tmp,etc/gateway,var/lib/gateway,lib/modules}
cp "$work/bb/bin/busybox" "$root/bin/busybox"
: >"$root/modules.order"
for m in i2c-versatile i2c-dev smsc911x; do
	modprobe -d "$work/k" -S "$kver" --show-depends "$m" | while read -r kind path _; do
		[ "$kind" = insmod ] || continue
		name=$(basename "$path")
		case $name in
		*.xz) xz -dc "$path" >"$root/lib/modules/${name%.xz}"; name=${name%.xz} ;;
		*) cp "$path" "$root/lib/modules/$name" ;;
		esac
		grep -qx "$name" "$root/modules.order" || echo "$name" >>"$root/modules.order"
	done
done
mv "$root/modules.order" "$root/lib/modules/order"
cp "$here/init.sh" "$root/init"
chmod 0755 "$root/init"
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -9) >"$out/base.cpio.gz"
echo "$kver" >"$out/kernel-version"
echo "$stamp" >"$out/stamp"
log "built $out ($kver; modules: $(tr '\n' ' ' <"$root/lib/modules/order"))"
echo "$out"
