package supervisor

import (
	"time"

	"github.com/openhal/gateway/internal/supervisor/restart"
	"github.com/openhal/gateway/internal/supervisor/stderrlog"
	"github.com/openhal/gateway/openhal/gatewayext"
)

// Status is what `gateway adapter status` and /metrics show of an adapter
// (section 3). Its form on the wire is gatewayext.AdapterStatus (Public).
type Status struct {
	Name     string
	Version  string
	Kind     string
	User     string
	State    restart.State
	Reason   restart.Reason
	Detail   string
	Pid      int
	Since    *time.Time // start of the running run
	UptimeS  float64
	Restarts int
	Crashes  uint64
	// Consecutive is the crash count of the current series (section 7).
	Consecutive   int
	LastExit      string
	Strikes       int    // in the window now
	StrikesTotal  uint64 // every run
	DroppedEvents uint64
	LateReplies   uint64
	InFlight      int
	Devices       []string
	// Values are the last values the registry holds for Devices (what
	// the adapter published), read from memory, never asked of the
	// adapter: an adapter's state device (mqtt.broker) says there why it
	// is not connected.
	Values map[string]any
	Stderr stderrlog.Stats
}

// Public is st as the gateway's adapter methods answer it
// (gateway/adapters.status): its state and reason by their names.
func (st Status) Public() gatewayext.AdapterStatus {
	return gatewayext.AdapterStatus{
		Name: st.Name, Version: st.Version, Kind: st.Kind, User: st.User,
		State: gatewayext.AdapterState(st.State.String()), Reason: gatewayext.FailReason(st.Reason.String()), Detail: st.Detail,
		Pid: st.Pid, Since: st.Since, UptimeSeconds: st.UptimeS, Restarts: st.Restarts, Crashes: st.Crashes,
		ConsecutiveCrashes: st.Consecutive, LastExit: st.LastExit, Strikes: st.Strikes, StrikesTotal: st.StrikesTotal,
		DroppedEvents: st.DroppedEvents, LateReplies: st.LateReplies, InFlight: st.InFlight,
		Devices: st.Devices, Values: st.Values,
		Stderr: gatewayext.StderrStats(st.Stderr),
	}
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
