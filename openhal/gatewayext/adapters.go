package gatewayext

import "time"

// AdapterState is an adapter's state in the gateway's supervisor
// (docs/adapters.md, section 3).
type AdapterState string

// The states, in the order an adapter normally passes them.
const (
	AdapterStopped  AdapterState = "stopped"
	AdapterStarting AdapterState = "starting"
	AdapterRunning  AdapterState = "running"
	AdapterStopping AdapterState = "stopping"
	AdapterBackoff  AdapterState = "backoff" // waiting to start again after a crash
	AdapterFailed   AdapterState = "failed"  // until an operator resets or reinstalls it
)

// FailReason says why an adapter is failed; "" in every other state.
type FailReason string

// The failure reasons.
const (
	FailTampered     FailReason = "tampered"     // its folder differs from the install record
	FailIncompatible FailReason = "incompatible" // no protocol in common with the gateway
	FailCrashloop    FailReason = "crashloop"    // too many crashes in a row
	FailSpawn        FailReason = "spawn"        // its program cannot be executed
	FailManifest     FailReason = "manifest"     // its manifest is invalid
)

// AdapterParams are the params of MethodAdaptersStatus (Name may be
// empty: every adapter), MethodAdaptersReset and MethodAdaptersReload.
type AdapterParams struct {
	Name string `json:"name"`
}

// AdaptersResult is the answer of MethodAdaptersStatus: every adapter
// the configuration enables, or the one named.
type AdaptersResult struct {
	Adapters []AdapterStatus `json:"adapters"`
}

// AdapterResult is the answer of MethodAdaptersReset and
// MethodAdaptersReload: the adapter's status after the operation.
type AdapterResult struct {
	Adapter AdapterStatus `json:"adapter"`
}

// AdapterStatus is one adapter as the supervisor sees it: what `gateway
// adapter status NAME` shows.
type AdapterStatus struct {
	Name    string       `json:"name"`
	Version string       `json:"version,omitempty"`
	Kind    string       `json:"kind,omitempty"` // "service" or "tool"
	User    string       `json:"user,omitempty"` // the system user it runs as
	State   AdapterState `json:"state"`
	Reason  FailReason   `json:"reason,omitempty"`
	Detail  string       `json:"detail,omitempty"`
	Pid     int          `json:"pid,omitempty"`
	// Since is the start of the running run; nil without one.
	Since         *time.Time `json:"since,omitempty"`
	UptimeSeconds float64    `json:"uptimeSeconds"`
	Restarts      int        `json:"restarts"`
	Crashes       uint64     `json:"crashes"`
	// ConsecutiveCrashes is the crash count of the current series.
	ConsecutiveCrashes int    `json:"consecutiveCrashes"`
	LastExit           string `json:"lastExit,omitempty"`
	// Strikes are the protocol violations within the current window;
	// StrikesTotal, of every run.
	Strikes       int    `json:"strikes"`
	StrikesTotal  uint64 `json:"strikesTotal"`
	DroppedEvents uint64 `json:"droppedEvents"`
	LateReplies   uint64 `json:"lateReplies"`
	InFlight      int    `json:"inFlight"`
	// Devices are the devices it provides; Values, the last values the
	// gateway holds for them (what the adapter published), read from
	// memory, never asked of the adapter.
	Devices []string       `json:"devices,omitempty"`
	Values  map[string]any `json:"values,omitempty"`
	Stderr  StderrStats    `json:"stderr"`
}

// StderrStats count what the gateway did with an adapter's standard
// error, which it keeps in files in the state directory.
type StderrStats struct {
	Lines        uint64 `json:"lines"`        // lines written
	Cut          uint64 `json:"cut"`          // of those, lines cut at their bound
	CutBytes     uint64 `json:"cutBytes"`     // bytes discarded by cuts
	DroppedLines uint64 `json:"droppedLines"` // lines dropped over the rate limit
	DroppedBytes uint64 `json:"droppedBytes"` // their bytes, newline included
	Rotations    uint64 `json:"rotations"`    // files rotated
}

// AdapterLogsParams are the params of MethodAdaptersLogs. Lines is how
// many of the last lines to answer, 1 to 200; nil: 20.
type AdapterLogsParams struct {
	Name  string `json:"name"`
	Lines *int   `json:"lines,omitempty"`
}

// AdapterLogs is the answer of MethodAdaptersLogs: the last lines of the
// adapter's standard error, oldest first, as kept (stamped, each cut at
// 8 KiB). Omitted counts the oldest of the lines asked for that were
// left out so that the answer fits in one message.
type AdapterLogs struct {
	Adapter string   `json:"adapter"`
	Lines   []string `json:"lines"`
	Omitted int      `json:"omitted"`
}
