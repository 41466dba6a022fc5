//go:build unix

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestReferenceHandshakeAndPing: the seed's frames in, the seed's frames
// out, byte for byte; then the end of stdin ends the adapter with 0.
func TestReferenceHandshakeAndPing(t *testing.T) {
	p := start(t)
	p.handshake()
	p.send(ref(t, "ping"))
	p.expect(ref(t, "ping_result"))
	p.stdin.Close()
	if code := p.exitCode(); code != 0 {
		t.Fatalf("exit code at EOF = %d, want 0", code)
	}
	want := []string{string(ref(t, "initialize")), string(ref(t, "initialized")), string(ref(t, "ping"))}
	if got := lines(p.readFile(fileReceived)); !slices.Equal(got, want) {
		t.Errorf("received.jsonl =\n%q\nwant\n%q", got, want)
	}
}

func TestHandshakeFlags(t *testing.T) {
	init1 := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocols":[1],"adapter":{"name":"a","version":"1"}}}`
	for _, tc := range []struct {
		name string
		args []string
		in   string
		want []string
	}{
		{"unsupported", []string{"--unsupported"}, init1, []string{string(ref(t, "initialize_unsupported"))}},
		{"not offered", nil, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocols":[2],"adapter":{"name":"a","version":"1"}}}`,
			[]string{`{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"unsupported protocol","data":{"supported":[1],"code":"E_ADAPTER_PROTOCOL"}}}`}},
		{"handshake error", []string{"--handshake-error"}, init1, []string{`{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"boom"}}`}},
		{"tampered", []string{"--name", "evil", "--version", "6.6.6", "--protocol", "7"}, init1,
			[]string{`{"jsonrpc":"2.0","id":1,"result":{"protocol":7,"name":"evil","version":"6.6.6"}}`}},
		{"before handshake", []string{"--before-handshake", "early", "--before-handshake", "[1]"}, init1,
			[]string{"early", "[1]", `{"jsonrpc":"2.0","id":1,"result":{"protocol":1,"name":"a","version":"1"}}`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := start(t, tc.args...)
			p.send([]byte(tc.in))
			for _, w := range tc.want {
				p.expect([]byte(w))
			}
		})
	}
}

func TestDevices(t *testing.T) {
	values := `{"temp":21.5,"relay":false}`
	for _, tc := range []struct {
		name string
		args []string
		in   []string
		want []string
	}{
		{"read", nil,
			[]string{`{"jsonrpc":"2.0","id":3,"method":"device.read","params":{"device":"temp"}}`},
			[]string{`{"jsonrpc":"2.0","id":3,"result":{"value":21.5}}`}},
		{"write then read", nil,
			[]string{
				`{"jsonrpc":"2.0","id":3,"method":"device.write","params":{"device":"relay","value":true}}`,
				`{"jsonrpc":"2.0","id":4,"method":"device.read","params":{"device":"relay"}}`,
			},
			[]string{`{"jsonrpc":"2.0","id":3,"result":{"value":true}}`, `{"jsonrpc":"2.0","id":4,"result":{"value":true}}`}},
		{"unknown device", nil,
			[]string{`{"jsonrpc":"2.0","id":3,"method":"device.read","params":{"device":"nope"}}`},
			[]string{`{"jsonrpc":"2.0","id":3,"error":{"code":-32000,"message":"no such device: nope"}}`}},
		{"write error", []string{"--write-error"},
			[]string{`{"jsonrpc":"2.0","id":3,"method":"device.write","params":{"device":"relay","value":true}}`},
			[]string{`{"jsonrpc":"2.0","id":3,"error":{"code":-32010,"message":"relay stuck","data":{"relay":1}}}`}},
		{"unknown method", nil,
			[]string{`{"jsonrpc":"2.0","id":3,"method":"frobnicate"}`},
			[]string{`{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"method not found: frobnicate"}}`}},
		{"cancel obeyed", []string{"--read-delay", "1h", "--obey-cancel"},
			[]string{
				`{"jsonrpc":"2.0","id":3,"method":"device.read","params":{"device":"temp"}}`,
				`{"jsonrpc":"2.0","method":"cancel","params":{"id":3}}`,
			},
			[]string{`{"jsonrpc":"2.0","id":3,"error":{"code":-32024,"message":"cancelled"}}`}},
		{"read delay", []string{"--read-delay", "1ms"},
			[]string{`{"jsonrpc":"2.0","id":3,"method":"device.read","params":{"device":"temp"}}`},
			[]string{`{"jsonrpc":"2.0","id":3,"result":{"value":21.5}}`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := start(t, append([]string{"--values", values}, tc.args...)...)
			p.handshake()
			for _, l := range tc.in {
				p.send([]byte(l))
			}
			for _, w := range tc.want {
				p.expect([]byte(w))
			}
		})
	}
}

// TestShutdown: shutdown is answered with {} and ends the adapter with 0.
func TestShutdown(t *testing.T) {
	p := start(t)
	p.handshake()
	p.send([]byte(`{"jsonrpc":"2.0","id":2,"method":"shutdown","params":{}}`))
	p.expect([]byte(`{"jsonrpc":"2.0","id":2,"result":{}}`))
	if code := p.exitCode(); code != 0 {
		t.Fatalf("exit code after shutdown = %d, want 0", code)
	}
}

func TestExitAtStart(t *testing.T) {
	p := start(t, "--exit-at-start", "7")
	if code := p.exitCode(); code != 7 {
		t.Fatalf("exit code = %d, want 7", code)
	}
}

// TestScriptCallAndSend: a call waits for its response (a ping sent while
// it waits is answered before the next step's line) and is recorded with
// the response's raw bytes.
func TestScriptCallAndSend(t *testing.T) {
	script := `[{"send":"garbage"},{"call":"devices.list","params":{"a": 1}},{"send":"after"},{"notify":"value.publish","params":{"device":"temp","value":2}}]`
	p := start(t, "--script", script)
	p.handshake()
	p.expect([]byte("garbage"))
	p.expect([]byte(`{"jsonrpc":"2.0","id":1,"method":"devices.list","params":{"a": 1}}`))
	p.send(ref(t, "ping"))
	p.expect(ref(t, "ping_result"))
	resp := `{"jsonrpc":"2.0","id":1,"result":{"devices": []}}`
	p.send([]byte(resp))
	p.expect([]byte("after"))
	p.expect([]byte(`{"jsonrpc":"2.0","method":"value.publish","params":{"device":"temp","value":2}}`))
	want := `{"method":"devices.list","params":{"a":1},"response":` + resp + "}\n"
	if got := p.readFile(fileCalls); got != want {
		t.Errorf("calls.jsonl =\n%s\nwant\n%s", got, want)
	}
}

func TestScriptRejected(t *testing.T) {
	for _, script := range []string{`{}`, `[{}]`, `[{"send":"a","exit":1}]`, `[{"sleep":"soon"}]`, `[{"bogus":1}]`, `[{"call":"x","params":[1]}]`} {
		p := start(t, "--script", script)
		if code := p.exitCode(); code != 2 {
			t.Errorf("--script %s: exit code %d, want 2", script, code)
		}
	}
}

// TestLongLineAndFlood checks the sizes the supervisor's line limit tests
// rely on.
func TestLongLineAndFlood(t *testing.T) {
	p := start(t, "--script", `[{"long_line":100},{"long_line":5},{"flood":3,"params":{"device":"d","value":1}},{"send_bytes_b64":"AAo="}]`)
	p.handshake()
	if got := p.next(); len(got) != 100 || !json.Valid(got) {
		t.Errorf("long_line 100 wrote %d bytes: %s", len(got), got)
	}
	p.expect([]byte("aaaaa"))
	for range 3 {
		p.expect([]byte(`{"jsonrpc":"2.0","method":"value.publish","params":{"device":"d","value":1}}`))
	}
	p.expect([]byte{0})
}

func TestStartRecord(t *testing.T) {
	readable := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(readable, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, probe string
		readable    bool
	}{
		{"readable", readable, true},
		{"missing", filepath.Join(t.TempDir(), "none"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"--probe", tc.probe, "--values", "{}"}
			p := start(t, args...)
			p.handshake() // start.json is written before stdin is read
			var got startInfo
			if err := json.Unmarshal([]byte(p.readFile(fileStart)), &got); err != nil {
				t.Fatal(err)
			}
			pid := p.cmd.Process.Pid
			if got.PID != pid || got.PPID != os.Getpid() || got.PGID != pid || got.UID != os.Getuid() || got.GID != os.Getgid() {
				t.Errorf("start.json ids = %+v; want pid=pgid=%d ppid=%d", got, pid, os.Getpid())
			}
			if got.Cwd != p.home || !slices.Contains(got.Env, "HOME="+p.home) || got.Groups == nil {
				t.Errorf("start.json cwd=%s env=%v groups=%v; want cwd and HOME %s", got.Cwd, got.Env, got.Groups, p.home)
			}
			if !slices.Equal(got.Args, append([]string{binary(t)}, args...)) {
				t.Errorf("start.json args = %q", got.Args)
			}
			if got.Probe == nil || got.Probe.Path != tc.probe || got.Probe.Readable != tc.readable || (got.Probe.Error == "") != tc.readable {
				t.Errorf("start.json probe = %+v, want readable %v", got.Probe, tc.readable)
			}
		})
	}
}

// TestFork: the process each mode leaves behind is where the mode says,
// ignores SIGTERM, and is listed in children.txt before the script goes on.
func TestFork(t *testing.T) {
	for _, mode := range []string{forkChild, forkSetsid, forkGrandchild} {
		t.Run(mode, func(t *testing.T) {
			p := start(t, "--fork", mode, "--script", `[{"send":"forked"}]`)
			p.handshake()
			p.expect([]byte("forked"))
			text := strings.TrimSpace(p.readFile(fileChildren))
			child, err := strconv.Atoi(text)
			if err != nil {
				t.Fatalf("children.txt = %q", text)
			}
			t.Cleanup(func() { unix.Kill(child, unix.SIGKILL) })
			leader := p.cmd.Process.Pid
			pgid, _ := unix.Getpgid(child)
			sid, _ := unix.Getsid(child)
			ppid := parentOf(t, child)
			switch mode {
			case forkChild:
				if pgid != leader || ppid != leader {
					t.Errorf("child pgid %d ppid %d, want both %d", pgid, ppid, leader)
				}
			case forkSetsid:
				if sid != child || ppid != leader {
					t.Errorf("setsid child sid %d ppid %d, want %d and %d", sid, ppid, child, leader)
				}
			case forkGrandchild:
				if sid != child || ppid == leader {
					t.Errorf("grandchild sid %d ppid %d, want sid %d and a parent other than %d", sid, ppid, child, leader)
				}
			}
			if !ignoresSIGTERM(t, child) {
				t.Error("the sleeper does not ignore SIGTERM")
			}
		})
	}
}

// ignoresSIGTERM reads the process's ignored signals from /proc.
func ignoresSIGTERM(t *testing.T, pid int) bool {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if mask, ok := strings.CutPrefix(line, "SigIgn:"); ok {
			n, err := strconv.ParseUint(strings.TrimSpace(mask), 16, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n&(1<<(unix.SIGTERM-1)) != 0
		}
	}
	t.Fatal("no SigIgn in /proc status")
	return false
}

// parentOf reads a process's parent pid from /proc.
func parentOf(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	// pid (comm) state ppid ...; comm may hold spaces, so cut at the last ')'.
	fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	ppid, err := strconv.Atoi(fields[1])
	if err != nil {
		t.Fatal(err)
	}
	return ppid
}

// TestQuiet: adapters that hold back their answers still record what
// they read and exit 0 when stdin ends.
func TestQuiet(t *testing.T) {
	initialize, initialized, ping := string(ref(t, "initialize")), string(ref(t, "initialized")), string(ref(t, "ping"))
	shutdown := `{"jsonrpc":"2.0","id":3,"method":"shutdown"}`
	for _, tc := range []struct {
		name string
		args []string
		in   []string
		want []string // everything the adapter writes
	}{
		{"silent", []string{"--silent", "--script", `[{"send":"x"}]`},
			[]string{initialize, initialized, ping}, nil},
		{"no pong and no shutdown reply", []string{"--no-pong", "--no-shutdown-reply"},
			[]string{initialize, initialized, ping, shutdown}, []string{string(ref(t, "initialize_result"))}},
		{"nothing before initialize", nil, []string{ping, shutdown}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := start(t, tc.args...)
			for _, l := range tc.in {
				p.send([]byte(l))
			}
			p.stdin.Close()
			if code := p.exitCode(); code != 0 {
				t.Fatalf("exit code = %d, want 0", code)
			}
			var got []string
			for line := range p.lines {
				got = append(got, string(line))
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("adapter wrote %q, want %q", got, tc.want)
			}
			if got := lines(p.readFile(fileReceived)); !slices.Equal(got, tc.in) {
				t.Errorf("received.jsonl =\n%q\nwant\n%q", got, tc.in)
			}
		})
	}
}

// TestScriptStderrAndExit: stderr lines go to stderr whole, and an exit
// step ends the adapter with its code.
func TestScriptStderrAndExit(t *testing.T) {
	p := start(t, "--script", `[{"stderr":"noise","repeat":3},{"exit":5}]`)
	p.handshake()
	if code := p.exitCode(); code != 5 {
		t.Fatalf("exit code = %d, want 5", code)
	}
	n := 0
	for _, l := range lines(p.stderr.String()) {
		if l == "noise" {
			n++
		}
	}
	if n != 3 {
		t.Errorf("stderr has %d lines of noise, want 3:\n%s", n, p.stderr.String())
	}
}
