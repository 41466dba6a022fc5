package jsonrpc

import (
	"encoding/json"
	"strconv"
)

// Standard JSON-RPC codes.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
)

// MaxDepth is how deeply objects and arrays may nest in one message; the
// message object itself is depth 1.
const MaxDepth = 64

// Message is one decoded JSON-RPC message. Raw fields keep the exact bytes
// received (an id of 20 digits is echoed as those digits; never passed
// through float64). A decoded Message owns its bytes: it never aliases the
// buffer it was decoded from, so it may outlive a LineReader's line.
type Message struct {
	ID     json.RawMessage // nil when absent (a notification)
	Method string          // "" for a response
	Params json.RawMessage // nil when absent (means {})
	Result json.RawMessage // nil when absent
	Error  *Error          // nil when absent
}

// IsRequest reports whether m is a request: it has a method and an id.
func (m *Message) IsRequest() bool { return m.Method != "" && m.ID != nil }

// IsNotification reports whether m is a notification: a method, no id.
func (m *Message) IsNotification() bool { return m.Method != "" && m.ID == nil }

// IsResponse reports whether m is a response: it has no method.
func (m *Message) IsResponse() bool { return m.Method == "" }

// Error is a JSON-RPC error object; fields encode in this order: code,
// message, data. A decoded Error holds its data as the json.RawMessage
// received, so that an adapter's error can be passed on whole.
type Error struct {
	Code    int64  `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

func (e *Error) Error() string {
	return "jsonrpc error " + strconv.FormatInt(e.Code, 10) + ": " + e.Message
}

// Reason returns data.reason when Data is a map[string]any holding a string
// "reason" (as the decoders' own errors do), and "" otherwise.
func (e *Error) Reason() string {
	if d, ok := e.Data.(map[string]any); ok {
		if r, ok := d["reason"].(string); ok {
			return r
		}
	}
	return ""
}

// IntID returns n as an id.
func IntID(n uint64) json.RawMessage {
	return strconv.AppendUint(nil, n, 10)
}

// ParseUint64ID returns the id of an adapter message as a uint64 (ok=false
// if absent or not an unsigned 64-bit integer written as plain digits).
func ParseUint64ID(raw json.RawMessage) (uint64, bool) {
	return parseUint64(raw)
}

// parseUint64 reads plain decimal digits without a float and without
// allocating; a leading zero is allowed only for "0", as in JSON.
func parseUint64(b []byte) (uint64, bool) {
	if len(b) == 0 || len(b) > 20 || (b[0] == '0' && len(b) > 1) {
		return 0, false
	}
	var n uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if n > (1<<64-1-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	return n, true
}

// ParseInt64 reads a JSON number that is an integer literal (an optional
// '-' and decimal digits: no fraction, no exponent) within int64's range,
// without allocating; false for anything else.
func ParseInt64(b []byte) (int64, bool) { return parseInt64(b) }

// parseInt64 reads an optional '-' and plain decimal digits.
func parseInt64(b []byte) (int64, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	u, ok := parseUint64(b)
	switch {
	case !ok:
		return 0, false
	case neg && u <= 1<<63:
		return -int64(u-1) - 1, true
	case !neg && u < 1<<63:
		return int64(u), true
	}
	return 0, false
}
