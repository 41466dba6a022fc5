package strikes

import (
	"sync"
	"testing"
	"time"

	"github.com/openhal/gateway/internal/clock/clocktest"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func TestStrike(t *testing.T) {
	s := time.Second
	type step struct {
		at      time.Duration // since t0; the clock only moves forward
		kill    bool
		wantCnt int
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"five within the window kill", []step{
			{0, false, 1}, {10 * s, false, 2}, {20 * s, false, 3}, {30 * s, false, 4}, {59 * s, true, 5},
		}},
		{"five at once kill", []step{
			{0, false, 1}, {0, false, 2}, {0, false, 3}, {0, false, 4}, {0, true, 5},
		}},
		{"a strike exactly a window old has slid out", []step{
			{0, false, 1}, {1 * s, false, 2}, {2 * s, false, 3}, {3 * s, false, 4}, {60 * s, false, 4},
		}},
		{"old strikes slide out", []step{
			{0, false, 1}, {10 * s, false, 2}, {20 * s, false, 3}, {30 * s, false, 4},
			{75 * s, false, 3}, {80 * s, false, 3}, {85 * s, false, 4}, {86 * s, true, 5},
		}},
		{"kill keeps reporting within the window", []step{
			{0, false, 1}, {0, false, 2}, {0, false, 3}, {0, false, 4}, {0, true, 5}, {1 * s, true, 5},
		}},
		{"spread out never kills", []step{
			{0, false, 1}, {20 * s, false, 2}, {40 * s, false, 3}, {60 * s, false, 3},
			{80 * s, false, 3}, {100 * s, false, 3}, {120 * s, false, 3},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := clocktest.NewFake(t0)
			st := &Strikes{Limit: 5, Window: 60 * time.Second, Clock: c}
			for i, step := range tc.steps {
				c.Advance(t0.Add(step.at).Sub(c.Now()))
				if got := st.Strike("bad line"); got != step.kill {
					t.Fatalf("step %d: Strike = %v, want %v", i, got, step.kill)
				}
				if got := st.Count(); got != step.wantCnt {
					t.Fatalf("step %d: Count = %d, want %d", i, got, step.wantCnt)
				}
			}
			if got := st.Total(); got != uint64(len(tc.steps)) {
				t.Errorf("Total = %d, want %d", got, len(tc.steps))
			}
		})
	}
}

func TestRecentAndDefaults(t *testing.T) {
	c := clocktest.NewFake(t0)
	st := &Strikes{Clock: c} // defaults: 5 in 60 s
	st.Strike("not JSON")
	c.Advance(30 * time.Second)
	st.Strike("reused id")
	got := st.Recent()
	want := []Strike{{t0, "not JSON"}, {t0.Add(30 * time.Second), "reused id"}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("Recent = %v, want %v", got, want)
	}
	got[0].Reason = "changed"
	if st.Recent()[0].Reason != "not JSON" {
		t.Error("Recent shares its slice with the counter")
	}
	c.Advance(30 * time.Second)
	if got := st.Recent(); len(got) != 1 || got[0].Reason != "reused id" {
		t.Errorf("Recent after the first slid out = %v", got)
	}
	c.Advance(time.Hour)
	if n := st.Count(); n != 0 {
		t.Errorf("Count an hour later = %d", n)
	}
	for i := range 4 {
		if st.Strike("x") {
			t.Fatalf("strike %d killed under the default limit of 5", i+1)
		}
	}
	if !st.Strike("x") {
		t.Error("5th strike did not kill under the defaults")
	}
	st.Reset()
	if st.Count() != 0 || st.Total() != 0 {
		t.Errorf("after Reset: Count %d, Total %d", st.Count(), st.Total())
	}
}

func TestConcurrent(t *testing.T) {
	st := &Strikes{Limit: 5, Clock: clocktest.NewFake(t0)}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				st.Strike("x")
				st.Recent()
			}
		})
	}
	wg.Wait()
	if st.Count() != 5 || st.Total() != 800 {
		t.Errorf("Count %d, Total %d; want 5, 800", st.Count(), st.Total())
	}
}
