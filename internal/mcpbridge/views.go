package mcpbridge

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/openhal"
)

// deviceView is a device as a model is told of it: what it is, what may
// be written to it and at what cost (needsApproval), and its health.
type deviceView struct {
	ID            string   `json:"id"`
	Label         string   `json:"label,omitempty"`
	Kind          string   `json:"kind"`
	Type          string   `json:"type" jsonschema:"the value's JSON type: boolean, number, string or object"`
	Unit          string   `json:"unit,omitempty"`
	Minimum       *float64 `json:"minimum,omitempty"`
	Maximum       *float64 `json:"maximum,omitempty"`
	Enum          any      `json:"enum,omitempty" jsonschema:"a list of the only values it takes (a Modbus status word's names)"`
	Readable      bool     `json:"readable"`
	Writable      bool     `json:"writable"`
	Risk          string   `json:"risk"`
	NeedsApproval bool     `json:"needsApproval" jsonschema:"a write by this token waits for a person's approval"`
	Safe          any      `json:"safe,omitempty" jsonschema:"the value the emergency stop drives it to"`
	State         string   `json:"state" jsonschema:"ok, fault or offline"`
	Fault         string   `json:"fault,omitempty"`
}

func viewDevice(d device.Descriptor, scope openhal.Scope) deviceView {
	writable := d.Access.CanWrite() && scope.AtLeast(openhal.ScopeControlLow)
	return deviceView{
		ID: d.ID, Label: d.Label, Kind: d.Kind, Type: d.Schema.Type, Unit: unitOf(d.Schema),
		Minimum: d.Schema.Minimum, Maximum: d.Schema.Maximum, Enum: enumOf(d.Schema),
		Readable: d.Access.CanRead(), Writable: writable, Risk: string(d.Risk),
		NeedsApproval: writable && d.Risk == device.RiskHigh && !scope.AtLeast(openhal.ScopeControlHigh),
		Safe:          d.Safe, State: string(d.State), Fault: d.Fault,
	}
}

// enumOf is a schema's enum, or nil (not an empty list) for none.
func enumOf(s device.Schema) any {
	if len(s.Enum) == 0 {
		return nil
	}
	return s.Enum
}

// unitOf is a schema's unit, or its only property's (a sensor of one
// quantity).
func unitOf(s device.Schema) string {
	if s.Unit != "" || len(s.Properties) != 1 {
		return s.Unit
	}
	for _, p := range s.Properties {
		return p.Unit
	}
	return ""
}

// stopView is the emergency stop in force.
type stopView struct {
	By     string    `json:"by" jsonschema:"who engaged it"`
	Reason string    `json:"reason"`
	Since  time.Time `json:"since"`
}

func viewStop(s *openhal.StopInfo) *stopView {
	if s == nil {
		return nil
	}
	return &stopView{By: principalWords(s.Principal), Reason: s.Reason, Since: s.TS}
}

// principalWords names a principal as a person reads it: "operator alice".
func principalWords(p openhal.Principal) string {
	if p.Kind == "" {
		return p.Name
	}
	return p.Kind + " " + p.Name
}

// approval says where a person approves a pending request.
type approval struct {
	Console string `json:"console,omitempty" jsonschema:"the operator console, where a person approves it"`
	CLI     string `json:"cli" jsonschema:"the command a person with an admin token runs to approve it"`
}

// confirmationView is a Confirmation Request as the agent follows it.
type confirmationView struct {
	ID            string     `json:"id"`
	Device        string     `json:"device"`
	Value         any        `json:"value" jsonschema:"the value asked for"`
	Current       any        `json:"current,omitempty" jsonschema:"while pending: the device's value now, which approving would change"`
	Status        string     `json:"status" jsonschema:"pending, approved, rejected, cancelled, expired, failed or superseded"`
	Reason        string     `json:"reason,omitempty"`
	CreatedAt     time.Time  `json:"createdAt"`
	ExpiresAt     time.Time  `json:"expiresAt"`
	ApprovedBy    string     `json:"approvedBy,omitempty"`
	RejectedBy    string     `json:"rejectedBy,omitempty"`
	ResolveReason string     `json:"resolveReason,omitempty"`
	Error         string     `json:"error,omitempty" jsonschema:"why an approved write failed"`
	AppliedAt     *time.Time `json:"appliedAt,omitempty"`
	Approve       *approval  `json:"approve,omitempty" jsonschema:"while pending: where a person approves it"`
	// SupersededBy is what took a superseded request's place.
	SupersededBy *supersession `json:"supersededBy,omitempty" jsonschema:"when superseded: the later write of the device, or this agent's newer request for it, that took its place"`
}

// supersession is what superseded a request, as the agent follows it.
type supersession struct {
	By      string    `json:"by" jsonschema:"who wrote or asked"`
	Value   any       `json:"value" jsonschema:"the value written, or asked for by the newer request"`
	At      time.Time `json:"at"`
	Request string    `json:"request,omitempty" jsonschema:"the newer request that replaced it, when it was one (nothing was applied then)"`
}

func (b *Bridge) viewConfirmation(c openhal.Confirmation) confirmationView {
	v := confirmationView{ID: c.ID, Device: c.Device, Value: c.Value, Status: c.Status, Reason: c.Reason,
		CreatedAt: c.CreatedAt, ExpiresAt: c.ExpiresAt, ResolveReason: c.ResolveReason}
	if c.ApprovedBy != nil {
		v.ApprovedBy = principalWords(*c.ApprovedBy)
	}
	if c.RejectedBy != nil {
		v.RejectedBy = principalWords(*c.RejectedBy)
	}
	if c.Error != nil {
		v.Error = c.Error.Message
	}
	if c.Result != nil {
		ts := c.Result.TS
		v.AppliedAt = &ts
	}
	if c.Status == "pending" {
		v.Approve = b.approval(c.ID)
	}
	if c.Current != nil {
		v.Current = c.Current.Value
	}
	if s := c.SupersededBy; s != nil {
		v.SupersededBy = &supersession{By: principalWords(s.Principal), Value: s.Value, At: s.TS, Request: s.Request}
	}
	return v
}

// approval is where a person approves request id: the console and the
// CLI line for the same gateway.
func (b *Bridge) approval(id string) *approval {
	cli := "gateway confirm approve " + id
	if b.opt.ApproveFlags != "" {
		cli += " " + b.opt.ApproveFlags
	}
	return &approval{Console: b.opt.ConsoleURL, CLI: cli}
}

// statusWords says what a confirmation's status means for the agent.
func statusWords(v confirmationView) string {
	switch v.Status {
	case "pending":
		now := ""
		if v.Current != nil {
			now = fmt.Sprintf(" %s is %s now.", v.Device, jsonWords(v.Current))
		}
		return fmt.Sprintf("Confirmation %s (%s = %s) still waits for a person, until %s. It is not applied.%s A person approves it %s.",
			v.ID, v.Device, jsonWords(v.Value), v.ExpiresAt.Format(time.RFC3339), now, whereWords(v.Approve))
	case "approved":
		return fmt.Sprintf("Confirmation %s was approved by %s and applied: %s = %s.", v.ID, v.ApprovedBy, v.Device, jsonWords(v.Value))
	case "failed":
		return fmt.Sprintf("Confirmation %s was approved by %s, but the write failed when it ran: %s. %s is unchanged.", v.ID, v.ApprovedBy, v.Error, v.Device)
	case "rejected":
		why := ""
		if v.ResolveReason != "" {
			why = " (" + v.ResolveReason + ")"
		}
		by := v.RejectedBy
		if by == "" {
			by = "the gateway"
		}
		return fmt.Sprintf("Confirmation %s was rejected by %s%s: %s is unchanged. Do not ask again without new reason.", v.ID, by, why, v.Device)
	case "expired":
		return fmt.Sprintf("Confirmation %s expired with nobody approving it: %s is unchanged.", v.ID, v.Device)
	case "cancelled":
		return fmt.Sprintf("Confirmation %s was cancelled: %s is unchanged.", v.ID, v.Device)
	case "superseded":
		return supersededWords(v)
	}
	return fmt.Sprintf("Confirmation %s is %s.", v.ID, v.Status)
}

// supersededWords says that a request will never be applied, and what
// took its place.
func supersededWords(v confirmationView) string {
	s := v.SupersededBy
	switch {
	case s == nil:
		return fmt.Sprintf("Confirmation %s was superseded: it will never be applied.", v.ID)
	case s.Request != "":
		return fmt.Sprintf("Confirmation %s was replaced by this agent's newer request %s (%s = %s): it will never be applied. Follow %s instead.",
			v.ID, s.Request, v.Device, jsonWords(s.Value), s.Request)
	}
	return fmt.Sprintf("Confirmation %s (%s = %s) was superseded by %s's write of %s at %s: it will never be applied, and %s stays as that write left it. Ask again only if %s is still wanted.",
		v.ID, v.Device, jsonWords(v.Value), s.By, jsonWords(s.Value), s.At.Format(time.RFC3339), v.Device, jsonWords(v.Value))
}

// jsonWords prints a value as JSON, short.
func jsonWords(v any) string {
	s := fmt.Sprint(v)
	if b, err := json.Marshal(v); err == nil {
		s = string(b)
	}
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return strings.TrimSpace(s)
}
