package adapterproto

import "encoding/json"

// Protocol is the one protocol version the gateway speaks.
const Protocol = 1

// EnvProtocols names the environment variable that carries the protocol
// numbers the daemon speaks, comma-separated ("1"). A process that finds
// it missing was not started by a daemon. It keeps oxidepmd's name, so
// that an adapter written for oxidepmd runs unchanged.
const EnvProtocols = "OXIDEPM_ADAPTER_PROTOCOLS"

// HostName is host.name in initialize: the gateway is an
// oxidepmd-compatible host. HostProduct (host.product) says which one.
const (
	HostName    = "oxidepmd"
	HostProduct = "gateway"
)

// Methods, daemon to adapter.
const (
	MethodInitialize  = "initialize"  // request
	MethodInitialized = "initialized" // notification
	MethodPing        = "ping"        // request, services only
	MethodCancel      = "cancel"      // notification
	MethodShutdown    = "shutdown"    // request
	MethodEvent       = "event"       // notification, services only
)

// Methods both ways: the daemon asks an adapter for its own devices, and
// an adapter asks the daemon for any device in its grant.
const (
	MethodDeviceRead  = "device.read"
	MethodDeviceWrite = "device.write"
)

// Methods, adapter to daemon.
const (
	MethodDevicesList   = "devices.list"
	MethodDevicesAdd    = "devices.add"
	MethodDevicesRemove = "devices.remove"
	MethodValuePublish  = "value.publish" // notification

	// The gateway's extensions: the emergency stop, which the HAL lets any
	// control_low principal engage (openhal-0.1 section 4), and whether it
	// is engaged now, which events tell only when it changes. hub.stop
	// needs a grant of control_low; hub.stopped, read.
	MethodHubStop    = "hub.stop"    // {reason} → as hal/stop
	MethodHubStopped = "hub.stopped" // {} → {stopped: null or {principal, reason, ts, failed, leftAsIs}}
	// hub.confirmations (read) lists the confirmation requests of the
	// devices in the grant, as hal/confirmations/list: events tell of a
	// request when it is made, and a service that starts while some wait
	// must know them.
	MethodHubConfirmations = "hub.confirmations" // {status?, after?, limit?} → {confirmations, next?}
)

// Error codes of the protocol, beside jsonrpc's standard ones.
const (
	CodeDenied              = -32003 // outside the adapter's grant
	CodeUnsupportedProtocol = -32022 // no protocol in common
	CodeCancelled           = -32024 // the adapter obeyed a cancel
)

// Values of data.code: what went wrong with an adapter, for the HAL client
// whose request it was and for the records.
const (
	EAdapterProtocol = "E_ADAPTER_PROTOCOL" // protocol broken (also sent with -32022)
	EAdapterCrashed  = "E_ADAPTER_CRASHED"  // the connection ended with the request in flight
	EAdapterFailed   = "E_ADAPTER_FAILED"   // the adapter is not running
	EAdapterError    = "E_ADAPTER_ERROR"    // the adapter answered with an error
	EAdapterDenied   = "E_ADAPTER_DENIED"   // the adapter asked outside its grant
)

// Kinds of adapter.
const (
	KindService = "service" // resident, receives events
	KindTool    = "tool"    // started on demand, exits when idle
)

// InitializeParams are the params of initialize.
type InitializeParams struct {
	Protocols []int  `json:"protocols"`
	Host      Host   `json:"host"`
	Adapter   Info   `json:"adapter"`
	Kind      string `json:"kind"`
	Grant     Grant  `json:"grant"`
	Paths     Paths  `json:"paths"`
	Limits    Limits `json:"limits"`
	// Settings are the adapter's own settings from the gateway's
	// configuration (adapters.settings.<name>), a JSON object; absent
	// when there are none. The gateway's extension of the seed's params:
	// an adapter that does not know it ignores it.
	Settings json.RawMessage `json:"settings,omitempty"`
}

// Host names the daemon. Product is the gateway's extra field, which
// adapters that do not know it ignore.
type Host struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Product string `json:"product,omitempty"`
}

// Info names an adapter, as its manifest and its initialize reply do.
type Info struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Grant is what an adapter may do: a HAL scope level (read, control_low or
// control_high) over some devices.
type Grant struct {
	Level string    `json:"level"`
	Scope ScopeList `json:"scope"`
}

// Paths are the adapter's own places on disk.
type Paths struct {
	State string `json:"state"`
}

// Limits are the daemon's limits for this adapter.
type Limits struct {
	MaxLine     int `json:"max_line"`
	MaxInFlight int `json:"max_in_flight"`
	EventQueue  int `json:"event_queue"`
}

// DefaultLimits returns the limits used when the configuration sets none.
func DefaultLimits() Limits {
	return Limits{MaxLine: 256 << 10, MaxInFlight: 32, EventQueue: 1024}
}

// InitializeResult is an adapter's answer to initialize: the highest
// protocol it shares with the offered ones, and its own name and version.
type InitializeResult struct {
	Protocol int    `json:"protocol"`
	Name     string `json:"name"`
	Version  string `json:"version"`
}

// UnsupportedProtocolData is the data of error -32022: the protocols the
// adapter speaks.
type UnsupportedProtocolData struct {
	Supported []int  `json:"supported,omitempty"`
	Code      string `json:"code,omitempty"`
}

// CancelParams are the params of cancel: the id of the request given up.
type CancelParams struct {
	ID uint64 `json:"id"`
}

// EventParams are the params of event. Type is a HAL notification's name
// without "hal/" and Data its params; Seq counts this adapter's events;
// Dropped, when not 0, is how many events were dropped since the last one
// delivered.
type EventParams struct {
	Seq     uint64 `json:"seq"`
	Type    string `json:"type"`
	Data    any    `json:"data"`
	Dropped uint64 `json:"dropped,omitempty"`
}

// Empty encodes as {}: the params of initialized, ping and shutdown, and
// the result of ping and shutdown.
type Empty struct{}
