package conn

import (
	"encoding/base64"
	"strings"
	"testing"
	"time"
)

// Every violation of section 6 is a strike after the handshake, and an
// empty line is none.
func TestViolations(t *testing.T) {
	long := `{"jsonrpc":"2.0","method":"x","params":{"pad":"` + strings.Repeat("a", 300) + `"}}`
	tests := []struct {
		name   string
		line   string
		strike string // reason, "" for none
	}{
		{"empty line", "", ""},
		{"NUL", "{\"jsonrpc\":\"2.0\",\"method\":\"x\x00\"}", "nul"},
		{"invalid UTF-8", "{\"jsonrpc\":\"2.0\",\"method\":\"value.publish\",\"params\":{\"v\":\"\xff\"}}", "utf8"},
		{"not JSON", "hello", "not_json"},
		{"array", `[{"jsonrpc":"2.0","method":"x"}]`, "array"},
		{"missing jsonrpc", `{"method":"x"}`, "jsonrpc"},
		{"wrong jsonrpc", `{"jsonrpc":"1.0","method":"x"}`, "jsonrpc"},
		{"negative id", `{"jsonrpc":"2.0","id":-1,"method":"x"}`, "id"},
		{"float id", `{"jsonrpc":"2.0","id":1.0,"method":"x"}`, "id"},
		{"id over 64 bits", `{"jsonrpc":"2.0","id":18446744073709551616,"method":"x"}`, "id"},
		{"both result and error", `{"jsonrpc":"2.0","id":2,"result":{},"error":{"code":1,"message":"x"}}`, ""},
		{"neither result nor error", `{"jsonrpc":"2.0","id":2}`, ""},
		{"params not an object", `{"jsonrpc":"2.0","method":"value.publish","params":[1]}`, "params"},
		{"result not an object", `{"jsonrpc":"2.0","id":2,"result":1}`, "result"},
		{"bad method name", `{"jsonrpc":"2.0","method":"a b"}`, "method"},
		{"reply to an id never issued", `{"jsonrpc":"2.0","id":99,"result":{}}`, "unknown_id"},
		{"over max_line", long, "line_too_long"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := seedConfig()
			cfg.Limits.MaxLine = 256
			h := newHandler()
			cfg.Handler = h
			f := newFixture(t, cfg)
			c := f.ready()
			f.peer.send(tt.line)
			// A frame after it shows the line was read.
			f.peer.send(`{"jsonrpc":"2.0","method":"value.publish","params":{"device":"x","value":1}}`)
			select {
			case <-h.noted:
			case <-time.After(wait):
				t.Fatal("the frame after the line was not read")
			}
			want := uint64(1)
			if tt.name == "empty line" {
				want = 0
			}
			if n := c.Stats().Violations; n != want {
				t.Fatalf("%d violations, want %d", n, want)
			}
			if tt.strike != "" {
				recent := f.cfg.Strikes.Recent()
				if len(recent) != 1 || !strings.Contains(strings.ToLower(recent[0].Reason), tt.strike) {
					t.Fatalf("strikes %+v, want one mentioning %q", recent, tt.strike)
				}
			}
			if c.Err() != nil {
				t.Fatalf("one violation ended the connection: %v", c.Err())
			}
		})
	}
}

// Bytes that are not a frame, sent raw.
func TestRawBytesViolation(t *testing.T) {
	f := newFixture(t, seedConfig())
	c := f.ready()
	raw, _ := base64.StdEncoding.DecodeString("gICA") // 0x80 0x80 0x80
	f.peer.out.Write(append(raw, '\n'))
	waitFor(t, func() bool { return c.Stats().Violations == 1 })
}

// Five strikes within 60 s kill; four do not, and strikes slide out.
//
// Pings are kept out of the minute the test skips: the ping loop arms its
// timers on goroutines of its own, so whether one Advance of 60 s ran one
// ping, none (the first timer not armed yet) or three missed ones (each
// follow-up armed within the span), killing the connection, was up to the
// scheduler.
func TestStrikesKill(t *testing.T) {
	cfg := seedConfig()
	cfg.Timing.PingInterval = time.Hour
	f := newFixture(t, cfg)
	c := f.ready()
	for i := 0; i < 4; i++ {
		f.peer.send("garbage")
	}
	waitFor(t, func() bool { return c.Stats().Violations == 4 })
	f.clk.Advance(60 * time.Second) // the four slide out of the window
	for i := 0; i < 4; i++ {
		f.peer.send("garbage")
	}
	waitFor(t, func() bool { return c.Stats().Violations == 8 })
	if c.Err() != nil {
		t.Fatalf("ended after 4 strikes in the window: %v", c.Err())
	}
	f.peer.send(`{"jsonrpc":"2.0","id":7,"result":{}}`)
	e := ended(t, c)
	if e.Reason != "strikes" || !e.Kill || !strings.Contains(e.Detail, "E_ADAPTER_PROTOCOL") {
		t.Fatalf("end %+v", e)
	}
}

// A reused request id: one among the last 1,024, or below the lowest of
// them once there are 1,024.
func TestReusedRequestIDs(t *testing.T) {
	var w idWindow
	for id := uint64(1); id <= 3; id++ {
		if !w.add(id) {
			t.Fatalf("id %d refused", id)
		}
	}
	if w.add(2) {
		t.Fatal("a reused id was accepted")
	}
	for id := uint64(4); id <= 2000; id++ {
		if !w.add(id) {
			t.Fatalf("id %d refused", id)
		}
	}
	if w.add(976) {
		t.Fatal("id 976, below the window's lowest (977), was accepted")
	}
	if w.add(1500) {
		t.Fatal("id 1500, in the window, was accepted")
	}
	if !w.add(5000) {
		t.Fatal("a new id was refused")
	}
}
