package gateway_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/openhal/gateway/e2e/modbussim"
	"github.com/openhal/gateway/internal/mqttbridge/mosquittotest"
)

// Issue 31, point 7, on the real binary: a gateway whose Modbus devices
// are pymodbus's registers over Modbus TCP (package modbussim) is seen by
// Home Assistant (the mqtt adapter on a mosquitto of the test's own), an
// MCP client and the Python client as any other, with units.

// pumpUnits is the VFD of docs/examples/modbus-vfd.yaml as unit 1: the
// run coil off, the output frequency 25.00 Hz and the status "running"
// in input registers, the speed setpoint 10.00 Hz and the mode "remote"
// in holding registers.
var pumpUnits = modbussim.Units{
	1: {
		modbussim.Coil:    {0: {0}},
		modbussim.Input:   {0: {2500, 1}},
		modbussim.Holding: {1: {1000, 1}},
	},
}

// pumpYAML is the configuration of pumpUnits on the TCP line at addr,
// before its adapters section.
func pumpYAML(addr string) string {
	return fmt.Sprintf(`board: generic
modbus:
  plc: {tcp: %s, timeout: 2s}
devices:
  pump.run:
    kind: modbus
    label: Pump run
    bus: plc
    slave: 1
    table: coil
    address: 0
    risk: low
  pump.frequency:
    kind: modbus
    label: Pump output frequency
    bus: plc
    slave: 1
    table: input
    address: 0
    scale: 0.01
    unit: Hz
  pump.status:
    kind: modbus
    label: Pump drive status
    bus: plc
    slave: 1
    table: input
    address: 1
    enum: {0: stopped, 1: running, 2: fault}
  pump.speed:
    kind: modbus
    label: Pump speed setpoint
    bus: plc
    slave: 1
    table: holding
    address: 1
    scale: 0.01
    unit: Hz
    minimum: 0
    maximum: 50
    safe: 0
  pump.mode:
    kind: modbus
    label: Pump control source
    bus: plc
    slave: 1
    table: holding
    address: 2
    enum: {0: local, 1: remote}
    safe: local
`, addr)
}

// TestBinaryModbusSurfaces: one gateway, its Modbus devices seen by Home
// Assistant, MCP and Python (each a subtest).
func TestBinaryModbusSurfaces(t *testing.T) {
	t.Parallel()
	gatewayBinary(t) // skipped with -short before anything starts
	sim := modbussim.StartTCP(t, pumpUnits)
	_, port := startBroker(t, mosquittotest.Options{})
	state, cfg := installAdapter(t, mqttAdapter(t), "mqtt", "")
	conf := pumpYAML(sim.Addr) + "adapters:\n  enabled: [mqtt]\n  user: nobody\n" + mqttSettings(port, "pumps")
	if err := os.WriteFile(cfg, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	gwOK(t, "check", "--config", cfg)
	b := &mqttBench{id: "pumps", port: port, s: subscribe(t, port)}
	b.g = readyGatewayAt(t, startChild(t, gatewayRunArgs(state, "--config", cfg, "--mcp")...), state, "5|6")
	adapterRunning(t, b.g, "mqtt")
	// Every device has been read once (its value is on the broker) before
	// the clients look: a value is published once the line has read it.
	for _, dev := range []string{"pump.run", "pump.frequency", "pump.status", "pump.speed", "pump.mode"} {
		b.s.msg(t, 0, q(b.tp.State(b.id, dev)), `.+`)
	}

	t.Run("home assistant", func(t *testing.T) { modbusHomeAssistant(t, b, sim) })
	t.Run("mcp", func(t *testing.T) { modbusMCP(t, b.g) })
	t.Run("python", func(t *testing.T) { modbusPython(t, b.g, "tcp://"+sim.Addr) })
	b.g.stop(t)
}

// modbusHomeAssistant: the discovery payload maps each x.modbus device
// by its table and schema (a coil a switch, an input register a sensor
// with its unit, a holding register a number over its range, a status
// word an enum sensor, a written enum a select), the states are the
// unit's values, and a command on the switch's topic sets the coil.
func modbusHomeAssistant(t *testing.T, b *mqttBench, sim *modbussim.Sim) {
	_, p := b.s.msg(t, 0, q(b.tp.DeviceConfig(b.id)), `\{.*\}`)
	d := parseDiscovery(t, p)
	set := func(id string) string { return b.tp.Set(b.id, id) }
	want := map[string]map[string]any{
		"switch_pump_run": {"p": "switch", "name": "Pump run", "command_topic": set("pump.run"),
			"payload_on": "true", "payload_off": "false"},
		"sensor_pump_frequency": {"p": "sensor", "name": "Pump output frequency", "unit_of_measurement": "Hz",
			"device_class": "frequency", "command_topic": nil},
		"sensor_pump_status": {"p": "sensor", "device_class": "enum", "options": []any{"stopped", "running", "fault"},
			"command_topic": nil},
		"number_pump_speed": {"p": "number", "min": 0.0, "max": 50.0, "step": 0.01, "unit_of_measurement": "Hz",
			"command_topic": set("pump.speed")},
		"select_pump_mode": {"p": "select", "options": []any{"local", "remote"}, "command_topic": set("pump.mode")},
	}
	for key, w := range want {
		c, ok := d.Cmps[key]
		if !ok {
			t.Errorf("no component %s in %v", key, keys(d.Cmps))
			continue
		}
		for f, v := range w {
			if !reflect.DeepEqual(c[f], v) {
				t.Errorf("%s.%s = %#v, want %#v", key, f, c[f], v)
			}
		}
	}
	topics := d.stateTopics()
	for key, value := range map[string]string{"switch_pump_run": "false", "sensor_pump_frequency": "25",
		"sensor_pump_status": `"running"`, "number_pump_speed": "10", "select_pump_mode": `"remote"`} {
		if tp := topics[key]; tp != b.tp.State(b.id, strings.ReplaceAll(strings.SplitN(key, "_", 2)[1], "_", ".")) {
			t.Errorf("%s follows %q", key, tp)
			continue
		}
		b.s.msg(t, 0, q(topics[key]), q(value))
	}

	mark := b.s.out.len()
	publish(t, b.port, set("pump.run"), "true", false)
	if _, r := b.result(t, mark, "pump.run"); r.Status != "applied" || string(r.Value) != "true" {
		t.Errorf("pump.run result %+v, want applied true", r)
	}
	b.s.msg(t, mark, q(b.tp.State(b.id, "pump.run")), "true")
	if got := sim.Get(1, modbussim.Coil, 0, 1); !slices.Equal(got, []uint16{1}) {
		t.Errorf("the unit's coil 0 after the switch's command: %v, want [1]", got)
	}
}

// modbusMCP: list_devices shows each Modbus device with its type, unit,
// range or names, and read_device the unit's value with its unit.
func modbusMCP(t *testing.T, g *gateway) {
	agent := g.addToken(t, "pump-agent", "control_low")
	c := connectMCP(t, g, "stdio", "", agent)
	var list struct {
		Devices []struct {
			ID       string   `json:"id"`
			Kind     string   `json:"kind"`
			Type     string   `json:"type"`
			Unit     string   `json:"unit"`
			Minimum  *float64 `json:"minimum"`
			Maximum  *float64 `json:"maximum"`
			Enum     []any    `json:"enum"`
			Writable bool     `json:"writable"`
			State    string   `json:"state"`
		} `json:"devices"`
	}
	c.ok(t, "list_devices", nil, &list)
	got := map[string]string{}
	for _, d := range list.Devices {
		r := func(f *float64) string {
			if f == nil {
				return "-"
			}
			return fmt.Sprint(*f)
		}
		got[d.ID] = fmt.Sprintf("%s %s %s %s..%s %v writable=%v %s", d.Kind, d.Type, d.Unit, r(d.Minimum), r(d.Maximum), d.Enum, d.Writable, d.State)
	}
	for id, w := range map[string]string{
		"pump.run":       "x.modbus boolean  -..- [] writable=true ok",
		"pump.frequency": "x.modbus number Hz 0..655.35 [] writable=false ok", // uint16 ×0.01
		"pump.status":    "x.modbus string  -..- [stopped running fault] writable=false ok",
		"pump.speed":     "x.modbus number Hz 0..50 [] writable=true ok",
		"pump.mode":      "x.modbus string  -..- [local remote] writable=true ok",
	} {
		if got[id] != w {
			t.Errorf("list_devices shows %s as %q, want %q", id, got[id], w)
		}
	}
	var freq struct {
		Value any    `json:"value"`
		Unit  string `json:"unit"`
	}
	c.ok(t, "read_device", map[string]any{"device": "pump.frequency"}, &freq)
	if freq.Value != 25.0 || freq.Unit != "Hz" {
		t.Errorf("read_device pump.frequency: %+v, want 25 Hz", freq)
	}
}

// modbusRead reads a Modbus device with the Python client and prints
// its value, its schema's unit and where it sits, as JSON.
const modbusRead = `import json, sys, openhal
c = openhal.connect(sys.argv[1], sys.argv[2], timeout=10)
try:
    d = c.device("pump.speed")
    v = c.read("pump.speed")
    m = d.modbus
    print(json.dumps({"value": v.value, "unit": d.schema.get("unit"), "bus": d.bus, "address": d.address,
        "modbus": [m.table, m.address, m.type, m.words, m.swap, m.scale, m.offset]}))
finally:
    c.close()
`

// modbusPython: the Python client (clients/python, under Debian's
// python3) reads a holding register's value, and its descriptor gives
// the unit and the register (a ModbusRegister) on its line and unit id.
func modbusPython(t *testing.T, g *gateway, bus string) {
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("no /usr/bin/python3 in CI")
		}
		t.Skip("no /usr/bin/python3")
	}
	root, err := filepath.Abs(filepath.Join("..", "..", "clients", "python"))
	if err != nil {
		t.Fatal(err)
	}
	admin, err := os.ReadFile(filepath.Join(g.dir, "admin.token"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("/usr/bin/python3", "-c", modbusRead, g.tcp, strings.TrimSpace(string(admin)))
	cmd.Env = append(childEnv(), "PYTHONPATH="+root, "PYTHONDONTWRITEBYTECODE=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("the Python client printed %q, stderr %q: %v", out, stderr.String(), err)
	}
	want := map[string]any{"value": 10.0, "unit": "Hz", "bus": bus, "address": "1",
		"modbus": []any{"holding", 1.0, "uint16", 1.0, "", 0.01, 0.0}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the Python client read %v, want %v", got, want)
	}
}
