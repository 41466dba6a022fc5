package cli

import "testing"

// The approval line's flags reach the gateway the command reached,
// whatever the approver's own defaults would choose.
func TestApproveFlags(t *testing.T) {
	fp := "b6a1cb0000000000000000000000000000000000000000000000000000000015ac"
	tests := []struct {
		name string
		f    clientFlags
		fp   string
		want string
	}{
		{"nothing given", clientFlags{hub: defaultHub}, "", ""},
		{"the default state dir's gateway", clientFlags{hub: "ws://127.0.0.1:7760/hal", hubGiven: true, hubOfStateDir: true}, "", ""},
		{"--state-dir", clientFlags{hub: "ws://127.0.0.1:7760/hal", hubGiven: true, hubOfStateDir: true, stateDir: "/tmp/gw", stateDirGiven: true}, "",
			"--state-dir /tmp/gw"},
		{"--hub, the default URL", clientFlags{hub: defaultHub, hubGiven: true}, "", "--hub ws://127.0.0.1:7750/hal"},
		{"--hub and --state-dir", clientFlags{hub: "tcp://127.0.0.1:7761", hubGiven: true, stateDir: "/srv/my bench", stateDirGiven: true}, "",
			"--hub tcp://127.0.0.1:7761 --state-dir '/srv/my bench'"},
		{"--hub over TLS", clientFlags{hub: "wss://gw.lan:7752/hal", hubGiven: true}, fp, "--hub wss://gw.lan:7752/hal --fingerprint " + fp},
		{"--hub NAME", clientFlags{hub: "wss://10.0.0.5:7752/hal", hubGiven: true, hubName: "bench"}, fp, "--hub bench --fingerprint " + fp},
	}
	for _, tt := range tests {
		if got := tt.f.approveFlags(tt.fp); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}
