package gateway_test

// The Modbus figures of issue 31 (docs/performance.md, "Modbus"): polls
// a second on one RTU line at 19,200 and 115,200 baud against the line's
// own limit, on TCP against the simulator's own answer rate, and the
// gateway's CPU at idle with 32 polled registers. Run by `make
// bench-modbus`; skipped unless MODBUS_BENCH is set.
//
// It lives here, beside the whole-binary tests, because the idle figure
// is the shipped binary's (built once by package binaries, as every test
// here is), and the rates drive the same code the binary runs — a
// modbusline.Line on a link opened by hardware.OpenModbus — against the
// same pymodbus simulator (e2e/modbussim), so one gate and one target
// give all three.

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/e2e/modbussim"
	"github.com/openhal/gateway/internal/board"
	"github.com/openhal/gateway/internal/board/hardware"
	"github.com/openhal/gateway/internal/clock"
	"github.com/openhal/gateway/internal/hw/modbus"
	"github.com/openhal/gateway/internal/hw/modbusline"
)

// modbusBench is how long and how often each figure is taken.
type modbusBench struct {
	rounds   int           // rounds of each rate, the median reported
	warm     time.Duration // before a rate's window
	window   time.Duration // a rate's window
	idleRuns int           // runs of each idle figure, the median reported
	settle   time.Duration // after the gateway is ready, before its idle window
	idle     time.Duration // the idle window
}

// benchRegs is what each poll of the rate figures reads: a float32, two
// registers, as an energy meter's value.
const benchRegs = 2

// benchInterval is the poll interval of the rate figures: the least the
// configuration accepts, so that a poll is always due.
const benchInterval = 10 * time.Millisecond

// TestModbusBench measures and prints the figures. MODBUS_BENCH=1 takes
// them as docs/performance.md records them (5 rounds, 3 idle runs of
// 60 s: about 12 minutes); MODBUS_BENCH=quick is a smoke test of the
// same code (2 rounds of 1 s, one idle run of 10 s).
func TestModbusBench(t *testing.T) {
	var b modbusBench
	switch os.Getenv("MODBUS_BENCH") {
	case "1":
		b = modbusBench{rounds: 5, warm: time.Second, window: 3 * time.Second, idleRuns: 3, settle: 5 * time.Second, idle: 60 * time.Second}
	case "quick":
		b = modbusBench{rounds: 2, warm: 300 * time.Millisecond, window: time.Second, idleRuns: 1, settle: 2 * time.Second, idle: 10 * time.Second}
	case "":
		t.Skip("the Modbus figures are taken with MODBUS_BENCH=1 (or quick): make bench-modbus")
	default:
		t.Fatalf("MODBUS_BENCH=%q: want 1 or quick", os.Getenv("MODBUS_BENCH"))
	}
	skipShort(t)
	fmt.Printf("\n## Modbus figures (%s)\n\n%s\n", time.Now().UTC().Format(time.RFC3339), machine())
	t.Run("rtu", func(t *testing.T) {
		for _, baud := range []int{19200, 115200} {
			t.Run(strconv.Itoa(baud), func(t *testing.T) { benchRTU(t, b, baud) })
		}
	})
	t.Run("tcp", func(t *testing.T) { benchTCP(t, b) })
	t.Run("idle", func(t *testing.T) { benchIdle(t, b) })
}

// machine names the machine the figures are taken on.
func machine() string {
	model := "unknown CPU"
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
	}
	load, _ := os.ReadFile("/proc/loadavg")
	return fmt.Sprintf("Machine: %d CPUs (%s); load average at the start %s", runtime.NumCPU(), model,
		strings.Join(strings.Fields(string(load))[:min(3, len(strings.Fields(string(load))))], " "))
}

// counting counts a transport's answered requests: the Line's work, taken
// where it is done.
type counting struct {
	modbus.Transport
	ok, failed *atomic.Int64
}

func (c counting) Do(ctx context.Context, unit byte, pdu []byte) ([]byte, error) {
	reply, err := c.Transport.Do(ctx, unit, pdu)
	if err == nil {
		c.ok.Add(1)
	} else {
		c.failed.Add(1)
	}
	return reply, err
}

// target is one poll of the rate figures: a float32 of a unit.
type target struct {
	unit byte
	addr uint16
}

// rateRun is one rate taken: answered requests a second over the window,
// the requests answered and those that failed meanwhile.
type rateRun struct {
	rate             float64
	answered, failed int64
}

// tally adds up the requests of the windows.
type tally struct{ answered, failed int64 }

func (y *tally) add(r rateRun) float64 {
	y.answered, y.failed = y.answered+r.answered, y.failed+r.failed
	return r.rate
}

// check fails the figures when more than 1 % of the requests failed: a
// line that loses requests is not measured by its answers. A few lost to
// a timeout on a loaded machine are shown, not fatal.
func (y tally) check(t *testing.T) string {
	t.Helper()
	if y.failed*100 > y.answered {
		t.Errorf("%d requests failed beside %d answered during the windows: the figures are not sound", y.failed, y.answered)
	}
	return fmt.Sprintf("%d requests answered in the windows, %d failed (a timeout or a garbled answer)", y.answered, y.failed)
}

// ratios is a[i]/b[i] for each round: both taken in the same round, so
// that the load of the moment falls on both.
func ratios(a, b []float64) []float64 {
	var r []float64
	for i := range min(len(a), len(b)) {
		r = append(r, a[i]/b[i])
	}
	return r
}

// measureRate runs work (which returns once ctx is done) and takes the rate
// of ok over a window after a warm-up.
func measureRate(b modbusBench, ok, failed *atomic.Int64, work func(ctx context.Context)) rateRun {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); work(ctx) }()
	time.Sleep(b.warm)
	n0, f0, t0 := ok.Load(), failed.Load(), time.Now()
	time.Sleep(b.window)
	n1, f1, t1 := ok.Load(), failed.Load(), time.Now()
	cancel()
	<-done
	return rateRun{rate: float64(n1-n0) / t1.Sub(t0).Seconds(), answered: n1 - n0, failed: f1 - f0}
}

// bareLoop sends the targets' reads one after the other on one link, as
// fast as it answers: no scheduler. open is the link.
func bareLoop(t *testing.T, b modbusBench, targets []target, open modbusline.Opener) rateRun {
	t.Helper()
	var ok, failed atomic.Int64
	tr, err := open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	c := modbus.Client{T: counting{tr, &ok, &failed}}
	return measureRate(b, &ok, &failed, func(ctx context.Context) {
		for i := 0; ctx.Err() == nil; i++ {
			tg := targets[i%len(targets)]
			rctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
			c.ReadRegisters(rctx, tg.unit, modbus.HoldingRegisters, tg.addr, benchRegs)
			cancel()
		}
	})
}

// lineRun runs the gateway's scheduler, a modbusline.Line, with a device
// for each target polled every benchInterval: more due than the line can
// answer, so that it is never idle.
func lineRun(t *testing.T, b modbusBench, targets []target, open modbusline.Opener) rateRun {
	t.Helper()
	var ok, failed atomic.Int64
	l := modbusline.New(modbusline.Config{
		Name: "modbus.bench", Timeout: 500 * time.Millisecond, Retries: 1,
		Open: func(ctx context.Context) (modbus.Transport, error) {
			tr, err := open(ctx)
			if err != nil {
				return nil, err
			}
			return counting{tr, &ok, &failed}, nil
		},
	}, clock.Real(), nil)
	for _, tg := range targets {
		l.Device(device.Descriptor{ID: fmt.Sprintf("bench.u%d.a%d", tg.unit, tg.addr)}, modbusline.Point{
			Unit: tg.unit, Table: modbus.HoldingRegisters, Address: tg.addr, Type: modbus.Float32, Interval: benchInterval,
		})
	}
	return measureRate(b, &ok, &failed, func(ctx context.Context) {
		l.Start()
		<-ctx.Done()
		l.Close()
	})
}

// unitsFor is the simulator's units holding the targets' float32s.
func unitsFor(targets []target) modbussim.Units {
	units := modbussim.Units{}
	for _, tg := range targets {
		if units[tg.unit] == nil {
			units[tg.unit] = modbussim.Unit{modbussim.Holding: {}}
		}
		units[tg.unit][modbussim.Holding][tg.addr] = []uint16{0x4148, 0x0000} // 12.5
	}
	return units
}

// rtuTargets: 8 units on the line, a float32 of each.
func rtuTargets() []target {
	var ts []target
	for u := byte(1); u <= 8; u++ {
		ts = append(ts, target{unit: u})
	}
	return ts
}

// benchRTU takes the polls a second of one RTU line at baud, 8N1, through
// a relay that paces bytes at the line's rate, beside the line's limits:
// the frames and gaps alone, and with the simulator's own turnaround,
// measured on the same relay unpaced.
func benchRTU(t *testing.T, b modbusBench, baud int) {
	const charBits = 10 // 8N1: start, 8 data, stop
	targets := rtuTargets()
	sim, relay := modbussim.StartRTUBus(t, baud, unitsFor(targets))
	open := func(gap time.Duration) modbusline.Opener {
		lc := board.ModbusLineConfig{Port: relay.Gateway, Baud: &baud}
		if gap > 0 {
			lc.FrameGap = &gap
		}
		return func(ctx context.Context) (modbus.Transport, error) { return hardware.OpenModbus(ctx, lc) }
	}
	rtu := (board.ModbusLineConfig{Port: relay.Gateway, Baud: &baud}).RTUConfig()
	gap := rtu.Gap()
	frames := modbus.FrameTime(baud, charBits, 8+5+2*benchRegs)
	lineLimit := 1 / (gap + frames).Seconds()

	var turn, bare, line []float64
	var y tally
	simCounted, goCounted := 0, int64(0)
	for round := 0; round < b.rounds; round++ {
		// The simulator's turnaround: the same reads on the relay unpaced,
		// with no frame gap (1 ns), one at a time.
		relay.Pace(0, 0)
		r := bareLoop(t, b, targets, open(time.Nanosecond))
		turn = append(turn, y.add(r))

		relay.Pace(baud, charBits)
		runs := []func(){
			func() { bare = append(bare, y.add(bareLoop(t, b, targets, open(0)))) },
			func() {
				c0 := sim.Count()
				var n atomic.Int64
				r := lineRun(t, b, targets, func(ctx context.Context) (modbus.Transport, error) {
					tr, err := open(0)(ctx)
					if err != nil {
						return nil, err
					}
					return counting{tr, &n, new(atomic.Int64)}, nil
				})
				simCounted += sim.Count() - c0
				goCounted += n.Load()
				line = append(line, y.add(r))
			},
		}
		if round%2 == 1 {
			slices.Reverse(runs)
		}
		for _, run := range runs {
			run()
		}
	}
	relay.Pace(0, 0)
	tallied := y.check(t)
	// The simulator's count of responses and the Line's own count of
	// answers cover the same runs (warm-up and close included): they
	// must agree, or the Go side counts what never went on the line.
	if d := math.Abs(float64(simCounted) - float64(goCounted)); d > float64(b.rounds)*3 {
		t.Errorf("the simulator sent %d responses while the Line counted %d answers", simCounted, goCounted)
	}

	tTurn := time.Duration(float64(time.Second) / median(turn))
	turnLimit := 1 / (gap + frames + tTurn).Seconds()
	g := median(line)
	if demand := float64(len(targets)) / benchInterval.Seconds(); demand < 2*g {
		t.Errorf("the Line was not saturated: %d devices every %v ask %.0f polls/s, it answered %.0f", len(targets), benchInterval, demand, g)
	}
	fmt.Printf(`
### RTU at %d baud, 8N1, a read of %d registers (8-byte request, %d-byte reply), %d units polled every %v

| figure | median of %d | runs | ratio |
|---|--:|---|--:|
| frames: %s a character, %v of request and reply, frame gap %v | %.1f polls/s | — | line limit |
| simulator's turnaround (unpaced relay, one poller, no gap) | %v a request | %s req/s | — |
| line + turnaround | %.1f polls/s | — | — |
| bare loop of requests, paced relay (no scheduler) | %.1f polls/s | %s | %.2f of line, %.2f of line+turnaround |
| **gateway's Line, paced relay** | **%.1f polls/s** | %s | **%.2f of line, %.2f of line+turnaround**, %.2f of bare loop |
| Line / bare loop, round by round | **%.2f** | %s | — |

%s.
`, baud, benchRegs, 5+2*benchRegs, len(targets), benchInterval, b.rounds,
		modbus.FrameTime(baud, charBits, 1), frames, gap, lineLimit,
		tTurn.Round(time.Microsecond), runsText(turn), turnLimit,
		median(bare), runsText(bare), median(bare)/lineLimit, median(bare)/turnLimit,
		g, runsText(line), g/lineLimit, g/turnLimit, g/median(bare),
		median(ratios(line, bare)), ratiosText(ratios(line, bare)), tallied)
}

// tcpTargets: 8 units, 32 float32s of each, none adjacent: 256 blocks.
func tcpTargets() []target {
	var ts []target
	for u := byte(1); u <= 8; u++ {
		for i := uint16(0); i < 32; i++ {
			ts = append(ts, target{unit: u, addr: 4 * i})
		}
	}
	return ts
}

// benchTCP takes the Line's polls a second over Modbus TCP on loopback
// beside the simulator's own answer rate: the same reads from a bare
// loop on one connection.
func benchTCP(t *testing.T, b modbusBench) {
	targets := tcpTargets()
	sim := modbussim.StartTCP(t, unitsFor(targets))
	lc := board.ModbusLineConfig{TCP: sim.Addr}
	open := func(ctx context.Context) (modbus.Transport, error) { return hardware.OpenModbus(ctx, lc) }
	var bare, line []float64
	var y tally
	for round := 0; round < b.rounds; round++ {
		runs := []func(){
			func() { bare = append(bare, y.add(bareLoop(t, b, targets, open))) },
			func() { line = append(line, y.add(lineRun(t, b, targets, open))) },
		}
		if round%2 == 1 {
			slices.Reverse(runs)
		}
		for _, run := range runs {
			run()
		}
	}
	tallied := y.check(t)
	g := median(line)
	if demand := float64(len(targets)) / benchInterval.Seconds(); demand < 2*g {
		t.Errorf("the Line was not saturated: %d devices every %v ask %.0f polls/s, it answered %.0f", len(targets), benchInterval, demand, g)
	}
	fmt.Printf(`
### TCP on loopback, a read of %d registers, %d blocks (8 units × 32 non-adjacent float32s) polled every %v

| figure | median of %d | runs | ratio |
|---|--:|---|--:|
| simulator's answer rate: bare loop of requests, one connection | %.0f req/s | %s | limit |
| **gateway's Line** | **%.0f polls/s** | %s | **%.2f** |
| Line / bare loop, round by round | **%.2f** | %s | — |

%s.
`, benchRegs, len(targets), benchInterval, b.rounds, median(bare), runsText(bare), g, runsText(line), g/median(bare),
		median(ratios(line, bare)), ratiosText(ratios(line, bare)), tallied)
}

// idleCase is one idle configuration: its devices and what they should
// cost in requests a second.
type idleCase struct {
	name    string
	devices int
	config  func(addr string) string // the devices: section, for the sim at addr
	want    float64                  // requests a second the line should send
}

// benchIdle runs the gateway binary with 32 registers polled every
// second from the TCP simulator and takes its CPU and wake-ups over the
// idle window, beside the same binary with no devices.
func benchIdle(t *testing.T, b modbusBench) {
	units := modbussim.Units{}
	regs := make([]uint16, 32)
	for u := byte(1); u <= 32; u++ {
		units[u] = modbussim.Unit{modbussim.Input: {0: regs}}
	}
	sim := modbussim.StartTCP(t, units)
	devYAML := func(id string, unit, addr int) string {
		return fmt.Sprintf("  %s:\n    kind: modbus\n    bus: plc\n    slave: %d\n    table: input\n    address: %d\n    type: uint16\n    interval: 1s\n", id, unit, addr)
	}
	cases := []idleCase{
		{name: "no devices (the baseline)", devices: 0, config: func(string) string { return "devices: {}\n" }},
		{name: "32 adjacent registers of one unit: one block", devices: 32, want: 1, config: func(addr string) string {
			var s strings.Builder
			s.WriteString("modbus:\n  plc:\n    tcp: " + addr + "\ndevices:\n")
			for i := 0; i < 32; i++ {
				s.WriteString(devYAML(fmt.Sprintf("plc.r%d", i), 1, i))
			}
			return s.String()
		}},
		{name: "32 units, a register of each: 32 blocks", devices: 32, want: 32, config: func(addr string) string {
			var s strings.Builder
			s.WriteString("modbus:\n  plc:\n    tcp: " + addr + "\ndevices:\n")
			for u := 1; u <= 32; u++ {
				s.WriteString(devYAML(fmt.Sprintf("plc.u%d", u), u, 0))
			}
			return s.String()
		}},
	}
	fmt.Printf(`
### Idle: the gateway binary (generic board, TCP line to the simulator), devices polled every 1 s; %v after a settle of %v

| configuration | CPU, %% of one core (median of %d) | runs (stat ticks; schedstat) | requests/s | context switches/s (all threads) | per request |
|---|--:|---|--:|--:|--:|
`, b.idle, b.settle, b.idleRuns)
	for _, c := range cases {
		var cpu, stat, reqs, csw []float64
		for run := 0; run < b.idleRuns; run++ {
			r := idleRun(t, b, sim, c)
			cpu, stat, reqs, csw = append(cpu, r.schedCPU), append(stat, r.statCPU), append(reqs, r.reqs), append(csw, r.csw)
			if c.want > 0 && math.Abs(r.reqs-c.want) > 0.1*c.want {
				t.Errorf("%s: %.2f requests/s, want %.0f", c.name, r.reqs, c.want)
			}
		}
		var runs []string
		for i := range cpu {
			runs = append(runs, fmt.Sprintf("%.3f; %.3f", stat[i], cpu[i]))
		}
		per := "—"
		if median(reqs) > 0 {
			per = fmt.Sprintf("%.1f", median(csw)/median(reqs))
		}
		fmt.Printf("| %s | %.3f %% | %s | %.2f | %.1f | %s |\n", c.name, median(cpu), strings.Join(runs, " / "),
			median(reqs), median(csw), per)
	}
}

// idleFigures is one idle run: CPU in % of one core from the threads'
// schedstat (ns) and from /proc/PID/stat (10 ms ticks), requests a
// second the simulator answered, context switches a second.
type idleFigures struct {
	schedCPU, statCPU, reqs, csw float64
}

// idleRun starts the gateway with c's configuration, lets it settle, and
// takes its figures over the idle window.
func idleRun(t *testing.T, b modbusBench, sim *modbussim.Sim, c idleCase) idleFigures {
	t.Helper()
	dir := t.TempDir()
	config := writeConfig(t, "board: generic\n"+c.config(sim.Addr))
	g := startGatewayWith(t, dir, c.devices, "--config", config, "--log-level", "info")
	defer g.stop(t)
	pid := g.cmd.Process.Pid
	time.Sleep(b.settle)
	p0, n0, t0 := procCPU(t, pid), sim.Count(), time.Now()
	time.Sleep(b.idle)
	p1, n1, t1 := procCPU(t, pid), sim.Count(), time.Now()
	wall := t1.Sub(t0).Seconds()
	return idleFigures{
		schedCPU: 100 * float64(p1.schedNS-p0.schedNS) / 1e9 / wall,
		statCPU:  100 * float64(p1.ticks-p0.ticks) / 100 / wall,
		reqs:     float64(n1-n0) / wall,
		csw:      float64(p1.csw-p0.csw) / wall,
	}
}

// procSample is a process's CPU time and context switches so far.
type procSample struct {
	ticks   int64 // utime+stime of /proc/PID/stat, in USER_HZ (100) ticks
	schedNS int64 // the threads' on-CPU time from /proc/PID/task/*/schedstat
	csw     int64 // the threads' voluntary and involuntary context switches
}

// procCPU reads pid's CPU time and context switches. /proc/PID/stat's
// times count whole ticks (10 ms), coarse beside an idle process's
// fraction of a percent; the threads' schedstat counts nanoseconds. The
// context switches are each thread's: /proc/PID/status has only the
// main thread's, and a Go program's work runs on its other threads.
func procCPU(t *testing.T, pid int) procSample {
	t.Helper()
	var s procSample
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	// Fields after the command's closing parenthesis: state is field 3,
	// utime 14 and stime 15.
	f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	s.ticks = ut + st
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*", pid))
	if err != nil || len(tasks) == 0 {
		t.Fatalf("threads of %d: %v", pid, err)
	}
	for _, task := range tasks {
		if data, err := os.ReadFile(task + "/schedstat"); err == nil {
			ns, _ := strconv.ParseInt(strings.Fields(string(data))[0], 10, 64)
			s.schedNS += ns
		}
		data, err := os.ReadFile(task + "/status")
		if err != nil {
			continue // the thread ended meanwhile
		}
		for _, line := range strings.Split(string(data), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.HasSuffix(k, "ctxt_switches") {
				n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				s.csw += n
			}
		}
	}
	return s
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Sorted(slices.Values(xs))
	if n := len(s); n%2 == 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return s[len(s)/2]
}

func runsText(xs []float64) string {
	var parts []string
	for _, x := range xs {
		parts = append(parts, strconv.FormatFloat(x, 'f', 1, 64))
	}
	return strings.Join(parts, ", ")
}

func ratiosText(xs []float64) string {
	var parts []string
	for _, x := range xs {
		parts = append(parts, strconv.FormatFloat(x, 'f', 2, 64))
	}
	return strings.Join(parts, ", ")
}
