package homeassistant

import (
	"bytes"
	"encoding/json"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/openhal"
)

// Confirmation requests (openhal-0.1 §7) as Home Assistant sees them:
//
//	<base>/_approvals/state   retained: {"pending":N,"newest":{...}}; the
//	                          sensor "Pending approvals" (state: N,
//	                          attributes: the newest request, {} when none)
//	<base>/_approvals/event   not retained: {"event_type":"requested",...}
//	                          per request and per resolution; the event
//	                          entity "Approval requests"
//	<base>/<device>/approval  retained: {"approval":"waiting for approval",...}
//	                          while a request for the device waits, else
//	                          {}; the json_attributes_topic of the
//	                          entities of a device that waitsForApproval
//
// Nothing here approves: approval is a person's, with an admin token, in
// the console or the CLI.

// Waiting is the device attribute "approval" while a request waits.
const Waiting = "waiting for approval"

// EventTypes are the event entity's event_types: "requested", then each
// way a request ends (openhal's statuses after pending).
var EventTypes = []string{"requested", openhal.ConfirmApproved, openhal.ConfirmRejected,
	openhal.ConfirmCancelled, openhal.ConfirmExpired, openhal.ConfirmFailed, openhal.ConfirmSuperseded}

// ApprovalsState is the pending sensor's retained topic.
func (t Topics) ApprovalsState(gw string) string { return t.Base(gw) + "/_approvals/state" }

// ApprovalsEvent is the topic of the requests' and resolutions' events.
func (t Topics) ApprovalsEvent(gw string) string { return t.Base(gw) + "/_approvals/event" }

// Approval is a device's retained approval attributes.
func (t Topics) Approval(gw, dev string) string { return t.Base(gw) + "/" + dev + "/approval" }

// pendingSensor is the sensor of the requests waiting for a person. It
// is no diagnostic: it is what an operator acts on.
func (m mapper) pendingSensor(avail []availability) component {
	return component{
		Platform:      PlatformSensor,
		Name:          "Pending approvals",
		local:         "_approvals",
		Icon:          "mdi:account-clock",
		StateTopic:    m.t.ApprovalsState(m.gw),
		ValueTemplate: "{{ value_json.pending }}",
		AttrTopic:     m.t.ApprovalsState(m.gw),
		AttrTemplate:  "{{ value_json.newest | tojson }}",
		Availability:  avail,
	}
}

// approvalEvents is the event entity that automations trigger on.
func (m mapper) approvalEvents(avail []availability) component {
	return component{
		Platform:     PlatformEvent,
		Name:         "Approval requests",
		local:        "_approval_events",
		Icon:         "mdi:account-check",
		StateTopic:   m.t.ApprovalsEvent(m.gw),
		EventTypes:   EventTypes,
		Availability: avail,
	}
}

// Request is one confirmation request as the topics show it: what a
// person reads on a phone or a card. Times are RFC 3339 in UTC, to the
// second; Unit is the device's unit as people read it (°C, not Cel), for
// a number; Label the device's entity name.
type Request struct {
	ID            string `json:"id"`
	Device        string `json:"device"`
	Label         string `json:"label,omitempty"`
	Value         any    `json:"value"`
	Unit          string `json:"unit,omitempty"`
	Requester     string `json:"requester"`
	RequesterKind string `json:"requesterKind"`
	Reason        string `json:"reason,omitempty"`
	CreatedAt     string `json:"createdAt,omitempty"`
	ExpiresAt     string `json:"expiresAt,omitempty"`
}

// Lookup finds a device's descriptor (ok false: unknown to the bridge).
type Lookup func(id string) (device.Descriptor, bool)

// request is c as the topics show it.
func request(c openhal.Confirmation, lookup Lookup) Request {
	r := Request{
		ID: c.ID, Device: c.Device, Value: c.Value,
		Requester: c.RequestedBy.Name, RequesterKind: c.RequestedBy.Kind, Reason: c.Reason,
		CreatedAt: stamp(c.CreatedAt), ExpiresAt: stamp(c.ExpiresAt),
	}
	if d, ok := lookup(c.Device); ok {
		r.Label = entityName(d.Label)
		if isNumber(c.Value) {
			r.Unit = device.UnitSymbol(d.Schema.Unit)
		}
	}
	return r
}

func isNumber(v any) bool {
	switch v.(type) {
	case float64, float32, int, int64, json.Number:
		return true
	}
	return false
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// newestFirst sorts requests newest first: by creation, then by id number (ids
// are c-<n>, never reused).
func newestFirst(cs []openhal.Confirmation) {
	sort.SliceStable(cs, func(i, j int) bool {
		if !cs[i].CreatedAt.Equal(cs[j].CreatedAt) {
			return cs[i].CreatedAt.After(cs[j].CreatedAt)
		}
		return idNumber(cs[i].ID) > idNumber(cs[j].ID)
	})
}

func idNumber(id string) uint64 {
	n, _ := strconv.ParseUint(strings.TrimPrefix(id, "c-"), 10, 64)
	return n
}

// ApprovalsStatePayload is the retained payload of ApprovalsState for the
// requests pending now: their number and the newest one ({} when none,
// which clears the sensor's attributes).
func ApprovalsStatePayload(pending []openhal.Confirmation, lookup Lookup) []byte {
	var newest any = struct{}{}
	if len(pending) > 0 {
		cs := append([]openhal.Confirmation(nil), pending...)
		newestFirst(cs)
		newest = request(cs[0], lookup)
	}
	return marshal(struct {
		Pending int `json:"pending"`
		Newest  any `json:"newest"`
	}{len(pending), newest})
}

// ApprovalPayload is the retained payload of a device's Approval topic
// for the requests pending for it: the newest, with the word Waiting and
// their number; {} when none, which clears the entity's attributes.
func ApprovalPayload(pending []openhal.Confirmation, lookup Lookup) []byte {
	if len(pending) == 0 {
		return []byte("{}")
	}
	cs := append([]openhal.Confirmation(nil), pending...)
	newestFirst(cs)
	r := request(cs[0], lookup)
	return marshal(struct {
		Approval      string `json:"approval"`
		ID            string `json:"id"`
		Requested     any    `json:"requested"`
		Unit          string `json:"unit,omitempty"`
		Requester     string `json:"requester"`
		RequesterKind string `json:"requesterKind"`
		ExpiresAt     string `json:"expiresAt,omitempty"`
		Pending       int    `json:"pending"`
	}{Waiting, r.ID, r.Value, r.Unit, r.Requester, r.RequesterKind, r.ExpiresAt, len(cs)})
}

// EventPayload is the payload of ApprovalsEvent for a request (status
// pending: event_type "requested") or its resolution (event_type its
// status), with who resolved it and why when the Hub says.
func EventPayload(c openhal.Confirmation, lookup Lookup) []byte {
	typ := c.Status
	if typ == openhal.ConfirmPending || typ == "" {
		typ = "requested"
	}
	by, why := resolution(c)
	return marshal(struct {
		EventType string `json:"event_type"`
		Request
		By     string `json:"by,omitempty"`
		ByKind string `json:"byKind,omitempty"`
		Why    string `json:"why,omitempty"`
	}{typ, request(c, lookup), by.Name, by.Kind, why})
}

// resolution is who ended a request and why, as far as the Hub says.
func resolution(c openhal.Confirmation) (by openhal.Principal, why string) {
	switch {
	case c.ApprovedBy != nil:
		by = *c.ApprovedBy
	case c.RejectedBy != nil:
		by = *c.RejectedBy
	}
	why = c.ResolveReason
	if c.Error != nil {
		why = c.Error.Message
	}
	if s := c.SupersededBy; s != nil {
		by = s.Principal
		if s.Request != "" {
			why = "replaced by request " + s.Request
		} else {
			v, _ := json.Marshal(s.Value)
			why = "a write of " + string(v) + " was applied since"
		}
	}
	return by, why
}

// marshal is compact JSON without HTML escaping, as the discovery config.
func marshal(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // only plain values: it cannot fail
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}
