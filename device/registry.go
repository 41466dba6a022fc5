package device

import (
	"fmt"
	"sort"
	"sync"
	"time"
)

// EventKind tells what an Event reports.
type EventKind int

const (
	EventValue   EventKind = iota // a new value: Value, TS, Seq, DevSeq
	EventState                    // a change of state: State, Fault
	EventAdded                    // a device was added: Descriptor
	EventRemoved                  // a device was removed: Reason
)

// Event is one entry of the Hub's single event stream.
type Event struct {
	Kind       EventKind
	Device     string
	Value      any
	TS         time.Time
	Seq        uint64
	DevSeq     uint64
	State      State
	Fault      string
	Descriptor Descriptor
	Reason     string
}

// Snapshot is a device's current value as the registry keeps it.
type Snapshot struct {
	Value any
	TS    time.Time // wall clock, as reported
	Seq   uint64
	// DevSeq is the device's own count of values (see Registry).
	DevSeq uint64
	At     time.Time // when the registry took it, with a monotonic reading
}

// Registry is the one list of devices that the Hub serves, whatever
// provides them. Every value that any device produces passes through
// Publish, which numbers it with the Hub-wide seq and hands it to every
// subscriber in that order.
//
// Each value also gets its device's own count, DevSeq: 1 for the first
// value of that id, one more for each next one, kept when the device is
// removed and added again, so that it never goes back during a run. A
// client that sees only some devices tells its own losses by a gap in
// DevSeq, which says nothing of the devices it cannot see, where a gap
// in Seq would count their values too (spec §8).
//
// Subscribers are called with the registry's lock held, so that every
// subscriber sees every event in seq order. A subscriber must therefore
// return at once: queue, never block.
type Registry struct {
	now func() time.Time

	mu      sync.RWMutex
	devices map[string]*entry
	seq     uint64
	// devSeq is each id's count of values. It outlives the entry (one
	// number per id ever registered, which the configuration and the
	// adapters' manifests bound) so that a device added again goes on
	// counting.
	devSeq  map[string]uint64
	subs    map[int]func(Event)
	nextSub int
}

type entry struct {
	dev   Device
	state State
	fault string
	snap  Snapshot
	has   bool
}

// NewRegistry returns an empty registry. now is the clock used to stamp
// values and measure their age; nil means time.Now.
func NewRegistry(now func() time.Time) *Registry {
	if now == nil {
		now = time.Now
	}
	return &Registry{now: now, devices: map[string]*entry{}, devSeq: map[string]uint64{}, subs: map[int]func(Event){}}
}

// Now is the registry's clock, against which a Snapshot's At is measured.
func (r *Registry) Now() time.Time { return r.now() }

// Subscribe calls fn for every event from now on. The returned function
// ends the subscription.
func (r *Registry) Subscribe(fn func(Event)) (cancel func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	id := r.nextSub
	r.nextSub++
	r.subs[id] = fn
	return func() {
		r.mu.Lock()
		delete(r.subs, id)
		r.mu.Unlock()
	}
}

func (r *Registry) emit(e Event) {
	for _, fn := range r.subs {
		fn(e)
	}
}

// Add registers d and returns the Reporter through which d reports values
// and states. The id must be well formed and not taken.
func (r *Registry) Add(d Device) (Reporter, error) {
	desc := d.Descriptor()
	if !ValidID(desc.ID) {
		return nil, fmt.Errorf("add device %q: id must match %s", desc.ID, idPattern)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.devices[desc.ID]; ok {
		return nil, fmt.Errorf("add device %q: id already taken", desc.ID)
	}
	st := desc.State
	if st == "" {
		st = StateOK
	}
	e := &entry{dev: d, state: st, fault: desc.Fault}
	r.devices[desc.ID] = e
	r.emit(Event{Kind: EventAdded, Device: desc.ID, Descriptor: r.describe(desc.ID, e)})
	return reporter{r: r, id: desc.ID, e: e}, nil
}

// Remove unregisters a device. Reporters of a removed device are ignored.
func (r *Registry) Remove(id, reason string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.devices[id]; !ok {
		return fmt.Errorf("remove device %q: no such device", id)
	}
	delete(r.devices, id)
	r.emit(Event{Kind: EventRemoved, Device: id, Reason: reason})
	return nil
}

// Found is what Lookup returns of one device.
type Found struct {
	Device     Device
	Descriptor Descriptor // with the device's current state
	Value      Snapshot   // its last value, when HasValue
	HasValue   bool
}

// Lookup returns a device, its descriptor and its last value, taken at
// once: what serving a read needs, under one lock rather than three.
func (r *Registry) Lookup(id string) (Found, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	e, ok := r.devices[id]
	if !ok {
		return Found{}, false
	}
	return Found{Device: e.dev, Descriptor: r.describe(id, e), Value: e.snap, HasValue: e.has}, true
}

// Device returns the device with that id.
func (r *Registry) Device(id string) (Device, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	e, ok := r.devices[id]
	if !ok {
		return nil, false
	}
	return e.dev, true
}

// Describe returns a device's descriptor with its current state.
func (r *Registry) Describe(id string) (Descriptor, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	e, ok := r.devices[id]
	if !ok {
		return Descriptor{}, false
	}
	return r.describe(id, e), true
}

func (r *Registry) describe(id string, e *entry) Descriptor {
	d := e.dev.Descriptor()
	d.ID = id
	d.State, d.Fault = e.state, e.fault
	return d
}

// List returns every descriptor, sorted by id.
func (r *Registry) List() []Descriptor {
	r.mu.RLock()
	out := make([]Descriptor, 0, len(r.devices))
	for id, e := range r.devices {
		out = append(out, r.describe(id, e))
	}
	r.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Value returns a device's current value, if it has one.
func (r *Registry) Value(id string) (Snapshot, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	e, ok := r.devices[id]
	if !ok || !e.has {
		return Snapshot{}, false
	}
	return e.snap, true
}

// Seq returns the seq of the newest value event.
func (r *Registry) Seq() uint64 {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.seq
}

// Publish records v as the device's value and sends it to every subscriber
// with the next seq. A zero ts means now. It returns the snapshot it made;
// ok is false when the device is not registered.
func (r *Registry) Publish(id string, v any, ts time.Time) (Snapshot, bool) {
	return r.publish(id, nil, v, ts)
}

// publish records a value for id; when want is not nil, only if id is
// still that entry (a reporter of a removed device must not write into a
// later device of the same id).
func (r *Registry) publish(id string, want *entry, v any, ts time.Time) (Snapshot, bool) {
	at := r.now()
	if ts.IsZero() {
		ts = at
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.devices[id]
	if !ok || (want != nil && e != want) {
		return Snapshot{}, false
	}
	r.seq++
	r.devSeq[id]++
	e.snap = Snapshot{Value: v, TS: ts.UTC(), Seq: r.seq, DevSeq: r.devSeq[id], At: at}
	e.has = true
	r.emit(Event{Kind: EventValue, Device: id, Value: v, TS: e.snap.TS, Seq: r.seq, DevSeq: e.snap.DevSeq})
	return e.snap, true
}

// SetState changes a device's state; an unchanged state sends nothing.
func (r *Registry) SetState(id string, s State, fault string) {
	r.setState(id, nil, s, fault)
}

func (r *Registry) setState(id string, want *entry, s State, fault string) {
	if s != StateFault {
		fault = ""
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.devices[id]
	if !ok || (want != nil && e != want) || (e.state == s && e.fault == fault) {
		return
	}
	e.state, e.fault = s, fault
	r.emit(Event{Kind: EventState, Device: id, State: s, Fault: fault})
}

// reporter binds a device's reports to its id.
type reporter struct {
	r  *Registry
	id string
	e  *entry
}

func (p reporter) Value(v any, ts time.Time)   { p.r.publish(p.id, p.e, v, ts) }
func (p reporter) State(s State, fault string) { p.r.setState(p.id, p.e, s, fault) }
