package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/openhal/gateway/adapterproto"
	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/supervisor/manifest"
	"github.com/openhal/gateway/jsonrpc"
)

const wait = 5 * time.Second

var readAt = time.Date(2026, 11, 29, 23, 0, 0, 0, time.UTC)

// daemon is the daemon's side of one run over pipes.
type daemon struct {
	t    *testing.T
	in   *io.PipeWriter
	out  chan string
	done chan error
}

func startDaemon(t *testing.T, s sysinfo) *daemon {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	d := &daemon{t: t, in: inW, out: make(chan string, 16), done: make(chan error, 1)}
	go func() {
		err := s.adapter().Run(context.Background(), inR, outW)
		outW.Close()
		d.done <- err
	}()
	go func() {
		defer close(d.out)
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			d.out <- sc.Text()
		}
	}()
	t.Cleanup(func() { inW.Close(); outR.Close() })
	return d
}

// ask sends one frame and returns the answer (or "" for a notification).
func (d *daemon) ask(frame string, answered bool) string {
	d.t.Helper()
	sent := make(chan error, 1)
	go func() { _, err := io.WriteString(d.in, frame+"\n"); sent <- err }()
	select {
	case err := <-sent:
		if err != nil {
			d.t.Fatalf("send %s: %v", frame, err)
		}
	case <-time.After(wait):
		d.t.Fatalf("send %s: not read", frame)
	}
	if !answered {
		return ""
	}
	select {
	case line := <-d.out:
		return line
	case <-time.After(wait):
		d.t.Fatalf("no answer to %s", frame)
	}
	return ""
}

func initialize(t *testing.T) string {
	t.Helper()
	b, err := jsonrpc.AppendRequest(nil, jsonrpc.IntID(1), adapterproto.MethodInitialize, adapterproto.InitializeParams{
		Protocols: []int{1}, Host: adapterproto.Host{Name: "oxidepmd", Version: "test"},
		Adapter: adapterproto.Info{Name: name, Version: version}, Kind: adapterproto.KindTool,
		Grant:  adapterproto.Grant{Level: "read"},
		Paths:  adapterproto.Paths{State: t.TempDir()},
		Limits: adapterproto.DefaultLimits(),
	})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func fakeProc(t *testing.T, loadavg, uptime string) string {
	t.Helper()
	dir := t.TempDir()
	for f, s := range map[string]string{"loadavg": loadavg, "uptime": uptime} {
		if s == "" {
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, f), []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestRequests(t *testing.T) {
	good := fakeProc(t, "0.52 0.58 1.59 1/389 12345\n", "12345.67 45678.90\n")
	bad := fakeProc(t, "0.52 x\n", "")
	read := func(id int, dev string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"device.read","params":{"device":%q}}`, id, dev)
	}
	for _, tc := range []struct {
		name, proc, in, want string
	}{
		{"load", good, read(2, "load"),
			`{"jsonrpc":"2.0","id":2,"result":{"value":{"load1":0.52,"load15":1.59,"load5":0.58},"ts":"2026-11-29T23:00:00Z"}}`},
		{"uptime", good, read(2, "uptime"),
			`{"jsonrpc":"2.0","id":2,"result":{"value":12345.67,"ts":"2026-11-29T23:00:00Z"}}`},
		{"unknown device", good, read(2, "cpu"),
			`{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"no device \"cpu\""}}`},
		{"write", good, `{"jsonrpc":"2.0","id":2,"method":"device.write","params":{"device":"uptime","value":1}}`,
			`{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"method not found: device.write"}}`},
		{"bad loadavg", bad, read(2, "load"),
			`{"jsonrpc":"2.0","id":2,"error":{"code":-32000,"message":"read ` + bad + `/loadavg: 2 fields, want 3"}}`},
		{"no uptime", bad, read(2, "uptime"),
			`{"jsonrpc":"2.0","id":2,"error":{"code":-32000,"message":"read ` + bad + `/uptime: open ` + bad + `/uptime: no such file or directory"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := startDaemon(t, sysinfo{proc: tc.proc, now: func() time.Time { return readAt }})
			if got, want := d.ask(initialize(t), true), `{"jsonrpc":"2.0","id":1,"result":{"protocol":1,"name":"sysinfo","version":"0.1.0"}}`; got != want {
				t.Fatalf("initialize: %s, want %s", got, want)
			}
			d.ask(`{"jsonrpc":"2.0","method":"initialized","params":{}}`, false)
			if got := d.ask(tc.in, true); got != tc.want {
				t.Fatalf("got  %s\nwant %s", got, tc.want)
			}
			if got, want := d.ask(`{"jsonrpc":"2.0","id":3,"method":"shutdown","params":{}}`, true), `{"jsonrpc":"2.0","id":3,"result":{}}`; got != want {
				t.Fatalf("shutdown: %s, want %s", got, want)
			}
			select {
			case err := <-d.done:
				if err != nil {
					t.Fatalf("Run: %v", err)
				}
			case <-time.After(wait):
				t.Fatal("Run did not return")
			}
		})
	}
}

// The real /proc gives values that fit the schemas of adapter.json.
func TestRealProc(t *testing.T) {
	if _, err := os.Stat("/proc/loadavg"); err != nil {
		t.Skip("no /proc/loadavg:", err)
	}
	m := readManifest(t)
	d := startDaemon(t, sysinfo{proc: "/proc", now: time.Now})
	d.ask(initialize(t), true)
	for i, dev := range m.Devices {
		line := d.ask(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"device.read","params":{"device":%q}}`, i+2, dev.ID), true)
		var res struct {
			Result struct {
				Value any    `json:"value"`
				TS    string `json:"ts"`
			} `json:"result"`
		}
		if err := json.Unmarshal([]byte(line), &res); err != nil {
			t.Fatal(err)
		}
		if err := dev.Schema.Validate(res.Result.Value); err != nil {
			t.Errorf("%s: %s does not fit the schema: %v", dev.ID, line, err)
		}
		if _, err := time.Parse(time.RFC3339Nano, res.Result.TS); err != nil {
			t.Errorf("%s: ts: %v", dev.ID, err)
		}
	}
}

func readManifest(t *testing.T) *manifest.Manifest {
	t.Helper()
	b, err := os.ReadFile(manifest.FileName)
	if err != nil {
		t.Fatal(err)
	}
	m, err := manifest.Parse(b)
	if err != nil {
		t.Fatalf("adapter.json: %v", err)
	}
	return m
}

func TestManifest(t *testing.T) {
	m := readManifest(t)
	if m.Name != name || m.Version != version || m.Kind != adapterproto.KindTool || m.Exec != "sysinfo" {
		t.Fatalf("adapter.json: %s %s %s exec %s; want %s %s tool exec sysinfo", m.Name, m.Version, m.Kind, m.Exec, name, version)
	}
	if m.Grant.Level != "read" || m.Grant.Scope.All || len(m.Grant.Scope.Patterns) != 0 {
		t.Fatalf("grant %+v, want the least: read over no device", m.Grant)
	}
	want := map[string]string{"load": device.TypeObject, "uptime": device.TypeNumber}
	if len(m.Devices) != len(want) {
		t.Fatalf("%d devices, want %d", len(m.Devices), len(want))
	}
	for i, d := range m.Devices {
		if err := manifest.CheckDevice(fmt.Sprintf("devices[%d]", i), name, d); err != nil {
			t.Errorf("%s: %v", d.ID, err)
		}
		if d.Schema.Type != want[d.ID] || d.Kind != device.KindSensor || d.Access != device.AccessRead || d.Risk != device.RiskLow {
			t.Errorf("%s: %+v", d.ID, d)
		}
	}
	if u := m.Devices[1].Schema.Unit; u != "s" {
		t.Errorf("uptime unit %q, want s", u)
	}
}
