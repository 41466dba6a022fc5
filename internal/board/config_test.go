package board

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/openhal/gateway/internal/board/sim"
)

func TestDefault(t *testing.T) {
	want := &Config{
		Board: "sim",
		Hub: HubConfig{
			Conformance: "full",
			Listen:      ListenConfig{HTTP: Listener{Addr: "127.0.0.1:7750"}, TCP: Listener{Addr: "127.0.0.1:7751"}},
			Limits: Limits{
				MaxMessageBytes: 262144, MaxInFlight: 32, MaxConnections: 64,
				AdminReserve: 4, MaxConnectionsPerToken: 16, InitTimeout: 10 * time.Second, QueueLength: 1024,
				AuthFailures: 5, AuthWindow: time.Minute,
				MaxUnauthenticated: 64, MaxUnauthenticatedPerPeer: 8, InitMessageBytes: 16384,
				HTTPIdleTimeout: time.Minute, AuthTrackedPeers: 4096,
				QueueBytes: 512 << 10, TotalQueueBytes: 8 << 20,
			},
			SafeOnShutdown: true,
			AllowedOrigins: []string{},
			History:        defaultHistory,
			MCP:            MCPConfig{IdleTimeout: 30 * time.Minute},
			Announce:       "auto",
		},
		Sim:      sim.Config{MeterInterval: 5 * time.Second, PollInterval: time.Second, TemperatureThreshold: 0.1},
		Adapters: AdaptersConfig{Enabled: []string{}, User: "gateway-adapter", Shipped: "/usr/lib/gateway/adapters"},
	}
	got := Default()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Default() =\n%+v\nwant\n%+v", got, want)
	}
	if err := got.Validate(); err != nil {
		t.Errorf("Default().Validate() = %v", err)
	}
	if c, err := Parse(DefaultYAML()); err != nil || !reflect.DeepEqual(c, want) {
		t.Errorf("Parse(DefaultYAML()) = %+v, %v", c, err)
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		edit func(c *Config) // applied to Default() for the wanted result
	}{
		{"board only", "board: sim\n", func(c *Config) {}},
		{"null sections keep defaults", "board: sim\nhub:\nsim:\n", func(c *Config) {}},
		{"empty string disables", "board: sim\nhub:\n  listen:\n    http: \"\"\n    unix:\n", func(c *Config) { c.Hub.Listen.HTTP = Listener{} }},
		{"every field", `
board: sim
stateDir: /var/lib/gateway
hub:
  conformance: control
  listen: {http: "[::1]:8080", tcp: {address: ":9000", insecure: true}, unix: /run/gateway/hal.sock}
  limits:
    maxMessageBytes: 0x10000
    maxInFlight: 8
    maxConnections: 1_000
    adminReserve: 0
    maxConnectionsPerToken: 3
    initTimeout: 1m30s
    queueLength: 16
    maxUnauthenticated: 32
    maxUnauthenticatedPerPeer: 2
    initMessageBytes: 4096
    httpIdleTimeout: 5s
    authTrackedPeers: 100
    queueBytes: 65536
    totalQueueBytes: 1048576
  metricsPublic: true
  safeOnShutdown: false
  mcp: {enabled: true, idleTimeout: 5m}
sim:
  meterInterval: 250ms
  pollInterval: 2s
  temperatureThreshold: 1
`, func(c *Config) {
			c.StateDir = "/var/lib/gateway"
			c.Hub = HubConfig{
				Conformance: "control",
				Listen:      ListenConfig{HTTP: Listener{Addr: "[::1]:8080"}, TCP: Listener{Addr: ":9000", Insecure: true}, Unix: "/run/gateway/hal.sock"},
				Limits: Limits{MaxMessageBytes: 65536, MaxInFlight: 8, MaxConnections: 1000,
					AdminReserve: 0, MaxConnectionsPerToken: 3, InitTimeout: 90 * time.Second, QueueLength: 16,
					AuthFailures: 5, AuthWindow: time.Minute,
					MaxUnauthenticated: 32, MaxUnauthenticatedPerPeer: 2, InitMessageBytes: 4096,
					HTTPIdleTimeout: 5 * time.Second, AuthTrackedPeers: 100,
					QueueBytes: 65536, TotalQueueBytes: 1 << 20},
				MetricsPublic:  true,
				AllowedOrigins: []string{},
				History:        defaultHistory,
				MCP:            MCPConfig{Enabled: true, IdleTimeout: 5 * time.Minute},
				Announce:       "auto",
			}
			c.Sim = sim.Config{MeterInterval: 250 * time.Millisecond, PollInterval: 2 * time.Second, TemperatureThreshold: 1}
		}},
		{"adapters", "board: sim\nadapters:\n  enabled: [notifier, py-ledger2]\n  user: nobody\n", func(c *Config) {
			c.Adapters = AdaptersConfig{Enabled: []string{"notifier", "py-ledger2"}, User: "nobody", Shipped: "/usr/lib/gateway/adapters"}
		}},
		{"adapters user keeps its default", "board: sim\nadapters:\n  enabled: [notifier]\n", func(c *Config) {
			c.Adapters.Enabled = []string{"notifier"}
		}},
		{"anchors and aliases", "board: sim\nsim:\n  meterInterval: &i 3s\n  pollInterval: *i\n", func(c *Config) {
			c.Sim.MeterInterval, c.Sim.PollInterval = 3*time.Second, 3*time.Second
		}},
		{"tls listeners", `
board: sim
hub:
  listen: {wss: "0.0.0.0:7752", tls: "[::]:7753", unix: /run/gateway/hal.sock, unixGroup: gpio}
  tls: {cert: /etc/gateway/cert.pem, key: /etc/gateway/key.pem}
`, func(c *Config) {
			c.Hub.Listen.WSS, c.Hub.Listen.TLS = Listener{Addr: "0.0.0.0:7752"}, Listener{Addr: "[::]:7753"}
			c.Hub.Listen.Unix, c.Hub.Listen.UnixGroup = "/run/gateway/hal.sock", "gpio"
			c.Hub.TLS = TLSFiles{Cert: "/etc/gateway/cert.pem", Key: "/etc/gateway/key.pem"}
		}},
		{"host names", "board: sim\nhub:\n  listen: {http: 'localhost:0', tcp: {address: 'gw-1.lan:7751', insecure: true}}\n", func(c *Config) {
			c.Hub.Listen.HTTP, c.Hub.Listen.TCP = Listener{Addr: "localhost:0"}, Listener{Addr: "gw-1.lan:7751", Insecure: true}
		}},
		{"no history", "board: sim\nhub:\n  history: {maxSeries: 0}\n", func(c *Config) {
			c.Hub.History.MaxSeries = 0
		}},
		{"history in memory only", "board: sim\nhub:\n  history: {maxDiskMB: 0}\n", func(c *Config) {
			c.Hub.History.MaxDiskMB = 0
		}},
		{"history on disk", "board: sim\nhub:\n  history: {keepFull: 24h, keepMinutes: 0s, maxDiskMB: 64, flushInterval: 1m}\n", func(c *Config) {
			c.Hub.History = HistoryConfig{MaxSeries: 64, KeepFull: 24 * time.Hour, MaxDiskMB: 64, FlushInterval: time.Minute}
		}},
		{"allowed origins", "board: sim\nhub:\n  allowedOrigins: [console.lan:8080, '*.lab.example', 'https://ops.example']\n", func(c *Config) {
			c.Hub.AllowedOrigins = []string{"console.lan:8080", "*.lab.example", "https://ops.example"}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse([]byte(tt.yaml))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			want := Default()
			tt.edit(want)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got\n%+v\nwant\n%+v", got, want)
			}
		})
	}
}

// TestParseErrors has one fault per file; each must give exactly one line.
func TestParseErrors(t *testing.T) {
	lim := func(s string) string { return "board: sim\nhub:\n  limits:\n" + s }
	lis := func(s string) string { return "board: sim\nhub:\n  listen:\n" + s }
	sim := func(s string) string { return "board: sim\nsim:\n" + s }
	hub := func(s string) string { return "board: sim\nhub:\n" + s }
	tests := []struct {
		name, yaml, want string
	}{
		// Structure.
		{"unknown field", lim("    maxInflight: 3\n"), "hub.limits.maxInflight: unknown field (did you mean maxInFlight?)"},
		{"unknown top-level field", "board: sim\nplugins: []\n", "plugins: unknown field"},
		{"misspelt listen field", lis("    htp: 127.0.0.1:7750\n"), "hub.listen.htp: unknown field (did you mean http?)"},
		{"misspelt top-level field", "board: sim\nadaptors:\n  enabled: []\n", "adaptors: unknown field (did you mean adapters?)"},
		{"misspelt section", "board: sim\nhubb:\n  conformance: full\n", "hubb: unknown field (did you mean hub?)"},
		{"misspelt device field", "board: sim\nsim:\n  meterIntervl: 1s\n", "sim.meterIntervl: unknown field (did you mean meterInterval?)"},
		{"two letters off a long name", lim("    maxInFlihgt: 3\n"), "hub.limits.maxInFlihgt: unknown field (did you mean maxInFlight?)"},
		{"too far for a guess", hub("  port: 1\n"), "hub.port: unknown field"},
		{"field set twice", "board: sim\nhub:\n  conformance: read\n  conformance: full\n", "hub.conformance: set twice (first on line 3)"},
		{"not a mapping", "- board\n", "want a mapping of settings, got a list"},
		{"section not a mapping", "board: sim\nhub: 3\n", "hub: want a mapping of settings, got 3"},
		{"syntax error has its line", "board: sim\nhub:\n\tconformance: full\n", "line 3: found character that cannot start any token"},
		{"two documents", "board: sim\n---\nboard: sim\n", "line 2: a configuration file holds one YAML document"},
		// Types.
		{"string for integer", lim("    maxInFlight: x\n"), `hub.limits.maxInFlight: want an integer, got "x"`},
		{"quoted integer", lim("    maxInFlight: \"32\"\n"), `hub.limits.maxInFlight: want an integer, got "32"`},
		{"fraction for integer", lim("    maxInFlight: 1.5\n"), "hub.limits.maxInFlight: want an integer, got 1.5"},
		{"nothing for integer", lim("    maxInFlight:\n"), "hub.limits.maxInFlight: want an integer, got nothing"},
		{"integer too large", lim("    maxInFlight: 9223372036854775808\n"), "hub.limits.maxInFlight: 9223372036854775808 is out of range"},
		{"list for string", "board: [sim]\n", "board: want a string, got a list"},
		{"string for boolean", "board: sim\nhub:\n  metricsPublic: \"yes\"\n", `hub.metricsPublic: want a boolean (true or false), got "yes"`},
		{"string for number", sim("  temperatureThreshold: warm\n"), `sim.temperatureThreshold: want a number, got "warm"`},
		{"bare number for duration", lim("    initTimeout: 10\n"), `hub.limits.initTimeout: want a duration such as "10s" or "1m30s", got 10`},
		{"bad duration", lim("    initTimeout: ten\n"), `hub.limits.initTimeout: want a duration such as "10s" or "1m30s", got "ten"`},
		// Values.
		{"no board", "hub: {}\n", "board: required (sim, auto, rpi3b, rpi3bplus, rpi4b, rpi5, rpizero2w, generic)"},
		{"unknown board", "board: arduino\n", `board: unknown board "arduino" (want sim, auto, rpi3b, rpi3bplus, rpi4b, rpi5, rpizero2w, generic)`},
		{"relative state dir", "board: sim\nstateDir: var/gw\n", `stateDir: want an absolute path, got "var/gw"`},
		{"conformance", "board: sim\nhub:\n  conformance: fuul\n", `hub.conformance: unknown conformance level "fuul" (want read, control or full)`},
		{"address without port", lis("    http: localhost\n"), `hub.listen.http: want host:port such as 127.0.0.1:7750 (or "" to disable), got "localhost"`},
		{"port not a number", lis("    tcp: 127.0.0.1:hal\n"), `hub.listen.tcp: port "hal" in "127.0.0.1:hal" is not a number from 0 to 65535`},
		{"port too large", lis("    tcp: 127.0.0.1:70000\n"), `hub.listen.tcp: port "70000" in "127.0.0.1:70000" is not a number from 0 to 65535`},
		{"bad host", lis("    http: gate_way!:80\n"), `hub.listen.http: host "gate_way!" in "gate_way!:80" is neither an IP address nor a host name`},
		{"same address twice", lis("    http: 127.0.0.1:7000\n    tcp: 127.0.0.1:7000\n"), "hub.listen.tcp: same address as hub.listen.http (127.0.0.1:7000)"},
		{"bad wss address", lis("    wss: 7752\n"), `hub.listen.wss: want host:port such as 127.0.0.1:7750 (or "" to disable), got "7752"`},
		{"bad tls port", lis("    tls: 127.0.0.1:tls\n"), `hub.listen.tls: port "tls" in "127.0.0.1:tls" is not a number from 0 to 65535`},
		{"wss on the http address", lis("    wss: 127.0.0.1:7750\n"), "hub.listen.wss: same address as hub.listen.http (127.0.0.1:7750)"},
		{"tls on the tcp address", lis("    tls: 127.0.0.1:7751\n"), "hub.listen.tls: same address as hub.listen.tcp (127.0.0.1:7751)"},
		{"tls on the wss address", lis("    wss: :7000\n    tls: :7000\n"), "hub.listen.tls: same address as hub.listen.wss (:7000)"},
		{"announce mode", hub("  announce: bonjour\n"), `hub.announce: unknown mode "bonjour" (want auto, avahi, builtin, off)`},
		{"name too long", hub("  name: " + strings.Repeat("n", 64) + "\n"), "hub.name: 64 bytes is longer than a DNS-SD name allows (63)"},
		{"name with a control character", hub("  name: \"bench\\tone\"\n"), `hub.name: "bench\tone" holds a control character`},
		{"name with a leading space", hub("  name: \" bench\"\n"), `hub.name: " bench" begins or ends with a space`},
		{"bad unix group", lis("    unixGroup: \"gate way\"\n"), `hub.listen.unixGroup: "gate way" is not a group name`},
		{"certificate without key", "board: sim\nhub:\n  tls: {cert: /etc/gw/cert.pem}\n", "hub.tls.key: required with hub.tls.cert (or leave both empty for a self-signed certificate)"},
		{"key without certificate", "board: sim\nhub:\n  tls: {key: /etc/gw/key.pem}\n", "hub.tls.cert: required with hub.tls.key (or leave both empty for a self-signed certificate)"},
		{"relative certificate", "board: sim\nhub:\n  tls: {cert: cert.pem, key: /etc/gw/key.pem}\n", `hub.tls.cert: want an absolute path, got "cert.pem"`},
		{"unix path too long", lis("    unix: /" + strings.Repeat("s", 110) + "\n"), "hub.listen.unix: path of 111 bytes is longer than a Unix socket allows (107)"},
		{"message limit too small", lim("    maxMessageBytes: 100\n"), "hub.limits.maxMessageBytes: must be at least 1024, got 100"},
		{"zero in flight", lim("    maxInFlight: 0\n"), "hub.limits.maxInFlight: must be positive, got 0"},
		{"negative connections", lim("    maxConnections: -1\n"), "hub.limits.maxConnections: must be positive, got -1"},
		{"negative admin reserve", lim("    adminReserve: -1\n"), "hub.limits.adminReserve: must not be negative, got -1"},
		{"zero connections per token", lim("    maxConnectionsPerToken: 0\n"), "hub.limits.maxConnectionsPerToken: must be positive, got 0"},
		{"zero queue", lim("    queueLength: 0\n"), "hub.limits.queueLength: must be positive, got 0"},
		{"queue bytes below the message limit", lim("    queueBytes: 262143\n"),
			"hub.limits.queueBytes: must be at least hub.limits.maxMessageBytes (262144), so that an answer of that size fits; got 262143"},
		{"total queue bytes below one queue", lim("    totalQueueBytes: 524287\n"),
			"hub.limits.totalQueueBytes: must be at least hub.limits.queueBytes (524288), got 524287"},
		{"zero auth failures", lim("    authFailures: 0\n"), "hub.limits.authFailures: must be positive, got 0"},
		{"negative duration", lim("    initTimeout: -1s\n"), "hub.limits.initTimeout: must be a positive duration, got -1s"},
		{"auth failures too many", lim("    authFailures: 101\n"), "hub.limits.authFailures: must be at most 100, got 101"},
		{"zero tracked peers", lim("    authTrackedPeers: 0\n"), "hub.limits.authTrackedPeers: must be positive, got 0"},
		{"tracked peers too many", lim("    authTrackedPeers: 100001\n"), "hub.limits.authTrackedPeers: must be at most 100000, got 100001"},
		{"zero unauthenticated", lim("    maxUnauthenticated: 0\n"), "hub.limits.maxUnauthenticated: must be positive, got 0"},
		{"zero unauthenticated per peer", lim("    maxUnauthenticatedPerPeer: 0\n"), "hub.limits.maxUnauthenticatedPerPeer: must be positive, got 0"},
		{"init message too small", lim("    initMessageBytes: 100\n"), "hub.limits.initMessageBytes: must be at least 1024, got 100"},
		{"zero idle timeout", lim("    httpIdleTimeout: 0s\n"), "hub.limits.httpIdleTimeout: must be a positive duration, got 0s"},
		{"zero interval", sim("  meterInterval: 0s\n"), "sim.meterInterval: must be a positive duration, got 0s"},
		{"zero poll", sim("  pollInterval: 0s\n"), "sim.pollInterval: must be a positive duration, got 0s"},
		{"threshold too small", sim("  temperatureThreshold: 0\n"), "sim.temperatureThreshold: must be at least 0.001, got 0"},
		{"adapter name", "board: sim\nadapters:\n  enabled: [notifier, Notifier]\n", `adapters.enabled[1]: want an adapter name matching ^[a-z][a-z0-9-]{0,31}$, got "Notifier"`},
		{"adapter name too long", "board: sim\nadapters:\n  enabled: [" + strings.Repeat("a", 33) + "]\n", `adapters.enabled[0]: want an adapter name matching ^[a-z][a-z0-9-]{0,31}$, got "` + strings.Repeat("a", 33) + `"`},
		{"adapter name reserved", "board: sim\nadapters:\n  enabled: [state]\n", `adapters.enabled[0]: "state" is reserved, not an adapter name`},
		{"adapter enabled twice", "board: sim\nadapters:\n  enabled: [a, b, a]\n", `adapters.enabled[2]: "a" is already enabled (adapters.enabled[0])`},
		{"adapters enabled not a list", "board: sim\nadapters:\n  enabled: notifier\n", `adapters.enabled: want a list ([] for none), got "notifier"`},
		{"adapters enabled nothing", "board: sim\nadapters:\n  enabled:\n", `adapters.enabled: want a list ([] for none), got nothing`},
		{"adapters unknown field", "board: sim\nadapters:\n  enable: [a]\n", `adapters.enable: unknown field (did you mean enabled?)`},
		{"adapter user empty", "board: sim\nadapters:\n  user: \"\"\n", `adapters.user: "" is not a user name`},
		{"adapter user bad", "board: sim\nadapters:\n  user: \"a b\"\n", `adapters.user: "a b" is not a user name`},
		{"threshold not finite", sim("  temperatureThreshold: .inf\n"), "sim.temperatureThreshold: want a finite number, got +Inf"},
		{"settings not a mapping", "board: sim\nadapters:\n  settings:\n    mqtt: tcp://x\n", "adapters.settings.mqtt: want a mapping of the adapter's settings, got \"tcp://x\""},
		{"shipped not absolute", "board: sim\nadapters:\n  shipped: lib/adapters\n", "adapters.shipped: must be an absolute path, got \"lib/adapters\""},
		{"settings of a bad name", "board: sim\nadapters:\n  settings:\n    MQTT: {a: 1}\n", "adapters.settings.MQTT: want an adapter name matching ^[a-z][a-z0-9-]{0,31}$"},
		{"no MCP idle timeout", hub("  mcp: {enabled: true, idleTimeout: 0s}\n"), "hub.mcp.idleTimeout: must be a positive duration, got 0s"},
		{"negative history", hub("  history: {maxSeries: -1}\n"), "hub.history.maxSeries: must be from 0 to 4096, got -1"},
		{"history too large", hub("  history: {maxSeries: 4097}\n"), "hub.history.maxSeries: must be from 0 to 4096, got 4097"},
		{"history kept for a negative time", hub("  history: {keepFull: -1h}\n"), "hub.history.keepFull: must be from 0s (none kept) to 87840h0m0s, got -1h0m0s"},
		{"history kept past ten years", hub("  history: {keepMinutes: 100000h}\n"), "hub.history.keepMinutes: must be from 0s (none kept) to 87840h0m0s, got 100000h0m0s"},
		{"history's disk negative", hub("  history: {maxDiskMB: -1}\n"), "hub.history.maxDiskMB: must be from 0 (nothing on disk) to 1048576, got -1"},
		{"history flushed too often", hub("  history: {flushInterval: 10ms}\n"), "hub.history.flushInterval: must be from 1s to 1h0m0s, got 10ms"},
		{"any origin", hub("  allowedOrigins: [console.lan, '*']\n"), `hub.allowedOrigins[1]: "*" lets a page from any site reach the Hub; name the sites`},
		{"any origin with a port", hub("  allowedOrigins: ['*:*']\n"), `hub.allowedOrigins[0]: "*:*" lets a page from any site reach the Hub; name the sites`},
		{"any origin with a scheme", hub("  allowedOrigins: ['https://*']\n"), `hub.allowedOrigins[0]: "https://*" lets a page from any site reach the Hub; name the sites`},
		{"empty origin", hub("  allowedOrigins: ['']\n"), `hub.allowedOrigins[0]: want a host pattern such as console.lan:8080 or *.lan, got ""`},
		{"bad origin pattern", hub("  allowedOrigins: ['console[.lan']\n"), `hub.allowedOrigins[0]: "console[.lan" is not a pattern: syntax error in pattern`},
		{"origin with a path", hub("  allowedOrigins: ['https://console.lan/app']\n"), `hub.allowedOrigins[0]: want host[:port] or scheme://host[:port], without path or user, got "https://console.lan/app"`},
		{"origins not a list", hub("  allowedOrigins: console.lan\n"), `hub.allowedOrigins: want a list ([] for none), got "console.lan"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkOneFault(t, tt.yaml, tt.want)
		})
	}
}

func TestEveryErrorOnItsOwnLine(t *testing.T) {
	const file = `board: sim
hub:
  conformance: fuul
  limits:
    maxInflight: 3
    initTimeout: soon
`
	_, err := Parse([]byte(file))
	want := []string{
		`hub.conformance: unknown conformance level "fuul" (want read, control or full)`,
		"hub.limits.maxInflight: unknown field (did you mean maxInFlight?)",
		`hub.limits.initTimeout: want a duration such as "10s" or "1m30s", got "soon"`,
	}
	if err == nil {
		t.Fatal("Parse accepted a file with 3 faults")
	}
	if got := strings.Split(err.Error(), "\n"); !reflect.DeepEqual(got, want) {
		t.Errorf("lines\n%q\nwant\n%q", got, want)
	}
}

// TestErrorsInFileOrder: faults of value, found after decoding, are
// sorted among the faults of form by their line; a missing field comes
// first; a field whose form is wrong is not judged again on its default.
func TestErrorsInFileOrder(t *testing.T) {
	const file = `sim:
  pollInterval: 0s
hub:
  listen:
    http: nowhere
  limits:
    maxInFlight: many
  conformance: [full]
`
	_, err := Parse([]byte(file))
	var errs Errors
	if !errors.As(err, &errs) {
		t.Fatalf("Parse = %v, want Errors", err)
	}
	var paths []string
	for _, e := range errs {
		paths = append(paths, e.Path)
	}
	want := []string{"board", "sim.pollInterval", "hub.listen.http", "hub.limits.maxInFlight", "hub.conformance"}
	if !reflect.DeepEqual(paths, want) {
		t.Errorf("paths %q, want %q", paths, want)
	}

	_, err = Parse([]byte("board: [sim]\n"))
	if err == nil || err.Error() != "board: want a string, got a list" {
		t.Errorf("Parse = %v, want only the type fault of board", err)
	}
}

func TestValidateAfterChange(t *testing.T) {
	c := Default()
	c.Hub.Listen.TCP = Listener{Addr: "no port"}
	c.Hub.Limits.MaxInFlight = 0
	err := c.Validate()
	var errs Errors
	if !errors.As(err, &errs) || len(errs) != 2 {
		t.Fatalf("Validate = %v, want 2 errors", err)
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	if err := os.WriteFile(good, []byte("board: sim\nhub:\n  conformance: read\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Load(good)
	if err != nil || c.Hub.Conformance != "read" {
		t.Errorf("Load = %+v, %v", c, err)
	}
	_, err = Load(filepath.Join(dir, "missing.yaml"))
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Load of a missing file = %v, want ErrNotExist", err)
	}
}

// An adapter's settings are any mapping, handed on as JSON.
func TestAdapterSettings(t *testing.T) {
	c, err := Parse([]byte("board: sim\nadapters:\n  settings:\n    mqtt:\n      broker: tcp://127.0.0.1:1883\n      qos: 1\n      tls: {insecure: false}\n"))
	if err != nil {
		t.Fatal(err)
	}
	got := string(c.AdapterSettings()["mqtt"])
	if want := `{"broker":"tcp://127.0.0.1:1883","qos":1,"tls":{"insecure":false}}`; got != want {
		t.Fatalf("settings %s, want %s", got, want)
	}
	if len(Default().AdapterSettings()) != 0 {
		t.Fatal("the default configuration has adapter settings")
	}
}

// defaultHistory is default.yaml's hub.history.
var defaultHistory = HistoryConfig{MaxSeries: 64, KeepFull: 7 * 24 * time.Hour, KeepMinutes: 365 * 24 * time.Hour, MaxDiskMB: 512, FlushInterval: 30 * time.Second}
