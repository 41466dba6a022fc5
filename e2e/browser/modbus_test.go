package browser

import (
	"context"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/console"
	"github.com/openhal/gateway/internal/halhub"
	"github.com/openhal/gateway/internal/halhub/hubtest"
)

// register is a Modbus value as the Hub sees an x.modbus device: read
// and written through device.Reader and device.Writer, with the
// descriptor issue 31's configuration gives it. The values are the
// unit's; nothing here knows the wire (package modbusline does).
type register struct {
	desc device.Descriptor
	mu   sync.Mutex
	v    any
}

func (r *register) Descriptor() device.Descriptor { return r.desc }

func (r *register) Read(context.Context) (device.Reading, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return device.Reading{Value: r.v, TS: hubtest.Time}, nil
}

func (r *register) Write(_ context.Context, req device.WriteRequest) (device.WriteResult, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.v = req.Value
	return device.WriteResult{}, nil
}

func (r *register) value() any {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.v
}

// modbusHub serves the console over a real Hub whose bench has a VFD and
// an energy meter on Modbus, and returns its URL, admin token and
// devices. The gateway's Modbus configuration is not needed: the console
// sees descriptors and values, whatever makes them.
func modbusHub(t *testing.T) (string, string, map[string]*register) {
	t.Helper()
	b := hubtest.New(t)
	web, err := console.New(console.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(b.Hub().Handler(halhub.HTTPOptions{Console: web}))
	t.Cleanup(srv.Close)
	port := "/dev/serial/by-id/usb-FTDI_FT232R-if00-port0"
	f := func(x float64) *float64 { return &x }
	regs := map[string]*register{}
	add := func(id string, access device.Access, s device.Schema, r device.ModbusRegister, v any) {
		risk := device.RiskLow
		if access.CanWrite() {
			risk = device.RiskHigh
		}
		reg := &register{v: v, desc: device.Descriptor{ID: id, Kind: device.KindModbus, Source: "board", Access: access,
			Risk: risk, Schema: s, State: device.StateOK, Bus: port, Address: "1", Chip: "modbus", Modbus: &r}}
		b.Add(reg).Value(v, hubtest.Time)
		regs[id] = reg
	}
	enum := func(e ...any) device.Schema { return device.Schema{Type: device.TypeString, Enum: e} }
	add("vfd.speed", device.AccessReadWrite, device.Schema{Type: device.TypeNumber, Minimum: f(0), Maximum: f(50), Unit: "Hz"},
		device.ModbusRegister{Table: "holding", Address: 8193, Type: "uint16", Words: 1, Scale: 0.01}, 25.0)
	add("vfd.run", device.AccessReadWrite, device.Schema{Type: device.TypeBoolean},
		device.ModbusRegister{Table: "coil", Type: "bool"}, false)
	add("vfd.status", device.AccessRead, enum("stopped", "running", "fault"),
		device.ModbusRegister{Table: "input", Address: 10, Type: "uint16", Words: 1}, "running")
	add("vfd.mode", device.AccessReadWrite, enum("local", "remote"),
		device.ModbusRegister{Table: "holding", Address: 11, Type: "uint16", Words: 1}, "local")
	add("plc.setpoint", device.AccessReadWrite, device.Schema{Type: device.TypeNumber, Unit: "Cel"},
		device.ModbusRegister{Table: "holding", Address: 40, Type: "int16", Words: 1, Scale: 0.1, Offset: -40}, 20.0)
	add("meter.voltage", device.AccessRead, device.Schema{Type: device.TypeNumber, Unit: "V"},
		device.ModbusRegister{Table: "input", Type: "float32", Words: 2, Swap: "word"}, 230.1)
	return srv.URL + "/", b.Admin, regs
}

// TestModbusCards: the console shows x.modbus devices with the control
// their schema calls for, their unit, and where each sits on its unit: a
// slider over the schema's range stepping by the register's resolution,
// a checkbox for a coil, a select of a status word's names (disabled when
// read-only), a number box for a register without bounds, and no control
// for a read register without bounds. Each control writes its value.
func TestModbusCards(t *testing.T) {
	chromiumPath(t)
	url, admin, regs := modbusHub(t)
	p := newPage(t)
	p.do(chromedp.Navigate(url))
	p.fill(hook("login-token"), admin)
	p.do(chromedp.Click(hook("login-submit")), chromedp.WaitVisible(deviceHook("vfd.speed", "")))

	p.waitText(deviceHook("vfd.speed", "where"),
		`^Modbus unit 1, holding 8193 \(uint16 ×0\.01\) on /dev/serial/by-id/usb-FTDI_FT232R-if00-port0$`)
	p.waitText(deviceHook("meter.voltage", "where"), `^Modbus unit 1, input 0 \(float32, swap word\) on /dev/serial/`)
	p.waitText(deviceHook("plc.setpoint", "where"), `^Modbus unit 1, holding 40 \(int16 ×0\.1 − 40\) on `)
	p.waitText(deviceHook("vfd.speed", "value"), `^25 Hz$`)
	p.waitText(deviceHook("meter.voltage", "value"), `^230\.1 V$`)
	p.waitText(deviceHook("vfd.status", "value"), `^running$`)
	p.waitText(deviceHook("vfd.mode", "value"), `^local$`)
	p.waitText(deviceHook("plc.setpoint", "value"), `^20 °C$`)

	control := func(id string) []string {
		return eval[[]string](p, `(() => { const e = document.querySelector('[data-test="device"][data-device="`+id+`"] [data-test="control"]');
			if (!e) return ["none"];
			const opts = e.options ? [...e.options].map((o) => o.value).join(",") : "";
			return [e.tagName.toLowerCase(), e.type, e.min, e.max, e.step, e.value, String(e.disabled), opts]; })()`)
	}
	for _, tt := range []struct {
		id   string
		want []string
	}{
		{"vfd.speed", []string{"input", "range", "0", "50", "0.01", "25", "false", ""}},
		{"vfd.run", []string{"input", "checkbox", "", "", "", "on", "false", ""}},
		{"vfd.status", []string{"select", "select-one", "", "", "", "running", "true", "stopped,running,fault"}},
		{"vfd.mode", []string{"select", "select-one", "", "", "", "local", "false", "local,remote"}},
		{"plc.setpoint", []string{"input", "number", "", "", "0.1", "", "false", ""}},
		{"meter.voltage", []string{"none"}},
	} {
		if got := control(tt.id); !equal(got, tt.want) {
			t.Errorf("%s's control (tag, type, min, max, step, value, disabled, options) = %q, want %q", tt.id, got, tt.want)
		}
	}

	// Each control writes: a select's choice, a checkbox, a typed number.
	eval[chromedp.Void](p, `void (() => { const s = document.querySelector('[data-device="vfd.mode"] [data-test="control"]');
		s.value = "remote"; s.dispatchEvent(new Event("change", { bubbles: true })); })()`)
	p.waitText(deviceHook("vfd.mode", "value"), `^remote$`)
	p.do(chromedp.Click(deviceHook("vfd.run", "control")))
	p.waitText(deviceHook("vfd.run", "value"), `^true$`)
	p.fill(deviceHook("plc.setpoint", "control"), "12.5")
	p.do(chromedp.Click(deviceHook("plc.setpoint", "send")))
	p.waitText(deviceHook("plc.setpoint", "value"), `^12\.5 °C$`)
	for id, want := range map[string]any{"vfd.mode": "remote", "vfd.run": true, "plc.setpoint": 12.5} {
		if got := regs[id].value(); got != want {
			t.Errorf("%s holds %#v, want %#v", id, got, want)
		}
	}
}
