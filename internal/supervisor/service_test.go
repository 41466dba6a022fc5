package supervisor

import (
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/halclient"
	"github.com/openhal/gateway/internal/supervisor/restart"
	"github.com/openhal/gateway/jsonrpc"
	"github.com/openhal/gateway/openhal"
)

// The test adapter in its correct mode: it starts as its own user with the
// cleared environment, serves its declared devices to a HAL client,
// receives events in its scope, adds a device at run time and publishes its
// values, reaches the Hub under its grant and is refused outside it, and
// stops with the stop sequence.
func TestServiceCorrect(t *testing.T) {
	t.Setenv("TA_PASSED", "yes")
	t.Setenv("TA_SECRET", "no")
	script := `[
	 {"call":"devices.add","params":{"device":{"id":"extra","kind":"sensor","access":"r","risk":"low","schema":{"type":"number"}}}},
	 {"notify":"value.publish","params":{"device":"extra","value":7}},
	 {"call":"device.write","params":{"device":"sim.led","value":true,"reason":"adapter test"}},
	 {"call":"device.read","params":{"device":"sim.led"}},
	 {"call":"devices.list","params":{}},
	 {"call":"device.write","params":{"device":"other.thing","value":1}}
	]`
	b := newBench(t, spec{
		name: "ta", args: []string{"--values", `{"temp":21.5,"relay":false}`, "--script", script, "--probe", "/dev/null"},
		grant:   `{"level":"control_low","scope":["sim.*","ta.*"]}`,
		devices: `[{"id":"temp","kind":"sensor","access":"r","risk":"low","schema":{"type":"number","unit":"Cel"}},{"id":"relay","kind":"gpio.output","access":"rw","risk":"low","schema":{"type":"boolean"},"safe":false}]`,
		envPass: []string{"TA_PASSED", "TA_MISSING"},
	})
	// Declared devices are there, offline, before the adapter runs.
	if d, ok := b.reg.Describe("ta.temp"); !ok || d.State != device.StateOffline || d.Source != "adapter:ta" {
		t.Fatalf("ta.temp before start: %+v", d)
	}
	b.start()
	st := b.waitState("ta", restart.Running)
	if st.Pid == 0 || st.User != b.user {
		t.Fatalf("status %+v", st)
	}
	rec := b.startRecord("ta")
	wantEnv := []string{"HOME=" + b.home("ta"), "LANG=C.UTF-8", "OXIDEPM_ADAPTER_PROTOCOLS=1", "PATH=" + basePath, "TA_PASSED=yes"}
	if lang, ok := os.LookupEnv("LANG"); ok && lang != "" {
		wantEnv[1] = "LANG=" + lang
	}
	env := slices.Clone(rec.Env)
	slices.Sort(env)
	if !slices.Equal(env, wantEnv) {
		t.Fatalf("environment %q, want %q", env, wantEnv)
	}
	if rec.Pgid != rec.Pid {
		t.Fatalf("pgid %d, pid %d: not a group of its own", rec.Pgid, rec.Pid)
	}
	if rec.Cwd != b.stateDir+"/adapters/ta" {
		t.Fatalf("cwd %s", rec.Cwd)
	}

	c := b.client()
	ctx := ctxWait(t)
	b.waitDeviceState("ta.temp", device.StateOK)
	v, err := c.Read(ctx, "ta.temp", 0)
	if err != nil || v.Value != 21.5 {
		t.Fatalf("read ta.temp: %+v, %v", v, err)
	}
	if _, err := c.Write(ctx, "ta.relay", true, "test"); err != nil {
		t.Fatalf("write ta.relay: %v", err)
	}
	b.waitFile("ta", "received.jsonl", `"method":"device.write","params":{"device":"relay","value":true}`)

	// The script's calls: devices.add, a write and a read of a board
	// device through the Hub, the list in its scope, and a denial.
	calls := b.waitFile("ta", "calls.jsonl", `"other.thing"`)
	for _, want := range []string{`{"id":"ta.extra"}`, `"status":"applied"`, `"device":"sim.led","value":true`, `E_ADAPTER_DENIED`} {
		if !strings.Contains(calls, want) {
			t.Fatalf("calls.jsonl lacks %s:\n%s", want, calls)
		}
	}
	if got := b.led.writes; len(got) != 1 || got[0] != true {
		t.Fatalf("sim.led writes %v", got)
	}
	if v, err := c.Read(ctx, "ta.extra", 0); err != nil || v.Value != 7.0 {
		// ta.extra is read-through: the test adapter answers from its
		// values, which have no "extra": an adapter error.
		var he *halclient.HubError
		if !errors.As(err, &he) || !strings.Contains(he.Error(), "no such device") {
			t.Logf("read ta.extra: %+v, %v", v, err)
		}
	}
	if snap, ok := b.reg.Value("ta.extra"); !ok || snap.Value != 7.0 {
		t.Fatalf("published ta.extra: %+v", snap)
	}
	// Events: a value in its scope reaches it; one outside does not.
	if _, err := c.Write(ctx, "sim.led", false, "event test"); err != nil {
		t.Fatal(err)
	}
	b.waitFile("ta", "received.jsonl", `"type":"value","data":{"device":"sim.led","value":false`)
	// Nothing about its own devices comes back to it as an event: the echo
	// of its value.publish would loop.
	if received := b.waitFile("ta", "received.jsonl", "sim.led"); strings.Contains(received, `"data":{"device":"ta.`) {
		t.Fatalf("the adapter got events about its own devices:\n%s", received)
	}

	b.sup.Stop()
	st = b.waitState("ta", restart.Stopped)
	if alive(rec.Pid) {
		t.Fatalf("adapter %d still alive after stop", rec.Pid)
	}
	if d, _ := b.reg.Describe("ta.temp"); d.State != device.StateOffline {
		t.Fatalf("ta.temp after stop: %s", d.State)
	}
	if _, ok := b.reg.Describe("ta.extra"); ok {
		t.Fatal("the run-time device outlived its run")
	}
	if !strings.Contains(b.waitFile("ta", "received.jsonl", `"method":"shutdown"`), `"method":"shutdown"`) {
		t.Fatal("no shutdown")
	}
	// A service that is not running: E_ADAPTER_FAILED.
	_, err = c.Read(ctx, "ta.temp", 0)
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != openhal.CodeDeviceFault || !strings.Contains(string(mustJSON(je.Data)), "E_ADAPTER_FAILED") {
		t.Fatalf("read of a stopped service: %v", err)
	}
	_ = time.Second
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}
