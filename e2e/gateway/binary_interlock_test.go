package gateway_test

// The interlock race on the real binary (spec §6, "interlock"): a heater
// write and a door opening sent at the same moment, over and over. The
// helpers are in binary_helpers_test.go.

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/openhal/gateway/halclient"
	"github.com/openhal/gateway/openhal"
)

var interlockTrials = flag.Int("interlock-trials", 1000, "trials of TestBinaryInterlockRace")

// heaterWatch follows sim.heater through one connection's notifications:
// its newest value and the hal/blocked notifications about it.
type heaterWatch struct {
	mu      sync.Mutex
	value   any
	seq     uint64
	blocked []openhal.BlockedParams
	changed chan struct{} // closed and replaced at every change
}

func watchHeater(c *halclient.Conn) *heaterWatch {
	w := &heaterWatch{changed: make(chan struct{})}
	go func() {
		for n := range c.Notifications() {
			w.note(n)
		}
	}()
	return w
}

func (w *heaterWatch) note(n halclient.Notification) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch n.Method {
	case openhal.NotifyValue:
		var v openhal.ValueResult
		if json.Unmarshal(n.Params, &v) != nil || v.Device != "sim.heater" || v.Seq < w.seq {
			return
		}
		w.value, w.seq = v.Value, v.Seq
	case openhal.NotifyBlocked:
		var b openhal.BlockedParams
		if json.Unmarshal(n.Params, &b) != nil || b.Device != "sim.heater" {
			return
		}
		w.blocked = append(w.blocked, b)
	default:
		return
	}
	close(w.changed)
	w.changed = make(chan struct{})
}

// await waits until ok holds for the watch, or fails the test at the
// deadline with what.
func (w *heaterWatch) await(t *testing.T, what string, ok func(w *heaterWatch) bool) {
	t.Helper()
	deadline := time.NewTimer(5 * time.Second)
	defer deadline.Stop()
	for {
		w.mu.Lock()
		done, changed := ok(w), w.changed
		w.mu.Unlock()
		if done {
			return
		}
		select {
		case <-changed:
		case <-deadline.C:
			w.mu.Lock()
			defer w.mu.Unlock()
			t.Fatalf("%s: not within 5 s (heater %v at seq %d, hal/blocked %+v)", what, w.value, w.seq, w.blocked)
		}
	}
}

// takeBlocked waits for the next hal/blocked about the heater.
func (w *heaterWatch) takeBlocked(t *testing.T, what string) openhal.BlockedParams {
	t.Helper()
	w.await(t, what, func(w *heaterWatch) bool { return len(w.blocked) > 0 })
	w.mu.Lock()
	defer w.mu.Unlock()
	b := w.blocked[0]
	w.blocked = w.blocked[1:]
	return b
}

// TestBinaryInterlockRace: door closed and heater off; an admin writes
// the heater on and opens the door at the same moment, on two
// connections. Whichever wins, once both are answered the heater is off
// or goes off (an event waited for, within 5 s), with one hal/blocked:
// the heater write refused (door first), driven back by its own write
// (the race: checked before the door opened, applied after), or driven
// back by the safety loop (heater first). Then again, -interlock-trials
// times.
func TestBinaryInterlockRace(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	g := startGateway(t, dir)
	tok := readAdminToken(t, dir)
	conn := func() *halclient.Conn {
		c, err := dial(t, g.tcp, tok)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	heaterConn, doorConn, watchConn := conn(), conn(), conn()
	watch := watchHeater(watchConn)
	ctx := context.Background()
	write := func(c *halclient.Conn, id string, v bool) (halclient.WriteResult, error) {
		return c.Write(ctx, id, v, "interlock race")
	}
	mustWrite := func(c *halclient.Conn, id string, v bool) {
		t.Helper()
		if _, err := write(c, id, v); err != nil {
			t.Fatalf("write %s %v: %v", id, v, err)
		}
	}
	var refused, raced, after int
	start := time.Now()
	for trial := range *interlockTrials {
		mustWrite(heaterConn, "sim.heater", false)
		mustWrite(doorConn, "sim.door", false)
		var heaterErr, doorErr error
		var wg sync.WaitGroup
		go1 := make(chan struct{})
		heater := func() { <-go1; _, heaterErr = write(heaterConn, "sim.heater", true) }
		door := func() { <-go1; _, doorErr = write(doorConn, "sim.door", true) }
		if trial%2 == 0 {
			wg.Go(heater)
			wg.Go(door)
		} else {
			wg.Go(door)
			wg.Go(heater)
		}
		close(go1)
		wg.Wait()
		if doorErr != nil {
			t.Fatalf("trial %d: opening the door: %v", trial, doorErr)
		}
		var he *halclient.HubError
		switch {
		case errors.As(heaterErr, &he) && he.Code() == openhal.CodeBlocked:
			refused++
			if b := watch.takeBlocked(t, "the refusal's hal/blocked"); b.Principal.Kind == openhal.KindHub {
				t.Fatalf("trial %d: refused, but hal/blocked %+v", trial, b)
			}
			continue
		case heaterErr != nil:
			t.Fatalf("trial %d: heater write: %v", trial, heaterErr)
		}
		// Applied: the door is open now, so the heater must be off or
		// go off.
		now, err := heaterConn.Read(ctx, "sim.heater", -1)
		if err != nil {
			t.Fatal(err)
		}
		if now.Value != false {
			watch.await(t, fmt.Sprintf("trial %d: the heater off with the door open", trial), func(w *heaterWatch) bool { return w.seq > now.Seq && w.value == false })
		}
		b := watch.takeBlocked(t, "the drive-back's hal/blocked")
		switch {
		case b.Rule != openhal.RuleInterlock:
			t.Fatalf("trial %d: hal/blocked %+v", trial, b)
		case b.Principal.Kind == openhal.KindHub:
			after++
		default:
			raced++
		}
	}
	took := time.Since(start)
	t.Logf("%d trials in %s (%.1f ms each): heater refused (door first) %d, applied before the door and driven back by the loop %d, raced (checked before the door opened, applied after) and driven back by its own write %d",
		*interlockTrials, took.Round(time.Millisecond), float64(took.Milliseconds())/float64(*interlockTrials), refused, after, raced)
}
