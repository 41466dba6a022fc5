package supervisor

import (
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/supervisor/restart"
)

// A tool is not running until a request for one of its devices; concurrent
// first requests start one process; it is kept warm after its last answer,
// then stopped with the stop sequence; it is never pinged.
func TestToolOnDemand(t *testing.T) {
	b := newBench(t, spec{name: "tool", kind: "tool", args: []string{"--values", `{"temp":3}`}, devices: tempDevice})
	b.start()
	if st := b.adapter("tool").status(); st.State != restart.Stopped || st.Pid != 0 {
		t.Fatalf("a tool at rest: %+v", st)
	}
	if d, _ := b.reg.Describe("tool.temp"); d.State != device.StateOK {
		t.Fatalf("tool.temp at rest is %s: a tool's devices are ready to start it", d.State)
	}
	c := b.client()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, err := c.Read(ctxWait(t), "tool.temp", 0)
			if err == nil && v.Value != 3.0 {
				t.Errorf("value %v", v.Value)
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	st := b.adapter("tool").status()
	a := b.adapter("tool")
	a.mu.Lock()
	gen := a.gen
	a.mu.Unlock()
	if gen != 1 {
		t.Fatalf("%d processes started for concurrent first requests, want 1: %+v", gen, st)
	}
	b.waitState("tool", restart.Stopped) // warm time over
	received := b.waitFile("tool", "received.jsonl", `"method":"shutdown"`)
	if strings.Contains(received, `"method":"ping"`) {
		t.Fatal("a tool was pinged")
	}
	// The next request starts a fresh process.
	if _, err := c.Read(ctxWait(t), "tool.temp", 0); err != nil {
		t.Fatal(err)
	}
	a.mu.Lock()
	gen = a.gen
	a.mu.Unlock()
	if gen != 2 {
		t.Fatalf("runs %d, want 2", gen)
	}
}

// A request that arrives while the tool is stopping waits for the stop,
// then gets a fresh process.
func TestToolRequestDuringStop(t *testing.T) {
	b := newBench(t, spec{name: "tool", kind: "tool", args: []string{"--values", `{"temp":3}`, "--no-shutdown-reply"}, devices: tempDevice})
	b.timing.Stop.CloseStdin = 400 * time.Millisecond
	b.sup.opt.Timing = b.timing
	b.start()
	c := b.client()
	if _, err := c.Read(ctxWait(t), "tool.temp", 0); err != nil {
		t.Fatal(err)
	}
	first := b.startRecord("tool").Pid
	b.waitState("tool", restart.Stopping)
	if _, err := c.Read(ctxWait(t), "tool.temp", 0); err != nil {
		t.Fatal(err)
	}
	second := b.startRecord("tool").Pid
	if first == second || alive(first) {
		t.Fatalf("first run %d (alive %v), second %d: want a fresh process after the stop", first, alive(first), second)
	}
}

// A tool that crashes fails its requests in flight and is started again
// by the next request, under the same count.
func TestToolCrash(t *testing.T) {
	b := newBench(t, spec{name: "tool", kind: "tool", args: []string{"--exit-at-start", "2"}, devices: tempDevice})
	atChanges := b.deviceAtChanges("tool.temp")
	b.start()
	c := b.client()
	for i := 1; i <= 8; i++ {
		if _, err := c.Read(ctxWait(t), "tool.temp", 0); err == nil {
			t.Fatal("read of a tool that cannot start succeeded")
		}
		st := b.adapter("tool").status()
		if i < 8 && (st.State != restart.Stopped || st.Consecutive != i) {
			t.Fatalf("after crash %d: %+v", i, st)
		}
	}
	st := b.waitState("tool", restart.Failed)
	if st.Reason != restart.Crashloop {
		t.Fatalf("status %+v", st)
	}
	// Offline already when the state became failed, not just by now: the
	// last change recorded is the one to failed, which stays.
	if seen := atChanges(); len(seen) == 0 || seen[len(seen)-1] != device.StateOffline {
		t.Fatalf("device states at each change of the adapter's state: %v; the last, at failed, must be offline", seen)
	}
	if d, _ := b.reg.Describe("tool.temp"); d.State != device.StateOffline {
		t.Fatalf("a failed tool's device is %s", d.State)
	}
}

// A tool's clean stop when idle ends its series of crashes (section 7).
func TestToolIdleStopResetsCount(t *testing.T) {
	b := newBench(t, spec{name: "tool", kind: "tool", args: []string{"--values", `{"temp":3}`}, devices: tempDevice})
	changes := b.changes("tool")
	b.start()
	c := b.client()
	if _, err := c.Read(ctxWait(t), "tool.temp", 0); err != nil {
		t.Fatal(err)
	}
	// Killed from outside while warm: a crash.
	if err := syscall.Kill(b.startRecord("tool").Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// The loop books the crash before it marks the tool stopped.
	if st := b.waitState("tool", restart.Stopped); st.Consecutive != 1 {
		t.Fatalf("after the kill: %+v", st)
	}
	if _, err := c.Read(ctxWait(t), "tool.temp", 0); err != nil {
		t.Fatal(err)
	}
	b.waitState("tool", restart.Running)
	st := b.waitState("tool", restart.Stopped) // idle
	if st.Consecutive != 0 || st.Crashes != 1 {
		t.Fatalf("after a clean idle stop: %+v", st)
	}
	// Not just by now: the count was 0 as the state became stopped.
	if seen := changes(); len(seen) == 0 || seen[len(seen)-1] != (change{restart.Stopped, "idle", 0}) {
		t.Fatalf("state changes %+v; the last, to stopped after idle, must show the series ended", seen)
	}
}
