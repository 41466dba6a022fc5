package supervisor

import (
	"encoding/json"
	"testing"

	"github.com/openhal/gateway/internal/supervisor/restart"
)

// A configuration reload enables an adapter on a running supervisor that
// had none (its devices registered, started with its settings), restarts
// it with new settings, and disables it (stopped, its devices removed).
func TestEnableSettingsDisable(t *testing.T) {
	b := newBench(t)
	b.start()
	b.install(spec{name: "ta", devices: tempDevice})
	b.sup.SetSettings(map[string]json.RawMessage{"ta": json.RawMessage(`{"round":1}`)})
	if err := b.sup.Enable("ta"); err != nil {
		t.Fatal(err)
	}
	if err := b.sup.Enable("ta"); err == nil {
		t.Error("ta enabled twice")
	}
	b.waitState("ta", restart.Running)
	if _, ok := b.reg.Describe("ta.temp"); !ok {
		t.Fatal("ta.temp not registered once ta is enabled")
	}
	b.waitFile("ta", "received.jsonl", `"round":1`)

	b.sup.SetSettings(map[string]json.RawMessage{"ta": json.RawMessage(`{"round":2}`)})
	if err := b.sup.Reload("ta"); err != nil {
		t.Fatal(err)
	}
	b.waitState("ta", restart.Running)
	b.waitFile("ta", "received.jsonl", `"round":2`)

	if err := b.sup.Disable("ta"); err != nil {
		t.Fatal(err)
	}
	if _, ok := b.reg.Describe("ta.temp"); ok {
		t.Error("ta.temp still registered once ta is disabled")
	}
	if st := b.sup.Status(); len(st) != 0 {
		t.Errorf("status after Disable: %+v", st)
	}
	if err := b.sup.Disable("ta"); err == nil {
		t.Error("ta disabled twice")
	}
}
