package halhub

import (
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/openhal"
)

// checkerDevice is a string output that refuses, as a device.ValueChecker,
// values holding "\n" while refuse is set.
type checkerDevice struct {
	writerDevice
	refuse *atomic.Bool
	checks *atomic.Int64
}

func (d checkerDevice) CheckValue(v any) error {
	d.checks.Add(1)
	if s, _ := v.(string); d.refuse.Load() && strings.Contains(s, "\n") {
		return &device.ValueError{Reason: "line_break", Detail: "the string holds a line break"}
	}
	return nil
}

func newChecker(id string, risk device.Risk) checkerDevice {
	return checkerDevice{
		writerDevice: writerDevice{&testDevice{desc: device.Descriptor{ID: id, Kind: device.KindSerial, Source: "board",
			Access: device.AccessReadWrite, Risk: risk, Schema: device.Schema{Type: device.TypeString}}}},
		refuse: new(atomic.Bool), checks: new(atomic.Int64),
	}
}

// A value the device refuses (device.ValueChecker) after the schema took
// it is INVALID_PARAMS with the device's reason and data.device; the
// device never sees it and stays ok; other values go through.
func TestWriteRefusedByDevice(t *testing.T) {
	b := newBench(t)
	d := newChecker("bench.meter", device.RiskLow)
	d.refuse.Store(true)
	b.addDevice(t, d)
	admin := b.admin(t)
	m := write(admin, "bench.meter", "MEAS?\nRST")
	wantCode(t, m, openhal.CodeInvalidParams, "line_break")
	if m.Error.Data["device"] != "bench.meter" || !strings.Contains(m.Error.Message, "bench.meter") || !strings.Contains(m.Error.Message, "line break") {
		t.Fatalf("error %s, want data.device and a message naming the device and the line break", m.raw)
	}
	if got := d.written(); len(got) != 0 {
		t.Fatalf("the device was written %v", got)
	}
	if desc, _ := b.reg.Describe("bench.meter"); desc.State != device.StateOK {
		t.Fatalf("device state %s after a refused value, want ok", desc.State)
	}
	wantOK(t, write(admin, "bench.meter", "MEAS?"))
	if got := d.written(); len(got) != 1 || got[0] != "MEAS?" {
		t.Fatalf("written %v, want [MEAS?]", got)
	}
	// The schema comes first: a value of the wrong type is the schema's.
	before := d.checks.Load()
	wantCode(t, write(admin, "bench.meter", 3), openhal.CodeInvalidParams, "wrong_type")
	if d.checks.Load() != before {
		t.Fatal("the device was asked about a value its schema refuses")
	}
}

// An approved confirmation's value is asked of the device again: a device
// that refuses it by then (another device under the same id, say) fails
// the confirmation with INVALID_PARAMS, and nothing is written.
func TestApprovedWriteRefusedByDevice(t *testing.T) {
	b := newBench(t)
	d := newChecker("bench.meter", device.RiskHigh)
	b.addDevice(t, d)
	agent := b.as(t, "bench-agent", openhal.ScopeControlLow)
	c := pending(t, write(agent, "bench.meter", "A\nB"))
	d.refuse.Store(true)
	got := resultOf[openhal.Confirmation](t, b.admin(t).call("hal/confirmations/approve", map[string]any{"id": c.ID}))
	if got.Status != openhal.ConfirmFailed || got.Error == nil || got.Error.Code != openhal.CodeInvalidParams {
		t.Fatalf("approved %+v, want failed with INVALID_PARAMS", got)
	}
	var data map[string]any
	if err := json.Unmarshal(got.Error.Data, &data); err != nil || data["reason"] != "line_break" || data["device"] != "bench.meter" {
		t.Fatalf("error data %s, want reason line_break and the device", got.Error.Data)
	}
	if w := d.written(); len(w) != 0 {
		t.Fatalf("the device was written %v", w)
	}
}
