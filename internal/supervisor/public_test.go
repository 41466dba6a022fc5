package supervisor

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/openhal/gateway/internal/supervisor/restart"
	"github.com/openhal/gateway/internal/supervisor/stderrlog"
	"github.com/openhal/gateway/openhal/gatewayext"
)

// Public answers what the adapter methods answered when they encoded
// Status itself: the same JSON, byte for byte.
func TestPublicStatusWire(t *testing.T) {
	since := time.Date(2025, 12, 1, 10, 0, 0, 123000000, time.UTC)
	for _, c := range []struct {
		st   Status
		want string
	}{
		{Status{Name: "mqtt", Version: "1.0", Kind: "service", User: "gw", State: restart.Running, Pid: 42, Since: &since, UptimeS: 3.25, Restarts: 2, Crashes: 1,
			Consecutive: 1, LastExit: "exit 1", Strikes: 1, StrikesTotal: 3, DroppedEvents: 4, LateReplies: 5, InFlight: 6, Devices: []string{"mqtt.broker"},
			Values: map[string]any{"mqtt.broker": "connected"}, Stderr: stderrlog.Stats{Lines: 1, Cut: 2, CutBytes: 3, DroppedLines: 4, DroppedBytes: 5, Rotations: 6}},
			`{"name":"mqtt","version":"1.0","kind":"service","user":"gw","state":"running","pid":42,"since":"2025-12-01T10:00:00.123Z","uptimeSeconds":3.25,"restarts":2,"crashes":1,"consecutiveCrashes":1,"lastExit":"exit 1","strikes":1,"strikesTotal":3,"droppedEvents":4,"lateReplies":5,"inFlight":6,"devices":["mqtt.broker"],"values":{"mqtt.broker":"connected"},"stderr":{"lines":1,"cut":2,"cutBytes":3,"droppedLines":4,"droppedBytes":5,"rotations":6}}`},
		{Status{Name: "x", State: restart.Failed, Reason: restart.Tampered}, `{"name":"x","state":"failed","reason":"tampered","uptimeSeconds":0,"restarts":0,"crashes":0,"consecutiveCrashes":0,"strikes":0,"strikesTotal":0,"droppedEvents":0,"lateReplies":0,"inFlight":0,"stderr":{"lines":0,"cut":0,"cutBytes":0,"droppedLines":0,"droppedBytes":0,"rotations":0}}`},
	} {
		b, err := json.Marshal(c.st.Public())
		if err != nil || string(b) != c.want {
			t.Errorf("%s: %s, %v; want %s", c.st.Name, b, err, c.want)
		}
	}
}

// Every state and reason has its name among gatewayext's constants.
func TestPublicNames(t *testing.T) {
	states := map[restart.State]gatewayext.AdapterState{
		restart.Stopped: gatewayext.AdapterStopped, restart.Starting: gatewayext.AdapterStarting, restart.Running: gatewayext.AdapterRunning,
		restart.Stopping: gatewayext.AdapterStopping, restart.Backoff: gatewayext.AdapterBackoff, restart.Failed: gatewayext.AdapterFailed,
	}
	for s, want := range states {
		if got := (Status{State: s}).Public().State; got != want {
			t.Errorf("state %d is %q, want %q", s, got, want)
		}
	}
	if _, err := restart.State(len(states)).MarshalText(); err == nil {
		t.Errorf("a state past %d: update this test and gatewayext", len(states)-1)
	}
	reasons := map[restart.Reason]gatewayext.FailReason{
		restart.NoReason: "", restart.Tampered: gatewayext.FailTampered, restart.Incompatible: gatewayext.FailIncompatible,
		restart.Crashloop: gatewayext.FailCrashloop, restart.Spawn: gatewayext.FailSpawn, restart.Manifest: gatewayext.FailManifest,
	}
	for r, want := range reasons {
		if got := (Status{Reason: r}).Public().Reason; got != want {
			t.Errorf("reason %d is %q, want %q", r, got, want)
		}
	}
	if _, err := restart.Reason(len(reasons)).MarshalText(); err == nil {
		t.Errorf("a reason past %d: update this test and gatewayext", len(reasons)-1)
	}
}
