package main

import (
	"context"
	"encoding/json"
	"errors"
	"sync"

	"github.com/openhal/gateway/adapters"
	"github.com/openhal/gateway/device"
)

// brokerID is the adapter's own device, published as mqtt.broker.
const brokerID = "broker"

// ErrNoStop is the answer to a stop asked on MQTT: adapter protocol 1
// gives an adapter device.read, device.write and its own devices, and no
// call that engages the Hub's emergency stop.
var ErrNoStop = errors.New("adapter protocol 1 has no call for an adapter to engage the emergency stop: use the gateway's stop (gateway stop, the console, a stop button)")

// connHub is mqttbridge.Hub over the adapter's connection to the daemon.
type connHub struct {
	mu     sync.Mutex
	c      *adapters.Conn
	added  bool   // mqtt.broker exists: its changes are published
	broker string // mqtt.broker's value
}

func newConnHub() *connHub { return &connHub{} }

func (h *connHub) attach(c *adapters.Conn) {
	h.mu.Lock()
	h.c = c
	h.mu.Unlock()
}

func (h *connHub) conn() *adapters.Conn {
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

func (h *connHub) Write(ctx context.Context, id string, value json.RawMessage, reason string) (adapters.WriteResult, error) {
	return h.conn().DeviceWrite(ctx, id, value, reason)
}

func (h *connHub) Stop(ctx context.Context, reason string) error { return ErrNoStop }

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
