package cli

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/openhal/gateway/halclient"
)

// A gateway met for the first time: --trust-announced takes the
// announcement's word only when the certificate presented is the one
// announced; without it, and with no terminal, the refusal says how.
func TestFirstUse(t *testing.T) {
	fp, other := strings.Repeat("ab", 32), strings.Repeat("cd", 32)
	p := halclient.Presented{URL: "wss://192.0.2.7:7752/hal", Addr: "192.0.2.7:7752", Name: "bench", ID: "0123456789abcdef0123456789abcdef", Fingerprint: fp, File: "/home/ada/.config/gateway/known_gateways"}
	r, w, err := os.Pipe() // no terminal
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	ask := &prompter{in: r, out: &strings.Builder{}, hold: func() func() { return func() {} }}
	for _, tt := range []struct {
		name string
		f    clientFlags
		want string // "" trusts
	}{
		{"announced and presented alike", clientFlags{hubName: "bench", trustAnnounced: true, announced: fp}, ""},
		{"announced another", clientFlags{hubName: "bench", trustAnnounced: true, announced: other},
			`the gateway at wss://192.0.2.7:7752/hal presented a certificate with fingerprint ` + fp + `, but "bench" is announced with ` + other + `: refused, nothing was sent`},
		{"nothing announced", clientFlags{hubName: "bench", trustAnnounced: true},
			"the gateway at wss://192.0.2.7:7752/hal (id 0123456789abcdef0123456789abcdef) is not known yet, and there is no terminal to ask: its certificate's SHA-256 fingerprint is " + fp + ". " +
				"Compare it with the one `gateway status` shows on the gateway itself (or its console), then run again with --fingerprint " + fp + ", " +
				"or once on a terminal to answer yes; it is then recorded in /home/ada/.config/gateway/known_gateways. Nothing was sent"},
		{"by name, not trusted", clientFlags{hubName: "bench", announced: fp}, "then run again with --fingerprint " + fp + ", or --trust-announced to take the LAN announcement's word, or once"},
		{"a URL", clientFlags{}, "then run again with --fingerprint " + fp + ", or once on a terminal"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.f.firstUse(context.Background(), p, ask)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("firstUse = %v; want it trusted", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("firstUse = %v; want %q", err, tt.want)
			}
		})
	}
}
