//go:build linux

package modbussim

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// bench is the units every test starts with.
func bench() Units {
	return Units{
		1: {
			Coil:     {0: {1, 0, 1}},
			Discrete: {0: {0, 1}, 10: {1}},
			Input:    {0: {17000, 16}},
			Holding:  {100: {0x42F6, 0xE979}, 200: {0, 0, 0}},
		},
		2: {Holding: {0: {7}}},
	}
}

// transport starts the simulator with units and a master talking to it.
type transport struct {
	name  string
	start func(t *testing.T, units Units) (*Sim, master)
}

var transports = []transport{
	{"tcp", func(t *testing.T, units Units) (*Sim, master) {
		sim := StartTCP(t, units)
		return sim, dialTCP(t, sim.Addr)
	}},
	{"rtu", func(t *testing.T, units Units) (*Sim, master) {
		sim, relay := StartRTUBus(t, 19200, units)
		return sim, openRTU(t, relay.Gateway)
	}},
}

func eachTransport(t *testing.T, f func(t *testing.T, sim *Sim, m master)) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			sim, m := tr.start(t, bench())
			f(t, sim, m)
		})
	}
}

func TestReadsAsConfigured(t *testing.T) {
	tests := []struct {
		unit  byte
		table Table
		addr  uint16
		n     int
		want  []uint16
	}{
		{1, Coil, 0, 3, []uint16{1, 0, 1}},
		{1, Coil, 1, 2, []uint16{0, 1}},
		{1, Discrete, 0, 2, []uint16{0, 1}},
		{1, Discrete, 10, 1, []uint16{1}},
		{1, Input, 0, 2, []uint16{17000, 16}},
		{1, Holding, 100, 2, []uint16{0x42F6, 0xE979}},
		{1, Holding, 101, 1, []uint16{0xE979}},
		{2, Holding, 0, 1, []uint16{7}},
	}
	eachTransport(t, func(t *testing.T, sim *Sim, m master) {
		for _, tt := range tests {
			if got := read(t, m, tt.unit, tt.table, tt.addr, tt.n); !slices.Equal(got, tt.want) {
				t.Errorf("read %s %d+%d of unit %d = %v, want %v", tt.table, tt.addr, tt.n, tt.unit, got, tt.want)
			}
		}
	})
}

// TestUndefinedAddress: any address not configured, alone or in a block
// that also holds defined ones, answers exception 2; so does a write.
func TestUndefinedAddress(t *testing.T) {
	tests := []struct {
		name string
		pdu  []byte
	}{
		{"holding past a block", readReq(3, 102, 1)},
		{"holding across a block's end", readReq(3, 101, 2)},
		{"holding before a block", readReq(3, 99, 2)},
		{"holding in a gap", readReq(3, 150, 1)},
		{"input", readReq(4, 2, 1)},
		{"coil", readReq(1, 2, 2)},
		{"discrete across a gap", readReq(2, 0, 11)},
		{"holding taken for input", readReq(4, 100, 1)},
		{"write holding", writeRegs(150, 1)},
		{"write holdings", writeRegs(101, 1, 2)},
		{"write coil", writeCoils(3, 1)},
	}
	eachTransport(t, func(t *testing.T, sim *Sim, m master) {
		for _, tt := range tests {
			resp, err := ask(t, m, 1, tt.pdu)
			if want := []byte{tt.pdu[0] | 0x80, 2}; err != nil || !slices.Equal(resp, want) {
				t.Errorf("%s: answer % x, %v; want % x (exception 2)", tt.name, resp, err, want)
			}
		}
		if got := sim.Get(1, Holding, 100, 2); !slices.Equal(got, []uint16{0x42F6, 0xE979}) {
			t.Errorf("a refused write changed holding 100+2 to %v", got)
		}
	})
}

func TestWritesReadBack(t *testing.T) {
	eachTransport(t, func(t *testing.T, sim *Sim, m master) {
		writes := []struct {
			name  string
			pdu   []byte
			table Table
			addr  uint16
			want  []uint16
		}{
			{"write single register", writeRegs(200, 0xBEEF), Holding, 200, []uint16{0xBEEF, 0, 0}},
			{"write registers", writeRegs(201, 1, 65535), Holding, 200, []uint16{0xBEEF, 1, 65535}},
			{"write single coil", writeCoils(1, 1), Coil, 0, []uint16{1, 1, 1}},
			{"write coils", writeCoils(0, 0, 1, 0), Coil, 0, []uint16{0, 1, 0}},
		}
		for _, w := range writes {
			resp, err := ask(t, m, 1, w.pdu)
			if err != nil || len(resp) != 5 || resp[0] != w.pdu[0] {
				t.Fatalf("%s: answer % x, %v", w.name, resp, err)
			}
			if got := sim.Get(1, w.table, w.addr, len(w.want)); !slices.Equal(got, w.want) {
				t.Errorf("%s: Get = %v, want %v", w.name, got, w.want)
			}
		}
		sim.Set(1, Input, 0, 1, 2)
		sim.Set(1, Discrete, 10, 0)
		sim.Set(2, Holding, 0, 0xFFFF)
		sim.Set(2, Holding, 500, 42) // a new address
		for _, c := range []struct {
			unit  byte
			table Table
			addr  uint16
			want  []uint16
		}{{1, Input, 0, []uint16{1, 2}}, {1, Discrete, 10, []uint16{0}}, {2, Holding, 0, []uint16{0xFFFF}}, {2, Holding, 500, []uint16{42}}} {
			if got := read(t, m, c.unit, c.table, c.addr, len(c.want)); !slices.Equal(got, c.want) {
				t.Errorf("after Set, %s %d of unit %d = %v, want %v", c.table, c.addr, c.unit, got, c.want)
			}
		}
	})
}

// TestSilentAnswer: a silent unit and an unknown one answer nothing, the
// others go on; a unit answers again at once after Answer.
func TestSilentAnswer(t *testing.T) {
	eachTransport(t, func(t *testing.T, sim *Sim, m master) {
		quiet(t, m, 9, readReq(3, 0, 1), 2) // never configured
		sim.Silent(1)
		sim.Silent(1) // twice is fine
		quiet(t, m, 1, readReq(3, 100, 1), 2)
		quiet(t, m, 1, writeRegs(200, 5), 2)
		if got := sim.Get(1, Holding, 200, 1); got[0] != 0 {
			t.Errorf("a silent unit took a write: holding 200 = %d", got[0])
		}
		sim.Answer(1)
		if got := read(t, m, 1, Holding, 100, 1); got[0] != 0x42F6 {
			t.Errorf("after Answer: holding 100 = %#x", got[0])
		}
	})
}

// TestDelay: a delayed unit answers no sooner than its delay, and another
// unit asked after it answers first; a unit silenced while its answer
// waits does not answer; a delay is undone by Delay 0.
func TestDelay(t *testing.T) {
	const delay = 300 * time.Millisecond
	eachTransport(t, func(t *testing.T, sim *Sim, m master) {
		sim.Delay(1, delay)
		start := time.Now()
		m.send(t, 1, readReq(3, 100, 1))
		m.send(t, 2, readReq(3, 0, 1))
		for i, want := range []byte{2, 1} {
			u, resp, err := m.recv(t, expectWait)
			if err != nil || u != want {
				t.Fatalf("answer %d: unit %d % x, %v; want unit %d", i+1, u, resp, err, want)
			}
		}
		if took := time.Since(start); took < delay {
			t.Errorf("the delayed unit answered after %v, want at least %v", took, delay)
		}

		m.send(t, 1, readReq(3, 100, 1))
		sim.Silent(1)
		if u, resp, err := m.recv(t, 2*delay); !errors.Is(err, errTimeout) {
			t.Errorf("unit silenced while its answer waited: unit %d % x, %v; want silence", u, resp, err)
		}
		sim.Answer(1)
		sim.Delay(2, delay)
		sim.Delay(1, 0)
		m.send(t, 2, readReq(3, 0, 1))
		m.send(t, 1, readReq(3, 100, 1))
		for i, want := range []byte{1, 2} {
			u, resp, err := m.recv(t, expectWait)
			if err != nil || u != want {
				t.Fatalf("delay moved to unit 2, answer %d: unit %d % x, %v; want unit %d", i+1, u, resp, err, want)
			}
		}
	})
}

// TestCount: every response counts, exceptions too; silence does not.
func TestCount(t *testing.T) {
	eachTransport(t, func(t *testing.T, sim *Sim, m master) {
		before := sim.Count()
		read(t, m, 1, Holding, 100, 2)
		read(t, m, 2, Holding, 0, 1)
		ask(t, m, 1, readReq(3, 150, 1))
		quiet(t, m, 9, readReq(3, 0, 1), 2)
		if got, want := sim.Count(), before+4; got != want {
			t.Errorf("Count = %d, want %d", got, want)
		}
	})
}

func TestControlErrors(t *testing.T) {
	sim := StartTCP(t, bench())
	tests := []struct{ command, want string }{
		{"set 9 holding 0 1", "unit 9 is not configured"},
		{"silent 9", "unit 9 is not configured"},
		{"get 1 holding 150 1", "holding 150+1 of unit 1 is not all defined"},
		{"get 1 holding 100 3", "holding 100+3 of unit 1 is not all defined"},
		{"set 1 register 0 1", "table 'register' is not coil, discrete, input or holding"},
		{"set 1 coil 0 2", "value 2 out of range 0..1 for coil"},
		{"set 1 holding 0 65536", "value 65536 out of range 0..65535 for holding"},
		{"set 1 holding 65535 1 2", "address 65535+2 out of range"},
		{"set 1 holding 0", "no values"},
		{"delay 1", "wrong number of arguments"},
		{"delay 1 -5", "negative delay"},
		{"frob 1", "unknown command 'frob'"},
	}
	for _, tt := range tests {
		out, err := sim.Do(tt.command)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %q, %v; want an error with %q", tt.command, out, err, tt.want)
		}
	}
	if got := sim.Get(1, Holding, 100, 2); !slices.Equal(got, []uint16{0x42F6, 0xE979}) {
		t.Errorf("after the errors, holding 100+2 = %v", got)
	}
}

// TestStartErrors: a port that cannot be opened and bad units fail the
// start with what was wrong.
func TestStartErrors(t *testing.T) {
	tests := []struct {
		name  string
		args  []string
		units Units
		want  string
	}{
		{"missing port", []string{"rtu", "/nonexistent/tty", "19200"}, bench(), "could not open port /nonexistent/tty"},
		{"unit out of range", []string{"tcp"}, Units{248: {}}, "unit 248 out of range 1..247"},
		{"broadcast unit", []string{"tcp"}, Units{0: {}}, "unit 0 out of range 1..247"},
		{"table", []string{"tcp"}, Units{1: {"register": {0: {1}}}}, "unit 1: table 'register' is not coil"},
		{"bit value", []string{"tcp"}, Units{1: {Coil: {0: {2}}}}, "value 2 out of range 0..1 for coil"},
		{"block past the end", []string{"tcp"}, Units{1: {Holding: {65535: {1, 2}}}}, "address 65535+2 out of range"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg := fatalOf(t, func(tb testing.TB) { start(tb, Python, tt.units, tt.args...) })
			if !strings.Contains(msg, tt.want) {
				t.Errorf("start failed with %q, want it to say %q", msg, tt.want)
			}
		})
	}
}

// TestMissingPymodbus: a python3 that cannot import pymodbus fails the
// test saying to install python3-pymodbus. (python3 -S has no
// dist-packages on its path, so it stands for a machine without it.)
func TestMissingPymodbus(t *testing.T) {
	wrapper := filepath.Join(t.TempDir(), "python3")
	if err := os.WriteFile(wrapper, []byte("#!/bin/sh\nexec "+Python+" -S \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	msg := fatalOf(t, func(tb testing.TB) { start(tb, wrapper, bench(), "tcp") })
	if !strings.Contains(msg, "install python3-pymodbus") {
		t.Errorf("start failed with %q, want it to say to install python3-pymodbus", msg)
	}
}

// TestNoLeftovers: the simulator's process is gone when its test ends.
func TestNoLeftovers(t *testing.T) {
	var pid int
	t.Run("sim", func(t *testing.T) {
		sim := StartTCP(t, bench())
		pid = sim.cmd.Process.Pid
	})
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("simulator %d after its test: kill 0 = %v, want ESRCH", pid, err)
	}
}

// fatalTB records the first Fatal instead of failing the test.
type fatalTB struct {
	testing.TB
	msg string
}

func (f *fatalTB) Helper() {}
func (f *fatalTB) Fatal(args ...any) {
	f.msg = fmt.Sprint(args...)
	runtime.Goexit()
}
func (f *fatalTB) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// fatalOf runs f and returns what it failed with; it must fail.
func fatalOf(t *testing.T, f func(testing.TB)) string {
	t.Helper()
	tb := &fatalTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(tb)
	}()
	<-done
	if tb.msg == "" {
		t.Fatal("it did not fail")
	}
	return tb.msg
}
