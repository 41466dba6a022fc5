#!/usr/bin/env bash
# Builds and caches what the rpi3b QEMU test boots on -M raspi3b: Debian's
# arm64 kernel (the Image, which QEMU's raspi boot loader takes as it is),
# the Raspberry Pi 3 Model B device tree that the same kernel package
# ships (broadcom/bcm2837-rpi-3-b.dtb), and a base initramfs (busybox,
# init, the USB network modules). Prints the output directory.
#
# The .debs and the private apt lists are the arm64 test's (the same
# kernel package): ${XDG_CACHE_HOME:-~/.cache}/gateway-qemu/arm64. The
# outputs are in .../gateway-qemu/rpi3b/out (vmlinuz, bcm2837-rpi-3-b.dtb,
# base.cpio.gz, kernel-version) and are rebuilt only when this script,
# init or common/debs.sh change (or GATEWAY_QEMU_REBUILD=1).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../common/debs.sh
source "$here/../common/debs.sh"

ARCH=arm64
DEBS=$(qemu_cache_root)/arm64
CACHE=$(qemu_cache_root)/rpi3b
OUT=$CACHE/out
DTB=bcm2837-rpi-3-b.dtb
mkdir -p "$DEBS" "$CACHE" "$OUT"

id=$(cat "$here/assets.sh" "$here/init" "$here/../common/debs.sh" | sha256sum | cut -c1-16)
if [ "${GATEWAY_QEMU_REBUILD:-0}" != 1 ] && [ -f "$OUT/stamp" ] && [ "$(cat "$OUT/stamp")" = "$id" ] &&
	[ -f "$OUT/vmlinuz" ] && [ -f "$OUT/$DTB" ] && [ -f "$OUT/base.cpio.gz" ]; then
	qlog "assets up to date in $OUT (kernel $(cat "$OUT/kernel-version"))"
	echo "$OUT"
	exit 0
fi

ensure_host_pkgs qemu-system-arm kmod cpio

# One fetch at a time in the shared arm64 cache (make -j may run the arm64
# test's assets beside these).
exec 9>"$DEBS/.fetch.lock"
flock 9

# The kernel Debian ships now for arm64, as the arm64 test takes it.
kimg=$(deb_depends $ARCH "$DEBS" linux-image-arm64 | grep -o 'linux-image-6\.1\.[0-9]*-[0-9]*-arm64' | head -1)
[ -n "$kimg" ] || { echo "assets: cannot find the kernel linux-image-arm64 depends on" >&2; exit 1; }
kver=${kimg#linux-image-}
qlog "kernel $kver"

root=$CACHE/root-$kver
rm -rf "$root"
fetch_and_extract $ARCH "$DEBS" "$root" "$kimg" busybox-static
flock -u 9
dtb=$root/usr/lib/linux-image-$kver/broadcom/$DTB
[ -f "$dtb" ] || { echo "assets: $kimg has no broadcom/$DTB" >&2; exit 1; }
depmod -b "$root" "$kver"

# The base initramfs: busybox, init, and the modules in dependency order:
# the BCM2835's USB host (dwc2, with its usb-nop-xceiv PHY) and the CDC
# Ethernet driver of QEMU's usb-net, the guest's only network card.
ird=$CACHE/initramfs
rm -rf "$ird" && mkdir -p "$ird/bin" "$ird/etc/gateway" "$ird/lib/modules" "$ird/var/lib/gateway"
cp "$root/bin/busybox" "$ird/bin/busybox"
cp "$here/init" "$ird/init"
chmod 0755 "$ird/init" "$ird/bin/busybox"
ln -s busybox "$ird/bin/sh"
: >"$ird/etc/modules.order"
for m in phy-generic dwc2 cdc_ether; do
	modprobe -d "$root" -S "$kver" --show-depends "$m" | awk '$1 == "insmod" {print $2}'
done | awk '!seen[$0]++' | while read -r ko; do
	base=$(basename "$ko")
	cp "$ko" "$ird/lib/modules/$base"
	echo "$base" >>"$ird/etc/modules.order"
done
qlog "modules: $(tr '\n' ' ' <"$ird/etc/modules.order")"
(cd "$ird" && find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc --owner=0:0 --quiet) | gzip -9 >"$OUT/base.cpio.gz.tmp"
mv "$OUT/base.cpio.gz.tmp" "$OUT/base.cpio.gz"
cp "$root/boot/vmlinuz-$kver" "$OUT/vmlinuz"
cp "$dtb" "$OUT/$DTB"
echo "$kver" >"$OUT/kernel-version"
echo "$id" >"$OUT/stamp"
rm -rf "$root" "$ird"
qlog "assets ready in $OUT"
echo "$OUT"
