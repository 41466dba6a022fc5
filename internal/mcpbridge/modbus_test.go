package mcpbridge

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/openhal/gateway/device"
)

// Modbus devices (x.modbus, issue 31) are shown to a model as any other:
// a holding register as a number with its unit and range, a status word
// as a string with the names it takes, in list_devices and in the write
// tools' descriptions; where one sits on its unit is in its resource's
// descriptor (the modbus field, bus and unit address). A write of one of
// the names goes through, another is refused.
func TestModbusDevicesAsAnyOther(t *testing.T) {
	bench, url := newBench(t)
	lo, hi := 0.0, 50.0
	port := "/dev/serial/by-id/usb-FTDI_FT232R-if00-port0"
	on := func(id string, access device.Access, risk device.Risk, s device.Schema, r device.ModbusRegister) extra {
		return extra{desc: device.Descriptor{ID: id, Kind: device.KindModbus, Source: "test", Access: access, Risk: risk,
			Schema: s, Bus: port, Address: "1", Chip: "modbus", Modbus: &r}}
	}
	speed := on("vfd.speed", device.AccessReadWrite, device.RiskHigh,
		device.Schema{Type: device.TypeNumber, Minimum: &lo, Maximum: &hi, Unit: "Hz"},
		device.ModbusRegister{Table: "holding", Address: 8193, Type: "uint16", Words: 1, Scale: 0.01})
	speed.desc.Safe = 0.0
	bench.Add(speed)
	bench.Add(on("vfd.mode", device.AccessReadWrite, device.RiskLow,
		device.Schema{Type: device.TypeString, Enum: []any{"local", "remote"}},
		device.ModbusRegister{Table: "holding", Address: 11, Type: "uint16", Words: 1}))
	bench.Add(on("meter.voltage", device.AccessRead, device.RiskLow, device.Schema{Type: device.TypeNumber, Unit: "V"},
		device.ModbusRegister{Table: "input", Type: "float32", Words: 2, Swap: "word"}))
	b := newBridge(t, url, bench.Agent, false)
	c := connect(t, b, clientOptions{})

	var out struct {
		Devices []deviceView `json:"devices"`
	}
	c.ok(t, toolList, nil, &out)
	got := map[string]deviceView{}
	for _, d := range out.Devices {
		got[d.ID] = d
	}
	if d := got["vfd.speed"]; d.Kind != device.KindModbus || d.Type != "number" || d.Unit != "Hz" || !d.Writable ||
		!d.NeedsApproval || d.Minimum == nil || *d.Minimum != 0 || d.Maximum == nil || *d.Maximum != 50 || d.Safe != 0.0 {
		t.Errorf("list_devices shows vfd.speed as %+v", d)
	}
	if d := got["vfd.mode"]; d.Type != "string" || !reflect.DeepEqual(d.Enum, []any{"local", "remote"}) || !d.Writable {
		t.Errorf("list_devices shows vfd.mode as %+v", d)
	}
	if d := got["meter.voltage"]; d.Type != "number" || d.Unit != "V" || d.Writable || !d.Readable {
		t.Errorf("list_devices shows meter.voltage as %+v", d)
	}
	tools := c.tools(t)
	if w := tools[toolWrite].Description; !strings.Contains(w, `vfd.mode: string one of ["local","remote"]`) {
		t.Errorf("write_device's description %q does not show vfd.mode's names", w)
	}
	if w := tools[toolWriteHigh].Description; !strings.Contains(w, "vfd.speed: number 0 to 50 Hz") {
		t.Errorf("write_high_risk_device's description %q does not show vfd.speed's range", w)
	}
	c.ok(t, toolWrite, map[string]any{"device": "vfd.mode", "value": "remote", "reason": "run from the PLC"}, nil)
	c.failing(t, toolWrite, map[string]any{"device": "vfd.mode", "value": "manual", "reason": "no such mode"},
		"manual is not one of [local remote]")

	doc := readResource(t, c, b.deviceURI("vfd.speed"))
	want := map[string]any{"bus": port, "address": "1", "chip": "modbus", "kind": "x.modbus",
		"modbus": map[string]any{"table": "holding", "address": 8193.0, "type": "uint16", "words": 1.0, "scale": 0.01}}
	for f, v := range want {
		if !reflect.DeepEqual(doc.Device[f], v) {
			t.Errorf("vfd.speed's resource: device.%s = %#v, want %#v", f, doc.Device[f], v)
		}
	}
}

// readResource reads a device resource's JSON.
func readResource(t *testing.T, c *client, uri string) (doc struct {
	Device map[string]any `json:"device"`
	Value  any            `json:"value"`
}) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	res, err := c.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil || len(res.Contents) != 1 {
		t.Fatalf("resources/read %s: %v, %v", uri, res, err)
	}
	if err := json.Unmarshal([]byte(res.Contents[0].Text), &doc); err != nil {
		t.Fatalf("resource %s: %v", uri, err)
	}
	return doc
}
