package supervisor

import (
	"strings"
	"testing"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/halclient"
	"github.com/openhal/gateway/internal/halhub/token"
	"github.com/openhal/gateway/internal/supervisor/restart"
	"github.com/openhal/gateway/openhal"
)

// heaterDevice is a high-risk output: a control_low write of it waits
// for a person.
type heaterDevice struct{ ledDevice }

func (d *heaterDevice) Descriptor() device.Descriptor {
	return device.Descriptor{ID: "sim.heater", Kind: device.KindGPIOOutput, Source: "sim", Access: device.AccessReadWrite,
		Risk: device.RiskHigh, Schema: device.Schema{Type: device.TypeBoolean}, Safe: false}
}

// hub.confirmations (the gateway's extension) lists the pending requests
// of the devices in the grant, as hal/confirmations/list: an adapter
// started while an agent's request waits learns of it when its grant
// sees the heater, and nothing when its grant is sim.led alone.
func TestHubConfirmations(t *testing.T) {
	list := `[{"call":"hub.confirmations","params":{"status":"pending"}}]`
	b := newBench(t,
		spec{name: "ta", args: []string{"--script", list}, grant: `{"level":"read","scope":"all"}`},
		spec{name: "tb", args: []string{"--script", list}, grant: `{"level":"read","scope":["sim.led"]}`})
	if _, err := b.reg.Add(&heaterDevice{}); err != nil {
		t.Fatal(err)
	}
	agent := b.agentClient()
	res, err := agent.Write(ctxWait(t), "sim.heater", true, "preheat")
	if err != nil || res.Status != openhal.ConfirmPending {
		t.Fatalf("agent's write: %+v, %v; want pending", res, err)
	}
	b.start()
	b.waitState("ta", restart.Running)
	seen := b.waitFile("ta", "calls.jsonl", `"hub.confirmations"`)
	for _, want := range []string{`"device":"sim.heater"`, `"requestedBy":{"kind":"agent","name":"bench-agent"`, `"reason":"preheat"`, `"status":"pending"`} {
		if !strings.Contains(seen, want) {
			t.Errorf("hub.confirmations: no %s in\n%s", want, seen)
		}
	}
	b.waitState("tb", restart.Running)
	if other := b.waitFile("tb", "calls.jsonl", `"hub.confirmations"`); !strings.Contains(other, `"confirmations":[]`) {
		t.Errorf("an adapter whose grant does not see sim.heater got:\n%s", other)
	}
}

// agentClient is a HAL client with a control_low agent token.
func (b *bench) agentClient() *halclient.Conn {
	b.t.Helper()
	store := token.Open(b.stateDir)
	tok, err := store.Add("bench-agent", openhal.KindAgent, openhal.ScopeControlLow, nil)
	if err != nil {
		b.t.Fatal(err)
	}
	table, err := store.Load()
	if err != nil {
		b.t.Fatal(err)
	}
	b.hub.SetTokens(table)
	c, err := halclient.Dial(ctxWait(b.t), b.addr, halclient.Options{Token: tok})
	if err != nil {
		b.t.Fatal(err)
	}
	b.t.Cleanup(func() { c.Close() })
	return c
}
