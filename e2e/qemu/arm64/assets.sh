#!/usr/bin/env bash
# Builds and caches what the arm64 QEMU test boots: Debian's arm64 kernel,
# its modules (depmod'ed), gpio-sim.ko built out of tree, and a base
# initramfs (busybox, modules, init). Prints the output directory.
#
# Cache: ${XDG_CACHE_HOME:-~/.cache}/gateway-qemu/arm64; the outputs are in
# its out/ (vmlinuz, base.cpio.gz, kernel-version) and are rebuilt only when
# this script, init or common/debs.sh change (or GATEWAY_QEMU_REBUILD=1).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../common/debs.sh
source "$here/../common/debs.sh"

ARCH=arm64
CACHE=$(qemu_cache_root)/$ARCH
OUT=$CACHE/out
mkdir -p "$CACHE" "$OUT"

id=$(cat "$here/assets.sh" "$here/init" "$here/../common/debs.sh" | sha256sum | cut -c1-16)
if [ "${GATEWAY_QEMU_REBUILD:-0}" != 1 ] && [ -f "$OUT/stamp" ] && [ "$(cat "$OUT/stamp")" = "$id" ] &&
	[ -f "$OUT/vmlinuz" ] && [ -f "$OUT/base.cpio.gz" ]; then
	qlog "assets up to date in $OUT (kernel $(cat "$OUT/kernel-version"))"
	echo "$OUT"
	exit 0
fi

ensure_host_pkgs qemu-system-arm kmod cpio xz-utils make gcc-12-aarch64-linux-gnu linux-source-6.1 linux-kbuild-6.1

# The kernel Debian ships now for arm64: linux-image-arm64 depends on
# linux-image-6.1.0-NN-arm64; the headers of the same NN build gpio-sim.
kimg=$(deb_depends $ARCH "$CACHE" linux-image-arm64 | grep -o 'linux-image-6\.1\.[0-9]*-[0-9]*-arm64' | head -1)
[ -n "$kimg" ] || { echo "assets: cannot find the kernel linux-image-arm64 depends on" >&2; exit 1; }
kver=${kimg#linux-image-}
abi=${kver%-arm64}
qlog "kernel $kver"

root=$CACHE/root-$kver
rm -rf "$root"
fetch_and_extract $ARCH "$CACHE" "$root" "$kimg" "linux-headers-$kver" "linux-headers-$abi-common" busybox-static

# The headers' scripts are symlinks to the host's linux-kbuild-6.1 (amd64
# tools), and their Makefile includes the common headers by absolute path.
mkdir -p "$root/usr/lib"
ln -sfn /usr/lib/linux-kbuild-6.1 "$root/usr/lib/linux-kbuild-6.1"
hdr=$root/usr/src/linux-headers-$kver
sed -i "s#^include /usr/src/#include $root/usr/src/#" "$hdr/Makefile"

# gpio-sim from Debian's source, with kernel/irq/irq_sim.c compiled into
# the same module (Debian's kernel has no CONFIG_IRQ_SIM). irq_to_desc is
# not exported to modules: generic_handle_irq does the same lookup.
src=$CACHE/gpio-sim-src
if [ ! -f "$src/irq_sim.c" ]; then
	qlog "extract gpio-sim.c, gpiolib.h, irq_sim.c from linux-source-6.1"
	rm -rf "$src.tmp" && mkdir -p "$src.tmp"
	tar -xJf /usr/src/linux-source-6.1.tar.xz -C "$src.tmp" --strip-components=1 \
		linux-source-6.1/drivers/gpio/gpio-sim.c linux-source-6.1/drivers/gpio/gpiolib.h \
		linux-source-6.1/kernel/irq/irq_sim.c
	mkdir -p "$src.tmp/flat"
	cp "$src.tmp/drivers/gpio/gpio-sim.c" "$src.tmp/flat/gpio-sim-main.c"
	cp "$src.tmp/drivers/gpio/gpiolib.h" "$src.tmp/kernel/irq/irq_sim.c" "$src.tmp/flat/"
	rm -rf "$src" && mv "$src.tmp/flat" "$src" && rm -rf "$src.tmp"
fi
build=$CACHE/gpio-sim-build
rm -rf "$build" && mkdir -p "$build"
cp "$src"/* "$build/"
sed -i 's/handle_simple_irq(irq_to_desc(irqnum))/generic_handle_irq(irqnum)/' "$build/irq_sim.c"
grep -q 'generic_handle_irq(irqnum)' "$build/irq_sim.c" || { echo "assets: irq_sim.c patch did not apply" >&2; exit 1; }
cat >"$build/Makefile" <<'MK'
obj-m := gpio-sim.o
gpio-sim-y := gpio-sim-main.o irq_sim.o
MK
qlog "build gpio-sim.ko"
make -s -C "$hdr" M="$build" ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu- \
	CC=aarch64-linux-gnu-gcc-12 modules >&2
mods=$root/lib/modules/$kver
mkdir -p "$mods/extra"
cp "$build/gpio-sim.ko" "$mods/extra/gpio-sim.ko"
depmod -b "$root" "$kver"

# The base initramfs: busybox, init, and the modules in dependency order.
ird=$CACHE/initramfs
rm -rf "$ird" && mkdir -p "$ird/bin" "$ird/etc/gateway" "$ird/lib/modules" "$ird/var/lib/gateway"
cp "$root/bin/busybox" "$ird/bin/busybox"
cp "$here/init" "$ird/init"
chmod 0755 "$ird/init" "$ird/bin/busybox"
ln -s busybox "$ird/bin/sh"
: >"$ird/etc/modules.order"
for m in configfs gpio-sim virtio_net virtio_pci xhci_pci usbserial ftdi_sio; do
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
echo "$kver" >"$OUT/kernel-version"
echo "$id" >"$OUT/stamp"
# The unpacked tree is only needed while building (the .debs stay cached).
rm -rf "$root" "$build" "$ird"
qlog "assets ready in $OUT"
echo "$OUT"
