package halhub

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/openhal"
)

// hal/initialize's stopped carries what the engaged stop could not make
// safe (failed) and left as it was (leftAsIs), filtered for a
// device-limited token as hal/stopped is; after a restart, those of the
// drive the latched stop made at start.
func TestInitializeStoppedOutcome(t *testing.T) {
	b := newBench(t)
	b.fan.writeFn = func(context.Context, device.WriteRequest) (device.WriteResult, error) {
		return device.WriteResult{}, errors.New("pwm chip gone")
	}
	wantOK(t, b.admin(t).call("hal/stop", map[string]any{"reason": "smoke"}))
	tests := []struct {
		name         string
		devices      []string
		failed, left string
	}{
		{"full", nil, `["bench.fan"]`, `[{"device":"bench.led","reason":"it declares no safe value"}]`},
		{"fan-only", []string{"bench.fan"}, `["bench.fan"]`, `[]`},
		{"led-only", []string{"bench.led"}, `[]`, `[{"device":"bench.led","reason":"it declares no safe value"}]`},
		{"heater-only", []string{"bench.heater"}, `[]`, `[]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := stoppedAt(t, b, b.token(t, "watch-"+tt.name, openhal.ScopeRead, tt.devices...))
			if got := failedJSON(t, st.Failed); got != tt.failed {
				t.Errorf("failed %s, want %s", got, tt.failed)
			}
			if got := leftJSON(t, st.LeftAsIs); got != tt.left {
				t.Errorf("leftAsIs %s, want %s", got, tt.left)
			}
			if len(st.Failed) > 0 && st.Failed[0].Error.Code != openhal.CodeDeviceFault {
				t.Errorf("the fan's error: %+v, want DEVICE_FAULT", st.Failed[0].Error)
			}
		})
	}

	b.clock.Advance(time.Hour)
	again := newBench(t, func(o *Options) { o.StateDir = b.dir })
	st := stoppedAt(t, again, again.testHub.admin)
	if failedJSON(t, st.Failed) != `[]` || leftJSON(t, st.LeftAsIs) != tests[0].left {
		t.Errorf("after a restart: failed %+v leftAsIs %+v; want none and bench.led", st.Failed, st.LeftAsIs)
	}
	wantOK(t, again.admin(t).call("hal/resume", nil))
	if st := again.dialTCP(t).initWith(again.testHub.admin); !json.Valid(st.Result) || string(resultField(t, st, "stopped")) != "null" {
		t.Errorf("after resume: %s, want stopped null", st.raw)
	}
}

// stoppedAt is the stopped of a hal/initialize answer to tok; it must
// not be null, and its lists must be [], not null.
func stoppedAt(t *testing.T, b *bench, tok string) openhal.StopInfo {
	t.Helper()
	m := b.dialTCP(t).initWith(tok)
	raw := resultField(t, m, "stopped")
	var fields map[string]json.RawMessage
	var st openhal.StopInfo
	if err := json.Unmarshal(raw, &fields); err != nil || json.Unmarshal(raw, &st) != nil {
		t.Fatalf("stopped %s in %s", raw, m.raw)
	}
	for _, k := range []string{"failed", "leftAsIs"} {
		if string(fields[k]) == "null" || fields[k] == nil {
			t.Errorf("stopped.%s is %s, want a list", k, fields[k])
		}
	}
	return st
}

// resultField is one field of a result, raw.
func resultField(t *testing.T, m msg, name string) json.RawMessage {
	t.Helper()
	var res map[string]json.RawMessage
	if err := json.Unmarshal(m.Result, &res); err != nil || m.Error != nil {
		t.Fatalf("answer %s", m.raw)
	}
	return res[name]
}

// failedJSON is the devices of failed, as JSON.
func failedJSON(t *testing.T, failed []openhal.SafeFailure) string {
	t.Helper()
	ids := []string{}
	for _, f := range failed {
		ids = append(ids, f.Device)
	}
	b, err := json.Marshal(ids)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
