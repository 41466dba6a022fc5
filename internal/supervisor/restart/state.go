package restart

import "fmt"

// State is an adapter's state (section 3). Its JSON form is its name.
type State uint8

// The states of section 3, in the order an adapter normally passes them.
const (
	Stopped State = iota
	Starting
	Running
	Stopping
	Backoff
	Failed
)

var stateNames = [...]string{"stopped", "starting", "running", "stopping", "backoff", "failed"}

func (s State) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return fmt.Sprintf("State(%d)", uint8(s))
}

// MarshalText encodes s as its name, which is what the CLI and JSON show.
func (s State) MarshalText() ([]byte, error) {
	if int(s) >= len(stateNames) {
		return nil, fmt.Errorf("encoding adapter state: unknown state %d", uint8(s))
	}
	return []byte(stateNames[s]), nil
}

// UnmarshalText decodes a state name.
func (s *State) UnmarshalText(b []byte) error {
	for i, n := range stateNames {
		if n == string(b) {
			*s = State(i)
			return nil
		}
	}
	return fmt.Errorf("decoding adapter state: unknown state %q", b)
}

// Reason says why an adapter is failed. NoReason (the zero value) goes with
// every state but Failed; its JSON form is "" so that an omitempty field
// disappears.
type Reason uint8

// The failure reasons of section 3.
const (
	NoReason     Reason = iota
	Tampered            // name or version differs from the install record
	Incompatible        // no protocol in common
	Crashloop           // MaxCrashes consecutive crashes
	Spawn               // the program cannot be executed
	Manifest            // the manifest is invalid
)

var reasonNames = [...]string{"", "tampered", "incompatible", "crashloop", "spawn", "manifest"}

func (r Reason) String() string {
	if int(r) < len(reasonNames) {
		return reasonNames[r]
	}
	return fmt.Sprintf("Reason(%d)", uint8(r))
}

// MarshalText encodes r as its name.
func (r Reason) MarshalText() ([]byte, error) {
	if int(r) >= len(reasonNames) {
		return nil, fmt.Errorf("encoding failure reason: unknown reason %d", uint8(r))
	}
	return []byte(reasonNames[r]), nil
}

// UnmarshalText decodes a reason name; "" is NoReason.
func (r *Reason) UnmarshalText(b []byte) error {
	for i, n := range reasonNames {
		if n == string(b) {
			*r = Reason(i)
			return nil
		}
	}
	return fmt.Errorf("decoding failure reason: unknown reason %q", b)
}

// allowed lists every transition of section 3. Kept as a table so that the
// rules are read in one place:
//
//   - stopped → starting: spawn (a service's start, a tool's first request).
//   - starting → running: handshake done.
//   - starting, running → stopping: the daemon's own stop.
//   - stopping → stopped: the stop sequence ended.
//   - starting, running → backoff: a service crashed (a broken handshake
//     is a crash too).
//   - starting, running → stopped: a tool crashed; it waits in stopped for
//     the next request, which starts it again under the same count.
//   - backoff → starting: the delay passed.
//   - backoff → stopped: stopped by the daemon while waiting; no process.
//   - starting → failed: tampered, incompatible, spawn, manifest, or a
//     handshake crash that was the last allowed (crashloop).
//   - running → failed: a crash that was the last allowed (crashloop).
//   - stopped → failed: manifest or tampered found before a spawn.
//   - failed → stopped: an operator reset or reinstall.
//
// A stop's own events are never crashes, so stopping leads only to stopped.
var allowed = map[[2]State]bool{
	{Stopped, Starting}:  true,
	{Starting, Running}:  true,
	{Starting, Stopping}: true,
	{Running, Stopping}:  true,
	{Stopping, Stopped}:  true,
	{Starting, Backoff}:  true,
	{Running, Backoff}:   true,
	{Starting, Stopped}:  true,
	{Running, Stopped}:   true,
	{Backoff, Starting}:  true,
	{Backoff, Stopped}:   true,
	{Starting, Failed}:   true,
	{Running, Failed}:    true,
	{Stopped, Failed}:    true,
	{Failed, Stopped}:    true,
}

// Allowed reports whether an adapter may go from one state to another.
// Staying in a state is not a transition and is not allowed.
func Allowed(from, to State) bool { return allowed[[2]State{from, to}] }
