package arm64_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/openhal/gateway/e2e/qemu/qemutest"
)

// The load tool's run inside the guest: both binaries sit in /bench, not
// at /gateway, so init starts no gateway of its own and halbench has the
// guest's two vCPUs to itself, its gateway and its echo server.
const (
	guestGateway  = "/bench/gateway"
	guestHalbench = "/bench/halbench"
	guestReport   = "/tmp/bench.md"  // halbench's standard output: the table
	guestBenchLog = "/tmp/bench.log" // its standard error: its log
	exitMarker    = "halbench exit status "
)

// defaultBenchFlags keep the run to about 3 minutes under TCG, where one
// hal/read takes milliseconds: 5 rounds of 2 s per cell (--quick's 2 of
// 0.5 s counted too few requests at 64 clients to be steady), a 5 s
// fan-out and idle window. 100 watchers, not halbench's 250: under TCG
// the fan-out is where a slow core shows, and 100 already take most of
// the two vCPUs. No idle adapters: the guest's initramfs has no user for
// them, and idle CPU under TCG is noise. --no-fail is always added: a
// missed target is a figure here, not a failure.
const defaultBenchFlags = "--rounds 5 --duration 2s --warmup 500ms --fanout 5s --idle 5s --watchers 100 --idle-adapters 0"

// TestHalbenchOnArm64 runs cmd/halbench inside the arm64 guest of
// TestGatewayOnArm64 against the arm64 gateway, the hub and the echo
// server both in the guest, and writes halbench's markdown table to
// GATEWAY_QEMU_BENCH_OUT (make bench-qemu: bin/bench-qemu-arm64.md). It is
// a measurement: it fails only when the guest does not boot or halbench
// errors, never on a missed target.
func TestHalbenchOnArm64(t *testing.T) {
	if os.Getenv("GATEWAY_QEMU_BENCH") != "1" {
		t.Skip("runs the load tool in the arm64 QEMU guest (minutes): run `make bench-qemu`")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	g := startBenchGuest(ctx, t)
	bootCtx, cancelBoot := context.WithTimeout(ctx, 4*time.Minute)
	defer cancelBoot()
	if err := g.WaitConsole(bootCtx, "init: ready", "Kernel panic"); err != nil {
		t.Fatalf("boot: %v\nguest console:\n%s", err, g.Console().String())
	}
	flags := benchFlags(os.Getenv("GATEWAY_QEMU_BENCHFLAGS"))
	t.Logf("booted; running %s %s", guestHalbench, strings.Join(flags, " "))
	started := time.Now()
	out, err := g.Shell(ctx, halbenchScript(flags))
	status, perr := exitStatus(out)
	log, _ := g.Shell(ctx, "cat "+guestBenchLog)
	if err != nil || perr != nil || status != 0 || os.Getenv("GATEWAY_QEMU_LOG") == "1" {
		t.Logf("halbench's log:\n%s\nguest console:\n%s", log, g.Console().String())
	}
	switch {
	case err != nil:
		t.Fatalf("run halbench in the guest: %v", err)
	case perr != nil:
		t.Fatalf("run halbench in the guest: %v", perr)
	case status != 0:
		t.Fatalf("halbench in the guest exited with status %d (with --no-fail, so it failed to measure): see its log above", status)
	}
	t.Logf("halbench ran for %s", time.Since(started).Round(time.Second))
	table, err := g.Shell(ctx, "cat "+guestReport)
	if err != nil || !strings.Contains(table, "| figure |") {
		t.Fatalf("read halbench's table in the guest: %v\n%s", err, table)
	}
	report := benchHeader(flags) + table + "\n"
	fmt.Print(report)
	if path := os.Getenv("GATEWAY_QEMU_BENCH_OUT"); path != "" {
		if err := os.WriteFile(path, []byte(report), 0o644); err != nil {
			t.Fatalf("write the report: %v", err)
		}
		t.Logf("report written to %s", path)
	}
}

// startBenchGuest boots the guest of TestGatewayOnArm64 (same kernel,
// modules, board and vCPUs) with the gateway and halbench in /bench.
func startBenchGuest(ctx context.Context, t *testing.T) *qemutest.Guest {
	t.Helper()
	kernel, base, gwBin := assets(t)
	hbBin := os.Getenv("GATEWAY_ARM64_HALBENCH")
	if hbBin == "" {
		hbBin = filepath.Join("..", "..", "..", "bin", "cross", "halbench-linux-arm64")
	}
	var files []qemutest.File
	for name, bin := range map[string]string{guestGateway: gwBin, guestHalbench: hbBin} {
		data, err := os.ReadFile(bin)
		if err != nil {
			t.Fatalf("read %s for the guest's %s: %v (make bench-qemu builds it)", bin, name, err)
		}
		files = append(files, qemutest.File{Name: strings.TrimPrefix(name, "/"), Mode: 0o755, Data: data})
	}
	dir := t.TempDir()
	initrd := filepath.Join(dir, "initrd")
	if err := qemutest.WriteInitrd(base, initrd, files); err != nil {
		t.Fatal(err)
	}
	g, err := startGuest(ctx, guestConfig{kernel: kernel, initrd: initrd,
		usbChardev: filepath.Join(dir, "usb.sock"), pciChard: filepath.Join(dir, "pci.sock"),
		qmpPath: filepath.Join(dir, "qmp.sock")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Stop)
	t.Logf("QEMU pid %d", g.PID())
	return g
}

// benchFlags are halbench's flags: those given (default
// defaultBenchFlags), then --no-fail and the guest's gateway.
func benchFlags(given string) []string {
	if strings.TrimSpace(given) == "" {
		given = defaultBenchFlags
	}
	return append(strings.Fields(given), "--no-fail", "--gateway", guestGateway)
}

// halbenchScript runs halbench in the guest with its table and its log in
// files, and prints its exit status after exitMarker.
func halbenchScript(flags []string) string {
	return fmt.Sprintf("cd /tmp && %s %s >%s 2>%s; echo \"%s$?\"",
		guestHalbench, strings.Join(flags, " "), guestReport, guestBenchLog, exitMarker)
}

// exitStatus reads halbench's exit status from the output of
// halbenchScript.
func exitStatus(out string) (int, error) {
	_, after, found := strings.Cut(out, exitMarker)
	if !found {
		return 0, fmt.Errorf("no exit status in the guest shell's output %q", out)
	}
	n, err := strconv.Atoi(strings.TrimSpace(after))
	if err != nil {
		return 0, fmt.Errorf("exit status %q: %w", strings.TrimSpace(after), err)
	}
	return n, nil
}

// benchHeader says where the figures come from: the emulated board, the
// host under it, its load when halbench ended (the vCPUs are host
// threads: a loaded host slows the guest) and halbench's flags.
func benchHeader(flags []string) string {
	load := "unknown"
	if b, err := os.ReadFile("/proc/loadavg"); err == nil && len(strings.Fields(string(b))) >= 3 {
		load = strings.Join(strings.Fields(string(b))[:3], " ")
	}
	return fmt.Sprintf("## halbench in the arm64 QEMU guest\n\n"+
		"Guest: `qemu-system-aarch64 %s` (TCG: every guest instruction emulated), Debian's arm64 kernel, busybox; "+
		"hub and echo server both in the guest. Host: %s/%s, %d CPUs, load average %s at the end. halbench flags: `%s`.\n\n",
		strings.Join(guestMachine(), " "), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), load, strings.Join(flags, " "))
}
