package audit

import (
	"time"

	"github.com/openhal/gateway/openhal"
)

// Count entries: requests past a rate are counted into one entry rather
// than recorded one by one (spec §10), so that a flood cannot rotate the
// history away and still leaves a trace of everything it sent.
const (
	ActionCount   = "count"
	OutcomeCount  = "counted"
	ActionOther   = "other" // the last Tally, once MaxTallies kinds are taken
	OutcomeOthers = "other"
)

// Tally is one kind of counted request in a count entry: its action, the
// outcome it got, and the rule and error reason when it was refused.
type Tally struct {
	Action  string `json:"action"`
	Outcome string `json:"outcome"`
	Rule    string `json:"rule,omitempty"`
	Reason  string `json:"reason,omitempty"`
	Count   int    `json:"count"`
}

// Counter gathers entries into one count entry. The zero value is empty
// and ready; it is not safe for concurrent use.
type Counter struct {
	n        int
	from, to time.Time
	by       []Tally
}

// Add counts e, by its action, outcome, rule and error reason, at e.TS.
// Past MaxTallies kinds, further kinds are counted in the last item.
func (c *Counter) Add(e Entry) {
	k := Tally{Action: e.Action, Outcome: e.Outcome, Rule: e.Rule}
	if e.Error != nil {
		k.Reason = e.Error.Reason
	}
	k.Action, _ = cutString(k.Action, CutName)
	k.Outcome, _ = cutString(k.Outcome, CutName)
	k.Rule, _ = cutString(k.Rule, CutName)
	k.Reason, _ = cutString(k.Reason, CutName)
	c.n++
	if c.from.IsZero() || e.TS.Before(c.from) {
		c.from = e.TS
	}
	if e.TS.After(c.to) {
		c.to = e.TS
	}
	for i := range c.by {
		if t := &c.by[i]; t.Action == k.Action && t.Outcome == k.Outcome && t.Rule == k.Rule && t.Reason == k.Reason {
			t.Count++
			return
		}
	}
	if len(c.by) < MaxTallies-1 {
		k.Count = 1
		c.by = append(c.by, k)
		return
	}
	if len(c.by) == MaxTallies-1 {
		c.by = append(c.by, Tally{Action: ActionOther, Outcome: OutcomeOthers})
	}
	c.by[MaxTallies-1].Count++
}

// Len is how many entries were counted.
func (c *Counter) Len() int { return c.n }

// Entry is the count entry of what was counted, for principal p: action
// "count", outcome "counted", Count, From, To and By. It does not reset
// c.
func (c *Counter) Entry(p openhal.Principal) Entry {
	by := make([]Tally, len(c.by))
	copy(by, c.by)
	return Entry{Principal: p, Action: ActionCount, Outcome: OutcomeCount, Count: c.n, From: c.from.UTC(), To: c.to.UTC(), By: by}
}

// Kept reports whether e belongs with the entries that are kept apart from
// the high-volume writes, so that no volume of writes rotates them away:
// stops and resumes, approvals and rejections (that took place, not
// refused ones), token changes, blocked writes, and count entries that
// count any of those.
func Kept(e *Entry) bool {
	if e.Action == ActionCount {
		for _, t := range e.By {
			if keptKind(t.Action, t.Outcome) {
				return true
			}
		}
		return false
	}
	return keptKind(e.Action, e.Outcome)
}

// keptKind is Kept for one action and outcome.
func keptKind(action, outcome string) bool {
	switch action {
	case "stop", "resume", "approve", "reject":
		return outcome != "refused"
	case "token.add", "token.revoke":
		return true
	case "write":
		return outcome == "blocked"
	}
	return false
}
