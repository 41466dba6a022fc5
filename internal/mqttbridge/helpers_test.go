package mqttbridge_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openhal/gateway/adapter"
	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/mqttbridge"
	"github.com/openhal/gateway/internal/mqttbridge/mqtttest"
	"github.com/openhal/gateway/openhal"
)

const wait = 5 * time.Second

// write is one Hub.Write the bridge made.
type write struct {
	id, value, reason string
}

// fakeHub is the gateway as the bridge sees it.
type fakeHub struct {
	mu        sync.Mutex
	devs      []device.Descriptor
	vals      map[string]string
	answer    func(id string) (adapter.WriteResult, error) // nil: applied
	stopErr   error
	stopWait  chan struct{}     // nil, or Stop returns when it is closed
	stopped   *openhal.StopInfo // hub.stopped's answer
	pending   []openhal.Confirmation
	pendErr   error
	onPending func() // called by Pending before it answers
	status    []string

	writes chan write
	stops  chan string
}

func newHub(devs ...device.Descriptor) *fakeHub {
	return &fakeHub{devs: devs, vals: map[string]string{}, writes: make(chan write, 16), stops: make(chan string, 16)}
}

func (h *fakeHub) Devices(ctx context.Context) ([]device.Descriptor, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]device.Descriptor(nil), h.devs...), nil
}

func (h *fakeHub) Read(ctx context.Context, id string) (json.RawMessage, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	v, ok := h.vals[id]
	if !ok {
		return nil, &adapter.Error{Code: -32004, Message: "no such device"}
	}
	return json.RawMessage(v), nil
}

func (h *fakeHub) Write(ctx context.Context, id string, value json.RawMessage, reason string) (adapter.WriteResult, error) {
	select {
	case h.writes <- write{id, string(value), reason}:
	case <-ctx.Done(): // the bridge's end: nobody reads writes any more
		return adapter.WriteResult{}, ctx.Err()
	}
	h.mu.Lock()
	answer := h.answer
	h.mu.Unlock()
	if answer != nil {
		return answer(id)
	}
	return adapter.WriteResult{Status: "applied", Device: id, Value: value}, nil
}

func (h *fakeHub) Stop(ctx context.Context, reason string) error {
	h.stops <- reason
	if h.stopWait != nil {
		<-h.stopWait
	}
	return h.stopErr
}

// nextStop returns the reason of the bridge's next stop.
func (h *fakeHub) nextStop(t *testing.T) string {
	t.Helper()
	select {
	case r := <-h.stops:
		return r
	case <-time.After(wait):
		t.Fatal("no stop")
	}
	return ""
}

func (h *fakeHub) Stopped(ctx context.Context) (*openhal.StopInfo, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.stopped, nil
}

func (h *fakeHub) Pending(ctx context.Context) ([]openhal.Confirmation, error) {
	h.mu.Lock()
	list, err, hook := append([]openhal.Confirmation(nil), h.pending...), h.pendErr, h.onPending
	h.mu.Unlock()
	if hook != nil {
		hook()
	}
	return list, err
}

func (h *fakeHub) BrokerStatus(s string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.status = append(h.status, s)
}

func (h *fakeHub) lastStatus() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.status) == 0 {
		return ""
	}
	return h.status[len(h.status)-1]
}

// nextWrite returns the bridge's next write to the Hub.
func (h *fakeHub) nextWrite(t *testing.T) write {
	t.Helper()
	select {
	case w := <-h.writes:
		return w
	case <-time.After(wait):
		t.Fatal("no write to the Hub")
	}
	return write{}
}

func dev(id, kind string, access device.Access, risk device.Risk) device.Descriptor {
	return device.Descriptor{ID: id, Kind: kind, Source: "sim", Access: access, Risk: risk, State: device.StateOK}
}

// bench is a part of the sim bench, and the bridge's own device.
func bench() *fakeHub {
	h := newHub(
		dev("sim.led", device.KindGPIOOutput, device.AccessReadWrite, device.RiskLow),
		dev("sim.heater", device.KindGPIOOutput, device.AccessReadWrite, device.RiskHigh),
		dev("sim.meter", device.KindSerial, device.AccessReadWrite, device.RiskLow),
		device.Descriptor{ID: "mqtt.broker", Kind: "x.broker", Source: "adapter:mqtt", Access: device.AccessRead, Risk: device.RiskLow, State: device.StateOK},
	)
	h.vals["sim.led"] = "false"
	h.vals["sim.heater"] = "false"
	h.vals["sim.meter"] = `"READY"`
	return h
}

// discovery stands in for package homeassistant: the ids it was given,
// after a payload "-<id>,..." of those gone since prev.
func discovery(prev, devs []device.Descriptor) (string, [][]byte, error) {
	now := map[string]bool{}
	var ids, gone []string
	for _, d := range devs {
		ids = append(ids, d.ID)
		now[d.ID] = true
	}
	for _, d := range prev {
		if !now[d.ID] {
			gone = append(gone, "-"+d.ID)
		}
	}
	var payloads [][]byte
	if len(gone) > 0 {
		payloads = append(payloads, []byte(strings.Join(gone, ",")))
	}
	payloads = append(payloads, []byte(strings.Join(ids, ",")))
	return "homeassistant/device/gw/config", payloads, nil
}

func testConfig() mqttbridge.Config {
	return mqttbridge.Config{
		Broker: &url.URL{Scheme: "mqtt", Host: "127.0.0.1:1883"}, ClientID: "openhal-gw",
		Gateway: "gw", Name: "gw", Prefix: "openhal", DiscoveryPrefix: "homeassistant", QoS: 1,
	}
}

// run starts a bridge over a fake client, synced with h, until the test
// ends; the connection is down.
func run(t *testing.T, h *fakeHub) (*mqttbridge.Bridge, *mqtttest.Client) {
	t.Helper()
	b := mqttbridge.New(mqttbridge.Options{Config: testConfig(), Hub: h, Discovery: discovery, Own: "mqtt.", Log: slog.New(slog.DiscardHandler)})
	c := mqtttest.New()
	c.Attach(b)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		b.Run(ctx, c)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	if err := b.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	return b, c
}

func event(b *mqttbridge.Bridge, typ, data string) {
	b.Event(context.Background(), typ, json.RawMessage(data), 0)
}

func mqttMessage(topic, payload string, retain bool) mqttbridge.Message {
	return mqttbridge.Message{Topic: topic, Payload: []byte(payload), Retain: retain}
}

func timeout() <-chan time.Time { return time.After(wait) }

// settled waits for the last retained message a connection publishes to
// the bench (the outbox keeps the order in which messages became due).
func settled(t *testing.T, c *mqtttest.Client) {
	t.Helper()
	c.Wait(t, 0, "openhal/gw/sim.meter/availability", "")
}
