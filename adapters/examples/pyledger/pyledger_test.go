// Package pyledger_test runs the pyledger example adapter, a Python
// program written from the protocol's seed pages alone, against the
// gateway's own protocol code: its manifest goes through the supervisor's
// checks, every line it writes through the adapter decoder, and its
// run-time devices through manifest.CheckDevice.
package pyledger_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/openhal/gateway/adapterproto"
	"github.com/openhal/gateway/adapterproto/reference"
	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/supervisor/manifest"
	"github.com/openhal/gateway/jsonrpc"
)

func TestManifest(t *testing.T) {
	data, err := os.ReadFile(manifest.FileName)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	parsed, err := manifest.Parse(data)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	m := readManifest(t)
	if !reflect.DeepEqual(parsed, m) {
		t.Errorf("Parse and ReadDir disagree:\n%+v\n%+v", parsed, m)
	}
	for _, c := range []struct {
		field     string
		got, want any
	}{
		{"name", m.Name, "pyledger"},
		{"version", m.Version, "0.1.0"},
		{"kind", m.Kind, adapterproto.KindService},
		{"exec", m.Exec, "pyledger.py"},
		{"args", len(m.Args), 0},
		{"env_pass", len(m.EnvPass), 0},
		{"grant.level", m.Grant.Level, "control_low"},
		{"grant.scope", m.Grant.Scope, adapterproto.ScopeList{Patterns: []string{"pyledger.*", "sim.*"}}},
		{"devices", len(m.Devices), 0},
		{"timeouts.request_ms", m.Timeouts.RequestMs, manifest.DefaultRequestMs},
	} {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s = %#v, want %#v", c.field, c.got, c.want)
		}
	}
}

// TestExecutable checks what the daemon needs to spawn the file directly:
// mode 0755 and an env shebang (the daemon's PATH finds python3).
func TestExecutable(t *testing.T) {
	fi, err := os.Stat("pyledger.py")
	if err != nil {
		t.Fatalf("stat: %v", err)
	}
	if got := fi.Mode().Perm(); got != 0o755 {
		t.Errorf("mode = %v, want 0755", got)
	}
	b, err := os.ReadFile("pyledger.py")
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	if first, _, _ := strings.Cut(string(b), "\n"); first != "#!/usr/bin/env python3" {
		t.Errorf("first line = %q, want the python3 env shebang", first)
	}
}

// TestNotStartedByDaemon: without OXIDEPM_ADAPTER_PROTOCOLS the adapter
// says why on stderr and fails, run through python3 and through its
// shebang, as the daemon would exec it.
func TestNotStartedByDaemon(t *testing.T) {
	py := python3(t)
	tests := []struct {
		name string
		argv []string
	}{
		{"python3", []string{py, "pyledger.py"}},
		{"shebang", []string{"./pyledger.py"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.name == "shebang" && !inBasePath("python3") {
				t.Skip("python3 is not in the daemon's base PATH")
			}
			cmd := exec.Command(tt.argv[0], tt.argv[1:]...)
			cmd.Env = []string{basePath, "HOME=" + t.TempDir()}
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			cmd.WaitDelay = frameTimeout
			err := cmd.Run()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() == 0 {
				t.Fatalf("want a non-zero exit, got %v (stderr %q)", err, stderr.String())
			}
			if !strings.Contains(stderr.String(), adapterproto.EnvProtocols) {
				t.Errorf("stderr %q does not name %s", stderr.String(), adapterproto.EnvProtocols)
			}
			if stdout.Len() != 0 {
				t.Errorf("stdout = %q, want nothing", stdout.String())
			}
		})
	}
}

// TestHandshake checks the initialize answer for several offers, byte
// for byte against the seed's reference frames, and that the adapter
// exits 0 when its input closes.
func TestHandshake(t *testing.T) {
	python3(t)
	m := readManifest(t)
	tests := []struct {
		name      string
		env       string
		protocols []int
		want      []byte
	}{
		{"seed offer", "1", nil, referenceFor("initialize_result", m.Name)},
		{"newer offered too", "1,2", []int{1, 2}, referenceFor("initialize_result", m.Name)},
		{"only newer", "1", []int{2}, referenceFor("initialize_unsupported", m.Name)},
		{"none", "1", []int{}, referenceFor("initialize_unsupported", m.Name)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			d := startAdapter(t, adapterEnv(dir, tt.env))
			d.send(initializeFrame(t, m, dir, tt.protocols))
			if f := d.response(1); !bytes.Equal(f.raw, tt.want) {
				t.Errorf("reply\n got %s\nwant %s", f.raw, tt.want)
			}
			if err := d.stdin.Close(); err != nil {
				t.Fatalf("close stdin: %v", err)
			}
			if code := d.exit(); code != 0 {
				t.Errorf("exit code at EOF = %d, want 0", code)
			}
		})
	}
}

// TestSession plays the daemon through a whole run: handshake, run-time
// devices (answered only after a ping, so the adapter must keep reading
// while its own requests wait), events, reads and writes, junk, shutdown.
func TestSession(t *testing.T) {
	python3(t)
	m := readManifest(t)
	dir := t.TempDir()
	d := startAdapter(t, adapterEnv(dir, "1"))
	// Silent until initialize: these get no answer and count for nothing,
	// so the first frame is the initialize reply and the first count 0.
	d.send(reference.Bytes("ping"))
	d.notify(adapterproto.MethodEvent, adapterproto.EventParams{Seq: 1, Type: "value", Data: map[string]any{}})
	d.send(initializeFrame(t, m, dir, nil))
	var res adapterproto.InitializeResult
	decode(t, d.response(1).msg.Result, &res)
	if want := (adapterproto.InitializeResult{Protocol: 1, Name: m.Name, Version: m.Version}); res != want {
		t.Fatalf("initialize = %+v, want %+v", res, want)
	}
	d.notify(adapterproto.MethodInitialized, adapterproto.Empty{})

	adds := addRequests(t, d, m.Name)
	ping := d.call(adapterproto.MethodPing, adapterproto.Empty{})
	expectResult(t, d.response(ping), map[string]any{})
	for _, a := range adds {
		d.answer(a.id, map[string]string{"id": m.Name + "." + a.desc.ID})
		expectPublish(t, d.next(), a.desc.ID, a.initial)
	}

	testEvents(t, d, dir)
	testRequests(t, d)
	if lines := readLines(t, dir, "note.txt"); len(lines) != 1 || !strings.HasSuffix(lines[0], "\t\"hello\\nworld\"") {
		t.Errorf("note.txt = %q, want one entry for the one write", lines)
	}
	testJunk(t, d)

	shutdown := d.call(adapterproto.MethodShutdown, adapterproto.Empty{})
	expectResult(t, d.response(shutdown), map[string]any{})
	if code := d.exit(); code != 0 {
		t.Errorf("exit code after shutdown = %d, want 0", code)
	}
}

// added is one devices.add request of the adapter.
type added struct {
	id      json.RawMessage
	desc    device.Descriptor
	initial any
}

// addRequests reads the adapter's two devices.add requests, numbered from
// 1, and checks their descriptors as the supervisor does.
func addRequests(t *testing.T, d *daemon, adapter string) []added {
	t.Helper()
	want := map[string]struct {
		kind    string
		access  device.Access
		schema  device.Schema
		initial any
	}{
		"events": {"sensor", device.AccessRead, device.Schema{Type: device.TypeInteger}, float64(0)},
		"note":   {"x.note", device.AccessReadWrite, device.Schema{Type: device.TypeString, MaxLength: ptr(200)}, ""},
	}
	var out []added
	for n := uint64(1); n <= 2; n++ {
		f := d.next()
		if id, ok := jsonrpc.ParseUint64ID(f.msg.ID); !f.msg.IsRequest() || f.msg.Method != adapterproto.MethodDevicesAdd || !ok || id != n {
			t.Fatalf("want devices.add with id %d, got %s", n, f.raw)
		}
		var p struct {
			Device device.Descriptor `json:"device"`
		}
		dec := json.NewDecoder(bytes.NewReader(f.msg.Params))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&p); err != nil {
			t.Fatalf("decode devices.add params %s: %v", f.msg.Params, err)
		}
		if err := manifest.CheckDevice("devices.add", adapter, p.Device); err != nil {
			t.Errorf("descriptor %s: %v", f.msg.Params, err)
		}
		w, ok := want[p.Device.ID]
		if !ok {
			t.Fatalf("unexpected device %q", p.Device.ID)
		}
		delete(want, p.Device.ID)
		if p.Device.Kind != w.kind || p.Device.Access != w.access || p.Device.Risk != device.RiskLow || !reflect.DeepEqual(p.Device.Schema, w.schema) {
			t.Errorf("descriptor %s: want kind %s, access %s, risk low, schema %+v", f.msg.Params, w.kind, w.access, w.schema)
		}
		out = append(out, added{id: f.msg.ID, desc: p.Device, initial: w.initial})
	}
	return out
}

// testEvents sends two events and checks the published count and the
// ledger, which is written before the count is published.
func testEvents(t *testing.T, d *daemon, dir string) {
	t.Helper()
	events := []adapterproto.EventParams{
		{Seq: 1, Type: "value", Data: map[string]any{"device": "sim.led", "value": true}},
		{Seq: 3, Type: "deviceState", Data: map[string]any{"device": "sim.temp", "state": "offline"}, Dropped: 1},
	}
	for i, e := range events {
		d.notify(adapterproto.MethodEvent, e)
		expectPublish(t, d.next(), "events", float64(i+1))
	}
	lines := readLines(t, dir, "events.jsonl")
	if len(lines) != len(events) {
		t.Fatalf("events.jsonl has %d lines, want %d: %q", len(lines), len(events), lines)
	}
	for i, e := range events {
		want, err := json.Marshal(e)
		if err != nil {
			t.Fatalf("encode event: %v", err)
		}
		if !jsonEqual(t, []byte(lines[i]), want) {
			t.Errorf("events.jsonl line %d = %s, want %s", i+1, lines[i], want)
		}
	}
}

// testRequests sends the daemon's requests one by one; each answer comes
// after the notifications it causes.
func testRequests(t *testing.T, d *daemon) {
	t.Helper()
	long := strings.Repeat("é", 201)
	tests := []struct {
		name    string
		method  string
		params  any
		publish []any // value.publish of note before the answer
		result  any   // nil when an error is wanted
		code    int64
	}{
		{"read events", "device.read", map[string]any{"device": "events"}, nil, map[string]any{"value": float64(2)}, 0},
		{"read note", "device.read", map[string]any{"device": "note"}, nil, map[string]any{"value": ""}, 0},
		{"write note", "device.write", map[string]any{"device": "note", "value": "hello\nworld"}, []any{"hello\nworld"}, map[string]any{"value": "hello\nworld"}, 0},
		{"read note written", "device.read", map[string]any{"device": "note"}, nil, map[string]any{"value": "hello\nworld"}, 0},
		{"write events", "device.write", map[string]any{"device": "events", "value": 5}, nil, nil, -32000},
		{"write note too long", "device.write", map[string]any{"device": "note", "value": long}, nil, nil, jsonrpc.CodeInvalidParams},
		{"write note number", "device.write", map[string]any{"device": "note", "value": 7}, nil, nil, jsonrpc.CodeInvalidParams},
		{"read unknown", "device.read", map[string]any{"device": "nope"}, nil, nil, jsonrpc.CodeInvalidParams},
		{"write unknown", "device.write", map[string]any{"device": "nope", "value": "x"}, nil, nil, jsonrpc.CodeInvalidParams},
		{"params not object", "device.read", json.RawMessage(`[1]`), nil, nil, jsonrpc.CodeInvalidParams},
		{"unknown method", "ledger.frobnicate", adapterproto.Empty{}, nil, nil, jsonrpc.CodeMethodNotFound},
		{"initialize again", "initialize", adapterproto.Empty{}, nil, nil, jsonrpc.CodeInvalidRequest},
		{"ping", "ping", nil, nil, map[string]any{}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := d.call(tt.method, tt.params)
			for _, v := range tt.publish {
				expectPublish(t, d.next(), "note", v)
			}
			f := d.response(id)
			if tt.result != nil {
				expectResult(t, f, tt.result)
				return
			}
			if f.msg.Error == nil || f.msg.Error.Code != tt.code {
				t.Errorf("want error %d, got %s", tt.code, f.raw)
			}
		})
	}
}

// testJunk sends lines the adapter must survive without a word, then
// checks that it still answers, and nothing else came first.
func testJunk(t *testing.T, d *daemon) {
	t.Helper()
	for _, line := range []string{
		`not json`,
		`[{"jsonrpc":"2.0","id":90,"method":"ping"}]`,
		"\xff\xfe",
		"{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"params\":{\"a\":\"\x00\"}}",
		`{"jsonrpc":"1.0","id":91,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":92,"method":"ping","params":{"x":NaN}}`,
		`{"jsonrpc":"2.0","id":77,"result":{}}`,
		`{"jsonrpc":"2.0","id":"1","result":{}}`,
		`{"jsonrpc":"2.0","id":true,"error":{"code":1,"message":"x"}}`,
		`{"jsonrpc":"2.0","method":"x.unknown","params":{}}`,
		`{"jsonrpc":"2.0","method":"event","params":[]}`,
		`{"jsonrpc":"2.0","method":7}`,
		`{"jsonrpc":"2.0"}`,
		`{"jsonrpc":"2.0","method":"cancel","params":{"id":999}}`,
		strings.Repeat("[", 100000),
		`{"jsonrpc":"2.0","id":93,"method":"ping","params":{"pad":"` + strings.Repeat("x", 300000) + `"}}`,
		``,
	} {
		d.send([]byte(line))
	}
	ping := d.call(adapterproto.MethodPing, nil)
	expectResult(t, d.response(ping), map[string]any{})
}

func expectPublish(t *testing.T, f frame, dev string, value any) {
	t.Helper()
	var p struct {
		Device string `json:"device"`
		Value  any    `json:"value"`
	}
	if f.msg.IsNotification() && f.msg.Method == adapterproto.MethodValuePublish {
		decode(t, f.msg.Params, &p)
	}
	if p.Device != dev || !reflect.DeepEqual(p.Value, value) {
		t.Fatalf("want value.publish {device:%q, value:%#v}, got %s", dev, value, f.raw)
	}
}

func expectResult(t *testing.T, f frame, want any) {
	t.Helper()
	var got any
	if f.msg.Result != nil {
		decode(t, f.msg.Result, &got)
	}
	if f.msg.Result == nil || !reflect.DeepEqual(got, want) {
		t.Errorf("want result %#v, got %s", want, f.raw)
	}
}

func decode(t *testing.T, raw json.RawMessage, v any) {
	t.Helper()
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
}

func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	decode(t, a, &x)
	decode(t, b, &y)
	return reflect.DeepEqual(x, y)
}

func inBasePath(name string) bool {
	for _, dir := range filepath.SplitList(strings.TrimPrefix(basePath, "PATH=")) {
		if fi, err := os.Stat(filepath.Join(dir, name)); err == nil && fi.Mode().IsRegular() {
			return true
		}
	}
	return false
}

func ptr[T any](v T) *T { return &v }
