// Package board turns a configuration file into the gateway's settings:
// which board it drives, where the Hub listens and with which limits, the
// sim board's timing, and the devices' risks, safe values and safety
// rules. The file is strict YAML: Load and Parse report every unknown
// field, wrong type and bad value at once, each with its path, so that
// `gateway check` and `gateway run` refuse a bad file with the whole list
// of what to fix.
package board

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/openhal/gateway/internal/board/sim"
	"github.com/openhal/gateway/openhal"
)

// Config is one configuration file. Fields absent from the file keep the
// values of Default.
type Config struct {
	// Board names the board: "sim", "auto" (detected at start) or a
	// profile name (profile.Names: rpi4b, rpi5, generic...).
	Board string `yaml:"board"`
	// StateDir holds tokens, the audit log and the latched stop. Empty
	// means the command line's --state-dir or its default.
	StateDir string     `yaml:"stateDir"`
	Hub      HubConfig  `yaml:"hub"`
	Sim      sim.Config `yaml:"sim"`
	// Devices changes the board's devices and states their safety
	// rules, by device id (see DeviceConfig).
	Devices map[string]DeviceConfig `yaml:"devices"`
	// Chips are the chips on a real board's buses whose pins or outputs
	// are devices (I/O expanders, PWM boards), by a name the devices use
	// (see ChipConfig).
	Chips map[string]ChipConfig `yaml:"chips"`
	// Modbus are the Modbus lines (serial RTU or TCP) whose units'
	// coils and registers are devices of kind modbus, by a name the
	// devices give as their bus (see ModbusLineConfig).
	Modbus map[string]ModbusLineConfig `yaml:"modbus"`
	// StopButtonID names a gpio.input whose true engages the emergency
	// stop; empty: none. StopButton returns it.
	StopButtonID string `yaml:"stopButton"`
	// Adapters says which installed adapters run, and as whom.
	Adapters AdaptersConfig `yaml:"adapters"`

	// lines holds the line of each device entry in the file it was
	// parsed from, so that of two devices that claim one pin the later
	// in the file is the one reported.
	lines map[string]int
}

// AdaptersConfig says which installed adapters the gateway runs
// (adapter protocol 1). Installing an adapter does not run it: an operator
// enables it here, so that what runs on a board is in its configuration.
type AdaptersConfig struct {
	// Enabled names installed adapters to run. An enabled adapter that is
	// not installed is shown as failed rather than refused, so that the
	// file can be written before the install; `gateway check` does not
	// look at the state directory.
	Enabled []string `yaml:"enabled"`
	// User is the system user adapters run as, without the gateway's
	// groups and files.
	User string `yaml:"user"`
	// Settings are each adapter's own settings, by adapter name: a
	// mapping the gateway does not read, handed to the adapter in its
	// initialize params (the gateway's extension "settings"), so that an
	// adapter shipped with the gateway (mqtt) is configured in the same
	// file that enables it. They go over the adapter's standard input,
	// never its command line or environment, since they may hold a
	// password.
	Settings map[string]AdapterSettings `yaml:"settings"`
	// Shipped is the folder of the adapters shipped with the gateway
	// (the .deb puts mqtt there): an enabled adapter found there is
	// installed from it at start when it is not installed yet, or was
	// installed from another build, so that an upgrade of the package
	// upgrades its adapters too. "" turns that off.
	Shipped string `yaml:"shipped"`
}

// AdapterSettings returns each adapter's settings as JSON, by name.
func (c *Config) AdapterSettings() map[string]json.RawMessage {
	out := make(map[string]json.RawMessage, len(c.Adapters.Settings))
	for name, s := range c.Adapters.Settings {
		out[name] = s.JSON
	}
	return out
}

// AdapterSettings is one adapter's settings, as JSON.
type AdapterSettings struct{ JSON json.RawMessage }

// decodeNode takes any mapping, as JSON: the adapter checks its own
// fields. YAML's own types (timestamps, binary) have no JSON form and
// are refused.
func (s *AdapterSettings) decodeNode(d *decoder, path string, n *yaml.Node) {
	if n.Kind != yaml.MappingNode {
		d.fail(path, n.Line, "want a mapping of the adapter's settings, got %s", describe(n))
		return
	}
	var v any
	if err := n.Decode(&v); err != nil {
		d.fail(path, n.Line, "%v", err)
		return
	}
	b, err := json.Marshal(v)
	if err != nil {
		d.fail(path, n.Line, "settings with no JSON form: %v", err)
		return
	}
	s.JSON = b
}

// HubConfig is how the Hub serves clients.
type HubConfig struct {
	Conformance openhal.Level `yaml:"conformance"`
	Listen      ListenConfig  `yaml:"listen"`
	Limits      Limits        `yaml:"limits"`
	// MetricsPublic serves GET /metrics without a token.
	MetricsPublic bool `yaml:"metricsPublic"`
	// SafeOnShutdown drives every device with a safe value to it when the
	// gateway stops cleanly (SIGTERM), audited as {hub, shutdown}: a
	// stopped gateway leaves no output on that nobody watches.
	SafeOnShutdown bool `yaml:"safeOnShutdown"`
	// TLS is the certificate of the wss and tls listeners.
	TLS TLSFiles `yaml:"tls"`
	// AllowedOrigins are the host patterns of web pages on other sites
	// than the gateway's own that may open its WebSocket (halhub
	// Options.AllowedOrigins); none by default.
	AllowedOrigins []string `yaml:"allowedOrigins"`
	// History is the in-memory history of device values that
	// gateway/history serves (package history).
	History HistoryConfig `yaml:"history"`
	// MCP is the Model Context Protocol endpoint /mcp (package mcpbridge).
	MCP MCPConfig `yaml:"mcp"`
	// Name is the gateway's name on the LAN: the DNS-SD instance name
	// it is announced by, and what `gateway discover` and --hub show.
	// "" means the host name.
	Name string `yaml:"name"`
	// Announce says how the listeners are announced with DNS-SD over
	// multicast DNS (package announce): auto, avahi, builtin or off.
	Announce string `yaml:"announce"`
}

// MCPConfig is the /mcp endpoint on the HTTP and HTTPS listeners.
type MCPConfig struct {
	// Enabled serves /mcp. Off unless asked: it lets AI agents act on the
	// bench, and an operator turns that on knowingly (`gateway mcp` on
	// stdio needs nothing turned on: it is a client like the CLI).
	Enabled bool `yaml:"enabled"`
	// IdleTimeout ends an MCP session, and its token's connection to the
	// Hub, after this long without a request.
	IdleTimeout time.Duration `yaml:"idleTimeout"`
}

// HistoryConfig bounds the history of device values.
type HistoryConfig struct {
	// MaxSeries is how many series (a number or boolean device, or each
	// numeric or boolean member of an object value) the history keeps,
	// 136 KiB each once the first value comes; 0 keeps none.
	MaxSeries int `yaml:"maxSeries"`
	// KeepFull and KeepMinutes are how long the values at full
	// resolution and the one-minute buckets are kept on disk, in the
	// state directory's history/ (0: none of them).
	KeepFull    time.Duration `yaml:"keepFull"`
	KeepMinutes time.Duration `yaml:"keepMinutes"`
	// MaxDiskMB bounds the history's files (MiB): the oldest go first.
	// 0 keeps nothing on disk.
	MaxDiskMB int `yaml:"maxDiskMB"`
	// FlushInterval is how often the values taken since are written to
	// disk, in one batch (a few writes, one fsync each).
	FlushInterval time.Duration `yaml:"flushInterval"`
}

// ListenConfig says where the Hub listens. An empty address disables that
// transport.
type ListenConfig struct {
	HTTP Listener `yaml:"http"` // WebSocket, /healthz, /metrics and the console
	WSS  Listener `yaml:"wss"`  // the same over TLS (HTTPS)
	TCP  Listener `yaml:"tcp"`  // line-framed JSON-RPC
	TLS  Listener `yaml:"tls"`  // the same over TLS
	Unix string   `yaml:"unix"` // path of a Unix socket, line-framed
	// UnixGroup is the group the Unix socket is given (mode 0660). Empty:
	// the group "gateway" if the system has one, else the owner's group.
	UnixGroup string `yaml:"unixGroup"`
}

// TLSFiles names PEM files of a certificate (with its chain) and its key.
// Both empty means a self-signed certificate that the gateway makes on
// its first start and keeps in the state directory.
type TLSFiles struct {
	Cert string `yaml:"cert"`
	Key  string `yaml:"key"`
}

// Limits bound what one client can cost the Hub (openhal-0.1 §2).
type Limits struct {
	MaxMessageBytes int           `yaml:"maxMessageBytes"`
	MaxInFlight     int           `yaml:"maxInFlight"`    // requests per connection
	MaxConnections  int           `yaml:"maxConnections"` // besides AdminReserve
	AdminReserve    int           `yaml:"adminReserve"`   // connections kept for admin tokens
	InitTimeout     time.Duration `yaml:"initTimeout"`    // to complete hal/initialize
	QueueLength     int           `yaml:"queueLength"`    // per-connection queue of non-value notifications
	// AuthFailures UNAUTHORIZED answers per AuthWindow, per remote
	// address, before it is rate limited (a sliding window).
	AuthFailures int           `yaml:"authFailures"`
	AuthWindow   time.Duration `yaml:"authWindow"`

	// Connections not yet authenticated hold no connection slot; they are
	// bounded on their own, per peer (remote address; peer uid on the
	// Unix socket) and in all, on the network listeners together and on
	// the Unix socket apart. More are closed at accept.
	MaxUnauthenticated        int `yaml:"maxUnauthenticated"`
	MaxUnauthenticatedPerPeer int `yaml:"maxUnauthenticatedPerPeer"`
	// InitMessageBytes is the largest message before hal/initialize
	// succeeds (at most MaxMessageBytes).
	InitMessageBytes int `yaml:"initMessageBytes"`
	// HTTPIdleTimeout closes HTTP keep-alive connections idle this long.
	HTTPIdleTimeout time.Duration `yaml:"httpIdleTimeout"`
	// AuthTrackedPeers bounds the peers whose failed tokens are counted;
	// past it, new peers share one count.
	AuthTrackedPeers int `yaml:"authTrackedPeers"`
	// QueueBytes bounds one connection's outgoing queue in bytes, answers
	// included until written; TotalQueueBytes bounds all connections'
	// queues together (openhal-0.1 §8).
	QueueBytes      int `yaml:"queueBytes"`
	TotalQueueBytes int `yaml:"totalQueueBytes"`

	// MaxConnectionsPerToken bounds the connections (of MaxConnections
	// and AdminReserve together) one token holds.
	MaxConnectionsPerToken int `yaml:"maxConnectionsPerToken"`
}

//go:embed default.yaml
var defaultYAML []byte

// DefaultYAML returns the text of the embedded default configuration.
func DefaultYAML() []byte { return append([]byte(nil), defaultYAML...) }

// Default returns the embedded default configuration: the sim board on
// 127.0.0.1. It is what `gateway run` uses without --config.
func Default() *Config {
	c := &Config{}
	d := newDecoder()
	if err := d.decode(defaultYAML, c); err != nil {
		panic(fmt.Sprintf("board: embedded default.yaml: %v", err))
	}
	if errs := d.result(nil); len(errs) > 0 {
		panic(fmt.Sprintf("board: embedded default.yaml: %v", errs))
	}
	return c
}

// Load reads and parses the configuration file at path.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read configuration: %w", err)
	}
	return Parse(data)
}

// Parse parses a configuration file's text. Settings it leaves out keep
// their defaults, except board, which a file must name. On a bad file the
// error is an Errors holding every fault found, in the order of the file.
func Parse(data []byte) (*Config, error) {
	c := Default()
	c.Board = ""
	d := newDecoder()
	if err := d.decode(data, c); err != nil {
		return nil, Errors{{Msg: err.Error()}}
	}
	for id := range c.Devices {
		if line, ok := d.lines[join("devices", id)]; ok {
			if c.lines == nil {
				c.lines = map[string]int{}
			}
			c.lines[id] = line
		}
	}
	if errs := d.result(c.check()); len(errs) > 0 {
		return nil, errs
	}
	return c, nil
}

// Validate checks c's values, for a configuration changed after Parse (by
// command-line flags, for example). It returns nil or an Errors.
func (c *Config) Validate() error {
	if errs := c.check(); len(errs) > 0 {
		return errs
	}
	return nil
}
