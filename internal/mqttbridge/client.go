package mqttbridge

import (
	"context"
	"errors"
	"fmt"
)

// Client is the bridge's view of an MQTT 5 connection, so that the
// bridge is tested with a fake (package mqtttest) and does not follow
// the API of paho.golang, which is pre-1.0 (package pahoclient holds the
// real one). The client connects by itself, reconnects with a backoff,
// and tells a Handler what happens; its will is the gateway's "offline".
type Client interface {
	// Publish sends one message at the configured QoS and waits for the
	// broker's acknowledgement (QoS 1). It fails at once with
	// ErrDisconnected while the connection is down.
	Publish(ctx context.Context, topic string, payload []byte, retain bool) error
	// Subscribe subscribes to filters with retain handling 2: the broker
	// sends no retained message on subscribe, so that a stale command
	// kept by the broker is never acted on.
	Subscribe(ctx context.Context, filters ...string) error
}

// Handler is told what the client sees. Its methods must not block: the
// client calls them from its own goroutines.
type Handler interface {
	// Connected is called on every connection, reconnections included.
	Connected()
	// Disconnected is called when a connection is lost or an attempt
	// fails, with why.
	Disconnected(err error)
	// Received is called for each message of a subscription.
	Received(m Message)
}

// Message is a publish received from the broker.
type Message struct {
	Topic   string
	Payload []byte
	Retain  bool
}

// ErrDisconnected is Publish's error while the connection is down.
var ErrDisconnected = errors.New("not connected to the broker")

// ErrConnectionLost wraps what ended a connection that was up.
var ErrConnectionLost = errors.New("connection lost")

// RefusedError is a broker's refusal, with the MQTT 5 reason code of its
// CONNACK or DISCONNECT (a client's reason string, if it gave one, in
// Reason).
type RefusedError struct {
	Code       byte
	Reason     string
	Disconnect bool // the broker ended a connection that was up
}

func (e *RefusedError) Error() string {
	what := "refused the connection"
	if e.Disconnect {
		what = "ended the connection"
	}
	s := fmt.Sprintf("the broker %s (reason code 0x%02X)", what, e.Code)
	if e.Reason != "" {
		s += ": " + e.Reason
	}
	return s
}
