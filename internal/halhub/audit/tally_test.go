package audit

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/openhal/gateway/openhal"
)

// TestCounter: a count entry says how many, from when to when, and what
// they were; kinds past MaxTallies are counted under "other", so that
// the sum of By is always Count.
func TestCounter(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var c Counter
	refused := Entry{Action: "write", Outcome: "refused", Error: &ErrorInfo{Reason: "scope"}}
	for i := range 5 {
		refused.TS = t0.Add(time.Duration(i) * time.Second)
		c.Add(refused)
	}
	c.Add(Entry{TS: t0.Add(-time.Second), Action: "write", Outcome: "blocked", Rule: "interlock", Error: &ErrorInfo{Reason: "blocked"}})
	e := c.Entry(agent)
	want := []Tally{
		{Action: "write", Outcome: "refused", Reason: "scope", Count: 5},
		{Action: "write", Outcome: "blocked", Rule: "interlock", Reason: "blocked", Count: 1},
	}
	if e.Action != ActionCount || e.Outcome != OutcomeCount || e.Count != 6 || c.Len() != 6 ||
		!e.From.Equal(t0.Add(-time.Second)) || !e.To.Equal(t0.Add(4*time.Second)) || !slices.Equal(e.By, want) || e.Principal != agent {
		t.Errorf("count entry %+v", e)
	}

	var many Counter
	for i := range MaxTallies + 10 {
		many.Add(Entry{Action: "write", Outcome: "refused", Error: &ErrorInfo{Reason: fmt.Sprint("r", i)}})
	}
	e = many.Entry(agent)
	sum := 0
	for _, t := range e.By {
		sum += t.Count
	}
	last := e.By[len(e.By)-1]
	if len(e.By) != MaxTallies || sum != MaxTallies+10 || e.Count != MaxTallies+10 || last.Action != ActionOther || last.Count != 11 {
		t.Errorf("%d kinds: By %+v", MaxTallies+10, e.By)
	}
}

// TestKept: which entries are kept apart from the writes.
func TestKept(t *testing.T) {
	tests := []struct {
		action, outcome string
		by              []Tally
		kept            bool
	}{
		{"stop", "stopped", nil, true},
		{"stop", "failed", nil, true}, // engaged, latch not written
		{"stop", "refused", nil, false},
		{"resume", "resumed", nil, true},
		{"resume", "refused", nil, false},
		{"approve", "approved", nil, true},
		{"approve", "failed", nil, true},
		{"approve", "refused", nil, false},
		{"reject", "rejected", nil, true},
		{"token.add", "created", nil, true},
		{"token.revoke", "revoked", nil, true},
		{"write", "blocked", nil, true},
		{"write", "applied", nil, false},
		{"write", "refused", nil, false},
		{"write", "pending", nil, false},
		{"cancel", "cancelled", nil, false},
		{"expire", "expired", nil, false},
		{"initialize", "unauthorized", nil, false},
		{ActionCount, OutcomeCount, []Tally{{Action: "write", Outcome: "refused"}}, false},
		{ActionCount, OutcomeCount, []Tally{{Action: "write", Outcome: "refused"}, {Action: "stop", Outcome: "stopped"}}, true},
		{ActionCount, OutcomeCount, []Tally{{Action: "write", Outcome: "blocked"}}, true},
	}
	for _, tt := range tests {
		e := Entry{Principal: openhal.Principal{Kind: "agent", Name: "a"}, Action: tt.action, Outcome: tt.outcome, By: tt.by}
		if got := Kept(&e); got != tt.kept {
			t.Errorf("Kept(%s %s %v) = %v, want %v", tt.action, tt.outcome, tt.by, got, tt.kept)
		}
	}
}
