package restart

import (
	"encoding/json"
	"testing"
	"time"
)

func TestDelay(t *testing.T) {
	p := DefaultPolicy()
	want := []time.Duration{1, 2, 4, 8, 16, 32, 60, 60, 60}
	for i, w := range want {
		if got := p.Delay(i + 1); got != w*time.Second {
			t.Errorf("Delay(%d) = %v, want %v", i+1, got, w*time.Second)
		}
	}
	if got := p.Delay(1000); got != 60*time.Second {
		t.Errorf("Delay(1000) = %v, want 60s", got)
	}
}

func TestTracker(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := time.Second
	type step struct {
		op      string        // "start", "crash", "idle", "reset"
		at      time.Duration // since t0
		delay   time.Duration // for crash
		failed  bool          // for crash
		wantCnt int
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"eighth consecutive crash fails", []step{
			{"start", 0, 0, false, 0}, {"crash", 1 * s, 1 * s, false, 1},
			{"start", 2 * s, 0, false, 1}, {"crash", 3 * s, 2 * s, false, 2},
			{"start", 5 * s, 0, false, 2}, {"crash", 6 * s, 4 * s, false, 3},
			{"start", 10 * s, 0, false, 3}, {"crash", 11 * s, 8 * s, false, 4},
			{"start", 19 * s, 0, false, 4}, {"crash", 20 * s, 16 * s, false, 5},
			{"start", 36 * s, 0, false, 5}, {"crash", 37 * s, 32 * s, false, 6},
			{"start", 69 * s, 0, false, 6}, {"crash", 70 * s, 60 * s, false, 7},
			{"start", 130 * s, 0, false, 7}, {"crash", 131 * s, 0, true, 8},
			{"crash", 132 * s, 0, true, 9},
		}},
		{"run of 60 s resets before counting", []step{
			{"start", 0, 0, false, 0}, {"crash", 1 * s, 1 * s, false, 1},
			{"start", 2 * s, 0, false, 1}, {"crash", 3 * s, 2 * s, false, 2},
			{"start", 5 * s, 0, false, 2}, {"crash", 65 * s, 1 * s, false, 1},
		}},
		{"run just under 60 s does not reset", []step{
			{"start", 0, 0, false, 0}, {"crash", 1 * s, 1 * s, false, 1},
			{"start", 2 * s, 0, false, 1}, {"crash", 62*s - 1, 2 * s, false, 2},
		}},
		{"crash without start counts", []step{
			{"crash", 0, 1 * s, false, 1}, {"crash", 100 * s, 2 * s, false, 2},
		}},
		{"clean idle stop resets", []step{
			{"start", 0, 0, false, 0}, {"crash", 1 * s, 1 * s, false, 1},
			{"start", 2 * s, 0, false, 1}, {"crash", 3 * s, 2 * s, false, 2},
			{"start", 4 * s, 0, false, 2}, {"idle", 10 * s, 0, false, 0},
			{"start", 11 * s, 0, false, 0}, {"crash", 12 * s, 1 * s, false, 1},
		}},
		{"reset clears crashloop", []step{
			{"crash", 0, 1 * s, false, 1}, {"crash", 0, 2 * s, false, 2},
			{"crash", 0, 4 * s, false, 3}, {"crash", 0, 8 * s, false, 4},
			{"crash", 0, 16 * s, false, 5}, {"crash", 0, 32 * s, false, 6},
			{"crash", 0, 60 * s, false, 7}, {"crash", 0, 0, true, 8},
			{"reset", 0, 0, false, 0},
			{"start", 1 * s, 0, false, 0}, {"crash", 2 * s, 1 * s, false, 1},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := NewTracker(DefaultPolicy())
			for i, st := range tc.steps {
				at := t0.Add(st.at)
				switch st.op {
				case "start":
					tr.Started(at)
				case "crash":
					d, f := tr.Crashed(at)
					if d != st.delay || f != st.failed {
						t.Fatalf("step %d: Crashed = (%v, %v), want (%v, %v)", i, d, f, st.delay, st.failed)
					}
				case "idle":
					tr.CleanIdleStop()
				case "reset":
					tr.Reset()
				}
				if got := tr.Consecutive(); got != st.wantCnt {
					t.Fatalf("step %d (%s): Consecutive = %d, want %d", i, st.op, got, st.wantCnt)
				}
			}
		})
	}
}

func TestStateJSON(t *testing.T) {
	type status struct {
		State  State  `json:"state"`
		Reason Reason `json:"reason,omitempty"`
	}
	tests := []struct {
		in   status
		want string
	}{
		{status{Stopped, NoReason}, `{"state":"stopped"}`},
		{status{Starting, NoReason}, `{"state":"starting"}`},
		{status{Running, NoReason}, `{"state":"running"}`},
		{status{Stopping, NoReason}, `{"state":"stopping"}`},
		{status{Backoff, NoReason}, `{"state":"backoff"}`},
		{status{Failed, Tampered}, `{"state":"failed","reason":"tampered"}`},
		{status{Failed, Incompatible}, `{"state":"failed","reason":"incompatible"}`},
		{status{Failed, Crashloop}, `{"state":"failed","reason":"crashloop"}`},
		{status{Failed, Spawn}, `{"state":"failed","reason":"spawn"}`},
		{status{Failed, Manifest}, `{"state":"failed","reason":"manifest"}`},
	}
	for _, tc := range tests {
		b, err := json.Marshal(tc.in)
		if err != nil {
			t.Fatalf("Marshal(%v): %v", tc.in, err)
		}
		if string(b) != tc.want {
			t.Errorf("Marshal(%v) = %s, want %s", tc.in, b, tc.want)
		}
		var back status
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("Unmarshal(%s): %v", b, err)
		}
		if back != tc.in {
			t.Errorf("round trip of %s = %v, want %v", b, back, tc.in)
		}
	}
	if _, err := json.Marshal(State(99)); err == nil {
		t.Error("Marshal(State(99)) succeeded")
	}
	var s State
	if err := json.Unmarshal([]byte(`"dead"`), &s); err == nil {
		t.Error(`Unmarshal("dead") succeeded`)
	}
	if got := State(99).String(); got != "State(99)" {
		t.Errorf("State(99).String() = %q", got)
	}
	if got := Crashloop.String(); got != "crashloop" {
		t.Errorf("Crashloop.String() = %q", got)
	}
}

func TestAllowed(t *testing.T) {
	all := []State{Stopped, Starting, Running, Stopping, Backoff, Failed}
	yes := map[[2]State]bool{
		{Stopped, Starting}: true, {Starting, Running}: true,
		{Starting, Stopping}: true, {Running, Stopping}: true,
		{Stopping, Stopped}: true, {Starting, Backoff}: true,
		{Running, Backoff}: true, {Starting, Stopped}: true,
		{Running, Stopped}: true, {Backoff, Starting}: true,
		{Backoff, Stopped}: true, {Starting, Failed}: true,
		{Running, Failed}: true, {Stopped, Failed}: true,
		{Failed, Stopped}: true,
	}
	// Every pair, so that a transition added by mistake shows up.
	for _, from := range all {
		for _, to := range all {
			want := yes[[2]State{from, to}]
			if got := Allowed(from, to); got != want {
				t.Errorf("Allowed(%v, %v) = %v, want %v", from, to, got, want)
			}
		}
	}
}
