package gateway_test

// Helpers of the Modbus black-box tests (issue 31, point 5): the real
// gateway binary with a `board: generic` configuration of Modbus lines and
// devices, against Debian's pymodbus (e2e/modbussim) over RTU, through a
// pty relay, and over TCP on loopback.

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/openhal/gateway/e2e/modbussim"
)

// mbEntry is one device of a test's configuration: a `kind: modbus` entry
// on line bus, with more fields (one "key: value" a line) in extra.
func mbEntry(id, bus string, slave int, table modbussim.Table, addr int, extra ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "  %s:\n    kind: modbus\n    bus: %s\n    slave: %d\n    table: %s\n    address: %d\n", id, bus, slave, table, addr)
	for _, e := range extra {
		fmt.Fprintf(&b, "    %s\n", e)
	}
	return b.String()
}

// mbConfig is a generic board's configuration: lines is the body of
// `modbus:` (already indented), entries the devices.
func mbConfig(lines string, entries []string) string {
	return "board: generic\nmodbus:\n" + lines + "devices:\n" + strings.Join(entries, "")
}

// rtuLine and tcpLine are a line's entry under modbus:, with more fields
// (one "key: value" a line) in extra.
func rtuLine(name, port string, extra ...string) string {
	return lineEntry(name, append([]string{"port: " + port, "baud: 19200"}, extra...))
}

func tcpLine(name, addr string, extra ...string) string {
	return lineEntry(name, append([]string{"tcp: " + addr}, extra...))
}

func lineEntry(name string, fields []string) string {
	return "  " + name + ":\n    " + strings.Join(fields, "\n    ") + "\n"
}

// mbGateway is a gateway running a Modbus configuration, with a watch
// connected to it.
type mbGateway struct {
	*gateway
	w *child // `gateway watch`, as admin
}

// startModbusGateway writes config, starts the gateway on it with n
// devices and a watch, and waits until the watch is connected.
func startModbusGateway(t *testing.T, config string, n int) *mbGateway {
	t.Helper()
	dir := t.TempDir()
	g := startGatewayWith(t, dir, n, "--config", writeConfig(t, config))
	m := &mbGateway{gateway: g}
	m.w = startChild(t, m.admin("watch")...)
	m.w.out.waitFor(t, 0, watchTS+`connected to `, waitLong)
	return m
}

// admin is a client command's arguments as admin of g.
func (g *mbGateway) admin(args ...string) []string {
	return append(args, "--hub", g.tcp, "--state-dir", g.dir)
}

// value waits for the first value of id the watch printed from line from
// on, and returns its line and the value as printed, without its unit.
func (g *mbGateway) value(t *testing.T, from int, id string) (int, string) {
	t.Helper()
	i, m := g.w.out.waitFor(t, from, valueLine(id), waitLong)
	return i, m[1]
}

// valueIs waits for id's value want from line from on.
func (g *mbGateway) valueIs(t *testing.T, from int, id, want string) int {
	t.Helper()
	i, _ := g.w.out.waitFor(t, from, watchTS+regexp.QuoteMeta(id)+` = `+regexp.QuoteMeta(want)+`( \S+)? \(`, waitLong)
	return i
}

// state waits for id's hal/deviceState to state, its fault matching
// fault, from line from on.
func (g *mbGateway) state(t *testing.T, from int, id, state, fault string) int {
	t.Helper()
	pattern := watchTS + regexp.QuoteMeta(id) + `: state ` + state
	if fault != "" {
		pattern += ` \(.*` + fault + `.*\)`
	}
	i, _ := g.w.out.waitFor(t, from, pattern+`$`, waitLong)
	return i
}

// valueLine matches a watch's line of id's value; the value, without its
// unit, is the submatch.
func valueLine(id string) string {
	return watchTS + regexp.QuoteMeta(id) + ` = (\S+)(?: \S+)? \((?:seq|devSeq) `
}

// values is every value of id the watch printed, in order.
func (g *mbGateway) values(id string) []string {
	re := regexp.MustCompile(valueLine(id))
	var out []string
	for _, line := range strings.Split(g.w.out.text(), "\n") {
		if m := re.FindStringSubmatch(line); m != nil {
			out = append(out, m[1])
		}
	}
	return out
}

// states is every hal/deviceState of id the watch printed from line from
// on: "ok", "fault (...)", "offline (...)".
func (g *mbGateway) states(from int, id string) []string {
	re := regexp.MustCompile(watchTS + regexp.QuoteMeta(id) + `: state (.*)$`)
	var out []string
	for i, line := range strings.Split(g.w.out.text(), "\n") {
		if m := re.FindStringSubmatch(line); m != nil && i >= from {
			out = append(out, m[1])
		}
	}
	return out
}

// devices is `gateway devices --json`: each device's state and fault.
func (g *mbGateway) devices(t *testing.T) map[string]string {
	t.Helper()
	var list struct {
		Devices []struct {
			ID    string `json:"id"`
			State string `json:"state"`
			Fault string `json:"fault"`
		} `json:"devices"`
	}
	if err := json.Unmarshal([]byte(gwOK(t, g.admin("devices", "--json")...)), &list); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, d := range list.Devices {
		out[d.ID] = strings.TrimSpace(d.State + " " + d.Fault)
	}
	return out
}

// wantOK checks that every device of ids is ok, as `gateway devices` says.
func (g *mbGateway) wantOK(t *testing.T, ids ...string) {
	t.Helper()
	states := g.devices(t)
	for _, id := range ids {
		if states[id] != "ok" {
			t.Errorf("%s is %q, want ok", id, states[id])
		}
	}
}

// swapped lays a value's big-endian registers (ABCD: the high word first,
// each word's high byte first) out in the order swap names, as a unit
// that stores it so would hold it: byte (BADC) swaps each register's two
// bytes, word (CDAB) reverses the registers, word_byte (DCBA) both. This
// is the test's own reading of the swaps, not the gateway's codec.
func swapped(be []uint16, swap string) []uint16 {
	regs := slices.Clone(be)
	if swap == "byte" || swap == "word_byte" {
		for i, r := range regs {
			regs[i] = r<<8 | r>>8
		}
	}
	if swap == "word" || swap == "word_byte" {
		slices.Reverse(regs)
	}
	return regs
}

// reads keeps the read requests (functions 1 to 4) of reqs.
func reads(reqs []modbussim.Request) []modbussim.Request {
	return slices.DeleteFunc(slices.Clone(reqs), func(r modbussim.Request) bool { return r.Function > 4 })
}

// writes keeps the write requests (functions 5, 6, 15, 16) of reqs.
func writes(reqs []modbussim.Request) []modbussim.Request {
	return slices.DeleteFunc(slices.Clone(reqs), func(r modbussim.Request) bool { return r.Function <= 4 })
}
