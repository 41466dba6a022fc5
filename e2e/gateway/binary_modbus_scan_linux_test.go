package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/openhal/gateway/e2e/modbussim"
	"github.com/openhal/gateway/internal/ptytest"
)

// `gateway modbus scan` (issue 31, point 4) run as a user runs it,
// against Debian's pymodbus as the units (package modbussim): over RTU
// on a pseudo-terminal behind a stable link, and over TCP on loopback.

// scanUnits are two units of five ids: unit 1 has holding register 0,
// unit 3 only input register 0, so that holding:0 gets a value from one
// and exception 2 from the other, and input:0 the other way round.
var scanUnits = modbussim.Units{
	1: {modbussim.Holding: {0: {2305}}},
	3: {modbussim.Input: {0: {7}}},
}

// scanTimeout is each id's wait in these scans: a silent id costs it,
// and a unit that answers must do so within it on a loaded machine
// (pymodbus's first answer took over 500 ms once under load).
const scanTimeout = "1s"

// TestBinaryModbusScan: a scan of ids 1-5 finds exactly units 1 and 3,
// one answering a value and one an exception for a register it lacks,
// over RTU and TCP, in words (docs/cli.md's lines) and as JSON lines;
// --probe asks another table.
func TestBinaryModbusScan(t *testing.T) {
	t.Parallel()
	gatewayBinary(t)
	_, relay := modbussim.StartRTUBus(t, 19200, scanUnits)
	tcp := modbussim.StartTCP(t, scanUnits)
	for _, tt := range []struct {
		name  string
		line  []string
		where string
	}{
		{"rtu", []string{"--port", relay.Gateway, "--baud", "19200"}, relay.Gateway},
		{"tcp", []string{"--tcp", tcp.Addr}, "tcp://" + tcp.Addr},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			scan := func(units string, more ...string) string {
				args := append(append([]string{"modbus", "scan"}, tt.line...), "--units", units, "--timeout", scanTimeout)
				return gwOK(t, append(args, more...)...)
			}
			wantScan(t, scan("1-5"), 5, []string{
				`unit 1: holding 0 = 2305`,
				`unit 3: answers holding 0 with exception 2: illegal data address (it is there, without that address)`,
			}, "holding:0", tt.where)
			wantScan(t, scan("1,3", "--probe", "input:0"), 2, []string{
				`unit 1: answers input 0 with exception 2: illegal data address (it is there, without that address)`,
				`unit 3: input 0 = 7`,
			}, "input:0", tt.where)
			wantJSONScan(t, scan("1-5", "--json"), []map[string]any{
				{"unit": 1.0, "answer": "value", "value": 2305.0},
				{"unit": 3.0, "answer": "exception", "exception": "exception 2: illegal data address"},
			})
		})
	}
}

// wantScan checks a scan's output in words: the units' lines, then the
// count of ids that answered out of asked, the probe and the line.
func wantScan(t *testing.T, out string, asked int, units []string, probe, where string) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	summary := regexp.MustCompile(`^` + regexp.QuoteMeta(fmt.Sprintf("%d of %d unit ids answered (%s on %s) in ", len(units), asked, probe, where)) + `\d+(\.\d+)?m?s$`)
	if len(lines) != len(units)+1 || !reflect.DeepEqual(lines[:len(units)], units) || !summary.MatchString(lines[len(units)]) {
		t.Errorf("scan printed\n%s\nwant\n%s\n%s", out, strings.Join(units, "\n"), summary)
	}
}

// wantJSONScan checks a --json scan's output: one object a line, each
// unit that answered, and nothing else.
func wantJSONScan(t *testing.T, out string, want []map[string]any) {
	t.Helper()
	var got []map[string]any
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("--json printed %q: line %q: %v", out, line, err)
		}
		got = append(got, m)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("--json printed %v, want %v", got, want)
	}
}

// TestBinaryModbusScanGarbled: answers whose CRC does not check (one
// byte changed on the way, as line noise or a unit at another parity
// does) are garbled answers, in words and as JSON: the unit is there,
// and the scan says so rather than skipping it. The units are pymodbus
// behind a relay that flips a bit of each answer's fourth byte: the
// unit id and function stay as sent, so the frame is found and fails
// its CRC. (modbussim's relay injects noise only between frames, where
// the gateway skips it; a flip inside the answer is what makes it
// garbled, and doing it here keeps it the same on every run.)
func TestBinaryModbusScanGarbled(t *testing.T) {
	t.Parallel()
	gatewayBinary(t)
	port, simPort := corruptingLine(t)
	modbussim.StartRTU(t, simPort, 19200, scanUnits)
	args := []string{"modbus", "scan", "--port", port, "--baud", "19200", "--units", "1-3", "--timeout", scanTimeout}
	garbled := "a garbled answer: a unit at another baud rate or parity, or two units with this id"
	out := gwOK(t, args...)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 3 || lines[0] != "unit 1: "+garbled || lines[1] != "unit 3: "+garbled ||
		!strings.HasPrefix(lines[2], "2 of 3 unit ids answered (holding:0 on "+port+") in ") {
		t.Errorf("scan printed\n%s\nwant units 1 and 3 garbled, and 2 of 3", out)
	}
	wantJSONScan(t, gwOK(t, append(args, "--json")...), []map[string]any{
		{"unit": 1.0, "answer": "garbled"},
		{"unit": 3.0, "answer": "garbled"},
	})
}

// corruptingLine is a serial line of two pseudo-terminals with a relay
// between their masters: the gateway opens port, the simulator simPort.
// Requests pass as sent; the fourth byte of each answer (after the unit
// id, the function and a byte count or exception code) is flipped. The
// test holds both slaves open, so a master never reads EIO while the
// scan has closed its port.
func corruptingLine(t *testing.T) (port, simPort string) {
	t.Helper()
	gwMaster, gwSlave := openPTMX(t)
	simMaster, simSlave := openPTMX(t)
	for _, p := range []string{gwSlave, simSlave} {
		f, err := os.OpenFile(p, os.O_RDWR|syscall.O_NOCTTY, 0)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		if err := ptytest.MakeRaw(f); err != nil {
			t.Fatalf("make %s raw: %v", p, err)
		}
	}
	var mu sync.Mutex
	sent := 0 // bytes of the current answer passed on
	go func() {
		buf := make([]byte, 256)
		for {
			n, err := gwMaster.Read(buf)
			if err != nil {
				return // the test ended
			}
			mu.Lock()
			sent = 0 // a request: what comes back next is its answer
			mu.Unlock()
			simMaster.Write(buf[:n])
		}
	}()
	go func() {
		buf := make([]byte, 256)
		for {
			n, err := simMaster.Read(buf)
			if err != nil {
				return
			}
			mu.Lock()
			if i := 3 - sent; i >= 0 && i < n {
				buf[i] ^= 0x10
			}
			sent += n
			mu.Unlock()
			gwMaster.Write(buf[:n])
		}
	}()
	link := t.TempDir() + "/usb-garbled-if00-port0"
	if err := os.Symlink(gwSlave, link); err != nil {
		t.Fatal(err)
	}
	return link, simSlave
}

// TestBinaryModbusScanRefuses: bad flags exit 2 naming the flag, with
// the usage; a port that cannot be opened, a TCP unit not listening, and
// a port the running gateway holds (it opens its lines exclusively) exit
// 1 with one line saying why.
func TestBinaryModbusScanRefuses(t *testing.T) {
	t.Parallel()
	gatewayBinary(t)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{}, "modbus scan: --port PATH --baud N (a serial line) or --tcp HOST[:PORT] is required"},
		{[]string{"--port", "/dev/ttyUSB9"}, "modbus scan: --baud: required"},
		{[]string{"--port", "ttyUSB0", "--baud", "9600"}, `modbus scan: --port: "ttyUSB0": not absolute`},
		{[]string{"--port", "/dev/ttyUSB9", "--baud", "-5"}, "modbus scan: --baud: "},
		{[]string{"--port", "/dev/ttyUSB9", "--baud", "9600", "--parity", "mark"}, `modbus scan: --parity: want none, even or odd, got "mark"`},
		{[]string{"--port", "/dev/ttyUSB9", "--baud", "9600", "--stop-bits", "3"}, "modbus scan: --stop-bits: "},
		{[]string{"--port", "/dev/ttyUSB9", "--baud", "9600", "--de", "dtr"}, "modbus scan: --de: want none"},
		{[]string{"--port", "/dev/ttyUSB9", "--baud", "9600", "--units", "0-5"}, `modbus scan: --units: "0-5": want ids from 1 to 247`},
		{[]string{"--port", "/dev/ttyUSB9", "--baud", "9600", "--units", "1,x"}, `modbus scan: --units: "x": want N, N-M`},
		{[]string{"--tcp", "127.0.0.1:1", "--units", "0-256"}, `modbus scan: --units: "0-256": want ids from 0 to 255`},
		{[]string{"--port", "/dev/ttyUSB9", "--baud", "9600", "--probe", "register:0"}, `modbus scan: --probe: "register:0": want TABLE:ADDRESS`},
		{[]string{"--port", "/dev/ttyUSB9", "--baud", "9600", "--probe", "holding:65536"}, `modbus scan: --probe: "holding:65536"`},
		{[]string{"--port", "/dev/ttyUSB9", "--baud", "9600", "--timeout", "1ms"}, "modbus scan: --timeout: want 10ms to 1m0s"},
		{[]string{"--tcp", "127.0.0.1:1", "--baud", "9600"}, "modbus scan: --baud: a TCP line has no baud"},
		{[]string{"--tcp", "127.0.0.1:1", "--port", "/dev/ttyUSB9", "--baud", "9600"}, "modbus scan: --tcp: a line is serial (port) or TCP (tcp), not both"},
		{[]string{"--tcp", "127.0.0.1:1", "extra"}, `modbus scan: unexpected argument "extra"`},
	} {
		r := gw(t, append([]string{"modbus", "scan"}, tt.args...)...)
		first, _, _ := strings.Cut(r.stderr, "\n")
		if r.code != 2 || r.stdout != "" || !strings.HasPrefix(first, "gateway: "+tt.want) || !strings.Contains(r.stderr, "\nusage: gateway modbus scan ") {
			t.Errorf("scan %q: exit %d, stdout %q, stderr %q; want exit 2 saying %q, and the usage", tt.args, r.code, r.stdout, r.stderr, tt.want)
		}
	}

	wantOneLineError(t, gw(t, "modbus", "scan", "--port", "/dev/serial/by-id/usb-none-if00-port0", "--baud", "9600"),
		"modbus scan: open /dev/serial/by-id/usb-none-if00-port0: no such file or directory")
	wantOneLineError(t, gw(t, "modbus", "scan", "--tcp", "127.0.0.1:1"), "connection refused")

	// The gateway's line holds the port (TIOCEXCL, and the gateway's
	// lock of it): a scan by another user is refused by the exclusive
	// mode, one by the same user or root (whom the kernel lets past
	// TIOCEXCL) by the lock, and the gateway's unit is not disturbed.
	// Under root the other user is uid 65534, running a copy of the
	// binary it may run, on the terminal itself (the link is in the
	// test's private directory).
	sim, relay := modbussim.StartRTUBus(t, 19200, scanUnits)
	dir := t.TempDir()
	config := writeConfig(t, fmt.Sprintf(`board: generic
modbus:
  rs485: {port: %s, baud: 19200}
devices:
  meter.reg:
    kind: modbus
    bus: rs485
    slave: 1
    table: holding
    address: 0
    safe: 0
`, relay.Gateway))
	g := startGatewayWith(t, dir, 1, "--config", config)
	g.err.waitFor(t, 0, `msg="modbus line open" line=modbus\.rs485`, waitLong)
	pts, err := os.Readlink(relay.Gateway)
	if err != nil {
		t.Fatal(err)
	}
	busy := "open " + pts + ": busy: another program has the port (a running gateway holds its ports: stop it first)"
	wantOneLineError(t, scanNotAsRoot(t, pts, "--port", pts, "--baud", "19200", "--units", "1-2"), busy)
	wantOneLineError(t, gw(t, "modbus", "scan", "--port", relay.Gateway, "--baud", "19200", "--units", "1-2"),
		"open "+relay.Gateway+": busy: another program has the port (a running gateway holds its ports: stop it first)")
	sim.Set(1, modbussim.Holding, 0, 2306)
	out := gwOK(t, "read", "meter.reg", "--hub", g.tcp, "--state-dir", dir)
	if out != "2306\n" {
		t.Errorf("the gateway's read after the refused scan: %q, want 2306", out)
	}
	g.stop(t)
}

// scanNotAsRoot runs `gateway modbus scan` with args as this user, or
// as uid 65534 when this is root, letting that user open the terminal
// pts.
func scanNotAsRoot(t *testing.T, pts string, args ...string) result {
	t.Helper()
	if os.Geteuid() != 0 {
		return gw(t, append([]string{"modbus", "scan"}, args...)...)
	}
	if err := os.Chmod(pts, 0o666); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(sharedDir(t), "gateway")
	if err := copyExecutable(gatewayBinary(t), bin); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{"modbus", "scan"}, args...)...)
	cmd.Env = childEnv()
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("scan as uid 65534: %v", err)
	}
	return result{stdout: stdout.String(), stderr: stderr.String(), code: cmd.ProcessState.ExitCode()}
}
