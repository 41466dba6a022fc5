package supervisor

import (
	"time"

	"github.com/openhal/gateway/internal/supervisor/restart"
	"github.com/openhal/gateway/internal/supervisor/stderrlog"
)

// Status is what `gateway adapter status` and /metrics show of an adapter
// (section 3).
type Status struct {
	Name     string         `json:"name"`
	Version  string         `json:"version,omitempty"`
	Kind     string         `json:"kind,omitempty"`
	User     string         `json:"user,omitempty"`
	State    restart.State  `json:"state"`
	Reason   restart.Reason `json:"reason,omitempty"`
	Detail   string         `json:"detail,omitempty"`
	Pid      int            `json:"pid,omitempty"`
	Since    *time.Time     `json:"since,omitempty"` // start of the running run
	UptimeS  float64        `json:"uptimeSeconds"`
	Restarts int            `json:"restarts"`
	Crashes  uint64         `json:"crashes"`
	// Consecutive is the crash count of the current series (section 7).
	Consecutive   int      `json:"consecutiveCrashes"`
	LastExit      string   `json:"lastExit,omitempty"`
	Strikes       int      `json:"strikes"`      // in the window now
	StrikesTotal  uint64   `json:"strikesTotal"` // every run
	DroppedEvents uint64   `json:"droppedEvents"`
	LateReplies   uint64   `json:"lateReplies"`
	InFlight      int      `json:"inFlight"`
	Devices       []string `json:"devices,omitempty"`
	// Values are the last values the registry holds for Devices (what
	// the adapter published), read from memory, never asked of the
	// adapter: an adapter's state device (mqtt.broker) says there why it
	// is not connected.
	Values map[string]any  `json:"values,omitempty"`
	Stderr stderrlog.Stats `json:"stderr"`
}

func (a *adapter) status() Status {
	a.mu.Lock()
	st := Status{
		Name: a.name, User: a.s.user, State: a.state, Reason: a.reason, Detail: a.detail,
		Pid: a.pid, Restarts: a.restarts, Crashes: a.totals.crashes, LastExit: a.lastExit,
		StrikesTotal: a.totals.strikes, DroppedEvents: a.totals.dropped, LateReplies: a.totals.lateReplies,
	}
	if a.man != nil {
		st.Version, st.Kind = a.man.Version, a.man.Kind
	}
	if r := a.cur; r != nil {
		since := a.started
		st.Since = &since
		st.UptimeS = a.s.clk.Now().Sub(since).Seconds()
		st.Strikes = r.strikes.Count()
		st.StrikesTotal += r.strikes.Total()
		if r.events != nil {
			st.DroppedEvents += r.events.Dropped()
		}
		if r.conn != nil {
			cs := r.conn.Stats()
			st.LateReplies += cs.LateReplies
			st.InFlight = cs.InFlight
		}
	}
	st.Consecutive = a.consecutive
	a.mu.Unlock()
	st.Devices = a.deviceIDs()
	for _, id := range st.Devices {
		if snap, ok := a.s.opt.Registry.Value(id); ok {
			if st.Values == nil {
				st.Values = map[string]any{}
			}
			st.Values[id] = snap.Value
		}
	}
	if a.stderr != nil {
		st.Stderr = a.stderr.Stats()
	}
	return st
}
