package modbusline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/hw/modbus"
	"github.com/openhal/gateway/internal/hw/modbus/modbustest"
)

// Adjacent and overlapping values of one unit, table and interval are
// one block, up to what a request reads; gaps, other units, tables and
// intervals are not.
func TestPlan(t *testing.T) {
	pt := func(unit byte, table modbus.Table, addr uint16, typ modbus.Type, every time.Duration) Point {
		return Point{Unit: unit, Table: table, Address: addr, Type: typ, Interval: every}
	}
	hr, ir, co := modbus.HoldingRegisters, modbus.InputRegisters, modbus.Coils
	s := time.Second
	for _, tt := range []struct {
		name   string
		points []Point
		want   []string // unit table first+count
	}{
		{"adjacent", []Point{pt(1, hr, 0, modbus.Uint16, s), pt(1, hr, 1, modbus.Float32, s), pt(1, hr, 3, modbus.Int16, s)}, []string{"1 holding 0+4"}},
		{"out of order", []Point{pt(1, hr, 3, modbus.Int16, s), pt(1, hr, 0, modbus.Float32, s), pt(1, hr, 2, modbus.Uint16, s)}, []string{"1 holding 0+4"}},
		{"overlap", []Point{pt(1, ir, 0, modbus.Float32, s), pt(1, ir, 1, modbus.Uint16, s)}, []string{"1 input 0+2"}},
		{"gap", []Point{pt(1, hr, 0, modbus.Uint16, s), pt(1, hr, 2, modbus.Uint16, s)}, []string{"1 holding 0+1", "1 holding 2+1"}},
		{"units", []Point{pt(1, hr, 0, modbus.Uint16, s), pt(2, hr, 1, modbus.Uint16, s)}, []string{"1 holding 0+1", "2 holding 1+1"}},
		{"tables", []Point{pt(1, hr, 0, modbus.Uint16, s), pt(1, ir, 1, modbus.Uint16, s)}, []string{"1 input 1+1", "1 holding 0+1"}},
		{"intervals", []Point{pt(1, hr, 0, modbus.Uint16, s), pt(1, hr, 1, modbus.Uint16, 2*s)}, []string{"1 holding 0+1", "1 holding 1+1"}},
		{"coils", []Point{pt(1, co, 7, modbus.Bool, s), pt(1, co, 8, modbus.Bool, s)}, []string{"1 coil 7+2"}},
		{"the most one request reads", []Point{pt(1, hr, 0, modbus.Float64, s), pt(1, hr, 4, modbus.Uint16, s), pt(1, hr, 124, modbus.Uint16, s), pt(1, hr, 125, modbus.Uint16, s)},
			[]string{"1 holding 0+5", "1 holding 124+2"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			l := New(Config{}, nil, nil)
			var devs []*Device
			for i, p := range tt.points {
				devs = append(devs, l.Device(device.Descriptor{ID: string(rune('a' + i))}, p))
			}
			var got []string
			for _, b := range plan(devs, time.Time{}) {
				got = append(got, blockName(b))
			}
			if strings.Join(got, ", ") != strings.Join(tt.want, ", ") {
				t.Errorf("blocks %q, want %q", got, tt.want)
			}
		})
	}
}

func blockName(b *block) string {
	return fmt.Sprintf("%d %s %d+%d", b.unit, b.table, b.first, b.count)
}

// Values of each type come from one block read, decoded, scaled and
// named, over RTU and over TCP.
func TestPollValues(t *testing.T) {
	for _, tcp := range []bool{false, true} {
		name := map[bool]string{false: "rtu", true: "tcp"}[tcp]
		t.Run(name, func(t *testing.T) {
			s := modbustest.NewSlave()
			defer s.Close()
			u := s.Unit(1)
			// holding 0: 2305 (230.5 V at 0.1); 1-2: float32 123.456 word-swapped
			// (0x42F6E979 as E979 42F6); 3: status 1; coils 0-1.
			u.SetRegisters(modbus.HoldingRegisters, 0, 2305, 0xE979, 0x42F6, 1)
			u.SetBits(modbus.Coils, 0, true, false)
			var r *rig
			if tcp {
				r = newTCPRig(t, s, Config{})
			} else {
				r = newRTURig(t, s, Config{})
			}
			hr := modbus.HoldingRegisters
			devs := []*Device{
				r.device("volts", Point{Unit: 1, Table: hr, Address: 0, Type: modbus.Uint16, Scale: 0.1}, device.AccessReadWrite),
				r.device("float", Point{Unit: 1, Table: hr, Address: 1, Type: modbus.Float32, Swap: modbus.SwapWord}, device.AccessReadWrite),
				r.device("status", Point{Unit: 1, Table: hr, Address: 3, Type: modbus.Uint16, Enum: map[int64]string{0: "stopped", 1: "running"}}, device.AccessReadWrite),
				r.device("run", Point{Unit: 1, Table: modbus.Coils, Address: 0, Type: modbus.Bool}, device.AccessReadWrite),
				r.device("aux", Point{Unit: 1, Table: modbus.Coils, Address: 1, Type: modbus.Bool}, device.AccessReadWrite),
			}
			reps := r.run(t, devs...)
			for i, want := range []any{230.5, 123.456, "running", true, false} {
				reps[i].waitValue(t, want)
				reps[i].waitState(t, "ok")
			}
			if n := reads(s, 1, 3, 0, 4); n == 0 {
				t.Errorf("no block read of holding 0+4: %+v", s.Requests())
			}
			if n := reads(s, 1, 1, 0, 2); n == 0 {
				t.Errorf("no block read of coils 0+2: %+v", s.Requests())
			}
			// A change is published; an unchanged value is not published again.
			before := len(s.Requests())
			u.SetRegisters(hr, 0, 2310)
			reps[0].waitValue(t, 231.0)
			if _, err := s.WaitRequests(context.Background(), before+10); err != nil {
				t.Fatal(err)
			}
			reps[1].mu.Lock()
			n := len(reps[1].values)
			reps[1].mu.Unlock()
			if n != 1 {
				t.Errorf("float published %d times for one value", n)
			}
		})
	}
}

// A unit that stops answering faults its own devices, named; the others
// go on; it clears when the unit answers again. An exception names the
// code.
func TestFaultsAndRecovery(t *testing.T) {
	s := modbustest.NewSlave()
	defer s.Close()
	s.Unit(1).SetRegisters(modbus.InputRegisters, 0, 7)
	s.Unit(2).SetRegisters(modbus.InputRegisters, 0, 9)
	r := newRTURig(t, s, Config{Retries: 1})
	ir := modbus.InputRegisters
	a := r.device("a", Point{Unit: 1, Table: ir, Type: modbus.Uint16}, device.AccessRead)
	b := r.device("b", Point{Unit: 2, Table: ir, Type: modbus.Uint16}, device.AccessRead)
	reps := r.run(t, a, b)
	reps[0].waitValue(t, 7.0)
	reps[1].waitValue(t, 9.0)

	s.Unit(2).SetSilent(true)
	fault := reps[1].waitState(t, "fault")
	if !strings.Contains(fault, "unit 2") {
		t.Errorf("fault %q does not name the unit", fault)
	}
	s.Unit(1).SetRegisters(ir, 0, 8)
	reps[0].waitValue(t, 8.0) // unit 1 goes on
	if st := reps[0].waitState(t, "ok"); st != "ok" {
		t.Errorf("a: %s", st)
	}

	s.Unit(2).SetSilent(false)
	reps[1].waitState(t, "ok")

	s.Unit(2).SetException(4)
	fault = reps[1].waitState(t, "fault")
	if !strings.Contains(fault, "exception 4") {
		t.Errorf("fault %q does not name the exception", fault)
	}
	s.Unit(2).SetException(0)
	reps[1].waitState(t, "ok")
}

// A block a unit refuses with exception 2 is polled device by device, so
// only the device at the wrong address is in fault.
func TestExceptionSplitsBlock(t *testing.T) {
	s := modbustest.NewSlave()
	defer s.Close()
	s.Unit(1).SetRegisters(modbus.HoldingRegisters, 10, 42) // 11 is not there
	r := newRTURig(t, s, Config{})
	hr := modbus.HoldingRegisters
	good := r.device("good", Point{Unit: 1, Table: hr, Address: 10, Type: modbus.Uint16}, device.AccessReadWrite)
	bad := r.device("bad", Point{Unit: 1, Table: hr, Address: 11, Type: modbus.Uint16}, device.AccessReadWrite)
	reps := r.run(t, good, bad)
	reps[0].waitValue(t, 42.0)
	reps[0].waitState(t, "ok")
	fault := reps[1].waitState(t, "fault")
	if !strings.Contains(fault, "exception 2: illegal data address") {
		t.Errorf("fault %q", fault)
	}
}

// Writes reach the unit (function 5 for a coil, 6 for one register, 16
// for more) and read back; a value the register cannot hold exactly is
// refused before it is sent.
func TestWrites(t *testing.T) {
	s := modbustest.NewSlave()
	defer s.Close()
	u := s.Unit(3)
	u.SetRegisters(modbus.HoldingRegisters, 0, 0, 0, 0)
	u.SetBits(modbus.Coils, 5, false)
	r := newRTURig(t, s, Config{})
	hr := modbus.HoldingRegisters
	speed := r.device("speed", Point{Unit: 3, Table: hr, Address: 0, Type: modbus.Uint16, Scale: 0.01}, device.AccessReadWrite)
	total := r.device("total", Point{Unit: 3, Table: hr, Address: 1, Type: modbus.Int32}, device.AccessReadWrite)
	run := r.device("run", Point{Unit: 3, Table: modbus.Coils, Address: 5, Type: modbus.Bool}, device.AccessReadWrite)
	reps := r.run(t, speed, total, run)
	reps[2].waitValue(t, false)
	ctx := context.Background()
	for _, w := range []struct {
		d *Device
		v any
	}{{speed, 12.34}, {total, -70000.0}, {run, true}} {
		if _, err := w.d.Write(ctx, device.WriteRequest{Value: w.v}); err != nil {
			t.Fatalf("write %s %v: %v", w.d.desc.ID, w.v, err)
		}
	}
	if regs, _ := u.Registers(hr, 0, 3); regs[0] != 1234 || regs[1] != 0xFFFE || regs[2] != 0xEE90 {
		t.Errorf("registers %04x", regs)
	}
	if bits, _ := u.Bits(modbus.Coils, 5, 1); !bits[0] {
		t.Errorf("coil 5 not set")
	}
	fcs := map[byte]bool{}
	for _, q := range s.Requests() {
		fcs[q.Function] = true
	}
	if !fcs[5] || !fcs[6] || !fcs[16] {
		t.Errorf("functions used %v, want 5, 6 and 16", fcs)
	}
	rd, err := speed.Read(ctx)
	if err != nil || rd.Value != 12.34 {
		t.Errorf("read back %v, %v", rd.Value, err)
	}
	var ve *device.ValueError
	if err := speed.CheckValue(12.345); !errors.As(err, &ve) || ve.Reason != "resolution" {
		t.Errorf("CheckValue(12.345) = %v", err)
	}
	if err := speed.CheckValue(700.0); !errors.As(err, &ve) || ve.Reason != "out_of_range" {
		t.Errorf("CheckValue(700) = %v", err)
	}
}

// The stop's writes go ahead of everything, those to units that answer
// first: a safe write to a silent unit queued before one to an answering
// unit is sent after it, once.
func TestSafeWritesOrder(t *testing.T) {
	s := modbustest.NewSlave()
	defer s.Close()
	for _, id := range []byte{1, 2, 3} {
		s.Unit(id).SetBits(modbus.Coils, 0, true)
	}
	r := newRTURig(t, s, Config{Retries: 2})
	co := modbus.Coils
	d1 := r.device("one", Point{Unit: 1, Table: co, Type: modbus.Bool, Interval: time.Hour}, device.AccessReadWrite)
	d2 := r.device("two", Point{Unit: 2, Table: co, Type: modbus.Bool, Interval: 20 * time.Millisecond}, device.AccessReadWrite)
	d3 := r.device("three", Point{Unit: 3, Table: co, Type: modbus.Bool, Interval: 20 * time.Millisecond}, device.AccessReadWrite)
	reps := r.run(t, d1, d2, d3)
	reps[0].waitValue(t, true)
	s.Unit(2).SetSilent(true)
	reps[1].waitState(t, "fault") // unit 2 is known silent

	release := s.Unit(3).Hold() // the line is busy with unit 3's poll
	n := len(s.Requests())
	if _, err := s.WaitRequests(context.Background(), n+1); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, d := range []*Device{d2, d1} { // the silent unit's first
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = d.Write(context.Background(), device.WriteRequest{Value: false, Safe: true})
		}()
	}
	waitQueued(t, r.line, 2)
	release()
	wg.Wait()
	if errs[1] != nil || !errors.Is(errs[0], modbus.ErrTimeout) {
		t.Errorf("writes: silent unit %v, answering unit %v", errs[0], errs[1])
	}
	// The slave logs a request once its goroutine has read it, which
	// may be after the write timed out: wait for unit 2's in the log.
	var order []byte
	for ctx := context.Background(); ; {
		log := s.Requests()
		order = order[:0]
		for _, q := range log {
			if q.Function == 5 {
				order = append(order, q.Unit)
			}
		}
		if bytes.IndexByte(order, 2) >= 0 {
			break
		}
		wctx, cancel := context.WithTimeout(ctx, waitLong)
		_, err := s.WaitRequests(wctx, len(log)+1)
		cancel()
		if err != nil {
			t.Fatalf("unit 2's safe write (%v) never reached the slave: writes to %v", errs[0], order)
		}
	}
	if string(order) != "\x01\x02" {
		t.Errorf("safe writes sent to units %v, want 1 then 2 (once)", order)
	}
}

// waitQueued waits until n jobs wait for the line.
func waitQueued(t *testing.T, l *Line, n int) {
	t.Helper()
	deadline := time.Now().Add(waitLong)
	for {
		l.mu.Lock()
		q := len(l.jobs)
		l.mu.Unlock()
		if q >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d jobs queued, want %d", q, n)
		}
		time.Sleep(time.Millisecond) // the jobs are queued by other goroutines: nothing signals it
	}
}

// A poll's retries give way to a waiting write: a garbled answer to a
// poll is sent again only after the write.
func TestPollRetriesGiveWay(t *testing.T) {
	s := modbustest.NewSlave()
	defer s.Close()
	s.Unit(1).SetRegisters(modbus.InputRegisters, 0, 1)
	s.Unit(2).SetBits(modbus.Coils, 0, true)
	r := newRTURig(t, s, Config{Retries: 3})
	polled := r.device("polled", Point{Unit: 1, Table: modbus.InputRegisters, Type: modbus.Uint16}, device.AccessRead)
	out := r.device("out", Point{Unit: 2, Table: modbus.Coils, Type: modbus.Bool, Interval: time.Hour}, device.AccessReadWrite)
	reps := r.run(t, polled, out)
	reps[1].waitValue(t, true)
	reps[0].waitValue(t, 1.0)
	s.Unit(1).SetBadCRC(true)
	release := s.Unit(1).Hold()
	n := len(s.Requests())
	if _, err := s.WaitRequests(context.Background(), n+1); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := out.Write(context.Background(), device.WriteRequest{Value: false, Safe: true})
		done <- err
	}()
	waitQueued(t, r.line, 1)
	release()
	if err := <-done; err != nil {
		t.Fatalf("write: %v", err)
	}
	log := s.Requests()[n:]
	if len(log) < 2 || log[0].Unit != 1 || log[1].Unit != 2 || log[1].Function != 5 {
		t.Errorf("requests after the held poll: %+v, want the write next", log)
	}
}

// A link that fails puts every device offline, and the line opens it
// again; writes meanwhile fail as offline.
func TestUnplugAndReopen(t *testing.T) {
	s := modbustest.NewSlave()
	defer s.Close()
	s.Unit(1).SetBits(modbus.Coils, 0, true)
	r := newRTURig(t, s, Config{})
	d := r.device("run", Point{Unit: 1, Table: modbus.Coils, Type: modbus.Bool}, device.AccessReadWrite)
	reps := r.run(t, d)
	reps[0].waitValue(t, true)
	reps[0].waitState(t, "ok")
	r.mu.Lock()
	p := r.port
	r.mu.Unlock()
	p.Unplug()
	if st := reps[0].waitState(t, "offline"); !strings.Contains(st, "unplugged") {
		t.Errorf("offline state %q does not say why", st)
	}
	reps[0].waitState(t, "ok")
	r.mu.Lock()
	opens := r.opens
	r.mu.Unlock()
	if opens < 2 {
		t.Errorf("opened %d times", opens)
	}
	s.Unit(1).SetBits(modbus.Coils, 0, false)
	reps[0].waitValue(t, false)
}

// A port that cannot be opened leaves the devices offline with the
// reason, and writes fail at once as offline, until it opens.
func TestOfflineUntilOpened(t *testing.T) {
	s := modbustest.NewSlave()
	defer s.Close()
	s.Unit(1).SetBits(modbus.Coils, 0, true)
	r := &rig{slave: s, refuse: &fs.PathError{Op: "open", Path: "/dev/ttyUSB9", Err: fs.ErrNotExist}}
	r = r.rtu(t, Config{})
	d := r.device("run", Point{Unit: 1, Table: modbus.Coils, Type: modbus.Bool}, device.AccessReadWrite)
	reps := r.run(t, d)
	st := reps[0].waitState(t, "offline: open /dev/ttyUSB9")
	_, err := d.Write(context.Background(), device.WriteRequest{Value: false})
	if !errors.Is(err, device.ErrOffline) || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("write while offline (%s): %v", st, err)
	}
	r.mu.Lock()
	r.refuse = nil
	r.mu.Unlock()
	reps[0].waitValue(t, true)
	reps[0].waitState(t, "ok")
}

// A unit that did not answer in time is left alone for the quiet time:
// its blocks and jobs wait, the other units' do not, and the line sleeps
// until the quiet time ends.
func TestQuietTime(t *testing.T) {
	now := time.Unix(1000, 0)
	l := New(Config{Quiet: 300 * time.Millisecond}, nil, nil)
	hr := modbus.HoldingRegisters
	a := l.Device(device.Descriptor{ID: "a"}, Point{Unit: 1, Table: hr, Type: modbus.Uint16, Interval: time.Second})
	l.Device(device.Descriptor{ID: "b"}, Point{Unit: 2, Table: hr, Type: modbus.Uint16, Interval: time.Second})
	l.blocks = plan(l.devs, now)
	l.noteUnit(1, fmt.Errorf("read: %w", modbus.ErrTimeout), now)
	l.jobs = []*job{{ctx: context.Background(), dev: a, write: true, safe: true, done: make(chan result, 1)}}
	j, blk, _ := l.next(now)
	if j != nil || blk == nil || blk.unit != 2 {
		t.Fatalf("next = job %v, block %+v; want unit 2's block", j, blk)
	}
	blk.next = now.Add(time.Second)
	j, blk, wait := l.next(now)
	if j != nil || blk != nil || wait != 300*time.Millisecond {
		t.Fatalf("next = job %v, block %v, wait %v; want to wait the quiet time", j, blk, wait)
	}
	j, blk, _ = l.next(now.Add(300 * time.Millisecond))
	if j == nil || j.dev != a || blk != nil {
		t.Fatalf("after the quiet time: job %v, block %v; want unit 1's write", j, blk)
	}
	j, blk, _ = l.next(now.Add(300 * time.Millisecond))
	if j != nil || blk == nil || blk.unit != 1 {
		t.Fatalf("then: job %v, block %+v; want unit 1's block", j, blk)
	}
}
