#!/usr/bin/env bash
# Tests the static release binaries of `make cross` without ARM hardware:
# each is checked static, and each ARM one runs under Debian's qemu-user
# (no binfmt needed) with a CPU of the board it is for, prints its stamped
# version, and serves a HAL session on the sim board to the host's own
# gateway binary as the client. The amd64 one runs natively.
#
# Environment: VERSION and COMMIT (what the binaries must print; default as
# the Makefile computes them), CLIENT (the host's gateway, default
# bin/gateway), CROSS_DIR (default bin/cross).
# Prints PASS/FAIL per check and "N passed, N failed"; exits 1 on any
# failure, after showing the failing gateway's log.
set -uo pipefail
cd "$(dirname "$0")/../.."

VERSION=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}
COMMIT=${COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
CLIENT=${CLIENT:-bin/gateway}
CROSS_DIR=${CROSS_DIR:-bin/cross}
# Emulated start-up takes seconds; a loaded CI machine may take more.
START_DEADLINE=30
STOP_DEADLINE=10

passed=0
failed=0
pid=""
tmp=$(mktemp -d)

cleanup() {
	if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT

pass() { echo "PASS $*"; passed=$((passed + 1)); }
fail() { echo "FAIL $*"; failed=$((failed + 1)); }

# install_tools fetches qemu-user-static and file(1) when missing (CI is a
# fresh Debian as root); elsewhere it says what to install.
install_tools() {
	local need=()
	command -v qemu-arm-static >/dev/null || need+=(qemu-user-static)
	command -v qemu-aarch64-static >/dev/null || need+=(qemu-user-static)
	command -v file >/dev/null || need+=(file)
	[ ${#need[@]} -eq 0 ] && return 0
	mapfile -t need < <(printf '%s\n' "${need[@]}" | sort -u)
	if [ "$(id -u)" -ne 0 ]; then
		echo "test-cross: needs ${need[*]} (apt-get install ${need[*]})" >&2
		exit 1
	fi
	echo "installing ${need[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq && apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
}

# free_port prints a TCP port on 127.0.0.1 that nothing answers on,
# below the kernel's ephemeral range (ip_local_port_range): a probe of a
# port in that range can connect to itself (TCP's simultaneous open,
# when the kernel gives the probe that very port as its source) and
# look like a listener.
free_port() {
	local p low=32768
	read -r low _ </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || true
	while :; do
		p=$((10000 + RANDOM % (low - 10000)))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			echo "$p"
			return
		fi
	done
}

# wait_ready waits until the gateway's log $1 says it is ready (its
# msg=ready line, written once every listener is open), the process $2
# exits, or $3 seconds pass. The log, not a probe of the port: a probe
# can connect to itself (see free_port), and a port open is not yet a
# gateway that answers.
wait_ready() {
	local end=$((SECONDS + $3))
	while [ $SECONDS -lt $end ]; do
		grep -q ' msg=ready ' "$1" 2>/dev/null && return 0
		kill -0 "$2" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# wait_exit waits up to $2 seconds for process $1 to exit and sets
# exit_status to its status, or to "timeout". (Not through $(...): a
# subshell cannot wait for its parent's child.)
wait_exit() {
	local end=$((SECONDS + $2))
	exit_status=timeout
	while [ $SECONDS -lt $end ]; do
		if ! kill -0 "$1" 2>/dev/null; then
			wait "$1"
			exit_status=$?
			return
		fi
		sleep 0.1
	done
}

# check_static passes when file(1) calls the binary statically linked.
check_static() {
	local bin=$1 name=$2 out
	out=$(file -L "$bin")
	if [[ $out == *"statically linked"* ]]; then
		pass "$name: static ($(wc -c <"$bin") bytes)"
	else
		fail "$name: not static: $out"
	fi
	# ldd can only judge binaries of the host's own architecture.
	if [ "$name" = amd64 ] && [ "$(uname -m)" = x86_64 ]; then
		out=$(ldd "$bin" 2>&1)
		if [[ $out == *"not a dynamic executable"* ]]; then
			pass "$name: ldd: not a dynamic executable"
		else
			fail "$name: ldd: $out"
		fi
	fi
}

# session runs binary $2 (under runner $1, empty for native) on the sim
# board and drives it with the host's client: version, initialize and
# list, write sim.led, read it back, then SIGTERM and a clean exit.
session() {
	local run=$1 bin=$2 name=$3
	local dir="$tmp/$name" out rc http tcp hub token
	mkdir -p "$dir/state"
	local log="$dir/gateway.log"
	local failed_before=$failed

	out=$($run "$bin" version 2>&1)
	if [[ $out == *"$VERSION"* && $out == *"$COMMIT"* ]]; then
		pass "$name: version: $out"
	else
		fail "$name: version: want $VERSION and $COMMIT, got: $out"
	fi

	http=$(free_port)
	tcp=$(free_port)
	while [ "$tcp" = "$http" ]; do tcp=$(free_port); done
	$run "$bin" run --state-dir "$dir/state" --http "127.0.0.1:$http" \
		--tcp "127.0.0.1:$tcp" --unix '' >"$log" 2>&1 &
	pid=$!
	if wait_ready "$log" "$pid" "$START_DEADLINE"; then
		pass "$name: listening on tcp://127.0.0.1:$tcp"
	else
		fail "$name: not listening on 127.0.0.1:$tcp within ${START_DEADLINE}s"
		echo "--- $name log"; cat "$log"; echo "---"
		cleanup_pid
		return
	fi

	hub="tcp://127.0.0.1:$tcp"
	token=$(cat "$dir/state/admin.token" 2>/dev/null)
	client() { "$CLIENT" "$@" --hub "$hub" --token "$token" --timeout 30s 2>&1; }

	out=$(client devices)
	rc=$?
	if [ $rc -eq 0 ] && grep -Eq '^sim\.led[[:space:]]+gpio\.output' <<<"$out"; then
		pass "$name: initialize + devices lists sim.led ($(grep -c '^sim\.' <<<"$out") devices)"
	else
		fail "$name: devices (exit $rc): $out"
	fi

	out=$(client write sim.led true)
	rc=$?
	if [ $rc -eq 0 ]; then
		pass "$name: write sim.led true: $out"
	else
		fail "$name: write sim.led true (exit $rc): $out"
	fi

	out=$(client read sim.led)
	rc=$?
	if [ $rc -eq 0 ] && [ "$out" = "true" ]; then
		pass "$name: read sim.led = true"
	else
		fail "$name: read sim.led (exit $rc): want true, got: $out"
	fi

	kill -TERM "$pid"
	wait_exit "$pid" "$STOP_DEADLINE"
	rc=$exit_status
	if [ "$rc" = 0 ]; then
		pass "$name: SIGTERM: exit 0 within ${STOP_DEADLINE}s"
	else
		fail "$name: SIGTERM: want exit 0 within ${STOP_DEADLINE}s, got $rc"
	fi
	cleanup_pid
	if [ "$failed" -ne "$failed_before" ]; then
		echo "--- $name log"; cat "$log"; echo "---"
	fi
}

# cleanup_pid kills the session's gateway if it is still running.
cleanup_pid() {
	if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	fi
	pid=""
}

install_tools
if [ ! -x "$CLIENT" ]; then
	echo "test-cross: no client at $CLIENT (make build)" >&2
	exit 1
fi

# NAME RUNNER: each runner emulates the oldest CPU its binary is for, so a
# GOARM=6 binary that used an ARMv7 instruction would fail here.
targets=(
	"armv6|qemu-arm-static -cpu arm1176"
	"armv7|qemu-arm-static -cpu cortex-a7"
	"arm64|qemu-aarch64-static -cpu cortex-a53"
)
if [ "$(uname -m)" = x86_64 ]; then
	targets+=("amd64|")
fi

for t in "${targets[@]}"; do
	name=${t%%|*}
	run=${t#*|}
	bin="$CROSS_DIR/gateway-linux-$name"
	if [ ! -f "$bin" ]; then
		fail "$name: $bin missing (make cross)"
		continue
	fi
	check_static "$bin" "$name"
	session "$run" "$bin" "$name"
done
# amd64 is built but not run on other hosts: still check it is static.
if [ "$(uname -m)" != x86_64 ] && [ -f "$CROSS_DIR/gateway-linux-amd64" ]; then
	check_static "$CROSS_DIR/gateway-linux-amd64" amd64
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
