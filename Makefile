# gateway — see README.md. Every target works on a fresh clone.

GO       ?= go
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT   ?= $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
LDFLAGS  := -s -w -X main.version=$(VERSION) -X main.commit=$(COMMIT)
# GOTAGS are the gateway's release build tags. nethttpomithttp2 leaves
# net/http's HTTP/2 out of the binary (524 KiB of armv7): the Hub's
# server and the client speak HTTP/1.1 only (http.Protocols), so it was
# never used (docs/size.md). e2e/binaries builds with the same tags.
GOTAGS   := nethttpomithttp2
BIN      := bin/gateway
HALBENCH := bin/halbench
BENCHFLAGS ?=
FUZZTIME ?= 30s
# Fuzz targets as package:Target. Each keeps its corpus in the repo, in
# PACKAGE/testdata/fuzz/TARGET (docs/testing.md, "Fuzzing").
FUZZ_TARGETS := ./jsonrpc:FuzzDecodeHAL ./jsonrpc:FuzzDecodeAdapter ./internal/halhub:FuzzHandle \
	./internal/board:FuzzParse ./internal/supervisor/manifest:FuzzParse ./internal/halhub:FuzzReadParams \
	./openhal:FuzzValueResultAppendJSON

# Example adapters, built into installable folders under bin/adapters
# (gateway adapter install bin/adapters/NAME), and the adapters shipped
# with the gateway (SHIPPED_ADAPTERS, from ./adapters/NAME: the MQTT
# bridge).
ADAPTERS_DIR     := bin/adapters
GO_ADAPTERS      := notifier sysinfo
SHIPPED_ADAPTERS := mqtt

.PHONY: build run test lint bench fuzz clean adapters cross test-cross

build:
	CGO_ENABLED=0 $(GO) build -tags $(GOTAGS) -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/gateway

# Static release binaries, one per board: NAME:GOARCH:GOARM (armv6 is the
# Pi Zero and 1, armv7 the Pi 2, arm64 the Pi 3 and later on a 64-bit OS).
CROSS_DIR     := bin/cross
CROSS_TARGETS := armv6:arm:6 armv7:arm:7 arm64:arm64: amd64:amd64:

# The client for the desktops, GOOS/GOARCH: the client commands (devices,
# read, write, watch, stop, confirm, audit, adapter list/status...) run
# there; run, token and adapter install/remove say they need Linux.
DESKTOP_TARGETS := darwin/arm64 darwin/amd64 windows/amd64 windows/arm64

# CGO_ENABLED=0 makes them static: they run on any Linux of their
# architecture, whatever its libc; the desktop clients need no libc either.
# The adapters shipped with the gateway are built per Linux target into
# bin/cross/adapters-linux-NAME/ADAPTER/ (the .deb's /usr/lib/gateway/adapters).
# Sizes are printed for the README.
cross:
	@set -e; mkdir -p $(CROSS_DIR); for t in $(CROSS_TARGETS); do \
		name=$${t%%:*}; rest=$${t#*:}; arch=$${rest%%:*}; arm=$${rest#*:}; \
		out=$(CROSS_DIR)/gateway-linux-$$name; \
		echo "build $$out"; \
		CGO_ENABLED=0 GOOS=linux GOARCH=$$arch GOARM=$$arm \
			$(GO) build -tags $(GOTAGS) -trimpath -ldflags '$(LDFLAGS)' -o $$out ./cmd/gateway; \
	done; \
	for t in $(DESKTOP_TARGETS); do \
		os=$${t%%/*}; arch=$${t#*/}; ext=; [ $$os = windows ] && ext=.exe; \
		out=$(CROSS_DIR)/gateway-$$os-$$arch$$ext; \
		echo "build $$out"; \
		CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch \
			$(GO) build -tags $(GOTAGS) -trimpath -ldflags '$(LDFLAGS)' -o $$out ./cmd/gateway; \
	done; \
	for t in $(CROSS_TARGETS); do \
		name=$${t%%:*}; rest=$${t#*:}; arch=$${rest%%:*}; arm=$${rest#*:}; \
		for a in $(SHIPPED_ADAPTERS); do \
			out=$(CROSS_DIR)/adapters-linux-$$name/$$a; mkdir -p $$out; \
			echo "build $$out"; \
			CGO_ENABLED=0 GOOS=linux GOARCH=$$arch GOARM=$$arm \
				$(GO) build -trimpath -ldflags '-s -w' -o $$out/$$a ./adapters/$$a; \
			cp adapters/$$a/adapter.json $$out/adapter.json; \
		done; \
	done; \
	for f in $(CROSS_DIR)/gateway-* $(foreach a,$(SHIPPED_ADAPTERS),$(CROSS_DIR)/adapters-linux-*/$(a)/$(a)); do \
		printf '%-40s %9d bytes\n' $$f $$(wc -c <$$f); \
	done

# What each dependency costs the armv7 binary, the Pi 2's (docs/size.md):
# the release build of `make cross` and the same build with its symbol
# table, read by scripts/binsize, which prints a row per module, part of
# the standard library and subsystem of ours, and fails when the release
# build is over SIZE_BUDGET (14 MiB). A few seconds with a warm build
# cache; no network.
SIZE_DIR    := bin/size
SIZE_BUDGET ?= 14680064
.PHONY: size
size:
	@mkdir -p $(SIZE_DIR)
	CGO_ENABLED=0 GOOS=linux GOARCH=arm GOARM=7 $(GO) build -tags $(GOTAGS) -trimpath -ldflags '$(LDFLAGS)' -o $(SIZE_DIR)/gateway-linux-armv7 ./cmd/gateway
	CGO_ENABLED=0 GOOS=linux GOARCH=arm GOARM=7 $(GO) build -tags $(GOTAGS) -trimpath -ldflags '$(filter-out -s -w,$(LDFLAGS))' -o $(SIZE_DIR)/gateway-linux-armv7.symbols ./cmd/gateway
	$(GO) run ./scripts/binsize -stripped $(SIZE_DIR)/gateway-linux-armv7 -budget $(SIZE_BUDGET) $(SIZE_DIR)/gateway-linux-armv7.symbols

# Runs the ARM binaries under qemu-user (installed with apt-get when
# missing): static, version stamped, and a HAL session against the sim
# board driven by the host's bin/gateway.
test-cross: cross build
	VERSION='$(VERSION)' COMMIT='$(COMMIT)' CLIENT='$(BIN)' CROSS_DIR='$(CROSS_DIR)' \
		bash e2e/cross/run.sh

# Each folder holds the executable and its adapter.json; pyledger is a
# Python script, copied with its mode (0755).
adapters:
	@set -e; for a in $(GO_ADAPTERS); do \
		mkdir -p $(ADAPTERS_DIR)/$$a; \
		echo "build $(ADAPTERS_DIR)/$$a"; \
		CGO_ENABLED=0 $(GO) build -trimpath -o $(ADAPTERS_DIR)/$$a/$$a ./adapters/examples/$$a; \
		cp adapters/examples/$$a/adapter.json $(ADAPTERS_DIR)/$$a/adapter.json; \
	done
	@set -e; for a in $(SHIPPED_ADAPTERS); do \
		mkdir -p $(ADAPTERS_DIR)/$$a; \
		echo "build $(ADAPTERS_DIR)/$$a"; \
		CGO_ENABLED=0 $(GO) build -trimpath -o $(ADAPTERS_DIR)/$$a/$$a ./adapters/$$a; \
		cp adapters/$$a/adapter.json $(ADAPTERS_DIR)/$$a/adapter.json; \
	done
	mkdir -p $(ADAPTERS_DIR)/pyledger
	cp adapters/examples/pyledger/adapter.json $(ADAPTERS_DIR)/pyledger/adapter.json
	cp -p adapters/examples/pyledger/pyledger.py $(ADAPTERS_DIR)/pyledger/pyledger.py
	chmod 0755 $(ADAPTERS_DIR)/pyledger/pyledger.py

# Runs the gateway on the sim board (the embedded default configuration),
# on loopback only, with /mcp served too, so that an MCP client can be
# tried against it at once (docs/mcp.md); a configuration file keeps /mcp
# off unless hub.mcp.enabled says otherwise. ARGS are more flags of
# `gateway run` (make run ARGS='--http 127.0.0.1:7760 --state-dir /tmp/gw').
# bin/gateway keeps its state in ./state of this checkout unless told
# (git-ignored; README, "Set-up").
ARGS ?=
run: build
	./$(BIN) run --mcp $(ARGS)

# Unit, protocol and whole-binary tests (tiers 1 and 2), with the race
# detector, then the console in a real browser and the Python client.
# TEST_TIMEOUT bounds each package: go test's default of 10 minutes is
# the whole-binary tests' own time on a machine that builds something
# else beside them (e2e/gateway takes about 3 minutes on a quiet 2-core
# machine), and a package past it is killed with nothing after it run.
TEST_TIMEOUT ?= 30m
test: lint
	$(GO) test -race -count=1 -timeout $(TEST_TIMEOUT) ./...
	$(MAKE) --no-print-directory test-browser
	$(MAKE) --no-print-directory test-python

# The Python client and its gpiozero pin factory (clients/python) against
# bin/gateway, which the tests start on free loopback ports. They run
# under Debian's /usr/bin/python3, where apt's python3-pytest and
# python3-gpiozero live (a pyenv python3 on PATH has neither). Skipped
# without them, except in CI (CI set, as .ci/run does), where .ci/run
# installs them and a missing one fails.
PYTHON ?= /usr/bin/python3
.PHONY: test-python
test-python: build
	@if $(PYTHON) -c 'import pytest, gpiozero' 2>/dev/null || [ -n "$$CI" ]; then \
		echo "$(PYTHON) -m pytest -q -p no:cacheprovider clients/python/tests"; \
		PYTHONDONTWRITEBYTECODE=1 GATEWAY_BIN=$(CURDIR)/$(BIN) $(PYTHON) -m pytest -q -p no:cacheprovider clients/python/tests; \
	else \
		echo "test-python: SKIPPED: $(PYTHON) lacks pytest or gpiozero, so the Python client's tests did not run (apt-get install python3-pytest python3-gpiozero)"; \
	fi

# The console driven in Debian's chromium, headless, against the gateway on
# the sim board (e2e/browser, a module of its own, so chromedp
# stays out of the gateway's dependencies). Skipped without chromium, except in CI (CI set, as .ci/run
# does), where a missing chromium fails. UPDATE_SCREENSHOTS=1 rewrites
# docs/console/*.png.
.PHONY: test-browser
test-browser:
	@if command -v chromium >/dev/null || [ -n "$$CI" ]; then \
		echo "cd e2e/browser && $(GO) test -count=1 ./..."; \
		cd e2e/browser && $(GO) test -count=1 ./...; \
	else \
		echo "test-browser: SKIPPED: no chromium on PATH, so the console's browser tests did not run (apt-get install chromium)"; \
	fi

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

# The MQTT fleet (issue 16): FLEET sim gateways (default 20), each its own
# process and state directory with its mqtt adapter, on one mosquitto the
# test starts; prints the messages per second through the broker and the
# CPU per gateway, idle and under commands (docs/mqtt.md, "A fleet").
FLEET ?= 20
.PHONY: test-fleet
test-fleet:
	FLEET=$(FLEET) $(GO) test -count=1 -run '^TestBinaryMQTTFleet$$' -v -timeout 20m ./e2e/gateway

# The soak (issue 20, docs/testing.md "The soak"): the real binary on the
# sim board with adapters that crash and hang, and on serial instruments
# that are unplugged, under clients, killed with -9 and restarted at
# random, for SOAK (default 10m; CI runs SOAK=60s); prints RSS,
# goroutines and descriptors over time and fails when they grow, when
# an audit line is missing or torn, a latched stop is lost, a process
# outlives the gateway or a client does not come back. The adapters fork
# children, which must die with them too (SOAK_FORK=0: they do not).
SOAK      ?= 10m
SOAK_FORK ?= 1
.PHONY: soak
soak:
	SOAK=$(SOAK) SOAK_FORK=$(SOAK_FORK) $(GO) test -count=1 -run '^TestBinarySoak$$' -v -timeout 3h ./e2e/gateway

# Go benchmarks of the hot paths, the supervisor's idle CPU with 20
# services and its event throughput to one, the software PWM's jitter,
# then the load tool against a gateway it
# starts from bin/gateway (cmd/halbench; flags through BENCHFLAGS, e.g.
# make bench BENCHFLAGS=--quick). Exits 1 when a target is missed.
bench: build
	$(GO) test -run='^$$' -bench=. -benchmem ./...
	SUPERVISOR_PERF=1 $(GO) test -count=1 -run 'TestIdleServicesCPU|TestEventThroughput' -v ./internal/supervisor
	PWM_PERF=1 $(GO) test -count=1 -run TestSoftwareJitter -v ./internal/hw/pwm
	$(GO) build -o $(HALBENCH) ./cmd/halbench
	./$(HALBENCH) --gateway $(BIN) $(BENCHFLAGS)

# The Modbus figures (issue 31, docs/performance.md "Modbus"): polls a
# second on an RTU line paced at 19,200 and 115,200 baud against the
# line's limit, on TCP against pymodbus's own rate, and the gateway's CPU
# and wake-ups at idle with 32 polled registers; prints markdown tables.
# About 12 minutes; MODBUS_BENCH=quick is a one-minute smoke test. Needs
# python3-pymodbus (e2e/modbussim). Not part of make test or make bench.
MODBUS_BENCH ?= 1
.PHONY: bench-modbus
bench-modbus:
	MODBUS_BENCH=$(MODBUS_BENCH) $(GO) test -count=1 -run '^TestModbusBench$$' -v -timeout 40m ./e2e/gateway

# Runs each fuzz target for FUZZTIME (make fuzz FUZZTIME=10m), one after
# the other, then lists what the fuzzers left in testdata/fuzz: a failing
# input is written there, to be fixed and committed with its fix.
fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t##*:}; \
		echo "fuzz $$pkg $$name for $(FUZZTIME)"; \
		$(GO) test -run='^$$' -fuzz="^$$name\$$" -fuzztime=$(FUZZTIME) $$pkg; \
	done
	@git status --short -- '*testdata/fuzz/*' 2>/dev/null || true

clean:
	rm -rf bin

# Debian packages gateway_<version>_{armhf,arm64,amd64}.deb, built with
# dpkg-deb alone into bin/deb (packaging/build-deb.sh; armhf carries the
# ARMv6 binary, which runs on every Pi under Raspberry Pi OS's armhf).
DEB_DIR := bin/deb

.PHONY: deb test-systemd

deb: cross
	sh packaging/build-deb.sh $(DEB_DIR)

# The units and the amd64 package under a real systemd in systemd-nspawn
# (root; installs systemd-container and mmdebstrap when missing, caches the
# root file system in $${XDG_CACHE_HOME:-~/.cache}/gateway-nspawn).
# bin/gateway-testhang is the amd64 gateway with the test-only fault
# injection (GATEWAY_TEST_HANG) compiled in, for the watchdog checks.
test-systemd: deb adapters
	CGO_ENABLED=0 $(GO) build -tags testhang,$(GOTAGS) -trimpath -ldflags '$(LDFLAGS)' -o bin/gateway-testhang ./cmd/gateway
	bash e2e/systemd/run.sh


# The I2C part of the real-kernel test (issue 8): the ARMv7 gateway on
# Debian's armhf kernel under qemu-system-arm (vexpress-a15) with QEMU's
# TMP105 models on the board's I2C bus, reached over its emulated LAN9118.
# Assets are cached in $${XDG_CACHE_HOME:-~/.cache}/gateway-qemu/armhf
# (e2e/qemu/armhf/README.md).
.PHONY: test-qemu-armhf
test-qemu-armhf: cross
	bash e2e/qemu/armhf/assets.sh >/dev/null
	GATEWAY_QEMU=1 $(GO) test -count=1 -v ./e2e/qemu/armhf

# The GPIO, serial and network part of the real-kernel test (issue 8): the
# arm64 gateway on Debian's arm64 kernel under qemu-system-aarch64 (virt,
# TCG) with gpio-sim lines, a usb-serial and a pci-serial instrument, and
# a HAL client over the guest's virtio-net. Assets are cached in
# $${XDG_CACHE_HOME:-~/.cache}/gateway-qemu/arm64 (e2e/qemu/README.md).
.PHONY: test-qemu-arm64
test-qemu-arm64: cross
	bash e2e/qemu/arm64/assets.sh >/dev/null
	GATEWAY_QEMU=1 $(GO) test -count=1 -v ./e2e/qemu/arm64

# The Raspberry Pi 3B's own GPIO controller (issue 30, point 8): the arm64
# gateway with board: rpi3b on Debian's arm64 kernel and its Pi 3B device
# tree under qemu-system-aarch64 -M raspi3b, its lines on pinctrl-bcm2835
# over QEMU's BCM2835 GPIO model, a HAL client over usb-net. The kernel
# package is the arm64 test's (its cache); outputs in
# $${XDG_CACHE_HOME:-~/.cache}/gateway-qemu/rpi3b (e2e/qemu/README.md).
.PHONY: test-qemu-rpi3b
test-qemu-rpi3b: cross
	bash e2e/qemu/rpi3b/assets.sh >/dev/null
	GATEWAY_QEMU=1 GO='$(GO)' $(GO) test -count=1 -v ./e2e/qemu/rpi3b

# The load tool on the Pi's cores (issue 17): the arm64 gateway and the
# arm64 halbench in the arm64 guest above (2 vCPUs under TCG), hub and echo
# server both inside, halbench's table printed and written to
# bin/bench-qemu-arm64.md. A measurement: a missed target does not fail it
# (--no-fail), a guest that does not boot or a halbench that errors does.
# halbench's flags through QEMU_BENCHFLAGS (empty: the test's default,
# about 3 minutes under TCG; docs/performance.md).
QEMU_BENCHFLAGS ?=
.PHONY: bench-qemu
bench-qemu:
	mkdir -p $(CROSS_DIR)
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 $(GO) build -tags $(GOTAGS) -trimpath -ldflags '$(LDFLAGS)' -o $(CROSS_DIR)/gateway-linux-arm64 ./cmd/gateway
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 $(GO) build -trimpath -ldflags '-s -w' -o $(CROSS_DIR)/halbench-linux-arm64 ./cmd/halbench
	bash e2e/qemu/arm64/assets.sh >/dev/null
	GATEWAY_QEMU_BENCH=1 GATEWAY_QEMU_BENCHFLAGS='$(QEMU_BENCHFLAGS)' GATEWAY_QEMU_BENCH_OUT=$(CURDIR)/bin/bench-qemu-arm64.md \
		$(GO) test -count=1 -v -timeout 40m -run '^TestHalbenchOnArm64$$' ./e2e/qemu/arm64

# The real-kernel test (issue 8): the three guests; each prints N passed, N failed.
.PHONY: test-qemu
test-qemu: test-qemu-arm64 test-qemu-armhf test-qemu-rpi3b

# The real-system tests (tier 3), each installing what it needs: the ARM
# binaries under qemu-user, the units and package under a real systemd,
# and the ARM binaries on Debian's kernels under QEMU (docs/testing.md).
.PHONY: test-system
test-system: test-cross test-systemd test-qemu

# The oldest Go the module supports, go.mod's go line (1.25.0: the MCP
# SDK, github.com/modelcontextprotocol/go-sdk, needs it): build, vet (tests
# included) and the 32-bit Pi binary with exactly that Go, which the go
# command fetches from the module proxy, so that nothing newer creeps in
# (docs/testing.md).
GO_MIN := $(shell sed -n 's/^go //p' go.mod)
.PHONY: test-go-min
test-go-min:
	GOTOOLCHAIN=go$(GO_MIN) $(GO) version
	GOTOOLCHAIN=go$(GO_MIN) $(GO) build ./...
	GOTOOLCHAIN=go$(GO_MIN) $(GO) vet ./...
	GOTOOLCHAIN=go$(GO_MIN) CGO_ENABLED=0 GOOS=linux GOARCH=arm GOARM=6 $(GO) build -tags $(GOTAGS) -o /dev/null ./cmd/gateway
