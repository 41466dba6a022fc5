package openhal

import "fmt"

// Level is a Hub's conformance level (spec §5).
type Level string

const (
	LevelRead    Level = "read"
	LevelControl Level = "control"
	LevelFull    Level = "full"
)

// ParseLevel checks a level's name.
func ParseLevel(s string) (Level, error) {
	switch Level(s) {
	case LevelRead, LevelControl, LevelFull:
		return Level(s), nil
	}
	return "", fmt.Errorf("unknown conformance level %q (want read, control or full)", s)
}

var levelRank = map[Level]int{LevelRead: 1, LevelControl: 2, LevelFull: 3}

var methodLevel = map[string]Level{
	MethodInitialize:          LevelRead,
	MethodPing:                LevelRead,
	MethodDevicesList:         LevelRead,
	MethodDevicesGet:          LevelRead,
	MethodRead:                LevelRead,
	MethodConfirmationsList:   LevelRead,
	MethodWrite:               LevelControl,
	MethodStop:                LevelControl,
	MethodResume:              LevelControl,
	MethodConfirmationApprove: LevelFull,
	MethodConfirmationReject:  LevelFull,
	MethodConfirmationCancel:  LevelFull,
	MethodAuditList:           LevelFull,
}

// Allows reports whether a Hub at level l serves method.
func (l Level) Allows(method string) bool {
	m, ok := methodLevel[method]
	return ok && levelRank[m] <= levelRank[l]
}

// Notifications lists, in a fixed order, what a Hub at level l sends. At
// read a client can change nothing, so nothing is blocked, stopped or
// confirmed; at control there is no one to approve, so no confirmations.
func (l Level) Notifications() []string {
	out := []string{NotifyValue, NotifyDeviceState, NotifyDeviceAdded, NotifyDeviceRemoved}
	if levelRank[l] >= levelRank[LevelControl] {
		out = append(out, NotifyBlocked, NotifyStopped, NotifyResumed)
	}
	if levelRank[l] >= levelRank[LevelFull] {
		out = append(out, NotifyConfirmationRequested, NotifyConfirmationResolved)
	}
	return out
}
