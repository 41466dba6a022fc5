package mqttbridge

import (
	"context"
	"encoding/json"
	"sort"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/homeassistant"
	"github.com/openhal/gateway/openhal"
)

// The bridge follows the Hub's confirmation requests (openhal-0.1 §7) of
// every device in its grant, whoever made them, and publishes them for
// people (package homeassistant makes the payloads):
//
//   - <base>/_approvals/state, retained: how many wait, and the newest;
//   - <base>/_approvals/event, not retained: one event per request and
//     per resolution, after the retained messages that it changed, so
//     that an automation it triggers reads the new count;
//   - <base>/<device>/approval, retained, for each device a write may
//     make wait (and any other with a request): "waiting for approval"
//     with the request, {} when none waits.
//
// The requests are learnt from the Hub (hub.confirmations) at each Sync,
// then followed by events. Nothing here approves: the bridge's grant
// could not, and no topic asks it to.

// Bounds of the approvals the bridge keeps.
const (
	approvalEventsMax = 64  // events waiting for the broker
	resolvedMax       = 256 // resolutions remembered, against a Sync's stale list
)

// pendingReq is a request waiting for a person, with the confirmation
// counter (confSeq) when the bridge learnt it.
type pendingReq struct {
	c    openhal.Confirmation
	seen uint64
}

// approvals is the bridge's view of the pending requests, under its mu.
type approvals struct {
	pending   map[string]pendingReq
	confSeq   uint64          // bumped by each request or resolution event
	resolved  map[string]bool // ids of the last resolvedMax requests resolved
	resolvedQ []string
	events    [][]byte        // event payloads waiting for the broker, in order
	topics    map[string]bool // devices whose approval topic was published
}

func newApprovals() approvals {
	return approvals{pending: map[string]pendingReq{}, resolved: map[string]bool{}, topics: map[string]bool{}}
}

// confirmationNotice is the data of both confirmation events.
type confirmationNotice struct {
	Confirmation openhal.Confirmation `json:"confirmation"`
}

func decodeNotice(data json.RawMessage) (openhal.Confirmation, error) {
	var n confirmationNotice
	err := json.Unmarshal(data, &n)
	return n.Confirmation, err
}

// onRequested keeps a new request, publishes the count and the device's
// attributes, then the event.
func (b *Bridge) onRequested(data json.RawMessage) error {
	c, err := decodeNotice(data)
	if err != nil || c.ID == "" {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.appr.confSeq++
	if !b.appr.resolved[c.ID] {
		b.appr.pending[c.ID] = pendingReq{c: c, seen: b.appr.confSeq}
	}
	b.putApprovalsLocked(c.Device)
	b.queueEventLocked(homeassistant.EventPayload(c, b.lookupLocked))
	return nil
}

// onApprovalResolved forgets a request that ended, publishes the count
// and the device's attributes, then the event.
func (b *Bridge) onApprovalResolved(data json.RawMessage) error {
	c, err := decodeNotice(data)
	if err != nil || c.ID == "" {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.appr.confSeq++
	delete(b.appr.pending, c.ID)
	b.appr.resolved[c.ID] = true
	b.appr.resolvedQ = append(b.appr.resolvedQ, c.ID)
	for len(b.appr.resolvedQ) > resolvedMax {
		delete(b.appr.resolved, b.appr.resolvedQ[0])
		b.appr.resolvedQ = b.appr.resolvedQ[1:]
	}
	b.putApprovalsLocked(c.Device)
	b.queueEventLocked(homeassistant.EventPayload(c, b.lookupLocked))
	return nil
}

// syncPending learns the requests pending now from the Hub. Events that
// came while it asked win: a request resolved meanwhile is not taken from
// the (older) list, and one made meanwhile is kept. A gateway without
// hub.confirmations leaves the bridge to follow events alone.
func (b *Bridge) syncPending(ctx context.Context) {
	b.mu.Lock()
	since := b.appr.confSeq
	b.mu.Unlock()
	cs, err := b.hub.Pending(ctx)
	if err != nil {
		b.log.Warn("mqtt: pending confirmation requests not learnt; they are followed from their next event on", "err", err)
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	next := make(map[string]pendingReq, len(cs))
	for _, c := range cs {
		if b.appr.resolved[c.ID] {
			continue
		}
		next[c.ID] = pendingReq{c: c, seen: since}
	}
	devs := map[string]bool{}
	for id, p := range b.appr.pending {
		devs[p.c.Device] = true
		if p.seen > since {
			next[id] = p
		}
	}
	for _, p := range next {
		devs[p.c.Device] = true
	}
	b.appr.pending = next
	for dev := range devs {
		b.putApprovalsLocked(dev)
	}
}

// putApprovalsLocked makes the count and dev's attributes due (once the
// bench is known: a count of 0 before would be false). dev had or has a
// request: its attributes are published whatever its risk, so that a
// "waiting for approval" never outlives its request.
func (b *Bridge) putApprovalsLocked(dev string) {
	if !b.synced {
		return
	}
	b.out.put(b.t.ApprovalsState(b.gw), homeassistant.ApprovalsStatePayload(b.pendingLocked(""), b.lookupLocked))
	if d, ok := b.devs[dev]; ok && !b.isOwn(dev) {
		b.putDeviceApprovalLocked(d, true)
	}
}

// putDeviceApprovalLocked makes d's approval attributes due, if a write
// may make it wait, a request for it does, or always says so.
func (b *Bridge) putDeviceApprovalLocked(d device.Descriptor, always bool) {
	mine := b.pendingLocked(d.ID)
	if !always && len(mine) == 0 && !homeassistant.WaitsForApproval(d) {
		return
	}
	b.out.put(b.t.Approval(b.gw, d.ID), homeassistant.ApprovalPayload(mine, b.lookupLocked))
	b.appr.topics[d.ID] = true
}

// republishApprovalsLocked makes every approval topic due again.
func (b *Bridge) republishApprovalsLocked() {
	if !b.synced {
		return
	}
	b.out.put(b.t.ApprovalsState(b.gw), homeassistant.ApprovalsStatePayload(b.pendingLocked(""), b.lookupLocked))
	for _, id := range b.bridgedLocked() {
		b.putDeviceApprovalLocked(b.devs[id], false)
	}
}

// clearApprovalLocked clears a removed device's retained attributes, if
// it had any.
func (b *Bridge) clearApprovalLocked(id string) {
	if b.appr.topics[id] {
		b.out.put(b.t.Approval(b.gw, id), []byte{})
		delete(b.appr.topics, id)
	}
}

// pendingLocked is the requests pending for dev ("": all), by id.
func (b *Bridge) pendingLocked(dev string) []openhal.Confirmation {
	var out []openhal.Confirmation
	for _, p := range b.appr.pending {
		if dev == "" || p.c.Device == dev {
			out = append(out, p.c)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

func (b *Bridge) lookupLocked(id string) (device.Descriptor, bool) {
	d, ok := b.devs[id]
	return d, ok
}

// queueEventLocked queues an event for the broker, after the retained
// messages already due. While the broker is away events are not kept:
// they tell of now, and the retained count and attributes say the rest
// when it is back.
func (b *Bridge) queueEventLocked(payload []byte) {
	if !b.ready {
		b.log.Debug("mqtt: approval event not published: the broker is away", "payload", string(payload))
		return
	}
	if len(b.appr.events) >= approvalEventsMax {
		b.log.Warn("mqtt: approval event dropped: too many waiting for the broker", "payload", string(payload), "queue", approvalEventsMax)
		return
	}
	b.appr.events = append(b.appr.events, payload)
	b.out.poke()
}

// publishEvent publishes the oldest queued event, not retained; false
// when none is queued. A failed publish drops it: it told of then.
func (b *Bridge) publishEvent(ctx context.Context) bool {
	b.mu.Lock()
	if len(b.appr.events) == 0 {
		b.mu.Unlock()
		return false
	}
	payload := b.appr.events[0]
	b.appr.events = b.appr.events[1:]
	b.mu.Unlock()
	pctx, cancel := context.WithTimeout(ctx, publishTimeout)
	defer cancel()
	if err := b.client.Publish(pctx, b.t.ApprovalsEvent(b.gw), payload, false); err != nil {
		b.log.Warn("mqtt: approval event not published", "err", err, "payload", string(payload))
	}
	return true
}
