package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openhal/gateway/adapterproto"
	"github.com/openhal/gateway/adapterproto/reference"
	"github.com/openhal/gateway/internal/supervisor/manifest"
	"github.com/openhal/gateway/jsonrpc"
)

var received = time.Date(2026, 11, 29, 23, 0, 0, 5, time.UTC)

// events are what the daemon sends in these tests, and lines what the
// notifier must make of them.
var events = []struct{ frame, line string }{
	{`{"jsonrpc":"2.0","method":"event","params":{"seq":1,"type":"value","data":{"device":"sim.temp","value":21.5,"ts":"2026-11-29T22:59:59Z","seq":9}}}`,
		`{"seq":1,"type":"value","data":{"device":"sim.temp","value":21.5,"ts":"2026-11-29T22:59:59Z","seq":9},"received_at":"2026-11-29T23:00:00.000000005Z"}`},
	{`{"jsonrpc":"2.0","method":"event","params":{"seq":2,"type":"deviceState","data":{"device":"sim.temp","state":"offline"},"dropped":4}}`,
		`{"seq":2,"type":"deviceState","data":{"device":"sim.temp","state":"offline"},"dropped":4,"received_at":"2026-11-29T23:00:00.000000005Z"}`},
	{`{"jsonrpc":"2.0","method":"event","params":{"seq":3,"type":"stopped","data":{"reason":"test"}}}`,
		`{"seq":3,"type":"stopped","data":{"reason":"test"},"received_at":"2026-11-29T23:00:00.000000005Z"}`},
}

// session is what a daemon sends in one run: the handshake with paths.state
// = state, every event, then shutdown (id 2).
func session(t *testing.T, state string) string {
	t.Helper()
	init, err := jsonrpc.AppendRequest(nil, jsonrpc.IntID(1), adapterproto.MethodInitialize, adapterproto.InitializeParams{
		Protocols: []int{1}, Host: adapterproto.Host{Name: "oxidepmd", Version: "test"},
		Adapter: adapterproto.Info{Name: name, Version: version}, Kind: adapterproto.KindService,
		Grant:  adapterproto.Grant{Level: "read", Scope: adapterproto.ScopeList{All: true}},
		Paths:  adapterproto.Paths{State: state},
		Limits: adapterproto.DefaultLimits(),
	})
	if err != nil {
		t.Fatal(err)
	}
	lines := []string{string(init), string(reference.Bytes("initialized"))}
	for _, e := range events {
		lines = append(lines, e.frame)
	}
	lines = append(lines, `{"jsonrpc":"2.0","id":2,"method":"shutdown","params":{}}`)
	return strings.Join(lines, "\n") + "\n"
}

// runSession runs the notifier over the whole session and returns what it
// wrote to the daemon.
func runSession(t *testing.T, n *notifier, state string) (string, error) {
	t.Helper()
	n.now = func() time.Time { return received }
	n.log = slog.New(slog.DiscardHandler)
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := n.adapter().Run(ctx, strings.NewReader(session(t, state)), &out)
	return out.String(), err
}

// wantOut is the notifier's side of a good session: the seed's answer to
// initialize, then the answer to shutdown.
var wantOut = string(reference.Bytes("initialize_result")) + "\n" + `{"jsonrpc":"2.0","id":2,"result":{}}` + "\n"

func TestFile(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state", "notifier") // created by the notifier
	for run := range 2 {                                     // the second run appends
		out, err := runSession(t, &notifier{}, state)
		if err != nil || out != wantOut {
			t.Fatalf("run %d: Run: %v, wrote:\n%s\nwant:\n%s", run, err, out, wantOut)
		}
	}
	b, err := os.ReadFile(filepath.Join(state, fileName))
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for range 2 {
		for _, e := range events {
			want = append(want, e.line)
		}
	}
	if got := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n"); !slices.Equal(got, want) {
		t.Fatalf("%s:\n%s\nwant:\n%s", fileName, b, strings.Join(want, "\n"))
	}
}

// A state directory that cannot be made refuses initialize.
func TestFileRefused(t *testing.T) {
	blocker := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := runSession(t, &notifier{}, filepath.Join(blocker, "state"))
	if err == nil || !strings.Contains(out, `"error":{"code":-32000,"message":"create state directory:`) {
		t.Fatalf("Run: %v, wrote %s; want initialize refused", err, out)
	}
}

// With a URL every event is posted, in order; a failing webhook is logged
// and the adapter goes on.
func TestWebhook(t *testing.T) {
	var mu sync.Mutex
	var bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, r.Method+" "+r.Header.Get("Content-Type")+" "+string(b))
		mu.Unlock()
		var rec record
		if json.Unmarshal(b, &rec) != nil || rec.Seq == 2 {
			http.Error(w, "no", http.StatusInternalServerError) // seq 2 fails
		}
	}))
	defer srv.Close()
	state := t.TempDir()
	out, err := runSession(t, &notifier{url: srv.URL, client: &http.Client{Timeout: 5 * time.Second}}, state)
	if err != nil || out != wantOut {
		t.Fatalf("Run: %v, wrote:\n%s\nwant:\n%s", err, out, wantOut)
	}
	var want []string
	for _, e := range events {
		want = append(want, "POST application/json "+e.line)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(bodies, want) {
		t.Fatalf("posted:\n%s\nwant:\n%s", strings.Join(bodies, "\n"), strings.Join(want, "\n"))
	}
	if _, err := os.Stat(filepath.Join(state, fileName)); !os.IsNotExist(err) {
		t.Fatalf("%s written with a webhook set: %v", fileName, err)
	}
}

// A webhook that does not answer costs the client's timeout, not the
// adapter.
func TestWebhookTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	out, err := runSession(t, &notifier{url: srv.URL, client: &http.Client{Timeout: 50 * time.Millisecond}}, t.TempDir())
	if err != nil || out != wantOut {
		t.Fatalf("Run: %v, wrote:\n%s\nwant:\n%s", err, out, wantOut)
	}
}

func TestManifest(t *testing.T) {
	b, err := os.ReadFile(manifest.FileName)
	if err != nil {
		t.Fatal(err)
	}
	m, err := manifest.Parse(b)
	if err != nil {
		t.Fatalf("adapter.json: %v", err)
	}
	if m.Name != name || m.Version != version || m.Kind != adapterproto.KindService || m.Exec != "notifier" ||
		!slices.Equal(m.EnvPass, []string{"NOTIFIER_URL"}) || m.Grant.Level != "read" || !m.Grant.Scope.All || len(m.Devices) != 0 {
		t.Fatalf("adapter.json: %+v; want %s %s, service, exec notifier, env_pass NOTIFIER_URL, grant read all", m, name, version)
	}
}
