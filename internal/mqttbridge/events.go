package mqttbridge

import (
	"bytes"
	"context"
	"encoding/json"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/openhal"
)

// Sync learns the bench from the Hub (its devices and their values) and
// makes every retained message due: at start, and after events were
// dropped, since values may then have been missed. A value event that
// arrives during a read wins over the read.
func (b *Bridge) Sync(ctx context.Context) error {
	devs, err := b.hub.Devices(ctx)
	if err != nil {
		return err
	}
	b.mu.Lock()
	b.devs = make(map[string]device.Descriptor, len(devs))
	b.synced = true
	for _, d := range devs {
		b.devs[d.ID] = d
	}
	for id := range b.values {
		if _, ok := b.devs[id]; !ok {
			delete(b.values, id)
		}
	}
	b.mu.Unlock()
	// Events tell of a stop only when it changes: the one in force now
	// is asked for.
	if info, err := b.hub.Stopped(ctx); err != nil {
		b.log.Warn("mqtt: cannot learn whether the emergency stop is engaged", "err", err)
	} else {
		b.putStop(info)
	}
	for _, d := range devs {
		if !d.Access.CanRead() || b.isOwn(d.ID) {
			continue
		}
		b.readValue(ctx, d.ID)
	}
	b.syncPending(ctx)
	b.republish()
	return nil
}

// readValue reads one device and keeps the value, unless an event brought
// a newer one meanwhile.
func (b *Bridge) readValue(ctx context.Context, id string) {
	b.mu.Lock()
	gen := b.gen[id]
	b.mu.Unlock()
	rctx, cancel := context.WithTimeout(ctx, readTimeout)
	v, err := b.hub.Read(rctx, id)
	cancel()
	if err != nil {
		b.log.Debug("mqtt: no value read", "device", id, "err", err)
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.gen[id] == gen {
		b.values[id] = v
		b.out.put(b.t.State(b.gw, id), v)
	}
}

// Event takes one of the daemon's events (adapters.Event's Type, Data
// and Dropped).
func (b *Bridge) Event(ctx context.Context, typ string, data json.RawMessage, dropped uint64) {
	if dropped > 0 {
		b.mu.Lock()
		b.stats.EventsDropped += dropped
		b.mu.Unlock()
		b.log.Warn("mqtt: events were dropped; reading the bench again", "dropped", dropped)
		defer func() {
			if err := b.Sync(ctx); err != nil {
				b.log.Warn("mqtt: bench not read again", "err", err)
			}
		}()
	}
	var err error
	switch typ {
	case "value":
		err = b.onValue(data)
	case "deviceState":
		err = b.onDeviceState(data)
	case "deviceAdded":
		err = b.onDeviceAdded(ctx, data)
	case "deviceRemoved":
		err = b.onDeviceRemoved(data)
	case "stopped", "resumed":
		err = b.onStop(typ == "stopped", data)
	case "confirmationRequested":
		err = b.onRequested(data)
	case "confirmationResolved":
		err = b.onResolved(ctx, data)
		if err == nil {
			err = b.onApprovalResolved(data)
		}
	}
	if err != nil {
		b.log.Warn("mqtt: event not understood", "type", typ, "err", err)
	}
}

func (b *Bridge) onValue(data json.RawMessage) error {
	var e struct {
		Device string          `json:"device"`
		Value  json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(data, &e); err != nil || e.Device == "" || b.isOwn(e.Device) {
		return err
	}
	v := compact(e.Value)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.gen[e.Device]++
	b.values[e.Device] = v
	b.out.put(b.t.State(b.gw, e.Device), v)
	return nil
}

func (b *Bridge) onDeviceState(data json.RawMessage) error {
	var e struct {
		Device string       `json:"device"`
		State  device.State `json:"state"`
		Fault  string       `json:"fault"`
	}
	if err := json.Unmarshal(data, &e); err != nil || b.isOwn(e.Device) {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	d, ok := b.devs[e.Device]
	if !ok {
		return nil // learnt at its deviceAdded
	}
	d.State, d.Fault = e.State, e.Fault
	b.devs[e.Device] = d
	b.out.put(b.t.Availability(b.gw, e.Device), availability(e.State))
	b.putBridgeLocked()
	return nil
}

func (b *Bridge) onDeviceAdded(ctx context.Context, data json.RawMessage) error {
	var e struct {
		Device device.Descriptor `json:"device"`
	}
	if err := json.Unmarshal(data, &e); err != nil || e.Device.ID == "" {
		return err
	}
	id := e.Device.ID
	b.mu.Lock()
	b.devs[id] = e.Device
	if !b.isOwn(id) {
		b.putConfigLocked()
		b.out.put(b.t.Availability(b.gw, id), availability(e.Device.State))
		b.putDeviceApprovalLocked(e.Device, false)
	}
	b.putBridgeLocked()
	b.mu.Unlock()
	if e.Device.Access.CanRead() && !b.isOwn(id) {
		b.readValue(ctx, id)
	}
	return nil
}

// onDeviceRemoved takes the device out of the discovery config and clears
// its retained state and availability (an empty retained payload).
func (b *Bridge) onDeviceRemoved(data json.RawMessage) error {
	var e struct {
		Device string `json:"device"`
	}
	if err := json.Unmarshal(data, &e); err != nil || e.Device == "" {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.devs, e.Device)
	delete(b.values, e.Device)
	delete(b.gen, e.Device)
	if !b.isOwn(e.Device) {
		b.putConfigLocked()
		b.out.put(b.t.State(b.gw, e.Device), []byte{})
		b.out.put(b.t.Availability(b.gw, e.Device), []byte{})
		b.clearApprovalLocked(e.Device)
	}
	b.putBridgeLocked()
	return nil
}

// stopState is the payload of <base>/stop/state.
type stopState struct {
	Stopped bool   `json:"stopped"`
	By      string `json:"by,omitempty"`
	Reason  string `json:"reason,omitempty"`
	Since   string `json:"since,omitempty"`
}

func (b *Bridge) onStop(stopped bool, data json.RawMessage) error {
	var e openhal.StopInfo
	if err := json.Unmarshal(data, &e); err != nil {
		return err
	}
	if !stopped {
		b.putStop(nil)
		return nil
	}
	b.putStop(&e)
	return nil
}

// putStop publishes the stop in force (nil: none) on <base>/_stop/state.
func (b *Bridge) putStop(e *openhal.StopInfo) {
	s := stopState{Stopped: e != nil}
	if e != nil {
		s.By, s.Reason = e.Principal.Name, e.Reason
		if !e.TS.IsZero() {
			s.Since = e.TS.UTC().Format(time.RFC3339)
		}
	}
	payload, _ := json.Marshal(s)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.stop = payload
	b.out.put(b.t.StopState(b.gw), payload)
}

// compact is v without insignificant spaces, so that the state topic
// carries the value exactly as JSON writes it.
func compact(v json.RawMessage) json.RawMessage {
	var buf bytes.Buffer
	if err := json.Compact(&buf, v); err != nil {
		return v
	}
	return buf.Bytes()
}
