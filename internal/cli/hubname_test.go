package cli

import (
	"strings"
	"testing"

	"github.com/openhal/gateway/internal/discovery"
)

func TestDialOf(t *testing.T) {
	fp := strings.Repeat("ab", 32)
	plain := discovery.Gateway{Name: "bench", URLs: []string{"ws://192.0.2.7:7750/hal", "tcp://192.0.2.7:7751"}}
	secure := discovery.Gateway{Name: "bench", URLs: []string{"wss://192.0.2.7:7752/hal"}, Fingerprint: fp}
	tests := []struct {
		name         string
		g            discovery.Gateway
		insecure     bool
		url, fp, err string
	}{
		{"plain only: refused", plain, false, "", "",
			`gateway "bench" announces only plain transports (ws://192.0.2.7:7750/hal tcp://192.0.2.7:7751): the token would cross the LAN in clear, to whatever answers in that name; refused, nothing was sent. Serve the gateway over TLS (hub.listen.wss, docs/install.md), or give --insecure to send the token in clear anyway`},
		{"plain only, --insecure: the first URL", plain, true, "ws://192.0.2.7:7750/hal", "", ""},
		{"TLS: the URL and the announced fingerprint", secure, false, "wss://192.0.2.7:7752/hal", fp, ""},
		{"TLS with no fingerprint announced", discovery.Gateway{Name: "x", URLs: []string{"tls://192.0.2.7:1"}}, false, "tls://192.0.2.7:1", "", ""},
		{"a bad fingerprint announced is none", discovery.Gateway{Name: "x", URLs: []string{"tls://192.0.2.7:1"}, Fingerprint: "zz"}, false, "tls://192.0.2.7:1", "", ""},
		{"no URL", discovery.Gateway{Name: "x"}, false, "", "", `gateway "x" announced no URL`},
		{"TLS before plain, whatever the order", discovery.Gateway{Name: "x", URLs: []string{"ws://192.0.2.7:7750/hal", "tls://192.0.2.7:7753"}, Fingerprint: fp}, false,
			"tls://192.0.2.7:7753", fp, ""},
		{"TLS before plain with --insecure too", discovery.Gateway{Name: "x", URLs: []string{"ws://192.0.2.7:7750/hal", "tls://192.0.2.7:7753"}, Fingerprint: fp}, true,
			"tls://192.0.2.7:7753", fp, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url, fp, err := dialOf(tt.g, tt.insecure)
			if url != tt.url || fp != tt.fp {
				t.Errorf("dialOf = %q, %q; want %q, %q", url, fp, tt.url, tt.fp)
			}
			if tt.err == "" && err != nil || tt.err != "" && (err == nil || err.Error() != tt.err) {
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
		{clientFlags{hubName: "Bench Pi", hub: "wss://192.0.2.7:7752/hal"}, "'Bench Pi' --fingerprint " + fp},
		{clientFlags{hubName: "it's", hub: "ws://192.0.2.7:7750/hal"}, `'it'\''s'`},
	}
	for _, tt := range tests {
		got := tt.f.nameFlag("")
		if strings.HasPrefix(tt.f.hub, "wss://") {
			got = tt.f.nameFlag(fp)
		}
		if got != tt.want {
			t.Errorf("nameFlag(%q) = %q, want %q", tt.f.hubName, got, tt.want)
		}
	}
}
