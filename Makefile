# gateway — see README.md. Every target works on a fresh clone.

GO       ?= go
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT   ?= $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
LDFLAGS  := -s -w -X main.version=$(VERSION) -X main.commit=$(COMMIT)
BIN      := bin/gateway
HALBENCH := bin/halbench
BENCHFLAGS ?=
FUZZTIME ?= 30s
# Fuzz targets as package:Target.
FUZZ_TARGETS := ./jsonrpc:FuzzDecodeHAL ./jsonrpc:FuzzDecodeAdapter ./halhub:FuzzHandle

# Example adapters, built into installable folders under bin/adapters
# (gateway adapter install bin/adapters/NAME).
ADAPTERS_DIR := bin/adapters
GO_ADAPTERS  := notifier sysinfo

.PHONY: build run test lint bench fuzz clean adapters

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/gateway

# Each folder holds the executable and its adapter.json; pyledger is a
# Python script, copied with its mode (0755).
adapters:
	@set -e; for a in $(GO_ADAPTERS); do \
		mkdir -p $(ADAPTERS_DIR)/$$a; \
		echo "build $(ADAPTERS_DIR)/$$a"; \
		CGO_ENABLED=0 $(GO) build -trimpath -o $(ADAPTERS_DIR)/$$a/$$a ./adapters/examples/$$a; \
		cp adapters/examples/$$a/adapter.json $(ADAPTERS_DIR)/$$a/adapter.json; \
	done
	mkdir -p $(ADAPTERS_DIR)/pyledger
	cp adapters/examples/pyledger/adapter.json $(ADAPTERS_DIR)/pyledger/adapter.json
	cp -p adapters/examples/pyledger/pyledger.py $(ADAPTERS_DIR)/pyledger/pyledger.py
	chmod 0755 $(ADAPTERS_DIR)/pyledger/pyledger.py

# Runs the gateway on the sim board (the embedded default configuration).
run: build
	./$(BIN) run

# Unit, protocol and whole-binary tests (tiers 1 and 2), with the race detector.
test: lint
	$(GO) test -race -count=1 ./...

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

# Go benchmarks of the hot paths, the supervisor's idle CPU with 20
# services and its event throughput to one, then the load tool against a gateway it
# starts from bin/gateway (cmd/halbench; flags through BENCHFLAGS, e.g.
# make bench BENCHFLAGS=--quick). Exits 1 when a target is missed.
bench: build
	$(GO) test -run='^$$' -bench=. -benchmem ./...
	SUPERVISOR_PERF=1 $(GO) test -count=1 -run 'TestIdleServicesCPU|TestEventThroughput' -v ./supervisor
	$(GO) build -o $(HALBENCH) ./cmd/halbench
	./$(HALBENCH) --gateway $(BIN) $(BENCHFLAGS)

# Runs each fuzz target for FUZZTIME (make fuzz FUZZTIME=10m).
fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t##*:}; \
		echo "fuzz $$pkg $$name for $(FUZZTIME)"; \
		$(GO) test -run='^$$' -fuzz="^$$name\$$" -fuzztime=$(FUZZTIME) $$pkg; \
	done

clean:
	rm -rf bin
