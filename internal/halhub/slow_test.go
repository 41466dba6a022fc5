package halhub

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/openhal"
)

// valueOf decodes a hal/value notification.
func valueOf(t *testing.T, m msg) openhal.ValueResult {
	t.Helper()
	if m.Method != openhal.NotifyValue {
		t.Fatalf("want hal/value, got %s", m.raw)
	}
	var v openhal.ValueResult
	if err := json.Unmarshal(m.Params, &v); err != nil {
		t.Fatalf("hal/value params: %s: %v", m.raw, err)
	}
	return v
}

// lineSensor is a sensor whose values are lines of text, such as an
// instrument's readings.
func lineSensor(id string) device.Device {
	return &testDevice{desc: device.Descriptor{ID: id, Kind: device.KindSensor, Source: "board", Access: device.AccessRead, Risk: device.RiskLow, Schema: device.Schema{Type: device.TypeString}}}
}

// scopeLine is the i-th line of a lineSensor: about 1 KiB, so that 10,000
// of them (10 MiB) are more than a stalled socket's buffers can hold
// (tcp_wmem allows the Hub's side up to 4 MiB).
func scopeLine(i int) string {
	return fmt.Sprintf("%06d,", i) + strings.Repeat("0.125,", 170)
}

// stalledSession finds the Hub's session of the principal name.
func (th *testHub) stalledSession(t *testing.T, name string) *session {
	t.Helper()
	for _, s := range th.sessions() {
		if s.principalName() == name {
			return s
		}
	}
	return nil
}

// checkStalled checks that the principal's connection is still open and
// that its queue holds values only, at most valueSlack of them, the last
// the newest: the writer is stuck on the full socket, so values wait and
// coalesce past the slack.
//
// Its writer may be blocked on a batch that already holds the newest value,
// leaving the queue empty; one more value, published now, must then wait
// in the queue, whatever the timing was.
func (th *testHub) checkStalled(t *testing.T, name string) {
	t.Helper()
	th.reg.Publish("bench.scope", scopeLine(-1), time.Time{})
	s := th.stalledSession(t, name)
	if s == nil {
		t.Fatal("the stalled client was disconnected; values must coalesce instead")
	}
	all, values := s.q.queued()
	s.q.mu.Lock()
	newest := s.q.tail != nil && strings.Contains(string(s.q.tail.msg), fmt.Sprintf(`"seq":%d,`, th.reg.Seq()))
	s.q.mu.Unlock()
	if all != values || values < 1 || values > valueSlack || !newest {
		t.Errorf("stalled client's queue holds %d messages (%d values; newest last: %v), want 1 to %d values ending with the newest", all, values, newest, valueSlack)
	}
}

// Spec §8: a client that stops reading slows neither the Hub nor the
// others. A healthy client gets each of 10,000 values of one device, with
// no seq gap and at p99 within 100 ms of its ts, while another client
// reads nothing; the stalled client's queue holds one value (the newest),
// and once it reads again it gets far fewer than 10,000 values, ending
// with the newest.
//
// The publisher is paced by the healthy client: it publishes the next
// value once the last one arrived. A free-running publisher may outrun the
// healthy client's writer too, and then the spec lets the Hub coalesce its
// values as well, so "no gap" would test the scheduler rather than the
// Hub (and this machine's timers, at a millisecond or worse, cannot pace
// a 10 kHz publisher). Paced this way the test still fails if the stalled
// client holds up the fan-out (the next value never comes, or late) or if
// its backlog makes the Hub drop values for others.
// TestHeapBoundedWithStalledClient covers a free-running publisher.
func TestStalledClientDoesNotSlowOthers(t *testing.T) {
	const n = 10_000
	th := newTestHub(t)
	th.addDevice(t, lineSensor("bench.scope"))
	stalled := th.dialRaw(t, th.token(t, "stalled", openhal.ScopeRead), 4096)
	healthy := th.dialRaw(t, th.admin, 0)

	lat := make([]time.Duration, 0, n)
	var first, last uint64
	for i := range n {
		th.reg.Publish("bench.scope", scopeLine(i), time.Time{})
		line, err := healthy.readLine(5 * time.Second)
		if err != nil {
			t.Fatalf("value %d: %v", i, err)
		}
		got := time.Now()
		var m struct {
			Method string
			Params struct {
				Value json.RawMessage
				TS    time.Time
				Seq   uint64
			}
		}
		if err := json.Unmarshal(line, &m); err != nil || m.Method != openhal.NotifyValue {
			t.Fatalf("value %d: got %q (%v), want hal/value", i, line, err)
		}
		v := m.Params
		if i == 0 {
			first = v.Seq
		} else if v.Seq != last+1 {
			t.Fatalf("value %d: seq %d after %d", i, v.Seq, last)
		}
		if want := fmt.Sprintf(`"%06d,`, i); !strings.HasPrefix(string(v.Value), want) {
			t.Fatalf("value %d: got %q", i, line)
		}
		last = v.Seq
		lat = append(lat, got.Sub(v.TS))
	}
	slices.Sort(lat)
	p99 := lat[len(lat)*99/100]
	t.Logf("receive time - ts: p50 %v, p99 %v, max %v", lat[len(lat)/2], p99, lat[len(lat)-1])
	if p99 > 100*time.Millisecond {
		t.Errorf("p99 of receive time - ts = %v, want ≤ 100 ms", p99)
	}

	th.checkStalled(t, "stalled")
	last = th.reg.Seq()

	// The stalled client reads again: it gets what its socket held, then
	// the newest value; seq only grows, with gaps where values coalesced.
	count, prev := 0, first-1
	for prev != last {
		v := valueOf(t, stalled.next())
		if v.Seq <= prev {
			t.Fatalf("stalled client: seq %d after %d", v.Seq, prev)
		}
		prev = v.Seq
		count++
	}
	t.Logf("the stalled client got %d of %d values", count, n)
	if count >= n {
		t.Errorf("the stalled client got all %d values: nothing coalesced, so nothing was stalled", count)
	}
}

// Spec §8: with a client stalled, the Hub's memory does not grow with the
// number of values (they coalesce): the heap after 100,000 values of one
// device is within 4 MiB of the heap after 10,000. The publisher runs
// free, so this also shows that Publish never waits for a client.
func TestHeapBoundedWithStalledClient(t *testing.T) {
	th := newTestHub(t)
	th.addDevice(t, lineSensor("bench.scope"))
	th.dialRaw(t, th.token(t, "stalled", openhal.ScopeRead), 4096)
	publish := func(from, to int) {
		for i := from; i < to; i++ {
			th.reg.Publish("bench.scope", scopeLine(i), time.Time{})
		}
	}
	heap := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	publish(0, 10_000)
	h1 := heap()
	publish(10_000, 100_000)
	h2 := heap()
	t.Logf("heap after 10,000 values: %d KiB; after 100,000: %d KiB", h1>>10, h2>>10)
	if h2 > h1 && h2-h1 > 4<<20 {
		t.Errorf("heap grew by %d KiB between 10,000 and 100,000 values, want < 4 MiB", (h2-h1)>>10)
	}
	th.checkStalled(t, "stalled")
}

// Spec §8: a notification other than a value is never dropped. A stalled
// client whose queue would have to hold more than QueueLength of them is
// disconnected, after receiving, in order, every one it was sent; a
// healthy client gets every one of them, and stays connected.
func TestStalledClientClosedOnQueueOverflow(t *testing.T) {
	const queue = 16
	th := newTestHub(t, func(o *Options) { o.Limits.QueueLength = queue })
	th.addDevice(t, sensor("bench.flaky"))
	stalled := th.dialRaw(t, th.token(t, "stalled", openhal.ScopeRead), 4096)
	healthy := th.dialTCP(t)
	healthy.init(th.admin)

	// Toggle the device's state, in batches of half the queue that the
	// healthy client reads before the next batch: it keeps up, and the
	// stalled client falls behind until its queue overflows.
	states := []device.State{device.StateFault, device.StateOK}
	toggles := 0
	for th.stalledSession(t, "stalled") != nil {
		if toggles > 200_000 {
			t.Fatalf("the stalled client is still connected after %d state changes", toggles)
		}
		for range queue / 2 {
			th.reg.SetState("bench.flaky", states[toggles%2], "flaky")
			toggles++
		}
		for i := toggles - queue/2; i < toggles; i++ {
			m := healthy.notification(openhal.NotifyDeviceState)
			var p openhal.DeviceStateParams
			if err := json.Unmarshal(m.Params, &p); err != nil || p.State != states[i%2] {
				t.Fatalf("healthy client: change %d is %s, want state %s", i, m.raw, states[i%2])
			}
		}
	}
	t.Logf("the stalled client was disconnected after %d state changes", toggles)
	if got := th.hub.stats.overflows.Load(); got != 1 {
		t.Errorf("overflows = %d, want 1", got)
	}
	if m := healthy.call("hal/ping", nil); m.Error != nil {
		t.Fatalf("healthy client: %s", m.raw)
	}
	th.waitConnections(t, 1)

	// What the stalled client gets is every change from the first, in
	// order, then the end of the connection: none was skipped.
	got := 0
	for {
		m, err := stalled.read(5 * time.Second)
		if errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("stalled client: the hub did not close the connection (%d changes read)", got)
		}
		if err != nil {
			break // the end (a last line may be cut short)
		}
		var p openhal.DeviceStateParams
		if err := json.Unmarshal(m.Params, &p); err != nil || m.Method != openhal.NotifyDeviceState || p.State != states[got%2] {
			t.Fatalf("stalled client: message %d is %s, want state %s", got, m.raw, states[got%2])
		}
		got++
	}
	if got == 0 || got >= toggles {
		t.Errorf("stalled client read %d of %d changes before the end, want some but not all", got, toggles)
	}
}
