package openhal

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/jsonrpc"
)

// Version is the one protocol version this Hub speaks.
const Version = "0.1"

// Methods, by conformance level (spec §5).
const (
	MethodInitialize          = "hal/initialize"
	MethodPing                = "hal/ping"
	MethodDevicesList         = "hal/devices/list"
	MethodDevicesGet          = "hal/devices/get"
	MethodRead                = "hal/read"
	MethodConfirmationsList   = "hal/confirmations/list"
	MethodWrite               = "hal/write"
	MethodStop                = "hal/stop"
	MethodResume              = "hal/resume"
	MethodConfirmationApprove = "hal/confirmations/approve"
	MethodConfirmationReject  = "hal/confirmations/reject"
	MethodConfirmationCancel  = "hal/confirmations/cancel"
	MethodAuditList           = "hal/audit/list"
)

// Notifications from Client to Hub.
const (
	NotifyInitialized = "hal/initialized"
	NotifyShutdown    = "hal/shutdown"
)

// Notifications from Hub to Client (spec §8).
const (
	NotifyValue                 = "hal/value"
	NotifyDeviceState           = "hal/deviceState"
	NotifyBlocked               = "hal/blocked"
	NotifyStopped               = "hal/stopped"
	NotifyResumed               = "hal/resumed"
	NotifyDeviceAdded           = "hal/deviceAdded"
	NotifyDeviceRemoved         = "hal/deviceRemoved"
	NotifyConfirmationRequested = "hal/confirmationRequested"
	NotifyConfirmationResolved  = "hal/confirmationResolved"
)

// InitializeParams are the params of hal/initialize.
type InitializeParams struct {
	ProtocolVersion *string     `json:"protocolVersion"`
	ClientInfo      *ClientInfo `json:"clientInfo"`
	Token           *string     `json:"token,omitempty"`
}

// ClientInfo names the client.
type ClientInfo struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// HubInfo names the hub.
type HubInfo struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Principal is who a token speaks for (spec §4).
type Principal struct {
	Kind  string `json:"kind"`
	Name  string `json:"name"`
	Scope Scope  `json:"scope,omitempty"`
}

// Capabilities lists what the Hub sends.
type Capabilities struct {
	Notifications []string `json:"notifications"`
}

// InitializeResult is the answer to hal/initialize: the seed's shape plus
// bootId and stopped.
type InitializeResult struct {
	ProtocolVersion string       `json:"protocolVersion"`
	HubInfo         HubInfo      `json:"hubInfo"`
	Conformance     Level        `json:"conformance"`
	Principal       Principal    `json:"principal"`
	Capabilities    Capabilities `json:"capabilities"`
	BootID          string       `json:"bootId"`
	// Stopped is the emergency stop in force when the client connected
	// (one engaged before, or latched by an earlier run), null when none
	// is: a client learns of a stop it did not see happen (spec §3).
	Stopped *StopInfo `json:"stopped"`
}

// StopInfo is an emergency stop in force: who engaged it, why and when;
// and, a gateway extension of spec §3, what its last drive to the safe
// values could not make safe (Failed) and left as it was (LeftAsIs), as
// hal/stopped says them: a client that connects during a stop learns
// what is still unsafe without having seen hal/stopped. After a restart
// they are those of the drive the latched stop made at start. While a
// drive is under way they are the previous drive's, or empty (never
// absent) for a first stop: its hal/stopped follows.
type StopInfo struct {
	Principal Principal     `json:"principal"`
	Reason    string        `json:"reason"`
	TS        time.Time     `json:"ts"`
	Failed    []SafeFailure `json:"failed"`
	LeftAsIs  []LeftAsIs    `json:"leftAsIs"`
}

// DevicesListParams filter hal/devices/list.
type DevicesListParams struct {
	Tags []string `json:"tags,omitempty"`
	Kind string   `json:"kind,omitempty"`
}

// DevicesListResult is the answer to hal/devices/list.
type DevicesListResult struct {
	Devices []device.Descriptor `json:"devices"`
}

// DeviceParams name one device (hal/devices/get).
type DeviceParams struct {
	Device string `json:"device"`
}

// ReadParams are the params of hal/read.
type ReadParams struct {
	Device   string `json:"device"`
	MaxAgeMs *int64 `json:"maxAgeMs,omitempty"`
}

// ValueResult is the answer to hal/read and the params of hal/value.
//
// Seq is the Hub-wide count of values; a token limited to some devices
// is not sent it (it would count the others' values too), so it is
// omitted there (0). DevSeq is the device's own count of values in this
// bootId: a client tells a value it missed by a gap in one device's
// DevSeq (spec §8, docs/protocol.md "Telling missed values").
type ValueResult struct {
	Device string    `json:"device"`
	Value  any       `json:"value"`
	TS     time.Time `json:"ts"`
	Seq    uint64    `json:"seq,omitempty"`
	DevSeq uint64    `json:"devSeq,omitempty"`
}

// AppendJSON appends v as encoding/json would encode it
// (jsonrpc.Appender): hal/read's answer and hal/value's params are the
// Hub's commonest messages, and this costs them no reflection and no
// allocation.
func (v ValueResult) AppendJSON(dst []byte) ([]byte, error) {
	n := len(dst)
	dst = append(dst, `{"device":`...)
	dst = jsonrpc.AppendString(dst, v.Device)
	dst = append(dst, `,"value":`...)
	dst, err := jsonrpc.AppendValue(dst, v.Value)
	if err != nil {
		return dst[:n], err
	}
	dst = append(dst, `,"ts":`...)
	if dst, err = jsonrpc.AppendTime(dst, v.TS); err != nil {
		return dst[:n], err
	}
	if v.Seq != 0 {
		dst = strconv.AppendUint(append(dst, `,"seq":`...), v.Seq, 10)
	}
	if v.DevSeq != 0 {
		dst = strconv.AppendUint(append(dst, `,"devSeq":`...), v.DevSeq, 10)
	}
	return append(dst, '}'), nil
}

// WriteParams are the params of hal/write.
type WriteParams struct {
	Device string          `json:"device"`
	Value  json.RawMessage `json:"value"`
	Reason string          `json:"reason,omitempty"`
	Reply  bool            `json:"reply,omitempty"`
	// ReplyWithinMs asks a serial device to wait this long, at most, for
	// the instrument's answer line and to give it as the result's reply;
	// no answer in that time is no error. Other devices ignore it.
	ReplyWithinMs *int64 `json:"replyWithinMs,omitempty"`
	TimeoutMs     *int64 `json:"timeoutMs,omitempty"`
}

// Write statuses.
const (
	StatusApplied = "applied"
	StatusPending = "pending"
)

// WriteResult is the answer to an applied hal/write.
type WriteResult struct {
	Status string    `json:"status"`
	Device string    `json:"device"`
	Value  any       `json:"value"`
	TS     time.Time `json:"ts"`
	Seq    uint64    `json:"seq,omitempty"` // as in ValueResult
	DevSeq uint64    `json:"devSeq,omitempty"`
	Reply  any       `json:"reply,omitempty"`
}

// DeviceStateParams are the params of hal/deviceState.
type DeviceStateParams struct {
	Device string       `json:"device"`
	State  device.State `json:"state"`
	Fault  string       `json:"fault,omitempty"`
}

// DeviceAddedParams are the params of hal/deviceAdded.
type DeviceAddedParams struct {
	Device device.Descriptor `json:"device"`
}

// DeviceRemovedParams are the params of hal/deviceRemoved.
type DeviceRemovedParams struct {
	Device string `json:"device"`
	Reason string `json:"reason"`
}

// TimeFormat is how every ts is written: RFC 3339, UTC, nanoseconds.
const TimeFormat = time.RFC3339Nano
