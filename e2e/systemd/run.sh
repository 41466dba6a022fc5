#!/usr/bin/env bash
# Real-systemd test (issue 7, items 6 and 8): the amd64 .deb and its units
# under systemd as PID 1 in systemd-nspawn (Debian bookworm, cgroup v2, its
# own loopback). Each check prints PASS or FAIL; the run ends with
# "N passed, N failed" and exits 1 on any failure, after printing the
# journal of gateway.service.
#
#   e2e/systemd/run.sh [DEB [ADAPTER_DIR [HANG_BIN]]]
#
# DEB defaults to the newest bin/deb/gateway_*_amd64.deb, ADAPTER_DIR to
# bin/adapters/pyledger (make deb adapters), HANG_BIN to bin/gateway-testhang:
# the amd64 gateway built with -tags testhang, the only build that obeys
# GATEWAY_TEST_HANG; the watchdog checks run it through a drop-in ExecStart=,
# every other check runs the packaged /usr/bin/gateway. Needs root. Installs
# systemd-container and mmdebstrap with apt-get when missing. The root file
# system is built once and cached in ${XDG_CACHE_HOME:-~/.cache}/gateway-nspawn
# (each boot runs on a throw-away overlay of it); the first build takes
# about a minute, a warm run well under three.
# The last scenario upgrades the package: DEB is installed over an older
# build of itself (the same files, an earlier version). SYSTEMD_TEST_ONLY=upgrade
# runs that scenario alone, SYSTEMD_TEST_ONLY=reload the reload's
# (reload.sh: systemctl reload gateway).
# No pipefail: checks end pipelines in grep, whose early exit on a match
# would otherwise count the producer's SIGPIPE as a failure.
set -u

repo=$(cd "$(dirname "$0")/../.." && pwd)
deb=${1:-$(ls -t "$repo"/bin/deb/gateway_*_amd64.deb 2>/dev/null | head -n1)}
adapter=${2:-$repo/bin/adapters/pyledger}
hangbin=${3:-$repo/bin/gateway-testhang}
cache=${XDG_CACHE_HOME:-$HOME/.cache}/gateway-nspawn
# Packages of the container; changing them builds a new cached root.
packages=systemd,systemd-sysv,dbus,python3,adduser
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}

t0=$(date +%s.%N)
say() { printf '[%6.1fs] %s\n' "$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{print b-a}')" "$*"; }
die() { echo "e2e/systemd: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "needs root (systemd-nspawn)"
[ -f "$deb" ] || die "no amd64 .deb (make deb): ${deb:-bin/deb/gateway_*_amd64.deb}"
[ -f "$adapter/adapter.json" ] || die "no adapter folder $adapter (make adapters)"
[ -x "$hangbin" ] || die "no $hangbin (go build -tags testhang ./cmd/gateway)"

need=()
command -v systemd-nspawn >/dev/null || need+=(systemd-container)
command -v mmdebstrap >/dev/null || need+=(mmdebstrap)
if [ ${#need[@]} -gt 0 ]; then
	say "apt-get install ${need[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get install -y -qq "${need[@]}" >/dev/null 2>&1 ||
		{ apt-get update -qq && apt-get install -y -qq "${need[@]}" >/dev/null; } ||
		die "cannot install ${need[*]}"
fi

# --- the cached root file system -------------------------------------------
key=$(printf '%s %s' bookworm "$packages" | sha256sum | cut -c1-12)
rootfs=$cache/rootfs-$key
if [ ! -x "$rootfs/lib/systemd/systemd" ]; then
	say "building the bookworm root $rootfs (once)"
	mkdir -p "$cache"
	rm -rf "$rootfs.tmp"
	mmdebstrap --quiet --variant=minbase --include="$packages" bookworm \
		"$rootfs.tmp" "$mirror" || die "mmdebstrap failed"
	mv "$rootfs.tmp" "$rootfs"
fi

# --- boot ------------------------------------------------------------------
harness=$(mktemp -d /tmp/gateway-nspawn.XXXXXX)
cp "$deb" "$harness/gateway_amd64.deb"
cp -a "$adapter" "$harness/pyledger"
cp "$hangbin" "$harness/gateway-testhang"
# The older build for the upgrade: DEB repacked with an earlier version.
new_version=$(dpkg-deb -f "$deb" Version)
old_version=0.1.0~git20000101.000000.0000000
dpkg --compare-versions "$old_version" lt "$new_version" ||
	die "the package's version $new_version does not sort after $old_version"
dpkg-deb -R "$deb" "$harness/old"
sed -i "s/^Version: .*/Version: $old_version/" "$harness/old/DEBIAN/control"
dpkg-deb --root-owner-group -Zxz -b "$harness/old" "$harness/gateway_old_amd64.deb" >/dev/null ||
	die "cannot repack $deb as $old_version"
rm -rf "$harness/old"
chmod -R a+rX "$harness"
nspawn_pid=
pid1=

# cleanup stops the container and removes the empty payload/ and supervisor/
# cgroups that systemd-nspawn --keep-unit leaves beside its own.
cleanup() {
	if [ -n "$nspawn_pid" ] && kill -0 "$nspawn_pid" 2>/dev/null; then
		kill -TERM "$nspawn_pid" 2>/dev/null
		for _ in $(seq 100); do kill -0 "$nspawn_pid" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$nspawn_pid" 2>/dev/null
		wait "$nspawn_pid" 2>/dev/null
	fi
	# The container's init can outlive systemd-nspawn: end it (and with it
	# its PID namespace) so that its cgroups empty.
	if [ -n "$pid1" ] && kill -0 "$pid1" 2>/dev/null; then
		kill -KILL "$pid1" 2>/dev/null
		for _ in $(seq 50); do kill -0 "$pid1" 2>/dev/null || break; sleep 0.1; done
	fi
	local own
	own=$(sed -n 's/^0:://p' /proc/self/cgroup)
	for h in /sys/fs/cgroup /sys/fs/cgroup/unified /sys/fs/cgroup/systemd; do
		for d in payload supervisor; do
			for _ in $(seq 20); do
				[ -d "$h$own/$d" ] || break
				find "$h$own/$d" -depth -type d -exec rmdir {} + 2>/dev/null
				sleep 0.1
			done
		done
	done
	rm -rf "$harness"
}
trap cleanup EXIT

say "booting $rootfs"
SYSTEMD_NSPAWN_UNIFIED_HIERARCHY=1 systemd-nspawn -q -D "$rootfs" --volatile=overlay \
	--register=no --keep-unit --private-network --machine=gatewaytest \
	--bind="$harness":/harness --console=read-only -b >"$harness/console.log" 2>&1 &
nspawn_pid=$!
# The container's init is the child of systemd-nspawn that runs systemd:
# nspawn may first fork a helper that sets the container up and exits.
for _ in $(seq 200); do
	for p in $(pgrep -P "$nspawn_pid"); do
		[ "$(cat "/proc/$p/comm" 2>/dev/null)" = systemd ] && pid1=$p
	done
	[ -n "$pid1" ] && break
	sleep 0.05
done
[ -n "$pid1" ] || { cat "$harness/console.log"; die "the container did not start"; }

# ct runs a command inside the container (all its namespaces).
ct() { nsenter -t "$pid1" -m -u -i -n -p -C -- "$@"; }

# systemctl needs systemd's private bus, there once PID 1 is systemd.
for _ in $(seq 200); do ct test -S /run/systemd/private 2>/dev/null && break; sleep 0.05; done
state=$(ct timeout 60 systemctl is-system-running --wait 2>&1)
say "container up: $state"
# Debug logging makes systemd journal each sd_notify message it receives.
ct systemd-analyze log-level debug

# --- checks ----------------------------------------------------------------
passed=0
failed=0
n=0
check() { # check NAME RESULT(0|1) DETAIL
	n=$((n + 1))
	if [ "$2" = 0 ]; then
		passed=$((passed + 1))
		say "check $n PASS $1${3:+ ($3)}"
	else
		failed=$((failed + 1))
		say "check $n FAIL $1${3:+: $3}"
	fi
}

prop() { ct systemctl show -p "$2" --value "$1"; }
cli() { ct /usr/bin/gateway "$@"; }
# journal_since CURSOR: the container's whole journal since the cursor.
cursor() { ct journalctl -n 0 --show-cursor -q | sed -n 's/^-- cursor: //p'; }
journal_since() { ct journalctl --no-pager -o short-monotonic --after-cursor="$1" -q; }
# wait_for SECONDS CMD...: run CMD until it succeeds, at most SECONDS.
wait_for() {
	local end=$(($(date +%s%N) + $1 * 1000000000))
	shift
	while [ "$(date +%s%N)" -lt "$end" ]; do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	return 1
}
is_active() { [ "$(prop gateway.service ActiveState)" = active ]; }
# tls_handshake PORT: a TLS handshake with 127.0.0.1:PORT completes.
tls_handshake() {
	ct python3 -c 'import socket, ssl, sys
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
with socket.create_connection(("127.0.0.1", int(sys.argv[1])), 3) as s:
    ctx.wrap_socket(s).close()' "$1" >/dev/null 2>&1
}
# https_get PORT PATH: the body of https://127.0.0.1:PORT/PATH, any certificate.
https_get() {
	ct python3 -c 'import ssl, sys, urllib.request
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
print(urllib.request.urlopen("https://127.0.0.1:%s%s" % (sys.argv[1], sys.argv[2]), context=ctx, timeout=5).read().decode())' "$1" "$2" 2>&1
}
has_devices() { cli devices --json 2>/dev/null | grep -q "$1"; }

# Test settings: a short start timeout (a gateway that never sends READY
# fails in 10 s rather than 30), and the sim board listening on loopback:
# put_test_config ADAPTER [MORE], MORE the lines that follow adapters.user.
put_test_config() {
	ct mkdir -p /etc/systemd/system/gateway.service.d
	ct sh -c 'cat >/etc/systemd/system/gateway.service.d/10-test.conf' <<'EOF'
[Service]
TimeoutStartSec=10s
EOF
	ct sh -c 'cat >/etc/gateway/gateway.yaml' <<EOF
board: sim
stateDir: /var/lib/gateway
hub:
  listen:
    http: 127.0.0.1:7750
    tcp: 127.0.0.1:7751
adapters:
  enabled: [$1]
  user: gateway-adapter
${2:-}
EOF
	ct systemctl daemon-reload
}

only=${SYSTEMD_TEST_ONLY:-}
if [ -z "$only" ]; then

# (g) The package: installs, creates users and groups, enables and does not
# start; then starts with its own default configuration.
c=$(cursor)
out=$(ct dpkg -i /harness/gateway_amd64.deb 2>&1)
rc=$?
detail=
[ $rc = 0 ] || detail="dpkg -i exit $rc: $out"
for u in gateway gateway-adapter; do ct id "$u" >/dev/null 2>&1 || detail="$detail no user $u;"; done
for g in gateway gpio i2c spi dialout; do ct getent group "$g" >/dev/null || detail="$detail no group $g;"; done
for u in gateway.service gateway.socket gateway-tcp.socket; do
	e=$(ct systemctl is-enabled "$u" 2>&1)
	[ "$e" = enabled ] || detail="$detail $u is $e, not enabled;"
	a=$(ct systemctl is-active "$u" 2>&1)
	[ "$a" = inactive ] || detail="$detail $u is $a after install, not inactive;"
done
ct dpkg-query -W -f='${Conffiles}\n' gateway | grep -q /etc/gateway/gateway.yaml ||
	detail="$detail gateway.yaml is not a conffile;"
check "the .deb installs: users gateway, gateway-adapter, groups gpio i2c spi dialout; units enabled, not started" \
	"$([ -z "$detail" ] && echo 0 || echo 1)" "$detail"

out=$(ct systemd-analyze verify gateway.service gateway.socket gateway-tcp.socket 2>&1)
check "systemd-analyze verify of the installed units prints nothing" \
	"$([ -z "$out" ] && echo 0 || echo 1)" "$out"

# The package's default configuration (board generic, no devices).
ct mkdir -p /etc/systemd/system/gateway.service.d
ct sh -c 'printf "[Service]\nTimeoutStartSec=10s\n" >/etc/systemd/system/gateway.service.d/10-test.conf'
ct systemctl daemon-reload
out=$(ct systemctl start gateway.service 2>&1)
rc=$?
detail=
[ $rc = 0 ] || detail="systemctl start exit $rc: $out"
is_active || detail="$detail ActiveState=$(prop gateway.service ActiveState);"
wait_for 5 cli devices || detail="$detail the gateway does not answer;"
ct test -s /var/lib/gateway/admin.token || detail="$detail no /var/lib/gateway/admin.token;"
check "the installed package starts with its default configuration (board generic)" \
	"$([ -z "$detail" ] && echo 0 || echo 1)" "$detail"
ct systemctl stop gateway.service

# No token in clear on the LAN after install (issue 28): the sockets and the
# service as a boot starts them, with the package's own configuration.
# Every TCP listener of the container off loopback must be TLS (a
# handshake completes); the plain ports are on 127.0.0.1 only; the wss
# listener serves the console over https.
ct systemctl start gateway.socket gateway-tcp.socket gateway.service
detail=
wait_for 5 cli devices || detail="the gateway does not answer on ws://127.0.0.1:7750;"
listeners=$(nsenter -t "$pid1" -n ss -ltnH | awk '{print $4}' | sort -u | tr '\n' ' ')
lan=
for l in $listeners; do
	case ${l%:*} in 127.*|"[::1]") continue ;; esac
	lan="$lan $l"
	tls_handshake "${l##*:}" || detail="$detail $l off loopback does not speak TLS;"
done
# A wildcard listener shows as *:PORT (both families) or 0.0.0.0:PORT.
for want in 127.0.0.1:7750 127.0.0.1:7751 '*:7752|0.0.0.0:7752' '*:7753|0.0.0.0:7753'; do
	found=
	for l in $listeners; do
		case "|$want|" in *"|$l|"*) found=1 ;; esac
	done
	[ -n "$found" ] || detail="$detail nothing listens on $want;"
done
fp=$(cli status --json 2>/dev/null | sed -n 's/.*"fingerprint":"\([0-9a-f]*\)".*/\1/p')
[ -n "$fp" ] || detail="$detail gateway status shows no fingerprint;"
page=$(https_get 7752 /)
case $page in *"<title>Gateway console</title>"*) ;; *) detail="$detail https://127.0.0.1:7752/ is not the console: ${page:0:80};" ;; esac
out=$(cli status --hub wss://127.0.0.1:7752/hal --fingerprint "$fp" 2>&1) || detail="$detail status over wss with its fingerprint: $out;"
case $out in *"SHA-256 $fp"*) ;; *) detail="$detail status over wss does not show the fingerprint: $out;" ;; esac
check "after install, nothing plain listens off loopback (listening:$lan off loopback, all TLS; console on https://:7752/)" \
	"$([ -z "$detail" ] && echo 0 || echo 1)" "$detail"

# A plain socket that an operator's drop-in puts on the LAN is served, and
# the gateway says at start that tokens cross it in clear.
ct systemctl stop gateway.service gateway.socket gateway-tcp.socket
ct mkdir -p /etc/systemd/system/gateway.socket.d
ct sh -c 'printf "[Socket]\nListenStream=\nListenStream=0.0.0.0:7750\n" >/etc/systemd/system/gateway.socket.d/lan.conf'
ct systemctl daemon-reload
c=$(cursor)
ct systemctl start gateway.socket gateway.service
detail=
journal_since "$c" | grep -q 'gateway\[[0-9]*\]: .*level=WARN msg="plain socket passed by systemd is off loopback: every token given to it crosses the network in clear.*name=http addr=0.0.0.0:7750' ||
	detail="no warning of the plain socket on 0.0.0.0:7750 in the journal;"
check "a plain socket on 0.0.0.0 handed over by systemd: served, and warned at start" \
	"$([ -z "$detail" ] && echo 0 || echo 1)" "$detail"
ct systemctl stop gateway.service gateway.socket
ct rm -rf /etc/systemd/system/gateway.socket.d
ct systemctl daemon-reload

# (a) active only after READY=1.
put_test_config ""
c=$(cursor)
ct systemctl start --no-block gateway.service
states=
for _ in $(seq 300); do
	s=$(prop gateway.service ActiveState)
	case $states in *"$s") ;; *) states="$states $s" ;; esac
	[ "$s" = active ] || [ "$s" = failed ] && break
	sleep 0.03
done
j=$(journal_since "$c")
ready_line=$(printf '%s\n' "$j" | grep -n 'gateway.service: Got notification message.*READY=1' | head -n1 | cut -d: -f1)
running_line=$(printf '%s\n' "$j" | grep -n 'gateway.service: Changed start -> running' | head -n1 | cut -d: -f1)
status=$(prop gateway.service StatusText)
detail=
case $states in *active) ;; *) detail="states seen:$states;" ;; esac
[ -n "$ready_line" ] || detail="$detail no READY=1 notification in the journal;"
[ -n "$running_line" ] || detail="$detail systemd never moved start -> running;"
[ -n "$ready_line" ] && [ -n "$running_line" ] && [ "$ready_line" -gt "$running_line" ] &&
	detail="$detail running before READY=1;"
[ -n "$status" ] || detail="$detail no STATUS= text;"
check "active only after READY=1 (states:$states; STATUS=$status)" \
	"$([ -z "$detail" ] && echo 0 || echo 1)" "$detail"

# (b) systemctl stop: within TimeoutStopSec, STOPPING=1, exit 0.
c=$(cursor)
s0=$(date +%s%N)
ct systemctl stop gateway.service
ms=$((($(date +%s%N) - s0) / 1000000))
limit_us=$(prop gateway.service TimeoutStopUSec)
j=$(journal_since "$c")
detail=
result=$(prop gateway.service Result)
code=$(prop gateway.service ExecMainCode)
st=$(prop gateway.service ExecMainStatus)
[ "$result" = success ] || detail="Result=$result;"
[ "$code" = 1 ] && [ "$st" = 0 ] || detail="$detail main process code=$code status=$st (want exited 0);"
[ $ms -lt 15000 ] || detail="$detail took ${ms} ms;"
printf '%s\n' "$j" | grep -q 'gateway.service: Got notification message.*STOPPING=1' ||
	detail="$detail no STOPPING=1 notification;"
printf '%s\n' "$j" | grep -q 'State .stop-sigterm. timed out' && detail="$detail stop timed out;"
printf '%s\n' "$j" | grep -q 'gateway\[[0-9]*\]: .*msg=stopping' || detail="$detail no shutdown line from the gateway;"
check "systemctl stop in ${ms} ms (TimeoutStopSec=$limit_us), STOPPING=1, clean exit" \
	"$([ -z "$detail" ] && echo 0 || echo 1)" "$detail"

# (e) Hardening: the state directory, devices, and a Python adapter as its
# own user.
# Commands that write the state directory run as its owner, gateway, as
# docs/install.md says (as root they would leave root's files there).
out=$(ct runuser -u gateway -- /usr/bin/gateway adapter install /harness/pyledger --state-dir /var/lib/gateway 2>&1)
rc=$?
put_test_config pyledger
c=$(cursor)
ct systemctl start gateway.service
detail=
[ $rc = 0 ] || detail="gateway adapter install exit $rc: $out;"
is_active || detail="$detail ActiveState=$(prop gateway.service ActiveState);"
perm=$(ct stat -c '%U %a' /var/lib/gateway)
[ "$perm" = "gateway 711" ] || detail="$detail /var/lib/gateway is '$perm', want 'gateway 711';"
perm=$(ct stat -c '%U %a' /var/lib/gateway/admin.token 2>&1)
[ "$perm" = "gateway 600" ] || detail="$detail admin.token is '$perm';"
cli write sim.led true >/dev/null 2>&1 || detail="$detail write sim.led failed;"
agent=$(ct runuser -u gateway -- /usr/bin/gateway token add --state-dir /var/lib/gateway --name agent1 --kind agent --scope read 2>&1)
cli read sim.led --token "$agent" >/dev/null 2>&1 || detail="$detail a token added by gateway token add does not work: $agent;"
cli audit 2>/dev/null | grep -q sim.led || detail="$detail the audit log has no sim.led write;"
ndev=$(cli devices 2>/dev/null | grep -cE '^sim\..* ok[ ,]')
[ "$ndev" = 7 ] || detail="$detail $ndev of 7 sim devices ok;"
wait_for 15 has_devices '"pyledger\.' || detail="$detail no pyledger.* device within 15 s;"
pyuid=
for p in $(ct sh -c 'grep -l pyledger[.]py /proc/[0-9]*/cmdline 2>/dev/null' | cut -d/ -f3); do
	pyuid=$(ct sh -c "awk '/^Uid:/{print \$2}' /proc/$p/status" 2>/dev/null)
	[ -n "$pyuid" ] && break
done
want=$(ct id -u gateway-adapter)
[ "$pyuid" = "$want" ] || detail="$detail pyledger runs as uid '${pyuid:-none}', want gateway-adapter ($want);"
mainpid=$(prop gateway.service MainPID)
caps=$(ct sh -c "awk '/^CapEff:/{print \$2}' /proc/$mainpid/status")
[ "$(ct id -u gateway)" = "$(ct sh -c "awk '/^Uid:/{print \$2}' /proc/$mainpid/status")" ] ||
	detail="$detail the gateway does not run as user gateway;"
j=$(journal_since "$c")
printf '%s\n' "$j" | grep -iE 'gateway\[[0-9]+\]:.*(permission denied|operation not permitted|read-only file system)' >"$harness/denied"
[ -s "$harness/denied" ] && detail="$detail denied in the journal: $(head -n3 "$harness/denied" | tr '\n' ' ')"
check "hardening: state dir, audit, 7 sim devices, pyledger as gateway-adapter (gateway CapEff=$caps)" \
	"$([ -z "$detail" ] && echo 0 || echo 1)" "$detail"

# Device access through the unit's DeviceAllow: a process in the gateway's
# cgroup, as its user and groups, may open a serial port (ttyS, allowed) and
# may not open /dev/kmsg (not allowed).
ct sh -c 'mknod -m 0660 /dev/ttyS0 c 4 64 2>/dev/null; chgrp dialout /dev/ttyS0; mknod -m 0666 /dev/gw-kmsg c 1 11 2>/dev/null'
cg=$(ct sh -c "sed -n 's/^0:://p' /proc/$mainpid/cgroup")
probe() { # probe DEVICE: the error of opening it read-write from the gateway's cgroup
	ct sh -c "echo \$\$ >/sys/fs/cgroup$cg/cgroup.procs && exec setpriv --reuid=gateway --regid=gateway --groups=gpio,i2c,spi,dialout python3 -c '
import os,sys
try: os.close(os.open(sys.argv[1], os.O_RDWR|os.O_NOCTTY|os.O_NONBLOCK)); print(\"ok\")
except OSError as e: print(e.strerror)' $1" 2>&1
}
tty=$(probe /dev/ttyS0)
kmsg=$(probe /dev/gw-kmsg)
detail=
case $tty in "Operation not permitted"*|"Permission denied"*) detail="ttyS0: $tty;" ;; esac
case $kmsg in "Operation not permitted"*) ;; *) detail="$detail /dev/kmsg (not allowed) gave '$kmsg', want Operation not permitted;" ;; esac
check "devices: ttyS0 opens from the gateway's cgroup ($tty), a device not allowed does not ($kmsg)" \
	"$([ -z "$detail" ] && echo 0 || echo 1)" "$detail"

# Stopping with an adapter: the gateway stops pyledger itself (KillMode=mixed
# leaves nothing for systemd to kill).
c=$(cursor)
ct systemctl stop gateway.service
j=$(journal_since "$c")
detail=
[ "$(prop gateway.service Result)" = success ] || detail="Result=$(prop gateway.service Result);"
printf '%s\n' "$j" | grep -q 'gateway.service: Killing process' && detail="$detail systemd had to kill: $(printf '%s\n' "$j" | grep 'Killing process' | head -n2 | tr '\n' ' ')"
ct sh -c 'grep -l pyledger[.]py /proc/[0-9]*/cmdline 2>/dev/null' | grep -q . && detail="$detail a pyledger process remains;"
check "stop with pyledger running: the gateway stops its adapter, nothing left for systemd to kill" \
	"$([ -z "$detail" ] && echo 0 || echo 1)" "$detail"

# The adapter shipped in the package (the MQTT bridge): enabling it in the
# configuration is all it takes. The gateway installs it from
# /usr/lib/gateway/adapters at start and runs it as gateway-adapter; with
# no broker there, its mqtt.broker device says why it is not connected.
put_test_config mqtt '  settings:
    mqtt: {broker: "mqtt://127.0.0.1:1", gateway: bench}'
c=$(cursor)
ct systemctl start gateway.service
detail=
wait_for 15 has_devices '"mqtt\.broker"' || detail="no mqtt.broker device within 15 s;"
broker=$(cli read mqtt.broker 2>&1)
case $broker in *disconnected*) ;; *) detail="$detail mqtt.broker reads '$broker', want disconnected and why;" ;; esac
j=$(journal_since "$c")
printf '%s\n' "$j" | grep -q 'installed the shipped adapter.*adapter=mqtt' || detail="$detail no 'installed the shipped adapter' for mqtt in the journal;"
ct test -x /var/lib/gateway/adapters/mqtt/mqtt || detail="$detail not installed in the state directory;"
mqttuid=
for p in $(ct sh -c 'grep -l adapters/mqtt/mqtt /proc/[0-9]*/cmdline 2>/dev/null' | cut -d/ -f3); do
	mqttuid=$(ct sh -c "awk '/^Uid:/{print \$2}' /proc/$p/status" 2>/dev/null)
	[ -n "$mqttuid" ] && break
done
[ "$mqttuid" = "$(ct id -u gateway-adapter)" ] || detail="$detail the mqtt adapter runs as uid '${mqttuid:-none}', want gateway-adapter;"
ct systemctl stop gateway.service
check "the shipped MQTT bridge: enabled in the configuration, installed from /usr/lib/gateway/adapters, $broker" \
	"$([ -z "$detail" ] && echo 0 || echo 1)" "$detail"

# (c) Watchdog: a hung hub stops the petting; systemd kills and restarts.
ct install -D -m 0755 /harness/gateway-testhang /usr/local/lib/gateway-test/gateway
put_test_config ""
ct sh -c 'cat >/etc/systemd/system/gateway.service.d/50-hang.conf' <<'EOF'
[Service]
WatchdogSec=2s
Environment=GATEWAY_TEST_HANG=hub:3s
ExecStart=
ExecStart=/usr/local/lib/gateway-test/gateway run --config /etc/gateway/gateway.yaml --state-dir /var/lib/gateway --unix /run/gateway/hal.sock
EOF
ct systemctl daemon-reload
ct systemctl reset-failed gateway.service 2>/dev/null
c=$(cursor)
ct systemctl start gateway.service
r0=$(prop gateway.service NRestarts)
grown() { [ "$(prop gateway.service NRestarts)" -gt "$r0" ]; }
wd() { journal_since "$c" | grep -q 'gateway.service: Watchdog timeout'; }
detail=
wait_for 20 wd || detail="no 'Watchdog timeout' within 20 s;"
wait_for 10 grown || detail="$detail NRestarts stayed $r0;"
r1=$(prop gateway.service NRestarts)
check "watchdog: GATEWAY_TEST_HANG=hub:3s with WatchdogSec=2s: killed and restarted (NRestarts $r0 -> $r1)" \
	"$([ -z "$detail" ] && echo 0 || echo 1)" "$detail"
ct rm -f /etc/systemd/system/gateway.service.d/50-hang.conf
ct systemctl daemon-reload
ct systemctl stop gateway.service
ct systemctl reset-failed gateway.service 2>/dev/null

# (f) A latched emergency stop survives a watchdog restart. The hang is read
# from a file at start, removed once the process has it: only that one
# process hangs, its replacement runs normally.
ct sh -c 'mkdir -p /run/gateway-test && echo GATEWAY_TEST_HANG=hub:3s >/run/gateway-test/hang.env'
ct sh -c 'cat >/etc/systemd/system/gateway.service.d/50-hang.conf' <<'EOF'
[Service]
WatchdogSec=2s
EnvironmentFile=-/run/gateway-test/hang.env
ExecStart=
ExecStart=/usr/local/lib/gateway-test/gateway run --config /etc/gateway/gateway.yaml --state-dir /var/lib/gateway --unix /run/gateway/hal.sock
EOF
ct systemctl daemon-reload
c=$(cursor)
ct systemctl start gateway.service
ct rm -f /run/gateway-test/hang.env
r0=$(prop gateway.service NRestarts)
detail=
cli stop >/dev/null 2>&1 || detail="gateway stop failed;"
cli write sim.led true >/dev/null 2>&1 && detail="$detail a write succeeded right after gateway stop;"
wait_for 20 wd || detail="$detail no 'Watchdog timeout' within 20 s;"
wait_for 10 grown || detail="$detail NRestarts stayed $r0;"
wait_for 10 is_active || detail="$detail not active again after the restart;"
wait_for 5 cli devices || detail="$detail the restarted gateway does not answer;"
out=$(cli write sim.led true 2>&1) && detail="$detail after the restart a write succeeded: the stop was lost;"
printf '%s' "$out" | grep -qi stop || detail="$detail the refused write does not mention the stop: $out;"
cli resume >/dev/null 2>&1 || detail="$detail gateway resume failed;"
cli write sim.led true >/dev/null 2>&1 || detail="$detail after resume the write still fails;"
check "a latched emergency stop is still engaged after a watchdog restart" \
	"$([ -z "$detail" ] && echo 0 || echo 1)" "$detail"
ct rm -f /etc/systemd/system/gateway.service.d/50-hang.conf
ct systemctl daemon-reload
ct systemctl stop gateway.service
ct systemctl reset-failed gateway.service 2>/dev/null

# (g) The state directory removed while stopped: /healthz says `state`, the
# watchdog petting stops, systemd restarts the gateway into a new empty
# state directory, and the copy of the latch in the runtime directory
# (RuntimeDirectoryPreserve=yes) keeps it stopped.
ct sh -c 'cat >/etc/systemd/system/gateway.service.d/50-wd.conf' <<'EOF'
[Service]
WatchdogSec=2s
EOF
ct systemctl daemon-reload
c=$(cursor)
ct systemctl start gateway.service
r0=$(prop gateway.service NRestarts)
detail=
wait_for 5 cli devices || detail="the gateway does not answer;"
cli stop --reason "state dir drill" >/dev/null 2>&1 || detail="$detail gateway stop failed;"
ct rm -rf /var/lib/gateway
wait_for 20 wd || detail="$detail no 'Watchdog timeout' within 20 s of the state directory's removal;"
wait_for 10 grown || detail="$detail NRestarts stayed $r0;"
wait_for 10 is_active || detail="$detail not active again after the restart;"
wait_for 5 cli devices || detail="$detail the restarted gateway does not answer;"
out=$(cli write sim.led true 2>&1) && detail="$detail after the restart a write succeeded: the stop was lost with the state directory;"
printf '%s' "$out" | grep -qi stop || detail="$detail the refused write does not mention the stop: $out;"
journal_since "$c" | grep -q 'stop latch found only in its copy' || detail="$detail the journal does not say the latch came from its copy;"
cli resume >/dev/null 2>&1 || detail="$detail gateway resume failed;"
ct test -e /run/gateway/stop.json && detail="$detail the latch's copy is still there after resume;"
check "the state directory removed while stopped: watchdog restart, still stopped (the latch's copy in /run/gateway)" \
	"$([ -z "$detail" ] && echo 0 || echo 1)" "$detail"
ct rm -f /etc/systemd/system/gateway.service.d/50-wd.conf
ct systemctl daemon-reload
ct systemctl stop gateway.service
ct systemctl reset-failed gateway.service 2>/dev/null

# (d) Socket activation: only the sockets run; a client connects, the
# service starts, receives both listeners by name and answers.
ct systemctl start gateway.socket gateway-tcp.socket
detail=
[ "$(prop gateway.service ActiveState)" = inactive ] || detail="the service runs before any client;"
token=$(ct cat /var/lib/gateway/admin.token)
out=$(cli read sim.led --hub tcp://127.0.0.1:7751 --token "$token" 2>&1) || detail="$detail tcp client: $out;"
is_active || detail="$detail service $(prop gateway.service ActiveState) after the client;"
out2=$(cli devices --hub ws://127.0.0.1:7750/hal --token "$token" 2>&1) || detail="$detail websocket client: $out2;"
mainpid=$(prop gateway.service MainPID)
names=$(ct sh -c "tr '\0' '\n' </proc/$mainpid/environ 2>/dev/null | sed -n 's/^LISTEN_FDNAMES=//p'")
case ":$names:" in *:http:*) ;; *) detail="$detail LISTEN_FDNAMES='$names' lacks http;" ;; esac
case ":$names:" in *:tcp:*) ;; *) detail="$detail LISTEN_FDNAMES='$names' lacks tcp;" ;; esac
check "socket activation: a tcp:// client starts the service, which answers on both (LISTEN_FDNAMES=$names)" \
	"$([ -z "$detail" ] && echo 0 || echo 1)" "$detail"
ct systemctl stop gateway.service gateway.socket gateway-tcp.socket

# TLS under the unit (docs/install.md, step 6): the self-signed certificate
# is made in the state directory, its fingerprint logged, and a client that
# pins it gets in.
ct sed -i 's|^    tcp: 127.0.0.1:7751|    tcp: 127.0.0.1:7751\n    tls: 127.0.0.1:7753|' /etc/gateway/gateway.yaml
c=$(cursor)
ct systemctl start gateway.service
fp=$(journal_since "$c" | sed -n 's/.*transport=tls .*fingerprint=\([0-9a-f]*\).*/\1/p' | head -n1)
detail=
[ -n "$fp" ] || detail="no fingerprint on the tls listener's line;"
perm=$(ct stat -c '%U %a' /var/lib/gateway/tls/key.pem 2>&1)
[ "$perm" = "gateway 600" ] || detail="$detail tls/key.pem is '$perm';"
out=$(cli read sim.led --hub tls://127.0.0.1:7753 --fingerprint "$fp" 2>&1) || detail="$detail pinned tls client: $out;"
out=$(cli read sim.led --hub tls://127.0.0.1:7753 --fingerprint "$(printf '%064d' 0)" 2>&1) && detail="$detail a wrong pin was accepted;"
check "TLS listener: certificate in the state directory, fingerprint ${fp:0:12}... logged, pinned client answered" \
	"$([ -z "$detail" ] && echo 0 || echo 1)" "$detail"

# The start limit can trigger with the RestartSec chosen: a gateway that
# fails at once (here: a configuration file that is not there) is started
# StartLimitBurst times, then left failed.
ct systemctl stop gateway.service
ct sh -c 'cat >/etc/systemd/system/gateway.service.d/60-fail.conf' <<'EOF'
[Service]
ExecStart=
ExecStart=/usr/bin/gateway run --config /etc/gateway/missing.yaml --state-dir /var/lib/gateway
EOF
ct systemctl daemon-reload
ct systemctl reset-failed gateway.service 2>/dev/null
c=$(cursor)
ct systemctl start --no-block gateway.service
# After automatic restarts systemd keeps the last Result (exit-code) and
# says so in the journal; the unit then stays failed.
limit_hit() { journal_since "$c" | grep 'gateway.service: Start request repeated too quickly' >/dev/null; }
detail=
wait_for 40 limit_hit || detail="no 'Start request repeated too quickly' within 40 s;"
[ "$(prop gateway.service ActiveState)" = failed ] || detail="$detail ActiveState=$(prop gateway.service ActiveState), want failed;"
check "the start limit triggers: StartLimitBurst=$(prop gateway.service StartLimitBurst) in $(prop gateway.service StartLimitIntervalUSec), RestartSec=$(prop gateway.service RestartUSec) (NRestarts $(prop gateway.service NRestarts))" \
	"$([ -z "$detail" ] && echo 0 || echo 1)" "$detail"
ct rm -f /etc/systemd/system/gateway.service.d/60-fail.conf
ct systemctl daemon-reload
ct systemctl reset-failed gateway.service 2>/dev/null
ct systemctl start gateway.service

# Removal: prerm stops and disables the units; purge removes the state.
ct dpkg -r gateway >/dev/null 2>&1
rc=$?
detail=
[ $rc = 0 ] || detail="dpkg -r exit $rc;"
a=$(ct systemctl is-active gateway.service 2>&1)
case $a in inactive|unknown) ;; *) detail="$detail gateway.service is $a after remove;" ;; esac
ct sh -c 'ls /etc/systemd/system/*.wants/gateway* 2>/dev/null' | grep . >/dev/null && detail="$detail enablement links remain;"
ct test -f /etc/gateway/gateway.yaml || detail="$detail remove deleted the configuration;"
ct dpkg -P gateway >/dev/null 2>&1 || detail="$detail dpkg -P failed;"
ct test -e /var/lib/gateway && detail="$detail purge left /var/lib/gateway;"
check "dpkg -r stops and disables the units and keeps the configuration; purge removes the state" \
	"$([ -z "$detail" ] && echo 0 || echo 1)" "$detail"

fi # SYSTEMD_TEST_ONLY

[ -z "$only" ] || [ "$only" = reload ] && . "$repo/e2e/systemd/reload.sh"
[ -z "$only" ] || [ "$only" = upgrade ] && . "$repo/e2e/systemd/upgrade.sh"

# --- the end ---------------------------------------------------------------
echo "$passed passed, $failed failed"
if ! kill -0 "$pid1" 2>/dev/null; then
	echo "the container's init ($pid1) ended during the run; its console:"
	tail -n 50 "$harness/console.log"
	exit 1
fi
if [ "$failed" -gt 0 ]; then
	ct journalctl --no-pager -o short-monotonic >"${TMPDIR:-/tmp}/gateway-systemd-test.journal"
	echo "(the container's whole journal: ${TMPDIR:-/tmp}/gateway-systemd-test.journal)"
	echo "--- journalctl -u gateway.service"
	# Without the goroutine dumps of SIGABRT (the watchdog's kills).
	ct journalctl --no-pager -o short-precise -u gateway.service |
		grep -vE 'gateway\[[0-9]+\]: (\s|goroutine |runtime\.|gateway/|created by |main\.|internal/|net\.|os\.|sync\.|syscall\.)' | tail -n 200
	exit 1
fi
exit 0
