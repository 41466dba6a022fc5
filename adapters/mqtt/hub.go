package main

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/openhal/gateway/adapter"
	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/openhal"
)

// brokerID is the adapter's own device, published as mqtt.broker.
const brokerID = "broker"

// connHub is mqttbridge.Hub over the adapter's connection to the daemon.
type connHub struct {
	mu     sync.Mutex
	c      *adapter.Conn
	added  bool   // mqtt.broker exists: its changes are published
	broker string // mqtt.broker's value
}

func newConnHub() *connHub { return &connHub{} }

func (h *connHub) attach(c *adapter.Conn) {
	h.mu.Lock()
	h.c = c
	h.mu.Unlock()
}

func (h *connHub) conn() *adapter.Conn {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.c
}

func (h *connHub) Devices(ctx context.Context) ([]device.Descriptor, error) {
	return h.conn().DevicesList(ctx)
}

func (h *connHub) Read(ctx context.Context, id string) (json.RawMessage, error) {
	v, err := h.conn().DeviceRead(ctx, id)
	return v.Value, err
}

func (h *connHub) Write(ctx context.Context, id string, value json.RawMessage, reason string) (adapter.WriteResult, error) {
	return h.conn().DeviceWrite(ctx, id, value, reason)
}

// Stop engages the emergency stop as the adapter (hub.stop, the gateway's
// extension of protocol 1; the grant is control_low).
func (h *connHub) Stop(ctx context.Context, reason string) error {
	_, err := h.conn().HubStop(ctx, reason)
	return err
}

// Stopped is the stop in force (hub.stopped).
func (h *connHub) Stopped(ctx context.Context) (*openhal.StopInfo, error) {
	return h.conn().HubStopped(ctx)
}

// Pending is the confirmation requests pending now (hub.confirmations).
func (h *connHub) Pending(ctx context.Context) ([]openhal.Confirmation, error) {
	return h.conn().HubPending(ctx)
}

// BrokerStatus keeps mqtt.broker's value and publishes it once the device
// exists.
func (h *connHub) BrokerStatus(s string) {
	h.mu.Lock()
	defer h.mu.Unlock() // held while publishing: values go out in order
	h.broker = s
	if h.added {
		_ = h.c.Publish(brokerID, s)
	}
}

func (h *connHub) status() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.broker
}

// addBroker adds mqtt.broker, a read-only string, and publishes its value.
func (h *connHub) addBroker(ctx context.Context) error {
	_, err := h.conn().DevicesAdd(ctx, device.Descriptor{
		ID: brokerID, Kind: "x.broker", Label: "MQTT broker connection",
		Access: device.AccessRead, Risk: device.RiskLow, Schema: device.Schema{Type: "string"},
	})
	if err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.added = true
	return h.c.Publish(brokerID, h.broker)
}
