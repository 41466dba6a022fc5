package expander

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"periph.io/x/conn/v3/gpio"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/clock"
	"github.com/openhal/gateway/internal/clock/clocktest"
	"github.com/openhal/gateway/internal/hw/gpioline"
	"github.com/openhal/gateway/internal/hw/i2c/mcp23017"
	"github.com/openhal/gateway/internal/hw/i2c/mcp23017/mcp23017test"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

const absent = "ex1 (mcp23017 at 0x20 on /dev/i2c-1) did not answer: check its wiring, power and address (mcp23017: set IOCON: sysfs-i2c: remote I/O error)"

// txAt returns a channel closed once the chip has answered its nth
// transfer, calling f first.
func txAt(chip *mcp23017test.Chip, n int, f func()) <-chan struct{} {
	done := make(chan struct{})
	var once sync.Once
	chip.OnTx(func(got int) {
		if got == n {
			once.Do(func() {
				if f != nil {
					f()
				}
				close(done)
			})
		}
	})
	return done
}

// sleeping waits until the watcher sleeps on clk.
func sleeping(t *testing.T, clk *clocktest.Fake) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	if err := clk.WaitPending(ctx, 1); err != nil {
		t.Fatal("nothing waits on the clock")
	}
}

// advance waits until the watcher sleeps on clk, and wakes it.
func advance(t *testing.T, clk *clocktest.Fake, d time.Duration) {
	t.Helper()
	sleeping(t, clk)
	clk.Advance(d)
}

// A chip that does not answer at start: Start works, its devices are in
// fault, reads and writes fail saying which chip and what to check; once
// it answers (tried every second) the faults clear, the output drives
// the level it was last given, the input publishes.
func TestAbsentChip(t *testing.T) {
	chip := mcp23017test.New(mcp23017.MCP23017, 0x20)
	chip.SetPresent(false)
	clk := clocktest.NewFake(t0)
	c := newChip(t, mcp23017.MCP23017, chip, chip.INT(), clk)
	lamp := output(t, c, "arm.lamp", 0, true)
	limit := input(t, c, "arm.limit", 9, gpioline.InputOpts{Pull: gpio.PullUp, Invert: true})
	start(t, c)
	rl, rv := run(t, lamp), run(t, limit)
	rl.wantState(t, device.StateFault, absent)
	rv.wantState(t, device.StateFault, absent)

	if err := write(t, lamp, false); err == nil || err.Error() != "gpio output arm.lamp: set ex1:GPA0 Low: "+absent {
		t.Errorf("write: %v", err)
	}
	if _, err := limit.Read(context.Background()); err == nil || err.Error() != "gpio input arm.limit: read ex1:GPB1: "+absent {
		t.Errorf("read: %v", err)
	}

	sleeping(t, clk) // before the next try
	chip.SetPresent(true)
	chip.Drive(9, gpio.Low) // pressed meanwhile
	advance(t, clk, retryDelay)
	rl.wantState(t, device.StateOK, "")
	rv.wantState(t, device.StateOK, "")
	rv.wantValue(t, true)
	if !chip.IsOutput(0) || chip.Level(0) != gpio.High {
		t.Errorf("GPA0: output %v at %s; want driving its initial high (the failed write did nothing)", chip.IsOutput(0), chip.Level(0))
	}
	if rd, err := limit.Read(context.Background()); err != nil || rd.Value != true {
		t.Errorf("read = %v, %v", rd.Value, err)
	}
}

// A chip that stops answering: a failed write has the watcher check it,
// its devices go in fault, and come back when it answers again.
func TestChipGoesAway(t *testing.T) {
	chip := mcp23017test.New(mcp23017.MCP23008, 0x20)
	clk := clocktest.NewFake(t0)
	c := newChip(t, mcp23017.MCP23008, chip, nil, clk)
	relay := output(t, c, "bench.relay", 7, false)
	start(t, c)
	rr := run(t, relay)
	chip.SetPresent(false)
	err := write(t, relay, true)
	if err == nil || !strings.Contains(err.Error(), "gpio output bench.relay: set ex1:GP7 High: ex1 (mcp23008 at 0x20 on /dev/i2c-1) did not answer") {
		t.Fatalf("write: %v", err)
	}
	// The check's read of IOCON fails, then the setup tried again at
	// once (which Run may be the first to report, if it started late).
	rr.wantState(t, device.StateFault, "ex1 (mcp23008 at 0x20 on /dev/i2c-1) did not answer: check its wiring, power and address (mcp23017: ")
	sleeping(t, clk) // before the next try
	chip.SetPresent(true)
	advance(t, clk, retryDelay)
	for e := rr.next(t); e.state != device.StateOK; e = rr.next(t) {
		if e.state != device.StateFault {
			t.Fatalf("got %+v, want a fault until ok", e)
		}
	}
	if err := write(t, relay, true); err != nil || chip.Level(7) != gpio.High {
		t.Errorf("write after: %v, GP7 %s", err, chip.Level(7))
	}
}

// A chip reset by a power glitch (every pin an input again) is found at
// the quiet check (on the clock, for a chip without INT) and set up
// again, its output at the level last written.
func TestResetRestores(t *testing.T) {
	chip := mcp23017test.New(mcp23017.MCP23008, 0x20)
	clk := clocktest.NewFake(t0)
	c := newChip(t, mcp23017.MCP23008, chip, nil, clk)
	relay := output(t, c, "bench.relay", 7, false)
	start(t, c)
	run(t, relay)
	if err := write(t, relay, true); err != nil {
		t.Fatal(err)
	}
	// The setup (9), a read, the write; then the check's read of IOCON,
	// the setup again and a read.
	restored := txAt(chip, 11+1+9+1, nil)
	chip.PowerCycle()
	if chip.IsOutput(7) {
		t.Fatal("GP7 an output after a reset")
	}
	advance(t, clk, edgeWait)
	waitFor(t, restored, "setup after the reset")
	if !chip.IsOutput(7) || chip.Level(7) != gpio.High {
		t.Errorf("GP7 after the check: output %v at %s; want driving high again", chip.IsOutput(7), chip.Level(7))
	}
}

// INT that stays low after a read (a change during the read whose edge
// was lost) has the chip read again: the change is not missed.
func TestReadAgainWhileLow(t *testing.T) {
	chip := mcp23017test.New(mcp23017.MCP23017, 0x20)
	c := newChip(t, mcp23017.MCP23017, chip, chip.INT(), clock.Real())
	a := input(t, c, "arm.a", 0, gpioline.InputOpts{Pull: gpio.PullUp, Invert: true})
	b := input(t, c, "arm.b", 1, gpioline.InputOpts{Pull: gpio.PullUp, Invert: true})
	start(t, c)
	ra, rb := run(t, a), run(t, b)
	ra.wantValue(t, false)
	rb.wantValue(t, false)
	second := txAt(chip, 11, func() {
		chip.INT().Lose(true)
		chip.Drive(1, gpio.Low)
		chip.INT().Lose(false)
	})
	chip.Drive(0, gpio.Low)
	waitFor(t, second, "read of the chip")
	ra.wantValue(t, true)
	rb.wantValue(t, true)
	if chip.INT().Read() != gpio.High {
		t.Error("INT still low")
	}
}

// INT held low (a short, or another chip's INT on the line) is a fault
// of the inputs after eight reads; outputs are not touched; it clears
// at the next edge that reads with INT high.
func TestStuckLow(t *testing.T) {
	chip := mcp23017test.New(mcp23017.MCP23017, 0x20)
	c := newChip(t, mcp23017.MCP23017, chip, chip.INT(), clock.Real())
	a := input(t, c, "arm.a", 0, gpioline.InputOpts{Pull: gpio.PullUp, Invert: true})
	lamp := output(t, c, "arm.lamp", 8, false)
	start(t, c)
	ra, rl := run(t, a), run(t, lamp)
	ra.wantValue(t, false)
	txAt(chip, 11, func() { chip.INT().Short(true) })
	chip.Drive(0, gpio.Low)
	ra.wantValue(t, true)
	ra.wantState(t, device.StateFault, "INT of ex1 (mcp23017 at 0x20 on /dev/i2c-1) stays low on INT after 8 reads of the chip")
	if n := chip.Txs(); n != 10+maxReads {
		t.Errorf("%d transfers, want the setup, a read and %d reads", n, maxReads)
	}
	chip.INT().Short(false)
	chip.Drive(0, gpio.High)
	ra.wantState(t, device.StateOK, "")
	ra.wantValue(t, false)
	rl.wantNone(t)
}

// A failing INT line is a fault of the inputs, requested again every
// second until its waits work.
func TestINTLineFails(t *testing.T) {
	chip := mcp23017test.New(mcp23017.MCP23017, 0x20)
	clk := clocktest.NewFake(t0)
	c := newChip(t, mcp23017.MCP23017, chip, chip.INT(), clk)
	a := input(t, c, "arm.a", 0, gpioline.InputOpts{Pull: gpio.PullUp, Invert: true})
	lamp := output(t, c, "arm.lamp", 8, false)
	start(t, c)
	ra, rl := run(t, a), run(t, lamp)
	ra.wantValue(t, false)
	waitFor(t, chip.INT().Waiting(), "wait on INT")
	chip.INT().FailWaits(true) // from the next wait on
	chip.Drive(0, gpio.Low)
	ra.wantValue(t, true)
	ra.wantState(t, device.StateFault, "wait for edges on INT, the INT line of ex1 (mcp23017 at 0x20 on /dev/i2c-1), failed")
	chip.INT().FailWaits(false)
	advance(t, clk, retryDelay)
	ra.wantState(t, device.StateOK, "")
	if n := chip.INT().Ins(); n != 2 {
		t.Errorf("INT requested %d times, want twice", n)
	}
	rl.wantNone(t)
}

// Debounce and edge as on a Pi line: bounces publish one value, debounce
// after the last; with edge falling, a rise wakes nothing.
func TestDebounceAndEdge(t *testing.T) {
	chip := mcp23017test.New(mcp23017.MCP23017, 0x20)
	clk := clocktest.NewFake(t0)
	c := newChip(t, mcp23017.MCP23017, chip, chip.INT(), clk)
	a := input(t, c, "arm.a", 0, gpioline.InputOpts{Pull: gpio.PullUp, Invert: true, Debounce: 20 * time.Millisecond})
	b := input(t, c, "arm.b", 1, gpioline.InputOpts{Pull: gpio.PullUp, Edge: gpio.FallingEdge})
	start(t, c)
	ra, rb := run(t, a), run(t, b)
	ra.wantValue(t, false)
	rb.wantValue(t, true)
	// A read of the chip (b's, here) publishes what changed before it,
	// whether or not the watcher has served INT yet: each bounce has
	// been an edge once it returns.
	sync := func() {
		t.Helper()
		if _, err := b.Read(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	for _, l := range []gpio.Level{gpio.Low, gpio.High, gpio.Low} {
		chip.Drive(0, l)
		sync()
	}
	ra.wantNone(t)
	clk.Advance(20 * time.Millisecond)
	ra.wantValue(t, true)

	chip.Drive(1, gpio.Low)
	rb.wantValue(t, false)
	chip.Drive(1, gpio.High)
	sync()
	rb.wantNone(t)
}

// Writers, the outside world and readers at once: every output ends at
// its writer's last value, every input's last published value is its
// pin's level, and nothing is in fault. Run it under load:
//
//	/work/shared/tools/under-load go test -race -count=50 -run TestConcurrent ./internal/hw/expander
func TestConcurrent(t *testing.T) {
	chip := mcp23017test.New(mcp23017.MCP23017, 0x20)
	c := newChip(t, mcp23017.MCP23017, chip, chip.INT(), clock.Real())
	var outs []*Output
	var ins []*Input
	for i := range 4 {
		outs = append(outs, output(t, c, fmt.Sprintf("o%d", i), i, false))
		ins = append(ins, input(t, c, fmt.Sprintf("i%d", i), 8+i, gpioline.InputOpts{Pull: gpio.PullUp}))
	}
	start(t, c)
	var recs []recorder
	var got []any // each input's last published value
	for i := range 4 {
		run(t, outs[i])
		recs = append(recs, run(t, ins[i]))
		got = append(got, recs[i].next(t).value) // Run has started
	}
	last := make([]bool, 4)
	var wg sync.WaitGroup
	for i, o := range outs {
		wg.Go(func() {
			for range 50 {
				v := rand.IntN(2) == 1
				if err := write(t, o, v); err != nil {
					t.Error(err)
					return
				}
				last[i] = v
			}
		})
	}
	wg.Go(func() {
		for range 200 {
			chip.Drive(8+rand.IntN(4), gpio.Level(rand.IntN(2) == 1))
		}
	})
	for _, in := range ins {
		wg.Go(func() {
			for range 20 {
				if _, err := in.Read(context.Background()); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	// A last read publishes what the watcher has not yet; later reads
	// find nothing changed.
	for i := range 4 {
		if got := chip.Level(i); bool(got) != last[i] {
			t.Errorf("output %d at %s, last written %v", i, got, last[i])
		}
		want := bool(chip.Level(8 + i))
		rd, err := ins[i].Read(context.Background())
		if err != nil || rd.Value != want {
			t.Errorf("input %d: read %v, %v; want %v", i, rd.Value, err, want)
		}
		for len(recs[i]) > 0 {
			e := <-recs[i]
			if e.state != "" {
				t.Errorf("input %d: %+v", i, e)
			}
			got[i] = e.value
		}
		if got[i] != want {
			t.Errorf("input %d: last published %v, its pin is %v", i, got[i], want)
		}
	}
}
