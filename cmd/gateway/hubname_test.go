package main

import (
	"strings"
	"testing"

	"github.com/openhal/gateway/discover"
)

func TestDialOf(t *testing.T) {
	fp := strings.Repeat("ab", 32)
	plain := discover.Gateway{Name: "bench", URLs: []string{"ws://192.0.2.7:7750/hal", "tcp://192.0.2.7:7751"}}
	secure := discover.Gateway{Name: "bench", URLs: []string{"wss://192.0.2.7:7752/hal"}, Fingerprint: fp}
	tests := []struct {
		name            string
		g               discover.Gateway
		pinGiven, trust bool
		url, pin, err   string
	}{
		{"plain: the first URL, no pin", plain, false, false, "ws://192.0.2.7:7750/hal", "", ""},
		{"plain: trust changes nothing", plain, false, true, "ws://192.0.2.7:7750/hal", "", ""},
		{"TLS without a pin is refused, naming both ways", secure, false, false, "", "",
			`gateway "bench" at wss://192.0.2.7:7752/hal uses TLS; it announces the certificate fingerprint ` + fp + `: compare it with the one the gateway logs at start, then give --fingerprint ` + fp + `, or --trust-announced to take the announcement's word`},
		{"TLS trusted: the announced pin", secure, false, true, "wss://192.0.2.7:7752/hal", fp, ""},
		{"TLS with --fingerprint: that one, not the announced", secure, true, true, "wss://192.0.2.7:7752/hal", "", ""},
		{"TLS with no fingerprint announced", discover.Gateway{Name: "x", URLs: []string{"tls://192.0.2.7:1"}}, false, true, "", "",
			`gateway "x" at tls://192.0.2.7:1 announced no certificate fingerprint: give --fingerprint`},
		{"a bad fingerprint announced", discover.Gateway{Name: "x", URLs: []string{"tls://192.0.2.7:1"}, Fingerprint: "zz"}, false, true, "", "",
			`gateway "x" at tls://192.0.2.7:1 announced a bad fingerprint "zz"`},
		{"no URL", discover.Gateway{Name: "x"}, false, false, "", "", `gateway "x" announced no URL`},
		{"TLS before plain, whatever the order", discover.Gateway{Name: "x", URLs: []string{"ws://192.0.2.7:7750/hal", "tls://192.0.2.7:7753"}, Fingerprint: fp}, false, true,
			"tls://192.0.2.7:7753", fp, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url, pin, err := dialOf(tt.g, tt.pinGiven, tt.trust)
			if url != tt.url || pin != tt.pin {
				t.Errorf("dialOf = %q, %q; want %q, %q", url, pin, tt.url, tt.pin)
			}
			if tt.err == "" && err != nil || tt.err != "" && (err == nil || !strings.HasPrefix(err.Error(), tt.err)) {
				t.Errorf("err = %v, want %q", err, tt.err)
			}
		})
	}
}

func TestIsHubURL(t *testing.T) {
	for in, want := range map[string]bool{"ws://127.0.0.1:7750/hal": true, "unix:///run/gateway/hal.sock": true, "": true, "bench": false, "Bench Pi": false} {
		if got := isHubURL(in); got != want {
			t.Errorf("isHubURL(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestNameFlag(t *testing.T) {
	fp := strings.Repeat("0f", 32)
	tests := []struct {
		f    clientFlags
		want string
	}{
		{clientFlags{hub: "ws://192.0.2.7:7750/hal"}, ""},
		{clientFlags{hubName: "bench", hub: "ws://192.0.2.7:7750/hal"}, "bench"},
		{clientFlags{hubName: "Bench Pi", hub: "wss://192.0.2.7:7752/hal", fingerprint: fp}, "'Bench Pi' --fingerprint " + fp},
		{clientFlags{hubName: "it's", hub: "ws://192.0.2.7:7750/hal"}, `'it'\''s'`},
	}
	for _, tt := range tests {
		if got := tt.f.nameFlag(); got != tt.want {
			t.Errorf("nameFlag(%q) = %q, want %q", tt.f.hubName, got, tt.want)
		}
	}
}
