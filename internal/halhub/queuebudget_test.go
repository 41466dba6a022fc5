package halhub

import (
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/clock/clocktest"
	"github.com/openhal/gateway/openhal"
)

// fakeTransport is a connection the test drives: read returns what the
// test sends; write blocks, as to a client that does not read, until the
// test lets writes through or the connection closes.
type fakeTransport struct {
	in        chan []byte
	open      chan struct{} // closed: writes go through
	openOnce  sync.Once
	closed    chan struct{}
	closeOnce sync.Once
}

func newFakeTransport() *fakeTransport {
	return &fakeTransport{in: make(chan []byte, 1024), open: make(chan struct{}), closed: make(chan struct{})}
}

func (f *fakeTransport) read(ctx context.Context) ([]byte, error) {
	select {
	case m := <-f.in:
		return m, nil
	case <-f.closed:
		return nil, io.EOF
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (f *fakeTransport) write(context.Context, [][]byte) error {
	select {
	case <-f.open:
		return nil
	case <-f.closed:
		return net.ErrClosed
	}
}

func (f *fakeTransport) close() error    { f.closeOnce.Do(func() { close(f.closed) }); return nil }
func (f *fakeTransport) shutdown() error { return f.close() }
func (f *fakeTransport) remote() string  { return "fake" }
func (f *fakeTransport) letWritesThrough() {
	f.openOnce.Do(func() { close(f.open) })
}

// serveFake serves a connection over a fakeTransport, as a listener would
// one it accepted, and initializes it with tok (hal/initialize, then
// hal/initialized), so that notifications flow to it.
func (th *testHub) serveFake(t *testing.T, tok string) (*session, *fakeTransport) {
	t.Helper()
	tr := newFakeTransport()
	s := newSession(th.hub, tr, "")
	th.hub.register(s)
	go s.serve()
	t.Cleanup(func() { tr.close() })
	tr.in <- []byte(request(1, "hal/initialize", map[string]any{"protocolVersion": "0.1", "clientInfo": map[string]string{"name": "fake", "version": "1"}, "token": tok}))
	tr.in <- []byte(`{"jsonrpc":"2.0","method":"hal/initialized"}`)
	waitFor(t, 5*time.Second, "the fake connection to be ready", func() bool { return s.phaseIs(phaseReady) })
	return s, tr
}

// waitClosed waits until the Hub has closed s.
func waitSessionClosed(t *testing.T, s *session, what string) {
	t.Helper()
	waitChan(t, s.done, what)
}

func sessionClosed(s *session) bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// Spec §8: an answer counts in its connection's queue until it is
// written. A client that asks for pages and never reads is closed once
// the next page does not fit (counted as an overflow), while a client
// that reads gets every page.
func TestAnswerThatDoesNotFitCloses(t *testing.T) {
	const maxMessage = 16 << 10
	b := newBench(t, func(o *Options) { o.Limits.MaxMessageBytes = maxMessage; o.Limits.QueueBytes = 2 * maxMessage })
	valves := b.valves(t, openhal.MaxPendingPerPrincipal)
	for i := range 3 {
		agent := b.as(t, fmt.Sprint("agent-", i), openhal.ScopeControlLow)
		for _, id := range valves {
			pending(t, highRiskRequest(agent, id, strings.Repeat("r", openhal.MaxReasonBytes)))
		}
	}
	reader := b.token(t, "reader", openhal.ScopeRead)
	s, tr := b.serveFake(t, reader)
	for id := 2; id < 6; id++ {
		tr.in <- []byte(request(id, "hal/confirmations/list", nil))
	}
	waitSessionClosed(t, s, "the connection that does not read to be closed")
	if n := b.hub.stats.overflows.Load(); n != 1 {
		t.Errorf("overflows = %d, want 1", n)
	}
	if held, _ := s.q.held(); held != 0 {
		t.Errorf("the closed connection's queue still counts %d bytes", held)
	}
	// The agents' connections may still be reading the notifications of
	// their requests; once they have, nothing is counted.
	waitFor(t, 5*time.Second, "the hub's queues to count 0 bytes", func() bool { return b.hub.queues.held.Load() == 0 })
	healthy := b.as(t, "healthy", openhal.ScopeRead)
	for range 4 {
		resultOf[openhal.ConfirmationsListResult](t, healthy.call("hal/confirmations/list", nil))
	}
}

// Spec §8, docs/protocol.md: past hub.limits.totalQueueBytes the Hub
// closes a connection that holds the most among those whose client has
// left a batch unread for stalledAfter — not one caught receiving a large
// answer, though it holds more — and only as many as it takes to be
// within the budget again. With none stalled, the largest goes.
func TestQueueBudgetClosesTheStalledLargest(t *testing.T) {
	clk := clocktest.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	th := newTestHub(t, func(o *Options) { o.Clock = clk; o.Limits.TotalQueueBytes = 200 << 10 })
	tok := th.token(t, "watcher", openhal.ScopeRead)
	// Each client never finishes reading the batch it was given (its
	// initialize answer, taken when it connected), then falls further
	// behind: notifications of 30 KiB, which are never dropped.
	note := []byte(`{"jsonrpc":"2.0","method":"x","params":"` + strings.Repeat("n", 30<<10) + `"}`)
	fill := func(s *session, kib int) {
		t.Helper()
		waitFor(t, 5*time.Second, "a batch taken", func() bool { _, at := s.q.held(); return !at.IsZero() })
		for range kib / 30 {
			s.notify(note)
		}
	}
	within := func() {
		t.Helper()
		waitFor(t, 5*time.Second, "the queues to be within the budget, as the open connections count them", func() bool {
			sum := 0
			for _, s := range th.sessions() {
				held, _ := s.q.held()
				sum += held
			}
			got := th.hub.queues.held.Load()
			return got == int64(sum) && got <= 200<<10
		})
	}
	stalled, _ := th.serveFake(t, tok)
	fill(stalled, 90)
	clk.Advance(stalledAfter)
	busy, busyTr := th.serveFake(t, tok)
	fill(busy, 60)
	other, _ := th.serveFake(t, tok)
	fill(other, 30)
	fill(busy, 60) // 240 KiB in all: past the budget
	waitSessionClosed(t, stalled, "the stalled connection to be closed")
	if sessionClosed(busy) || sessionClosed(other) {
		t.Fatal("a connection that is not stalled was closed while a stalled one held enough")
	}
	within()
	busyTr.letWritesThrough()
	waitFor(t, 5*time.Second, "busy's queue to be written", func() bool { held, _ := busy.q.held(); return held == 0 })

	// None stalled: the largest goes.
	fill(other, 180)
	waitSessionClosed(t, other, "the largest connection to be closed")
	within()
	if sessionClosed(busy) {
		t.Error("the connection that reads was closed")
	}
	if n := th.hub.stats.overflows.Load(); n != 2 {
		t.Errorf("overflows = %d, want 2", n)
	}
}

// Spec §2, docs/protocol.md: the messages of a connection's requests in
// flight hold at most MaxMessageBytes together; a request past that is
// BUSY too_many_in_flight while the others wait, and one request alone is
// always taken, whatever its size (up to the message limit). The BUSY
// write is in the audit log like any refused write (spec §10: every write
// attempt and its outcome).
func TestInFlightBytesBounded(t *testing.T) {
	const maxMessage = 64 << 10
	log, withLog := withAudit(t)
	th := newTestHub(t, withLog, func(o *Options) { o.Limits.MaxMessageBytes = maxMessage })
	hold := make(chan struct{})
	slow := numberDevice("bench.slow")
	slow.writeFn = func(ctx context.Context, _ device.WriteRequest) (device.WriteResult, error) {
		select {
		case <-hold:
		case <-ctx.Done():
		}
		return device.WriteResult{}, nil
	}
	th.addDevice(t, slow)
	c := th.dialTCP(t)
	c.init(th.admin)
	write := func(id, size int) string {
		head := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"hal/write",`, id)
		tail := `"params":{"device":"bench.slow","value":1}}`
		return head + strings.Repeat(" ", size-len(head)-len(tail)) + tail
	}
	c.sendRaw(write(1, 40<<10)) // held at the device
	waitFor(t, 5*time.Second, "the first write at the device", func() bool {
		for _, s := range th.sessions() {
			if s.inBytes.Load() >= 40<<10 {
				return true
			}
		}
		return false
	})
	c.sendRaw(write(2, 30<<10)) // 70 KiB in flight: refused
	c.sendRaw(write(3, 20<<10)) // 60 KiB: waits behind the first
	got := c.answers([]int{2})
	wantCode(t, got[2], openhal.CodeBusy, "too_many_in_flight")
	if busy := refusals(t, log, "too_many_in_flight"); len(busy) != 1 || busy[0].Outcome != "refused" {
		t.Errorf("the BUSY write in the audit log: %+v, want one refused entry", busy)
	}
	close(hold)
	for id, m := range c.answers([]int{1, 3}) {
		if m.Error != nil {
			t.Errorf("write %d: %s", id, m.raw)
		}
	}
	c.sendRaw(write(4, maxMessage)) // alone: taken
	wantOK(t, c.answers([]int{4})[4])
}
