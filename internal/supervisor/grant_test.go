package supervisor

import (
	"context"
	"strings"
	"testing"

	"github.com/openhal/gateway/internal/supervisor/restart"
)

// Devices named <adapter>.<id> that collide with existing ones refuse the
// adapter, and leave the existing device alone.
func TestCollisionRefused(t *testing.T) {
	b := newBench(t, spec{name: "sim", devices: `[{"id":"led","kind":"gpio.output","access":"rw","risk":"low","schema":{"type":"boolean"}}]`})
	st := b.adapter("sim").status()
	if st.State != restart.Failed || st.Reason != restart.Manifest || !strings.Contains(st.Detail, "sim.led") {
		t.Fatalf("status %+v", st)
	}
	if d, _ := b.reg.Describe("sim.led"); d.Source != "sim" {
		t.Fatalf("sim.led is now %+v", d)
	}
}

// The grant's level and scope decide what an adapter may ask (section 5):
// a read grant cannot write; run-time devices cannot collide; an adapter
// may remove only what it added.
func TestGrantChecks(t *testing.T) {
	script := `[
	 {"call":"device.write","params":{"device":"sim.led","value":true}},
	 {"call":"device.read","params":{"device":"sim.led"}},
	 {"call":"devices.add","params":{"device":{"id":"temp","kind":"sensor","access":"r","risk":"low","schema":{"type":"number"}}}},
	 {"call":"devices.add","params":{"device":{"id":"bad id!","kind":"sensor","access":"r","risk":"low","schema":{"type":"number"}}}},
	 {"call":"devices.remove","params":{"device":"temp"}},
	 {"call":"devices.remove","params":{"device":"sim.led"}},
	 {"call":"no.such.method","params":{}},
	 {"call":"hub.stop","params":{"reason":"read grant"}},
	 {"call":"hub.stopped","params":{}},
	 {"call":"devices.list","params":{}}
	]`
	b := newBench(t, spec{name: "ta", args: []string{"--script", script}, devices: tempDevice})
	b.start()
	b.waitState("ta", restart.Running)
	calls := strings.Split(strings.TrimSpace(b.waitFile("ta", "calls.jsonl", `"devices.list"`)), "\n")
	if len(calls) != 10 {
		t.Fatalf("%d calls:\n%s", len(calls), strings.Join(calls, "\n"))
	}
	wants := []string{
		`E_ADAPTER_DENIED`, // a read grant writes
		`no_value`,         // but reads: the Hub's own answer (no value yet)
		`exists`,           // its declared ta.temp
		`-32602`,           // a bad descriptor
		`E_ADAPTER_DENIED`, // declared, not added: not removable
		`E_ADAPTER_DENIED`, // not its own
		`-32601`,           // unknown method
		`E_ADAPTER_DENIED`, // a read grant stops nothing
		`"stopped":null`,   // but learns that no stop is engaged
		`"id":"ta.temp"`,   // its own device in the list
	}
	for i, want := range wants {
		if !strings.Contains(calls[i], want) {
			t.Errorf("call %d: %s\nwant %s", i, calls[i], want)
		}
	}
	if got := b.led.writes; len(got) != 0 {
		t.Fatalf("a read grant wrote sim.led: %v", got)
	}
}

// hub.stop (the gateway's extension): a control_low grant engages the
// emergency stop as the adapter, and hub.stopped then says so.
func TestHubStop(t *testing.T) {
	script := `[
	 {"call":"hub.stop","params":{"reason":"smoke"}},
	 {"call":"hub.stopped","params":{}}
	]`
	b := newBench(t, spec{name: "ta", args: []string{"--script", script}, grant: `{"level":"control_low","scope":"all"}`})
	b.start()
	b.waitState("ta", restart.Running)
	calls := strings.Split(strings.TrimSpace(b.waitFile("ta", "calls.jsonl", `"hub.stopped"`)), "\n")
	if len(calls) != 2 || !strings.Contains(calls[0], `"stopped":true`) ||
		!strings.Contains(calls[1], `"principal":{"kind":"adapter","name":"ta"`) || !strings.Contains(calls[1], `"reason":"smoke"`) {
		t.Fatalf("calls:\n%s", strings.Join(calls, "\n"))
	}
	if !b.hub.Stopped() {
		t.Fatal("the Hub is not stopped")
	}
}

// A HAL client that goes away cancels its read at the adapter (section 4:
// "a HAL client that goes away cancels its reads only").
func TestClientGoneCancelsRead(t *testing.T) {
	b := newBench(t, spec{name: "ta", args: []string{"--read-delay", "10s", "--values", `{"temp":1}`}, devices: tempDevice, requestMs: 20000})
	b.start()
	b.waitState("ta", restart.Running)
	c := b.client()
	ctx, cancel := context.WithCancel(context.Background())
	go c.Read(ctx, "ta.temp", 0)
	b.waitFile("ta", "received.jsonl", `"method":"device.read"`)
	c.Close()
	cancel()
	b.waitFile("ta", "received.jsonl", `"method":"cancel"`)
}

// Reinstalling re-records the install: a tampered adapter runs again, with
// its failure cleared.
func TestReinstallAfterTamper(t *testing.T) {
	b := newBench(t, spec{name: "ta", args: []string{"--version", "0.0.1"}})
	b.start()
	if st := b.waitState("ta", restart.Failed); st.Reason != restart.Tampered {
		t.Fatalf("status %+v", st)
	}
	b.install(spec{name: "ta"})
	if err := b.sup.Reload("ta"); err != nil {
		t.Fatal(err)
	}
	b.waitState("ta", restart.Running)
	if err := b.sup.Reload("nope"); err == nil {
		t.Fatal("reload of an adapter not enabled")
	}
}
