package halclient

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/openhal"
)

// Devices lists the devices the token may see.
func (c *Conn) Devices(ctx context.Context) ([]device.Descriptor, error) {
	var res openhal.DevicesListResult
	if err := c.Call(ctx, openhal.MethodDevicesList, nil, &res); err != nil {
		return nil, Describe(err, openhal.MethodDevicesList, "")
	}
	return res.Devices, nil
}

// Read returns a device's value. A sensor takes a fresh measurement unless
// its last one is younger than maxAgeMs; a negative maxAgeMs leaves the
// choice to the Hub.
func (c *Conn) Read(ctx context.Context, id string, maxAgeMs int64) (openhal.ValueResult, error) {
	p := openhal.ReadParams{Device: id}
	if maxAgeMs >= 0 {
		p.MaxAgeMs = &maxAgeMs
	}
	var res openhal.ValueResult
	if err := c.Call(ctx, openhal.MethodRead, p, &res); err != nil {
		return res, Describe(err, openhal.MethodRead, id)
	}
	return res, nil
}

// WriteResult is the answer to hal/write: applied (Status "applied", with
// the value's ts, devSeq, and seq for a token that sees every device) or
// waiting for an admin (Status "pending", with the Confirmation).
type WriteResult struct {
	openhal.WriteResult
	Confirmation *Confirmation `json:"confirmation,omitempty"`
}

// Confirmation is a write that waits for an admin's approval (spec §7).
type Confirmation struct {
	ID          string            `json:"id"`
	Device      string            `json:"device"`
	Value       any               `json:"value"`
	RequestedBy openhal.Principal `json:"requestedBy"`
	Reason      string            `json:"reason,omitempty"`
	Status      string            `json:"status"`
	CreatedAt   time.Time         `json:"createdAt"`
	ExpiresAt   time.Time         `json:"expiresAt"`
	// SupersededBy is what superseded the request (status
	// "superseded"): a write applied to its device since, or its
	// creator's newer request for it (spec §7).
	SupersededBy *openhal.SupersededBy `json:"supersededBy,omitempty"`
}

// Write asks the Hub to set a device's value; reason goes to the audit log
// and to whoever approves a confirmation. A value given as a
// json.RawMessage is sent as it is.
func (c *Conn) Write(ctx context.Context, id string, value any, reason string) (WriteResult, error) {
	raw, ok := value.(json.RawMessage)
	if !ok {
		b, err := json.Marshal(value)
		if err != nil {
			return WriteResult{}, fmt.Errorf("write %s: encode the value: %w", id, err)
		}
		raw = b
	}
	var res WriteResult
	p := openhal.WriteParams{Device: id, Value: raw, Reason: reason}
	if err := c.Call(ctx, openhal.MethodWrite, p, &res); err != nil {
		return res, Describe(err, openhal.MethodWrite, id)
	}
	return res, nil
}

// Ping checks that the Hub answers.
func (c *Conn) Ping(ctx context.Context) error {
	return Describe(c.Call(ctx, openhal.MethodPing, nil, nil), openhal.MethodPing, "")
}
