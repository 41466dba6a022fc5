#!/bin/sh
# build-deb.sh OUTDIR: builds gateway_<version>_{armhf,arm64,amd64}.deb from
# bin/cross/gateway-linux-* with dpkg-deb alone (no debhelper), into OUTDIR.
# Run from the repository's root (make deb does).
#
# armhf carries the ARMv6 binary: Raspberry Pi OS's 32-bit armhf userland is
# built for ARMv6, and that binary runs on every Pi from the Zero and 1 up.
set -eu

out=${1:?usage: build-deb.sh OUTDIR}
root=$(pwd)

# The version sorts in build order (packaging/debversion.sh); DEB_VERSION
# overrides it.
version=${DEB_VERSION:-$(sh packaging/debversion.sh)}
mkdir -p "$out"
rm -f "$out"/gateway_*.deb
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for pair in armhf:armv6 arm64:arm64 amd64:amd64; do
	arch=${pair%%:*}
	bin=bin/cross/gateway-linux-${pair#*:}
	[ -x "$bin" ] || { echo "build-deb.sh: $bin missing (make cross)" >&2; exit 1; }
	pkg=$work/$arch
	install -d -m 0755 "$pkg/DEBIAN" "$pkg/usr/bin" "$pkg/lib/systemd/system" \
		"$pkg/etc/gateway" "$pkg/usr/share/doc/gateway/examples"
	install -m 0755 "$bin" "$pkg/usr/bin/gateway"
	# The adapters shipped with the gateway (the MQTT bridge), which the
	# gateway installs from here when enabled (adapters.shipped).
	adapters=bin/cross/adapters-linux-${pair#*:}
	[ -d "$adapters" ] || { echo "build-deb.sh: $adapters missing (make cross)" >&2; exit 1; }
	for dir in "$adapters"/*/; do
		name=$(basename "$dir")
		install -d -m 0755 "$pkg/usr/lib/gateway/adapters/$name"
		install -m 0755 "$dir$name" "$pkg/usr/lib/gateway/adapters/$name/$name"
		install -m 0644 "$dir/adapter.json" "$pkg/usr/lib/gateway/adapters/$name/adapter.json"
	done
	install -m 0644 systemd/gateway.service systemd/gateway.socket \
		systemd/gateway-tcp.socket "$pkg/lib/systemd/system/"
	install -m 0644 packaging/gateway.yaml "$pkg/etc/gateway/gateway.yaml"
	install -m 0644 docs/install.md docs/configuration.md docs/hardware.md \
		docs/adapters.md "$pkg/usr/share/doc/gateway/"
	install -m 0644 docs/examples/*.yaml "$pkg/usr/share/doc/gateway/examples/"
	install -m 0644 packaging/debian/conffiles "$pkg/DEBIAN/conffiles"
	install -m 0755 packaging/debian/postinst packaging/debian/prerm \
		packaging/debian/postrm "$pkg/DEBIAN/"
	size=$(du -sk --exclude=DEBIAN "$pkg" | cut -f1)
	sed -e "s/@VERSION@/$version/" -e "s/@ARCH@/$arch/" -e "s/@SIZE@/$size/" \
		packaging/debian/control.in >"$pkg/DEBIAN/control"
	deb=$out/gateway_${version}_${arch}.deb
	dpkg-deb --root-owner-group -Zxz --build "$pkg" "$deb" >/dev/null
	echo "built $deb ($(du -k "$deb" | cut -f1) KiB)"
done
cd "$root"
