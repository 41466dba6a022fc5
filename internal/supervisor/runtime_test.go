package supervisor

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openhal/gateway/internal/supervisor/restart"
	"github.com/openhal/gateway/jsonrpc"
	"github.com/openhal/gateway/openhal"
)

var tempDevice = `[{"id":"temp","kind":"sensor","access":"r","risk":"low","schema":{"type":"number"}}]`

// Misbehaviour after the handshake is handled as the spec says, and the
// Hub and the other adapters keep serving meanwhile.
func TestRunningMisbehaviour(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string // in the crash detail
	}{
		{"no pongs", []string{"--no-pong"}, "pings"},
		{"garbage", []string{"--script", `[{"send":"x"},{"send":"[1]"},{"send":"{}"},{"send":"{\"jsonrpc\":\"2.0\",\"id\":99,\"result\":{}}"},{"send":"{\"jsonrpc\":\"2.0\",\"method\":\"a b\"}"}]`}, "E_ADAPTER_PROTOCOL"},
		{"replies to unknown ids", []string{"--script", `[{"send":"{\"jsonrpc\":\"2.0\",\"id\":900,\"result\":{}}"},{"send":"{\"jsonrpc\":\"2.0\",\"id\":901,\"result\":{}}"},{"send":"{\"jsonrpc\":\"2.0\",\"id\":902,\"result\":{}}"},{"send":"{\"jsonrpc\":\"2.0\",\"id\":903,\"result\":{}}"},{"send":"{\"jsonrpc\":\"2.0\",\"id\":904,\"result\":{}}"}]`}, "unknown_id"},
		{"reused request ids", []string{"--script", `[{"reuse_id":1},{"reuse_id":1},{"reuse_id":1},{"reuse_id":1},{"reuse_id":1},{"reuse_id":1}]`}, "reused_id"},
		{"over-long lines", []string{"--script", `[{"long_line":300000},{"long_line":300000},{"long_line":300000},{"long_line":300000},{"long_line":300000}]`}, "line_too_long"},
		{"crash after a while", []string{"--script", `[{"sleep":"50ms"},{"exit":4}]`}, "code 4"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := newBench(t, spec{name: "ta", args: tt.args}, spec{name: "good"})
			b.start()
			b.waitState("good", restart.Running)
			st := b.waitState("ta", restart.Backoff)
			if !strings.Contains(st.Detail, tt.want) {
				t.Fatalf("status %+v, want a crash mentioning %q", st, tt.want)
			}
			// The other adapter and the Hub were not disturbed.
			if st := b.adapter("good").status(); st.State != restart.Running || st.Crashes != 0 {
				t.Fatalf("the good adapter: %+v", st)
			}
			c := b.client()
			if _, err := c.Write(ctxWait(t), "sim.led", true, ""); err != nil {
				t.Fatal(err)
			}
			b.waitState("ta", restart.Running) // restarted
		})
	}
}

// An empty line is harmless; four strikes do not kill.
func TestHarmlessLines(t *testing.T) {
	b := newBench(t, spec{name: "ta", args: []string{"--script", `[{"send":""},{"send":""},{"send":"x"},{"send":"x"},{"send":"x"},{"send":"x"},{"call":"devices.list","params":{}}]`}})
	b.start()
	b.waitState("ta", restart.Running)
	b.waitFile("ta", "calls.jsonl", "devices.list")
	st := b.adapter("ta").status()
	if st.Strikes != 4 || st.State != restart.Running {
		t.Fatalf("status %+v, want 4 strikes and running", st)
	}
}

// A flood of standard output is read as it comes (and, being valid
// notifications of a device it does not have, dropped); a flood of standard
// error is cut and rate limited into its own log, never the gateway's.
//
// Pings are kept out of it: the adapter's answer to a ping waits in its
// pipe behind the flood, so on a loaded machine the daemon reads it past
// shortTiming's 150 ms, and three such misses kill the adapter, which then
// floods again from the start, by the protocol's rule (TestPingMissesKill
// in supervisor/conn tests that rule), not a fault of the flood handling.
func TestFloods(t *testing.T) {
	timing := shortTiming()
	timing.Conn.PingInterval = time.Hour
	b := newBenchTimed(t, timing, spec{name: "ta", args: []string{"--script", `[
	 {"flood":20000,"method":"value.publish","params":{"device":"nope","value":1}},
	 {"stderr":"` + strings.Repeat("e", 10000) + `","repeat":300},
	 {"call":"devices.list","params":{}}]`}})
	b.start()
	b.waitState("ta", restart.Running)
	b.waitFile("ta", "calls.jsonl", "devices.list")
	st := b.adapter("ta").status()
	if st.State != restart.Running || st.Strikes != 0 {
		t.Fatalf("status %+v", st)
	}
	if st.Stderr.Cut == 0 || st.Stderr.DroppedLines == 0 {
		t.Fatalf("stderr stats %+v: want lines cut at 8 KiB and some dropped over 1 MiB/s", st.Stderr)
	}
	if strings.Contains(b.log.String(), "eeeeeeeeee") {
		t.Fatal("the adapter's stderr reached the gateway's log")
	}
	data, err := os.ReadFile(filepath.Join(LogDir(b.stateDir), "ta.log"))
	if err != nil || !strings.Contains(string(data), "eeeeeeee") {
		t.Fatalf("adapter log: %v", err)
	}
}

// The seed's cancellation through the Hub: a read whose adapter is too
// slow times out for the client, the request is cancelled, and the late
// reply is dropped and counted, without a strike.
func TestLateReplyThroughHub(t *testing.T) {
	b := newBench(t, spec{name: "ta", args: []string{"--read-delay", "1s", "--values", `{"temp":1}`}, devices: tempDevice, requestMs: 300})
	b.start()
	b.waitState("ta", restart.Running)
	c := b.client()
	_, err := c.Read(ctxWait(t), "ta.temp", 0)
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != openhal.CodeTimeout {
		t.Fatalf("read: %v, want TIMEOUT", err)
	}
	b.waitFile("ta", "received.jsonl", `"method":"cancel"`)
	deadline := time.Now().Add(wait)
	for b.adapter("ta").status().LateReplies != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("no late reply counted: %+v", b.adapter("ta").status())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if st := b.adapter("ta").status(); st.Strikes != 0 || st.State != restart.Running {
		t.Fatalf("status %+v", st)
	}
}

// An adapter's error answer reaches the client whole; a connection that
// ends with a request in flight fails it with E_ADAPTER_CRASHED.
func TestAdapterErrorsThroughHub(t *testing.T) {
	relay := `[{"id":"relay","kind":"gpio.output","access":"rw","risk":"low","schema":{"type":"boolean"}},{"id":"temp","kind":"sensor","access":"r","risk":"low","schema":{"type":"number"}}]`
	b := newBench(t,
		spec{name: "ta", args: []string{"--write-error"}, devices: relay},
		spec{name: "tb", args: []string{"--read-delay", "5s", "--script", `[{"sleep":"300ms"},{"exit":5}]`}, devices: relay})
	b.start()
	b.waitState("ta", restart.Running)
	b.waitState("tb", restart.Running)
	c := b.client()
	_, err := c.Write(ctxWait(t), "ta.relay", true, "")
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != openhal.CodeDeviceFault {
		t.Fatalf("write: %v", err)
	}
	var data struct {
		Code  string `json:"code"`
		Error struct {
			Code    int            `json:"code"`
			Message string         `json:"message"`
			Data    map[string]int `json:"data"`
		} `json:"error"`
	}
	if err := json.Unmarshal(mustJSON(je.Data), &data); err != nil || data.Code != "E_ADAPTER_ERROR" ||
		data.Error.Code != -32010 || data.Error.Message != "relay stuck" || data.Error.Data["relay"] != 1 {
		t.Fatalf("data %s: want E_ADAPTER_ERROR with the adapter's error whole", mustJSON(je.Data))
	}
	_, err = c.Read(ctxWait(t), "tb.temp", 0)
	if !errors.As(err, &je) || !strings.Contains(string(mustJSON(je.Data)), "E_ADAPTER_CRASHED") {
		t.Fatalf("read in flight at a crash: %v", err)
	}
}

// The fixed stop timeline with adapters that make it hard: one that
// ignores SIGTERM and shutdown, one whose leader exits while a child
// lingers in its group, one whose grandchild escapes with setsid. Each is
// gone within the total, and nothing of them remains.
func TestStopLeavesNothing(t *testing.T) {
	b := newBench(t,
		spec{name: "stubborn", args: []string{"--ignore-sigterm"}},
		spec{name: "lingering", args: []string{"--fork", "child"}},
		spec{name: "escaping", args: []string{"--fork", "grandchild-setsid"}},
		spec{name: "session", args: []string{"--fork", "setsid"}},
		spec{name: "good"})
	b.start()
	var pids []int
	for _, name := range []string{"stubborn", "lingering", "escaping", "session", "good"} {
		b.waitState(name, restart.Running)
		pids = append(pids, b.startRecord(name).Pid)
		if name != "stubborn" && name != "good" {
			pids = append(pids, b.children(name)...)
		}
	}
	began := time.Now()
	b.sup.Stop()
	took := time.Since(began)
	total := b.timing.Events + b.timing.Stop.Kill + 2*time.Second // slack for a loaded machine
	if took > total {
		t.Fatalf("stopping took %v, more than %v", took, total)
	}
	if took < b.timing.Stop.Kill {
		t.Fatalf("stopping took %v: the stubborn adapter cannot be gone before SIGKILL at %v", took, b.timing.Stop.Kill)
	}
	for _, pid := range pids {
		if alive(pid) {
			t.Errorf("process %d remains after the stop", pid)
		}
	}
}

// children reads the pids the test adapter forked.
func (b *bench) children(name string) []int {
	b.t.Helper()
	data := b.waitFile(name, "children.txt", "\n")
	var pids []int
	for _, f := range strings.Fields(data) {
		var pid int
		if _, err := fmt.Sscan(f, &pid); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}
