package serialline

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"strings"
	"testing"
	"time"

	"go.bug.st/serial"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/clock/clocktest"
)

func TestValidate(t *testing.T) {
	good := PortConfig{Path: "/dev/serial/by-id/usb-FTDI-if00-port0", Baud: 9600, DataBits: 8, Parity: "none", StopBits: "1", Delimiter: '\n'}
	tests := []struct {
		name string
		edit func(c *PortConfig)
		want []string // substrings of the error; none: valid
	}{
		{"valid", func(c *PortConfig) {}, nil},
		{"7E2 at MaxBaud", func(c *PortConfig) { c.Baud, c.DataBits, c.Parity, c.StopBits = MaxBaud, 7, "even", "2" }, nil},
		{"5 bits mark", func(c *PortConfig) { c.DataBits, c.Parity = 5, "mark" }, nil},
		{"space, CR", func(c *PortConfig) { c.Parity, c.Delimiter = "space", '\r' }, nil},
		{"odd", func(c *PortConfig) { c.Parity = "odd" }, nil},
		{"no path", func(c *PortConfig) { c.Path = "" }, []string{"path: missing"}},
		{"relative path", func(c *PortConfig) { c.Path = "ttyUSB0" }, []string{`path "ttyUSB0": not absolute`}},
		{"zero baud", func(c *PortConfig) { c.Baud = 0 }, []string{"baud 0:"}},
		{"negative baud", func(c *PortConfig) { c.Baud = -9600 }, []string{"baud -9600:"}},
		{"baud too high", func(c *PortConfig) { c.Baud = MaxBaud + 1 }, []string{"baud 4000001:"}},
		{"4 data bits", func(c *PortConfig) { c.DataBits = 4 }, []string{"dataBits 4:"}},
		{"9 data bits", func(c *PortConfig) { c.DataBits = 9 }, []string{"dataBits 9:"}},
		{"unknown parity", func(c *PortConfig) { c.Parity = "N" }, []string{`parity "N":`}},
		{"empty parity", func(c *PortConfig) { c.Parity = "" }, []string{`parity "":`}},
		{"1.5 stop bits", func(c *PortConfig) { c.StopBits = "1.5" }, []string{`stopBits "1.5": not supported`}},
		{"unknown stop bits", func(c *PortConfig) { c.StopBits = "3" }, []string{`stopBits "3": want 1 or 2`}},
		{"NUL delimiter", func(c *PortConfig) { c.Delimiter = 0 }, []string{"delimiter: must not be NUL"}},
		{"every field at once", func(c *PortConfig) { *c = PortConfig{} },
			[]string{"path", "baud", "dataBits", "parity", "stopBits", "delimiter"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := good
			tt.edit(&c)
			err := c.Validate()
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("Validate(%+v) = %v, want nil", c, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate(%+v) = nil, want an error with %q", c, tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Validate = %q, want it to contain %q", err, w)
				}
			}
			if n := strings.Count(err.Error(), "\n") + 1; n != len(tt.want) {
				t.Errorf("Validate gave %d errors (%q), want %d", n, err, len(tt.want))
			}
		})
	}
}

func TestWithDefaults(t *testing.T) {
	got := PortConfig{Path: "/dev/ttyUSB0", Baud: 115200}.WithDefaults()
	want := PortConfig{Path: "/dev/ttyUSB0", Baud: 115200, DataBits: 8, Parity: "none", StopBits: "1", Delimiter: '\n'}
	if got != want {
		t.Errorf("WithDefaults = %+v, want %+v", got, want)
	}
	set := PortConfig{Path: "/dev/ttyUSB0", Baud: 300, DataBits: 7, Parity: "even", StopBits: "2", Delimiter: '\r'}
	if got := set.WithDefaults(); got != set {
		t.Errorf("WithDefaults changed set fields: %+v, want %+v", got, set)
	}
}

func TestOpenRefuses(t *testing.T) {
	ok := PortConfig{Path: "/nonexistent/ttyUSB9", Baud: 9600}.WithDefaults()
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name string
		ctx  context.Context
		cfg  PortConfig
		is   error
		want string
	}{
		{"missing port", context.Background(), ok, fs.ErrNotExist, "open /nonexistent/ttyUSB9: "},
		{"invalid config", context.Background(), PortConfig{Path: "/dev/ttyUSB0"}, nil, "baud 0"},
		{"canceled", canceled, ok, context.Canceled, "open /nonexistent/ttyUSB9: "},
	}
	for _, tt := range tests {
		p, err := Open(tt.ctx, tt.cfg)
		if p != nil || err == nil {
			t.Errorf("%s: Open = %v, %v; want an error", tt.name, p, err)
			continue
		}
		if tt.is != nil && !errors.Is(err, tt.is) {
			t.Errorf("%s: Open = %v, want errors.Is %v", tt.name, err, tt.is)
		}
		if !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Open = %q, want it to contain %q", tt.name, err, tt.want)
		}
	}
}

// TestMode checks the framing handed to go.bug.st/serial, data bits and
// parity included, which a pseudo-terminal cannot show (its driver forces
// 8N).
func TestMode(t *testing.T) {
	tests := []struct {
		cfg  PortConfig
		want serial.Mode
	}{
		{PortConfig{Baud: 9600, DataBits: 8, Parity: "none", StopBits: "1"},
			serial.Mode{BaudRate: 9600, DataBits: 8, Parity: serial.NoParity, StopBits: serial.OneStopBit}},
		{PortConfig{Baud: 19200, DataBits: 7, Parity: "even", StopBits: "2"},
			serial.Mode{BaudRate: 19200, DataBits: 7, Parity: serial.EvenParity, StopBits: serial.TwoStopBits}},
		{PortConfig{Baud: 300, DataBits: 5, Parity: "odd", StopBits: "1"},
			serial.Mode{BaudRate: 300, DataBits: 5, Parity: serial.OddParity, StopBits: serial.OneStopBit}},
		{PortConfig{Baud: 115200, DataBits: 6, Parity: "mark", StopBits: "1"},
			serial.Mode{BaudRate: 115200, DataBits: 6, Parity: serial.MarkParity, StopBits: serial.OneStopBit}},
		{PortConfig{Baud: 57600, DataBits: 8, Parity: "space", StopBits: "2"},
			serial.Mode{BaudRate: 57600, DataBits: 8, Parity: serial.SpaceParity, StopBits: serial.TwoStopBits}},
	}
	for _, tt := range tests {
		if got := tt.cfg.mode(); *got != tt.want {
			t.Errorf("mode(%+v) = %+v, want %+v", tt.cfg, *got, tt.want)
		}
	}
}

// scripted is an opener the test answers one call at a time.
type scripted struct {
	calls   chan struct{}
	results chan openResult
}

type openResult struct {
	port io.ReadWriteCloser
	err  error
}

func newScripted() *scripted {
	return &scripted{calls: make(chan struct{}), results: make(chan openResult)}
}

func (s *scripted) open(ctx context.Context) (io.ReadWriteCloser, error) {
	select {
	case s.calls <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	select {
	case r := <-s.results:
		return r.port, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// reopenRig is a reopening device running on a fake clock and a scripted
// opener.
type reopenRig struct {
	dev    *LineDevice
	rec    *recorder
	clk    *clocktest.Fake
	op     *scripted
	cancel context.CancelFunc
	done   chan struct{}
}

func newReopenRig(t *testing.T) *reopenRig {
	t.Helper()
	clk := clocktest.NewFake(epoch)
	op := newScripted()
	ctx, cancel := context.WithCancel(context.Background())
	r := &reopenRig{
		dev: newReopening(meterDesc, "/dev/ttyTEST", op.open, 0, clk, nil),
		rec: newRecorder(), clk: clk, op: op, cancel: cancel, done: make(chan struct{}),
	}
	go func() {
		r.dev.Run(ctx, r.rec)
		close(r.done)
	}()
	t.Cleanup(func() {
		cancel()
		<-r.done
	})
	return r
}

// called waits for the device to call the opener.
func (r *reopenRig) called(t *testing.T) {
	t.Helper()
	select {
	case <-r.op.calls:
	case <-time.After(10 * time.Second):
		t.Fatal("port not opened")
	}
}

// retriesAfter checks that the device's next attempt comes exactly wait
// after the last one, and waits for it.
func (r *reopenRig) retriesAfter(t *testing.T, wait time.Duration) {
	t.Helper()
	fireRetry(t, r.clk, wait)
	r.called(t)
}

// fireRetry checks that the one pending timer, the device's retry, is due
// in exactly wait, and advances the clock to it; the caller waits for what
// the retry does. Not further: the device
// arms its next retry from its own goroutine, and a timer armed while the
// clock advances runs in the same Advance if it falls due in the span.
func fireRetry(t *testing.T, clk *clocktest.Fake, wait time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := clk.WaitPending(ctx, 1); err != nil {
		t.Fatalf("no retry scheduled: %v", err)
	}
	clk.Advance(wait - time.Millisecond)
	if n := clk.Pending(); n != 1 {
		t.Fatalf("retried before %v (pending %d)", wait, n)
	}
	clk.Advance(time.Millisecond)
}

func (r *reopenRig) plug(t *testing.T) net.Conn {
	t.Helper()
	devEnd, inst := net.Pipe()
	t.Cleanup(func() { inst.Close() })
	r.op.results <- openResult{port: devEnd}
	wantState(t, r.rec, device.StateOK, "")
	return inst
}

func wantState(t *testing.T, rec *recorder, s device.State, fault string) {
	t.Helper()
	select {
	case st := <-rec.states:
		if st.s != s || !strings.Contains(st.fault, fault) {
			t.Fatalf("state = %+v, want %s with a fault containing %q", st, s, fault)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("no state reported, want %s", s)
	}
}

func TestPortDeviceStartsOffline(t *testing.T) {
	d := NewPortDevice(meterDesc, PortConfig{Path: "/dev/ttyUSB0", Baud: 9600}.WithDefaults(), clocktest.NewFake(epoch), nil)
	if st := d.Descriptor().State; st != device.StateOffline {
		t.Errorf("state before Run = %s, want offline", st)
	}
	_, err := d.Write(context.Background(), device.WriteRequest{Value: "x"})
	if !errors.Is(err, ErrOffline) || err.Error() != "bench.meter is offline: /dev/ttyUSB0 is not open yet" {
		t.Errorf("Write before Run = %v, want ErrOffline naming device and port", err)
	}
}

// TestBackoff: failed opens are retried after 100 ms, doubling to 5 s; a
// port that fails at once keeps the long wait; one that stayed open for
// 5 s starts again at 100 ms.
func TestBackoff(t *testing.T) {
	r := newReopenRig(t)
	r.called(t) // the first attempt does not wait
	missing := fmt.Errorf("open /dev/ttyTEST: %w", fs.ErrNotExist)
	r.op.results <- openResult{err: missing}
	wantState(t, r.rec, device.StateOffline, "open /dev/ttyTEST: file does not exist")

	_, err := r.dev.Write(context.Background(), device.WriteRequest{Value: "x"})
	if want := "bench.meter is offline: open /dev/ttyTEST: file does not exist"; err == nil || err.Error() != want {
		t.Errorf("Write while offline = %v, want %q", err, want)
	}
	if !errors.Is(err, ErrOffline) || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Write while offline = %v, want it to match ErrOffline and fs.ErrNotExist", err)
	}

	for _, ms := range []time.Duration{100, 200, 400, 800, 1600, 3200, 5000, 5000} {
		r.retriesAfter(t, ms*time.Millisecond)
		r.op.results <- openResult{err: missing}
		wantState(t, r.rec, device.StateOffline, "file does not exist")
	}

	r.retriesAfter(t, maxBackoff)
	inst := r.plug(t)
	inst.Close() // fails as soon as it opened: no reset
	wantState(t, r.rec, device.StateOffline, "read /dev/ttyTEST: EOF")

	r.retriesAfter(t, maxBackoff)
	inst = r.plug(t)
	r.clk.Advance(maxBackoff) // stays open long enough
	inst.Close()
	wantState(t, r.rec, device.StateOffline, "read /dev/ttyTEST: EOF")
	r.retriesAfter(t, minBackoff)
	r.op.results <- openResult{err: missing}
	wantState(t, r.rec, device.StateOffline, "file does not exist")
}

// TestReopenedPortServes: lines and writes go through the port opened
// last, and a write to a port that failed gets ErrOffline.
func TestReopenedPortServes(t *testing.T) {
	r := newReopenRig(t)
	r.called(t)
	first := r.plug(t)
	first.Write([]byte("one\n"))
	if got := r.rec.next(t).Value; got != "one" {
		t.Fatalf("value = %v, want one", got)
	}
	first.Close()
	wantState(t, r.rec, device.StateOffline, "")
	if _, err := r.dev.Write(context.Background(), device.WriteRequest{Value: "x"}); !errors.Is(err, ErrOffline) {
		t.Errorf("Write after unplug = %v, want ErrOffline", err)
	}

	r.retriesAfter(t, minBackoff)
	second := r.plug(t)
	go func() {
		q, _ := bufio.NewReader(second).ReadString('\n')
		second.Write([]byte("re:" + q))
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := r.dev.Write(ctx, device.WriteRequest{Value: "MEAS?", Reply: true})
	if err != nil || res.Reply == nil || res.Reply.Value != "re:MEAS?" {
		t.Fatalf("Write = %+v, %v; want the reply re:MEAS?", res, err)
	}
}

func TestCancelWhileWaitingToReopen(t *testing.T) {
	r := newReopenRig(t)
	r.called(t)
	r.op.results <- openResult{err: errors.New("busy")}
	wantState(t, r.rec, device.StateOffline, "busy")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.clk.WaitPending(ctx, 1); err != nil {
		t.Fatal(err)
	}
	r.cancel()
	select {
	case <-r.done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return")
	}
	if n := r.clk.Pending(); n != 0 {
		t.Errorf("%d timers left pending after Run returned", n)
	}
	select {
	case st := <-r.rec.states:
		t.Errorf("reported %+v on a normal stop", st)
	default:
	}
}
