package cli

import (
	"os"
	"strings"
	"testing"
)

// TestStopStateDirGone: with the gateway's state directory removed,
// `gateway stop` still engages the stop, prints it, and then says in one
// error that it is neither latched nor in the audit log.
func TestStopStateDirGone(t *testing.T) {
	noEnv(t)
	hub, _ := newAuditHub(t)
	if err := os.RemoveAll(hub.stateDir); err != nil {
		t.Fatal(err)
	}
	url := hub.Listen("tcp")
	out, _, err := runClient(t, cliApp.cmdStop, "--hub", url, "--token", hub.Agent)
	if !strings.HasPrefix(out, "emergency stop engaged") || !strings.Contains(out, "safe: sim.heater") {
		t.Errorf("stop printed %q", out)
	}
	if err == nil || !strings.HasPrefix(err.Error(), "the emergency stop is engaged, but it is not latched on disk yet (") ||
		!strings.Contains(err.Error(), "; and the audit log could not record it (") {
		t.Errorf("stop returned %v", err)
	}
	if !hub.Hub().Stopped() {
		t.Error("the hub is not stopped")
	}
}
