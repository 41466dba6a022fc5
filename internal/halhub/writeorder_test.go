package halhub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/openhal"
)

// shuffleWrites makes the device yield inside each write, so that writes
// racing each other would overtake.
func shuffleWrites(d writerDevice) {
	d.writeFn = func(context.Context, device.WriteRequest) (device.WriteResult, error) {
		runtime.Gosched()
		return device.WriteResult{}, nil
	}
}

// checkApplied checks that every answer of ids is "applied".
func checkApplied(t *testing.T, got map[int]msg) {
	t.Helper()
	for id, m := range got {
		var res openhal.WriteResult
		if m.Error != nil || json.Unmarshal(m.Result, &res) != nil || res.Status != openhal.StatusApplied {
			t.Fatalf("write %d: %s", id, m.raw)
		}
	}
}

// Spec §1: writes to one device are applied in the order the Hub received
// them, although their answers may come in any order.
func TestWritesAppliedInOrderReceived(t *testing.T) {
	const n = 200
	th := newTestHub(t, func(o *Options) { o.Limits.MaxInFlight = 2 * n })
	d := numberDevice("bench.dac")
	shuffleWrites(d)
	th.addDevice(t, d)
	c := th.dialTCP(t)
	c.init(th.admin)

	ids := make([]int, n)
	for i := range n {
		ids[i] = 1000 + i
		c.sendRaw(request(ids[i], "hal/write", map[string]any{"device": "bench.dac", "value": i}))
	}
	checkApplied(t, c.answers(ids))
	got := d.written()
	if len(got) != n {
		t.Fatalf("%d writes applied, want %d", len(got), n)
	}
	for i, v := range got {
		if v != float64(i) {
			t.Fatalf("write %d applied %v: order %v", i, v, got)
		}
	}
}

// Spec §1: the order holds across connections: writes from several
// clients at once are each applied in their client's order.
func TestWritesOrderedAcrossConnections(t *testing.T) {
	const clients, n = 4, 50
	th := newTestHub(t, func(o *Options) { o.Limits.MaxInFlight = 2 * n })
	d := numberDevice("bench.dac")
	shuffleWrites(d)
	th.addDevice(t, d)
	cs := make([]*client, clients)
	for k := range cs {
		if k%2 == 0 {
			cs[k] = th.dialTCP(t)
		} else {
			cs[k] = th.dialWS(t, "")
		}
		cs[k].init(th.admin)
	}
	ids := make([]int, n)
	for i := range n {
		ids[i] = 1000 + i
		for k, c := range cs {
			c.sendRaw(request(ids[i], "hal/write", map[string]any{"device": "bench.dac", "value": k*1000 + i}))
		}
	}
	for _, c := range cs {
		checkApplied(t, c.answers(ids))
	}
	got := d.written()
	if len(got) != clients*n {
		t.Fatalf("%d writes applied, want %d", len(got), clients*n)
	}
	next := make([]int, clients)
	for _, v := range got {
		k, i := int(v.(float64))/1000, int(v.(float64))%1000
		if i != next[k] {
			t.Fatalf("client %d's write %d applied when %d was next: %v", k, i, next[k], got)
		}
		next[k]++
	}
}

// A write that times out waiting for its turn leaves the line: the writes
// after it run as soon as the device is free.
func TestTimedOutWriteLeavesLine(t *testing.T) {
	th := newTestHub(t)
	d := numberDevice("bench.dac")
	entered, release := make(chan struct{}), make(chan struct{})
	d.writeFn = func(ctx context.Context, req device.WriteRequest) (device.WriteResult, error) {
		if req.Value == float64(1) {
			close(entered)
			<-release
		}
		return device.WriteResult{}, nil
	}
	th.addDevice(t, d)
	c := th.dialTCP(t)
	c.init(th.admin)

	write := func(id, v, timeoutMs int) {
		c.sendRaw(request(id, "hal/write", map[string]any{"device": "bench.dac", "value": v, "timeoutMs": timeoutMs}))
	}
	write(1, 1, 20_000) // holds the device
	waitChan(t, entered, "write 1 to reach the device")
	write(2, 2, 20) // gives up waiting
	m := c.answers([]int{2})[2]
	if m.Error == nil || m.Error.Code != openhal.CodeTimeout || m.reason() != "device_busy" {
		t.Fatalf("write waiting behind a held device: %s, want TIMEOUT device_busy", m.raw)
	}
	write(3, 3, 20_000)
	close(release)
	checkApplied(t, c.answers([]int{1, 3}))
	if got := fmt.Sprint(d.written()); got != "[1 3]" {
		t.Errorf("applied %s, want [1 3]", got)
	}
	waitFor(t, 5*time.Second, "the device's line to empty", func() bool {
		th.hub.order.mu.Lock()
		defer th.hub.order.mu.Unlock()
		return len(th.hub.order.lines) == 0
	})
}

// writeOrder itself: a turn gives the device to the next one in line; one
// that gives up waiting leaves without taking or blocking it, whether it
// gives up behind the head or just as its turn comes.
func TestWriteOrderTurns(t *testing.T) {
	o := newWriteOrder()
	held := func(u *turn) bool {
		select {
		case <-u.ready:
			return true
		default:
			return false
		}
	}
	t1, t2, t3 := o.enter("a"), o.enter("a"), o.enter("a")
	other := o.enter("b")
	if !held(t1) || held(t2) || held(t3) || !held(other) {
		t.Fatal("only the first turn of each device should hold it")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if err := t2.wait(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("t2 waiting behind t1: %v, want a deadline", err)
	}
	if held(t3) {
		t.Fatal("t2 gave up and handed the device to t3 while t1 holds it")
	}
	t1.leave()
	ctx3, cancel3 := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel3()
	if err := t3.wait(ctx3); err != nil {
		t.Fatalf("t3 after t1 left (t2 gave up): %v", err)
	}
	t3.leave()
	other.leave()
	if len(o.lines) != 0 {
		t.Fatalf("lines left: %v", o.lines)
	}

	// The head's context ends as its turn comes: whichever way wait goes,
	// the next turn gets the device.
	done, cancelled := context.WithCancel(context.Background())
	cancelled()
	for range 100 {
		u, v := o.enter("a"), o.enter("a")
		if err := u.wait(done); err == nil {
			u.leave()
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if err := v.wait(ctx); err != nil {
			cancel()
			t.Fatalf("next turn after the head gave up: %v", err)
		}
		cancel()
		v.leave()
	}
	if len(o.lines) != 0 {
		t.Fatalf("lines left: %v", o.lines)
	}
}
