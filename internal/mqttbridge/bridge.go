// Package mqttbridge is the MQTT bridge of the mqtt adapter: it publishes
// the Hub's devices, values, device states and emergency stop to an MQTT
// broker under the topic layout of docs/mqtt.md, with Home Assistant's
// discovery config, and turns commands received on the set topics into
// writes through the Hub under the adapter's grant, so that MQTT gets the
// same rules, stop and confirmations as any HAL client.
//
// The bridge speaks to the broker through Client (paho.golang's autopaho
// in package pahoclient, a fake in package mqtttest) and to the gateway
// through Hub (the adapter's calls to the daemon).
package mqttbridge

import (
	"context"
	"encoding/json"
	"log/slog"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/openhal/gateway/adapter"
	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/homeassistant"
	"github.com/openhal/gateway/openhal"
)

// Hub is what the bridge needs of the gateway: the adapter's calls to the
// daemon, and the value of its own device mqtt.broker.
type Hub interface {
	Devices(ctx context.Context) ([]device.Descriptor, error)
	Read(ctx context.Context, id string) (json.RawMessage, error)
	Write(ctx context.Context, id string, value json.RawMessage, reason string) (adapter.WriteResult, error)
	// Stop engages the emergency stop, or says why it cannot.
	Stop(ctx context.Context, reason string) error
	// Stopped is the emergency stop in force now, nil when none is.
	Stopped(ctx context.Context) (*openhal.StopInfo, error)
	// Pending is the confirmation requests pending now for the devices of
	// the grant (approvals.go).
	Pending(ctx context.Context) ([]openhal.Confirmation, error)
	// BrokerStatus sets mqtt.broker's value: "connected mqtt://host:port"
	// or "disconnected: <why>".
	BrokerStatus(status string)
}

// Discovery makes Home Assistant's discovery messages for the bench's
// devices (package homeassistant): the topic, and the retained payloads to
// publish on it in order. prev is the devices of the config Home
// Assistant last got (nil: none this run): a component gone since then is
// removed with a payload of its own before the config without it (Home
// Assistant's documented sequence), which is why a config is never
// coalesced with the one before it.
type Discovery func(prev, devs []device.Descriptor) (topic string, payloads [][]byte, err error)

// Options make a Bridge.
type Options struct {
	Config    Config
	Hub       Hub
	Discovery Discovery // nil: no discovery
	// Own is the id prefix of the adapter's own devices ("mqtt."): they
	// are not bridged (mqtt.broker describes the bridge's own link).
	Own string
	Log *slog.Logger
}

// Timeouts of the bridge's calls; a command waits for the Hub's answer as
// long as a HAL client would for a slow device.
const (
	publishTimeout = 10 * time.Second
	writeTimeout   = 30 * time.Second
	readTimeout    = 5 * time.Second
	commandQueue   = 64  // commands received, waiting for the Hub
	waitingMax     = 256 // confirmations remembered (the Hub's own bound)
)

// Bridge is one run of the bridge. It is the client's Handler.
type Bridge struct {
	cfg   Config
	t     homeassistant.Topics
	gw    string
	hub   Hub
	disc  Discovery
	own   string
	log   *slog.Logger
	out   *outbox
	cmds  chan command
	stops *stopLane
	up    chan struct{}

	mu        sync.Mutex
	client    Client // set by Run
	connected bool
	ready     bool   // connected, online published and subscribed: retained messages may go
	why       string // the last words of Disconnected
	devs      map[string]device.Descriptor
	synced    bool // a Sync has learnt the bench: until then it is unknown
	values    map[string]json.RawMessage
	gen       map[string]uint64 // bumped by each value event, so that a read does not undo a newer event
	stop      json.RawMessage   // nil until an event says
	waiting   map[string]string // confirmation id → device, of the bridge's own pending writes
	waitOrder []string
	stats     Stats
	configDue bool                // the discovery config must be published
	haDevs    []device.Descriptor // the devices of the last config published
	appr      approvals           // confirmation requests (approvals.go)
}

// Stats are the bridge's counters, published in <base>/bridge/state.
type Stats struct {
	RetainedDropped uint64 `json:"retainedCommandsDropped"`
	CommandsDropped uint64 `json:"commandsDropped"`
	EventsDropped   uint64 `json:"eventsDropped"`
	StopsRefused    uint64 `json:"stopsRefused"`
}

// New makes a bridge, and sets mqtt.broker to say it is connecting;
// Run starts it.
func New(o Options) *Bridge {
	if o.Log == nil {
		o.Log = slog.Default()
	}
	o.Hub.BrokerStatus("disconnected: connecting to " + o.Config.BrokerName())
	return &Bridge{
		cfg: o.Config, t: o.Config.Topics(), gw: o.Config.Gateway, hub: o.Hub, disc: o.Discovery, own: o.Own, log: o.Log,
		out: newOutbox(), cmds: make(chan command, commandQueue), stops: newStopLane(), up: make(chan struct{}, 1),
		devs: map[string]device.Descriptor{}, values: map[string]json.RawMessage{}, gen: map[string]uint64{},
		waiting: map[string]string{}, appr: newApprovals(),
	}
}

// Run publishes and serves commands over c until ctx ends, then publishes
// the gateway "offline" (a clean stop does not fire the will) within a
// short bound, and returns.
func (b *Bridge) Run(ctx context.Context, c Client) {
	b.mu.Lock()
	b.client = c
	b.mu.Unlock()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		b.serveCommands(ctx)
	}()
	go func() {
		defer wg.Done()
		b.serveStops(ctx)
	}()
	for {
		select {
		case <-ctx.Done():
			wg.Wait()
			b.goodbye()
			return
		case <-b.up:
			b.connect(ctx)
			b.flush(ctx)
		case <-b.out.wake:
			b.flush(ctx)
		}
	}
}

// goodbye publishes the gateway offline on a clean stop.
func (b *Bridge) goodbye() {
	if !b.isConnected() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := b.client.Publish(ctx, b.t.Status(b.gw), []byte("offline"), true); err != nil {
		b.log.Warn("mqtt: gateway offline not published", "err", err)
	}
}

// Connected is the client's: a connection is up.
func (b *Bridge) Connected() {
	b.mu.Lock()
	b.connected, b.ready, b.why = true, false, ""
	b.mu.Unlock()
	status := "connected " + b.cfg.BrokerName()
	b.log.Info("mqtt: "+status, "clientId", b.cfg.ClientID, "base", b.t.Base(b.gw))
	b.hub.BrokerStatus(status)
	select {
	case b.up <- struct{}{}:
	default:
	}
}

// Disconnected is the client's: the connection is down, or an attempt
// failed. The words go to the log and mqtt.broker; a retry that fails
// for the same reason is logged at debug level only.
func (b *Bridge) Disconnected(err error) {
	why := Why(err, b.cfg.BrokerName())
	b.mu.Lock()
	same := !b.connected && b.why == why
	b.connected, b.ready, b.why = false, false, why
	b.appr.events = nil // events tell of now: not for the next connection
	b.mu.Unlock()
	if same {
		b.log.Debug("mqtt: still disconnected: "+why, "err", err)
		return
	}
	b.log.Warn("mqtt: disconnected: "+why, "broker", b.cfg.BrokerName(), "err", err)
	b.hub.BrokerStatus("disconnected: " + why)
}

func (b *Bridge) isReady() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.ready
}

func (b *Bridge) isConnected() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.connected
}

// connect runs on each connection: the gateway online, the subscriptions
// (the broker forgets them with the session), then every retained message.
func (b *Bridge) connect(ctx context.Context) {
	pctx, cancel := context.WithTimeout(ctx, publishTimeout)
	defer cancel()
	if err := b.client.Publish(pctx, b.t.Status(b.gw), []byte("online"), true); err != nil {
		b.log.Warn("mqtt: gateway online not published", "err", err)
		return
	}
	// <base>/+/set covers <base>/_stop/set: a subscription of its own
	// would have the broker send each stop twice (mosquitto sends one
	// copy per matching subscription).
	filters := []string{b.t.Set(b.gw, "+")}
	if b.disc != nil {
		filters = append(filters, b.t.HAStatus())
	}
	if err := b.client.Subscribe(pctx, filters...); err != nil {
		b.log.Warn("mqtt: subscribe failed: commands are not received", "filters", filters, "err", err)
	}
	b.mu.Lock()
	b.ready = b.connected
	b.mu.Unlock()
	b.republish()
}

// flush publishes the discovery config and the outbox while the
// connection is up; a failure leaves the rest for the next connection,
// which republishes everything anyway.
func (b *Bridge) flush(ctx context.Context) {
	if !b.publishConfig(ctx) {
		return
	}
	for b.isReady() && ctx.Err() == nil {
		topic, payload, ok := b.out.next()
		if !ok {
			// Events go once every retained message due is out: an
			// automation they trigger reads the state they changed.
			if !b.publishEvent(ctx) {
				return
			}
			continue
		}
		pctx, cancel := context.WithTimeout(ctx, publishTimeout)
		err := b.client.Publish(pctx, topic, payload, true)
		cancel()
		if err != nil {
			b.log.Debug("mqtt: publish failed; kept for the next connection", "topic", topic, "err", err)
			return
		}
		b.out.done(topic, payload)
	}
}

// republish makes every retained message due again: on each connection,
// and when Home Assistant comes online.
func (b *Bridge) republish() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.putConfigLocked()
	if b.stop != nil {
		b.out.put(b.t.StopState(b.gw), b.stop)
	}
	b.putBridgeLocked()
	b.republishApprovalsLocked()
	for _, id := range b.bridgedLocked() {
		b.out.put(b.t.Availability(b.gw, id), availability(b.devs[id].State))
		if v, ok := b.values[id]; ok {
			b.out.put(b.t.State(b.gw, id), v)
		}
	}
}

// bridgedLocked is the ids of the bridged devices, sorted.
func (b *Bridge) bridgedLocked() []string {
	ids := make([]string, 0, len(b.devs))
	for id := range b.devs {
		if !b.isOwn(id) {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids
}

func (b *Bridge) isOwn(id string) bool { return b.own != "" && strings.HasPrefix(id, b.own) }

// putConfigLocked makes the discovery config due.
func (b *Bridge) putConfigLocked() {
	if b.disc != nil {
		b.configDue = true
		b.out.poke()
	}
}

// publishConfig publishes the discovery config when it is due, with the
// removal of the components gone since the last one; false when the
// connection failed.
func (b *Bridge) publishConfig(ctx context.Context) bool {
	b.mu.Lock()
	if !b.ready || !b.configDue || !b.synced {
		// Before the first Sync the bench is unknown: a config without
		// its devices would show Home Assistant a bench with none.
		ready := b.ready
		b.mu.Unlock()
		return ready
	}
	b.configDue = false
	prev, ids := b.haDevs, b.bridgedLocked()
	devs := make([]device.Descriptor, len(ids))
	for i, id := range ids {
		devs[i] = b.devs[id]
	}
	b.mu.Unlock()
	topic, payloads, err := b.disc(prev, devs)
	if err != nil {
		b.log.Error("mqtt: discovery config not made", "err", err)
		return true
	}
	for _, p := range payloads {
		pctx, cancel := context.WithTimeout(ctx, publishTimeout)
		err := b.client.Publish(pctx, topic, p, true)
		cancel()
		if err != nil {
			b.mu.Lock()
			b.configDue = true
			b.mu.Unlock()
			b.log.Debug("mqtt: discovery config not published; kept for the next connection", "err", err)
			return false
		}
	}
	b.mu.Lock()
	b.haDevs = devs
	b.mu.Unlock()
	return true
}

// putBridgeLocked makes the bridge's diagnostics due: the adapters up
// (of those that provide devices: an adapter is seen through its devices,
// up when one of them is not offline) and the counters.
func (b *Bridge) putBridgeLocked() {
	if !b.synced {
		return // before the first Sync the bench is unknown: "0/0" would be false
	}
	up, all := map[string]bool{}, map[string]bool{}
	for _, d := range b.devs {
		name, ok := strings.CutPrefix(d.Source, "adapter:")
		if !ok {
			continue
		}
		all[name] = true
		if d.State != device.StateOffline {
			up[name] = true
		}
	}
	payload, _ := json.Marshal(struct {
		Adapters string `json:"adapters"`
		Devices  int    `json:"devices"`
		Stats
	}{strconv.Itoa(len(up)) + "/" + strconv.Itoa(len(all)), len(b.bridgedLocked()), b.stats})
	b.out.put(b.t.BridgeState(b.gw), payload)
}

// availability is a device's availability payload from its state.
func availability(s device.State) []byte {
	if s == device.StateOK || s == "" {
		return []byte("online")
	}
	return []byte("offline")
}

// Due is the number of retained messages waiting for the broker: while
// it is away, at most a few per device, however often they change.
func (b *Bridge) Due() int { return b.out.len() }
