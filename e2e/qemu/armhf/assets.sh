#!/usr/bin/env bash
# Builds, once, what the armhf QEMU system test boots: Debian's armhf
# kernel (linux-image-6.1.0-NN-armmp) with the vexpress-a15 device tree,
# and a busybox initramfs holding the kernel modules the test needs and
# the guest's /init (init.sh here). The gateway binary and its
# configuration are not in it: the test appends them at run time as a
# second cpio archive, so rebuilding the gateway does not rebuild this.
#
# Packages come from Debian's archive through ../common/debs.sh (a private
# apt configuration under the cache; the machine's apt sources are never
# changed; bookworm-security is optional there, since this mirror's armhf
# index of it has failed with "File has unexpected size"). Missing host
# tools (qemu-system-arm, kmod, cpio) are installed with apt-get as root.
# $DEBIAN_MIRROR, the mirror this script took before, still works as
# $GATEWAY_QEMU_MIRROR.
#
# Output, in ${XDG_CACHE_HOME:-~/.cache}/gateway-qemu/armhf/out:
#   vmlinuz  vexpress-v2p-ca15-tc1.dtb  base.cpio.gz  kernel-version
# A stamp (the kernel's version and the hash of this script, init.sh and
# ../common/debs.sh) makes a warm run a no-op; GATEWAY_QEMU_REBUILD=1
# rebuilds. Prints the output directory on stdout.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../common/debs.sh
source "$here/../common/debs.sh"
if [ -n "${DEBIAN_MIRROR:-}" ]; then
	export GATEWAY_QEMU_MIRROR=${GATEWAY_QEMU_MIRROR:-$DEBIAN_MIRROR}
fi

ARCH=armhf
CACHE=$(qemu_cache_root)/$ARCH
OUT=$CACHE/out
mkdir -p "$CACHE" "$OUT"

ensure_host_pkgs qemu-system-arm kmod cpio xz-utils

# The kernel Debian ships now for armhf: linux-image-armmp depends on
# linux-image-6.1.0-NN-armmp.
kpkg=$(deb_depends $ARCH "$CACHE" linux-image-armmp | grep -o 'linux-image-6\.1\.[0-9]*-[0-9]*-armmp' | head -1)
[ -n "$kpkg" ] || { echo "assets: cannot find the kernel linux-image-armmp depends on" >&2; exit 1; }
kver=${kpkg#linux-image-}
stamp="$kver $(cat "$here/assets.sh" "$here/init.sh" "$here/../common/debs.sh" | sha256sum | cut -c1-16)"
if [ "${GATEWAY_QEMU_REBUILD:-0}" != 1 ] && [ -f "$OUT/stamp" ] && [ "$(cat "$OUT/stamp")" = "$stamp" ] &&
	[ -f "$OUT/vmlinuz" ] && [ -f "$OUT/base.cpio.gz" ] && [ -f "$OUT/vexpress-v2p-ca15-tc1.dtb" ]; then
	qlog "assets up to date in $OUT (kernel $kver)"
	echo "$OUT"
	exit 0
fi
qlog "kernel $kver"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fetch_and_extract $ARCH "$CACHE" "$work/k" "$kpkg"
fetch_and_extract $ARCH "$CACHE" "$work/bb" busybox-static
cp "$work/k/boot/vmlinuz-$kver" "$OUT/vmlinuz"
dtb=$(find "$work/k/usr/lib" -name vexpress-v2p-ca15-tc1.dtb | head -1)
[ -n "$dtb" ] || { echo "assets: vexpress-v2p-ca15-tc1.dtb not in $kpkg" >&2; exit 1; }
cp "$dtb" "$OUT/vexpress-v2p-ca15-tc1.dtb"
# Debian ships no modules.dep: make one, then let modprobe list each
# module the guest needs after its dependencies.
depmod -b "$work/k" "$kver"
root=$work/root
mkdir -p "$root"/{bin,sbin,dev,proc,sys,tmp,etc/gateway,var/lib/gateway,lib/modules}
cp "$work/bb/bin/busybox" "$root/bin/busybox"
: >"$root/modules.order"
for m in i2c-versatile i2c-dev smsc911x lm75 dps310; do
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
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -9) >"$OUT/base.cpio.gz"
echo "$kver" >"$OUT/kernel-version"
echo "$stamp" >"$OUT/stamp"
qlog "built $OUT ($kver; modules: $(tr '\n' ' ' <"$root/lib/modules/order"))"
echo "$OUT"
