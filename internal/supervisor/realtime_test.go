package supervisor

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/openhal/gateway/internal/supervisor/restart"
)

// The protocol's own timeline, once, for real (DESIGN: "at least once for
// real"): the first ping 15 s after initialized, and the stop of an adapter
// that ignores shutdown and SIGTERM — stdin closed at T0+2 s, SIGTERM at
// T0+2 s, SIGKILL at T0+5 s and no later than 200 ms after.
func TestRealTimeline(t *testing.T) {
	if testing.Short() {
		t.Skip("takes 21 s of real time")
	}
	t.Parallel()
	b := newBench(t, spec{name: "stubborn", args: []string{"--ignore-sigterm", "--no-shutdown-reply"}})
	b.timing = DefaultTiming()
	b.sup.opt.Timing = b.timing
	b.start()
	st := b.waitState("stubborn", restart.Running)
	running := *st.Since
	received := filepath.Join(b.home("stubborn"), "received.jsonl")
	var pingAt time.Time
	deadline := time.Now().Add(20 * time.Second)
	for pingAt.IsZero() {
		if data, _ := os.ReadFile(received); strings.Contains(string(data), `"method":"ping"`) {
			pingAt = time.Now()
		} else if time.Now().After(deadline) {
			t.Fatal("no ping within 20 s")
		} else {
			time.Sleep(10 * time.Millisecond)
		}
	}
	if d := pingAt.Sub(running); d < 15*time.Second-50*time.Millisecond || d > 15*time.Second+500*time.Millisecond {
		t.Fatalf("first ping %v after running, want 15 s", d)
	}
	b.sup.Stop()
	rep := b.adapter("stubborn").stopReport()
	if rep == nil {
		t.Fatal("no stop report")
	}
	var term, kill time.Duration
	for _, s := range rep.Signals {
		switch s.Signal {
		case syscall.SIGTERM:
			term = s.At.Sub(rep.T0)
		case syscall.SIGKILL:
			if kill == 0 {
				kill = s.At.Sub(rep.T0)
			}
		}
	}
	within := func(d, want time.Duration) bool { return d >= want && d <= want+200*time.Millisecond }
	if closed := rep.StdinClosedAt.Sub(rep.T0); !within(closed, 2*time.Second) {
		t.Errorf("stdin closed at T0+%v, want T0+2s", closed)
	}
	if !within(term, 2*time.Second) || !within(kill, 5*time.Second) {
		t.Fatalf("SIGTERM at T0+%v, SIGKILL at T0+%v; want 2 s and 5 s (report %+v)", term, kill, rep)
	}
	if took := rep.Ended.Sub(rep.T0); took > 6*time.Second {
		t.Fatalf("the stop took %v from T0", took)
	}
}
