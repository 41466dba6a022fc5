package serialline

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/clock/clocktest"
)

var epoch = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

type stateReport struct {
	s     device.State
	fault string
}

// recorder is a device.Reporter that hands every report to the test.
type recorder struct {
	values chan device.Reading
	states chan stateReport
}

func newRecorder() *recorder {
	return &recorder{values: make(chan device.Reading, 1024), states: make(chan stateReport, 64)}
}

func (r *recorder) Value(v any, ts time.Time)          { r.values <- device.Reading{Value: v, TS: ts} }
func (r *recorder) State(s device.State, fault string) { r.states <- stateReport{s, fault} }

func (r *recorder) next(t *testing.T) device.Reading {
	t.Helper()
	select {
	case v := <-r.values:
		return v
	case <-time.After(10 * time.Second):
		t.Fatal("no value reported")
		return device.Reading{}
	}
}

var meterDesc = device.Descriptor{
	ID: "bench.meter", Kind: device.KindSerial, Source: "board",
	Access: device.AccessReadWrite, Risk: device.RiskLow,
	Schema: device.Schema{Type: device.TypeString}, State: device.StateOK,
}

// rig is a line device on one end of a pipe, running, with the other end
// (the instrument) in the test's hands.
type rig struct {
	dev    *LineDevice
	rec    *recorder
	inst   net.Conn
	lines  *bufio.Reader // what the device sent
	clk    *clocktest.Fake
	cancel context.CancelFunc
	done   chan struct{}
}

func newRig(t *testing.T, delim byte) *rig {
	t.Helper()
	devEnd, inst := net.Pipe()
	clk := clocktest.NewFake(epoch)
	ctx, cancel := context.WithCancel(context.Background())
	r := &rig{
		dev: NewLineDevice(meterDesc, devEnd, delim, clk), rec: newRecorder(),
		inst: inst, lines: bufio.NewReader(inst), clk: clk, cancel: cancel, done: make(chan struct{}),
	}
	go func() {
		r.dev.Run(ctx, r.rec)
		close(r.done)
	}()
	t.Cleanup(func() {
		cancel()
		inst.Close()
		<-r.done
	})
	return r
}

func (r *rig) send(t *testing.T, s string) {
	t.Helper()
	if _, err := r.inst.Write([]byte(s)); err != nil {
		t.Fatalf("instrument write: %v", err)
	}
}

func (r *rig) waitDone(t *testing.T) {
	t.Helper()
	select {
	case <-r.done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return")
	}
}

func TestLinesBecomeValues(t *testing.T) {
	long := strings.Repeat("a", 5000)
	exact := strings.Repeat("b", MaxLine)
	tests := []struct {
		name  string
		delim byte
		in    string
		want  []string
	}{
		{"newline", 0, "one\ntwo\n", []string{"one", "two"}},
		{"crlf", '\n', "one\r\ntwo\r\n", []string{"one", "two"}},
		{"empty line", 0, "\nx\n", []string{"", "x"}},
		{"own delimiter", ';', "a;b\r;c\nd;", []string{"a", "b", "c\nd"}},
		{"long line is dropped", 0, long + "\nafter\n", []string{"after"}},
		{"line of MaxLine is whole", 0, exact + "\r\nafter\n", []string{exact, "after"}},
		{"invalid utf-8 replaced", 0, "t=\xff\n", []string{"t=\uFFFD"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t, tt.delim)
			go r.inst.Write([]byte(tt.in))
			for i, want := range tt.want {
				got := r.rec.next(t)
				if got.Value != want {
					t.Errorf("line %d = %.40q (len %d), want %.40q (len %d)", i, got.Value, len(got.Value.(string)), want, len(want))
				}
				if !got.TS.Equal(epoch) {
					t.Errorf("line %d ts = %v, want the clock's %v", i, got.TS, epoch)
				}
			}
		})
	}
}

func TestValueStampedWithClock(t *testing.T) {
	r := newRig(t, 0)
	r.clk.Advance(90 * time.Second)
	r.send(t, "x\n")
	if got := r.rec.next(t); !got.TS.Equal(epoch.Add(90 * time.Second)) {
		t.Errorf("ts = %v, want %v", got.TS, epoch.Add(90*time.Second))
	}
}

func TestWriteWithoutReply(t *testing.T) {
	for _, delim := range []byte{0, '\r'} {
		r := newRig(t, delim)
		want := "OUTP ON\n"
		if delim != 0 {
			want = "OUTP ON\r"
		}
		res := make(chan device.WriteResult, 1)
		go func() {
			wr, err := r.dev.Write(context.Background(), device.WriteRequest{Value: "OUTP ON"})
			if err != nil {
				t.Errorf("Write: %v", err)
			}
			res <- wr
		}()
		got, err := r.lines.ReadString(want[len(want)-1])
		if err != nil || got != want {
			t.Fatalf("instrument read %q, %v; want %q", got, err, want)
		}
		if wr := <-res; !wr.Keep || wr.Reply != nil {
			t.Errorf("result = %+v, want Keep and no reply", wr)
		}
	}
}

func TestWriteWithReply(t *testing.T) {
	r := newRig(t, 0)
	go func() {
		q, _ := r.lines.ReadString('\n')
		r.clk.Advance(time.Second)
		r.inst.Write([]byte("answer to " + strings.TrimSpace(q) + "\r\n"))
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := r.dev.Write(ctx, device.WriteRequest{Value: "*IDN?", Reply: true})
	if err != nil {
		t.Fatalf("Write: %v", err)
	}
	want := device.Reading{Value: "answer to *IDN?", TS: epoch.Add(time.Second)}
	if !res.Keep || res.Reply == nil || *res.Reply != want {
		t.Fatalf("result = %+v (reply %+v), want Keep and reply %+v", res, res.Reply, want)
	}
	if got := r.rec.next(t); got != want {
		t.Errorf("published %+v, want the reply %+v", got, want)
	}
}

func TestReplyTimeout(t *testing.T) {
	r := newRig(t, 0)
	go r.lines.ReadString('\n') // the instrument hears but never answers
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err := r.dev.Write(ctx, device.WriteRequest{Value: "MEAS?", Reply: true})
	if err != context.DeadlineExceeded {
		t.Fatalf("Write = %v, want context.DeadlineExceeded", err)
	}
}

// TestWriteReplyWithin: a write that waits a while for an answer gets it
// when the instrument answers, and goes through without one when it stays
// silent for that long (on the device's clock): no error either way.
func TestWriteReplyWithin(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r := newRig(t, 0)
	go func() {
		q, _ := r.lines.ReadString('\n')
		r.inst.Write([]byte("ERR unknown command " + strings.TrimSpace(q) + "\n"))
	}()
	res, err := r.dev.Write(ctx, device.WriteRequest{Value: "HELLO", ReplyWithin: 300 * time.Millisecond})
	if err != nil || !res.Keep || res.Reply == nil || res.Reply.Value != "ERR unknown command HELLO" {
		t.Fatalf("answered write: %+v (reply %+v), %v", res, res.Reply, err)
	}
	r.rec.next(t) // the answer, published

	silent := make(chan struct{})
	go func() {
		r.lines.ReadString('\n') // heard, never answered
		close(silent)
	}()
	done := make(chan device.WriteResult, 1)
	go func() {
		res, err := r.dev.Write(ctx, device.WriteRequest{Value: "OUTP ON", ReplyWithin: 300 * time.Millisecond})
		if err != nil {
			t.Errorf("silent instrument: %v", err)
		}
		done <- res
	}()
	<-silent
	if err := r.clk.WaitPending(ctx, 1); err != nil {
		t.Fatal(err)
	}
	r.clk.Advance(299 * time.Millisecond)
	select {
	case res := <-done:
		t.Fatalf("returned %+v before the wait was over", res)
	default:
	}
	r.clk.Advance(time.Millisecond)
	if res := <-done; !res.Keep || res.Reply != nil {
		t.Errorf("silent instrument: %+v, want Keep and no reply", res)
	}
}

// TestSendTimeout: an instrument that does not read blocks the port write;
// the write still returns at its deadline.
func TestSendTimeout(t *testing.T) {
	r := newRig(t, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err := r.dev.Write(ctx, device.WriteRequest{Value: "MEAS?"})
	if err != context.DeadlineExceeded {
		t.Fatalf("Write = %v, want context.DeadlineExceeded", err)
	}
}

func TestWriteRejectsBadValues(t *testing.T) {
	r := newRig(t, 0)
	tests := []struct {
		name string
		v    any
		want string
	}{
		{"not a string", 1.5, "want a string, got float64"},
		{"two lines", "A\nB", ErrDelimiter.Error()},
		{"a carriage return", "A\rB", ErrDelimiter.Error()},
	}
	for _, tt := range tests {
		_, err := r.dev.Write(context.Background(), device.WriteRequest{Value: tt.v})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Write = %v, want an error with %q", tt.name, err, tt.want)
		}
	}
}

func TestPortFailureGoesOffline(t *testing.T) {
	r := newRig(t, 0)
	writeErr := make(chan error, 1)
	go func() {
		_, err := r.dev.Write(context.Background(), device.WriteRequest{Value: "MEAS?", Reply: true})
		writeErr <- err
	}()
	if _, err := r.lines.ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	r.inst.Close() // unplugged while the question is out

	select {
	case st := <-r.rec.states:
		if st.s != device.StateOffline || !strings.Contains(st.fault, "bench.meter") {
			t.Errorf("state = %+v, want offline naming the device", st)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no state reported")
	}
	r.waitDone(t)
	select {
	case err := <-writeErr:
		if !errors.Is(err, ErrOffline) {
			t.Errorf("waiting Write = %v, want ErrOffline", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("waiting Write never returned")
	}
	if _, err := r.dev.Write(context.Background(), device.WriteRequest{Value: "x"}); !errors.Is(err, ErrOffline) {
		t.Errorf("Write after failure = %v, want ErrOffline", err)
	}
}

func TestCancelStopsQuietly(t *testing.T) {
	r := newRig(t, 0)
	r.cancel()
	r.waitDone(t)
	if _, err := r.inst.Read(make([]byte, 1)); err == nil {
		t.Error("port still open after Run returned")
	}
	select {
	case st := <-r.rec.states:
		t.Errorf("reported %+v on a normal stop", st)
	default:
	}
}

// TestReplyTransactionsOneAtATime drives many reply writes at once against
// an instrument that answers the newest question first whenever several are
// waiting: if two transactions overlapped, answers would cross.
func TestReplyTransactionsOneAtATime(t *testing.T) {
	r := newRig(t, 0)
	cmds := make(chan string, 64)
	go func() {
		for {
			q, err := r.lines.ReadString('\n')
			if err != nil {
				close(cmds)
				return
			}
			cmds <- strings.TrimSuffix(q, "\n")
		}
	}()
	go func() {
		for q := range cmds {
			batch := []string{q}
		drain:
			for {
				select {
				case more, ok := <-cmds:
					if !ok {
						break drain
					}
					batch = append(batch, more)
				default:
					break drain
				}
			}
			for i := len(batch) - 1; i >= 0; i-- {
				r.inst.Write([]byte("re:" + batch[i] + "\n"))
			}
		}
	}()

	const n = 32
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			q := fmt.Sprintf("Q%d", i)
			res, err := r.dev.Write(ctx, device.WriteRequest{Value: q, Reply: true})
			if err != nil {
				t.Errorf("%s: %v", q, err)
				return
			}
			if res.Reply.Value != "re:"+q {
				t.Errorf("%s answered with %q", q, res.Reply.Value)
			}
		}()
	}
	wg.Wait()
}

// CheckValue refuses, before any write, a string that would not reach the
// instrument as one line: a line break whatever the delimiter, and the
// device's own delimiter; the reason word tells which. Values that are not
// strings are the schema's business.
func TestCheckValue(t *testing.T) {
	tests := []struct {
		name   string
		delim  byte
		v      any
		reason string // "" for accepted
		detail string
	}{
		{"one line", 0, "MEAS?", "", ""},
		{"empty", 0, "", "", ""},
		{"newline", 0, "MEAS?\nRST", "line_break", `line break ("\n" at byte 5)`},
		{"carriage return", 0, "A\rB", "line_break", `line break ("\r" at byte 1)`},
		{"trailing newline", 0, "MEAS?\n", "line_break", "bench.meter sends one line per write"},
		{"custom delimiter", ';', "A;B", "delimiter", `line delimiter (";" at byte 1)`},
		{"newline with a custom delimiter", ';', "A\nB", "line_break", "line break"},
		{"not a string", 0, 1.5, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := NewLineDevice(meterDesc, nil, tt.delim, clocktest.NewFake(epoch))
			err := d.CheckValue(tt.v)
			if tt.reason == "" {
				if err != nil {
					t.Fatalf("CheckValue(%q) = %v, want nil", tt.v, err)
				}
				return
			}
			var ve *device.ValueError
			if !errors.As(err, &ve) || ve.Reason != tt.reason || !strings.Contains(ve.Error(), tt.detail) {
				t.Fatalf("CheckValue(%q) = %#v, want a ValueError %s saying %q", tt.v, err, tt.reason, tt.detail)
			}
		})
	}
}
