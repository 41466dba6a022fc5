package conn

import (
	"strings"
	"testing"
	"time"

	"github.com/openhal/gateway/adapterproto/reference"
	"github.com/openhal/gateway/internal/supervisor/restart"
)

// The seed's frames, byte for byte: the daemon's initialize for the seed's
// values, the seed's reply accepted, then the seed's initialized.
func TestHandshakeReferenceFrames(t *testing.T) {
	f := newFixture(t, seedConfig())
	ch := f.open()
	if got, want := f.peer.next(), string(reference.Bytes("initialize")); got != want {
		t.Fatalf("initialize:\n got %s\nwant %s", got, want)
	}
	f.peer.send(string(reference.Bytes("initialize_result")))
	r := f.result(ch)
	if r.err != nil {
		t.Fatalf("Open: %v", r.err)
	}
	defer r.c.Close()
	if got, want := f.peer.next(), string(reference.Bytes("initialized")); got != want {
		t.Fatalf("initialized:\n got %s\nwant %s", got, want)
	}
}

// Section 4's judging order, one reply at a time.
func TestHandshakeJudging(t *testing.T) {
	const good = `{"jsonrpc":"2.0","id":1,"result":{"protocol":1,"name":"notifier","version":"0.1.0"}}`
	tests := []struct {
		name    string
		lines   []string
		failure restart.Reason
		ok      bool
		detail  string
	}{
		{name: "good", lines: []string{good}, ok: true},
		{name: "empty lines are harmless", lines: []string{"", "", good}, ok: true},
		{name: "seed unsupported", lines: []string{string(reference.Bytes("initialize_unsupported"))}, failure: restart.Incompatible},
		{name: "-32022 without data", lines: []string{`{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"no"}}`}, failure: restart.Incompatible},
		{name: "protocol not offered", lines: []string{`{"jsonrpc":"2.0","id":1,"result":{"protocol":2,"name":"notifier","version":"0.1.0"}}`}, failure: restart.Incompatible},
		{name: "wrong name", lines: []string{`{"jsonrpc":"2.0","id":1,"result":{"protocol":1,"name":"other","version":"0.1.0"}}`}, failure: restart.Tampered},
		{name: "wrong version", lines: []string{`{"jsonrpc":"2.0","id":1,"result":{"protocol":1,"name":"notifier","version":"0.2.0"}}`}, failure: restart.Tampered},
		{name: "tampered before incompatible", lines: []string{`{"jsonrpc":"2.0","id":1,"result":{"protocol":9,"name":"other","version":"0.1.0"}}`}, failure: restart.Tampered},
		{name: "other error", lines: []string{`{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"boom"}}`}, detail: "boom"},
		{name: "result without version", lines: []string{`{"jsonrpc":"2.0","id":1,"result":{"protocol":1,"name":"notifier"}}`}, detail: "not {protocol"},
		{name: "reply to another id", lines: []string{`{"jsonrpc":"2.0","id":2,"result":{"protocol":1,"name":"notifier","version":"0.1.0"}}`}, detail: "not the reply"},
		{name: "notification first", lines: []string{`{"jsonrpc":"2.0","method":"value.publish","params":{}}`, good}, detail: "notification"},
		{name: "request first", lines: []string{`{"jsonrpc":"2.0","id":1,"method":"devices.list"}`, good}, detail: "request"},
		{name: "garbage first", lines: []string{`hello`, good}, detail: "JSON"},
		{name: "array first", lines: []string{`[1]`, good}, detail: "array"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, seedConfig())
			ch := f.open()
			f.peer.next()
			for _, l := range tt.lines {
				f.peer.send(l)
			}
			r := f.result(ch)
			if tt.ok {
				if r.err != nil {
					t.Fatalf("Open: %v", r.err)
				}
				r.c.Close()
				return
			}
			he, isHE := r.err.(*HandshakeError)
			if !isHE {
				t.Fatalf("Open: %v, want a handshake error", r.err)
			}
			if he.Failure != tt.failure {
				t.Fatalf("failure %v (%v), want %v", he.Failure, he, tt.failure)
			}
			if tt.detail != "" && !strings.Contains(strings.ToLower(he.Detail), strings.ToLower(tt.detail)) {
				t.Fatalf("detail %q, want it to mention %q", he.Detail, tt.detail)
			}
		})
	}
}

// A silent adapter crashes the handshake at its deadline, not before.
func TestHandshakeTimeout(t *testing.T) {
	f := newFixture(t, seedConfig())
	ch := f.open()
	f.peer.next()
	f.waitTimers(1)
	f.clk.Advance(10*time.Second - time.Millisecond)
	select {
	case r := <-ch:
		t.Fatalf("Open returned before the deadline: %v", r.err)
	default:
	}
	f.clk.Advance(time.Millisecond)
	r := f.result(ch)
	he, ok := r.err.(*HandshakeError)
	if !ok || he.Failure != restart.NoReason || !strings.Contains(he.Detail, "10s") {
		t.Fatalf("Open: %v, want a crash after 10s", r.err)
	}
}

// End of standard output before the reply is a crash.
func TestHandshakeEOF(t *testing.T) {
	f := newFixture(t, seedConfig())
	ch := f.open()
	f.peer.next()
	f.peer.out.Close()
	r := f.result(ch)
	if he, ok := r.err.(*HandshakeError); !ok || he.Failure != restart.NoReason {
		t.Fatalf("Open: %v, want a crash", r.err)
	}
}

// A request the adapter sends right after its reply is served once the
// connection is ready, not lost and not a violation.
func TestRequestRightAfterReply(t *testing.T) {
	cfg := seedConfig()
	h := newHandler()
	cfg.Handler = h
	f := newFixture(t, cfg)
	ch := f.open()
	f.peer.next()
	f.peer.send(`{"jsonrpc":"2.0","id":1,"result":{"protocol":1,"name":"notifier","version":"0.1.0"}}` + "\n" +
		`{"jsonrpc":"2.0","id":1,"method":"devices.list","params":{}}`)
	r := f.result(ch)
	if r.err != nil {
		t.Fatal(r.err)
	}
	defer r.c.Close()
	if m := f.peer.msg(); m.Method != "initialized" {
		t.Fatalf("got %s, want initialized", m.Method)
	}
	if got := f.peer.next(); got != `{"jsonrpc":"2.0","id":1,"result":{"echo":"devices.list"}}` {
		t.Fatalf("answer %s", got)
	}
	if n := r.c.Stats().Violations; n != 0 {
		t.Fatalf("%d violations", n)
	}
}

// An adapter's settings ride in initialize as "settings" (the gateway's
// extension), as given; without any, the field is absent and initialize
// is the seed's, byte for byte (TestHandshakeReferenceFrames).
func TestHandshakeSettings(t *testing.T) {
	cfg := seedConfig()
	cfg.Settings = []byte(`{"broker":"tcp://127.0.0.1:1883","password":"s3cret"}`)
	f := newFixture(t, cfg)
	f.open()
	got := f.peer.next()
	if !strings.Contains(got, `,"settings":{"broker":"tcp://127.0.0.1:1883","password":"s3cret"}}`) {
		t.Fatalf("initialize %s: want the settings as the last param", got)
	}
}
