package board

import (
	"strings"
	"testing"
)

// A plain listener beyond loopback carries tokens in clear: refused
// unless the file says insecure, and then a warning (openhal-0.1 §2).
func TestListenInsecure(t *testing.T) {
	lis := func(s string) string { return "board: sim\nhub:\n  listen:\n" + s }
	for _, tt := range []struct {
		name, yaml string
		err        string // "" when the file is valid
		warn       string // Warnings(), when valid
	}{
		{"loopback needs nothing", lis("    http: 127.0.0.1:7750\n    tcp: '[::1]:7751'\n"), "", ""},
		{"localhost needs nothing", lis("    http: localhost:0\n    tcp: 127.0.0.2:7751\n"), "", ""},
		{"TLS off loopback needs nothing", lis("    wss: 0.0.0.0:7752\n    tls: '[::]:7753'\n"), "", ""},
		{"http on every address", lis("    http: 0.0.0.0:7750\n"),
			"hub.listen.http: 0.0.0.0:7750 is off loopback, and a plain listener there would carry every token in clear: " +
				"serve the network with hub.listen.wss, keep http on 127.0.0.1, or say that clear text is wanted with " +
				"`http: {address: \"0.0.0.0:7750\", insecure: true}` (gateway run: --insecure)", ""},
		{"tcp with no host", lis("    tcp: :7751\n"), "hub.listen.tcp: :7751 is off loopback", ""},
		{"tcp on a host name", lis("    tcp: gw.lan:7751\n"), "hub.listen.tcp: gw.lan:7751 is off loopback", ""},
		{"tcp on a LAN address", lis("    tcp: 192.168.1.20:7751\n"), "hub.listen.tcp: 192.168.1.20:7751 is off loopback, and a plain listener there would carry every token in clear: serve the network with hub.listen.tls", ""},
		{"said insecure: a warning", lis("    http: {address: 0.0.0.0:7750, insecure: true}\n    tcp: {address: '[::]:7751', insecure: true}\n"), "",
			"hub.listen.http: 0.0.0.0:7750 is off loopback with insecure: true: every token given to this listener crosses the network in clear, readable by anyone on the way; hub.listen.wss serves the same over TLS\n" +
				"hub.listen.tcp: [::]:7751 is off loopback with insecure: true: every token given to this listener crosses the network in clear, readable by anyone on the way; hub.listen.tls serves the same over TLS"},
		{"insecure on loopback: no warning", lis("    http: {address: 127.0.0.1:7750, insecure: true}\n"), "", ""},
		{"insecure alone keeps the default address", lis("    http: {insecure: true}\n"), "", ""},
		{"insecure on a TLS listener", lis("    wss: {address: 0.0.0.0:7752, insecure: true}\n"),
			"hub.listen.wss.insecure: only the plain listeners (http, tcp) take insecure: wss is TLS", ""},
		{"insecure not a boolean", lis("    http: {address: 0.0.0.0:7750, insecure: yes please}\n"),
			`hub.listen.http.insecure: want a boolean (true or false), got "yes please"`, ""},
		{"misspelt field", lis("    http: {adress: 0.0.0.0:7750}\n"), "hub.listen.http.adress: unknown field (did you mean address?)", ""},
		{"a list", lis("    http: [0.0.0.0:7750]\n"), "hub.listen.http: want host:port, or a mapping {address, insecure}, got a list", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse([]byte(tt.yaml))
			switch {
			case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
				t.Fatalf("Parse: %v\nwant an error holding %q", err, tt.err)
			case tt.err != "":
				return
			case err != nil:
				t.Fatalf("Parse: %v", err)
			}
			if got := c.Warnings(); (len(got) == 0) != (tt.warn == "") || len(got) > 0 && got.Error() != tt.warn {
				t.Errorf("Warnings() =\n%v\nwant\n%s", got, tt.warn)
			}
		})
	}
}

// run's flags change the parsed configuration and Validate judges the
// result by the same rule.
func TestListenInsecureAfterFlags(t *testing.T) {
	c := Default()
	c.Hub.Listen.HTTP.Addr = "0.0.0.0:7750"
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "hub.listen.http: 0.0.0.0:7750 is off loopback") {
		t.Fatalf("Validate: %v", err)
	}
	c.Hub.Listen.HTTP.Insecure = true
	if err := c.Validate(); err != nil {
		t.Fatalf("Validate with Insecure: %v", err)
	}
}

func TestIsLoopback(t *testing.T) {
	for host, want := range map[string]bool{
		"127.0.0.1": true, "127.1.2.3": true, "::1": true, "::ffff:127.0.0.1": true, "localhost": true, "LocalHost": true,
		"": false, "0.0.0.0": false, "::": false, "192.168.1.20": false, "gw.lan": false, "localhost.evil.example": false,
	} {
		if got := IsLoopback(host); got != want {
			t.Errorf("IsLoopback(%q) = %v, want %v", host, got, want)
		}
	}
}
