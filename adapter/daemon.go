package adapter

import (
	"context"
	"encoding/json"
	"time"

	"github.com/openhal/gateway/adapterproto"
	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/openhal"
)

// The typed helpers below are Call and Notify with the params and results
// of adapter protocol §5. The daemon checks each against the adapter's
// grant: outside it the error is an *Error with code -32003
// (adapterproto.CodeDenied).

// Value is a device's value as the daemon answers device.read (hal/read's
// result): Value is the raw JSON, to decode into the caller's own type.
type Value struct {
	Device string          `json:"device"`
	Value  json.RawMessage `json:"value"`
	TS     time.Time       `json:"ts"`
	Seq    uint64          `json:"seq"`
}

// WriteResult is the daemon's answer to device.write (hal/write's
// result): Status "applied" with the value applied, or "pending" with the
// Confirmation Request that an admin must approve first.
type WriteResult struct {
	Status       string          `json:"status"`
	Device       string          `json:"device,omitempty"`
	Value        json.RawMessage `json:"value,omitempty"`
	TS           time.Time       `json:"ts,omitzero"`
	Seq          uint64          `json:"seq,omitempty"`
	Reply        json.RawMessage `json:"reply,omitempty"`
	Confirmation json.RawMessage `json:"confirmation,omitempty"`
}

// DevicesList returns the devices inside the adapter's grant.
func (c *Conn) DevicesList(ctx context.Context) ([]device.Descriptor, error) {
	var res struct {
		Devices []device.Descriptor `json:"devices"`
	}
	if err := c.Call(ctx, adapterproto.MethodDevicesList, nil, &res); err != nil {
		return nil, err
	}
	return res.Devices, nil
}

// DeviceRead reads any device inside the adapter's grant (its full,
// prefixed id).
func (c *Conn) DeviceRead(ctx context.Context, id string) (Value, error) {
	var v Value
	err := c.Call(ctx, adapterproto.MethodDeviceRead, struct {
		Device string `json:"device"`
	}{id}, &v)
	return v, err
}

// DeviceWrite writes a device inside the grant (control_low or more),
// under the Hub's safety rules, as principal {kind:"adapter", name};
// reason, when not "", goes to the audit log.
func (c *Conn) DeviceWrite(ctx context.Context, id string, value any, reason string) (WriteResult, error) {
	var res WriteResult
	err := c.Call(ctx, adapterproto.MethodDeviceWrite, struct {
		Device string `json:"device"`
		Value  any    `json:"value"`
		Reason string `json:"reason,omitempty"`
	}{id, value, reason}, &res)
	return res, err
}

// HubStop engages the gateway's emergency stop as the adapter (a grant of
// control_low or more; the gateway's extension of protocol 1): every
// device with a safe value is driven to it, and writes are refused until
// a person resumes. No adapter call resumes.
func (c *Conn) HubStop(ctx context.Context, reason string) (openhal.StopResult, error) {
	var res openhal.StopResult
	err := c.Call(ctx, adapterproto.MethodHubStop, struct {
		Reason string `json:"reason"`
	}{reason}, &res)
	return res, err
}

// HubStopped returns the emergency stop engaged now, nil when none is (the
// gateway's extension of protocol 1): events tell of a stop only when it
// changes, and a service that starts while one is engaged must know it.
func (c *Conn) HubStopped(ctx context.Context) (*openhal.StopInfo, error) {
	var res struct {
		Stopped *openhal.StopInfo `json:"stopped"`
	}
	err := c.Call(ctx, adapterproto.MethodHubStopped, struct{}{}, &res)
	return res.Stopped, err
}

// HubPending returns the confirmation requests pending now for the
// devices of the grant, every page of them (the gateway's extension of
// protocol 1, hub.confirmations, as hal/confirmations/list): events tell
// of a request when it is made, and a service that starts while some wait
// must know them. The Hub keeps at most openhal.MaxPending.
func (c *Conn) HubPending(ctx context.Context) ([]openhal.Confirmation, error) {
	var all []openhal.Confirmation
	p := openhal.ConfirmationsListParams{Status: openhal.ConfirmPending}
	for {
		var res openhal.ConfirmationsListResult
		if err := c.Call(ctx, adapterproto.MethodHubConfirmations, p, &res); err != nil {
			return nil, err
		}
		all = append(all, res.Confirmations...)
		if res.Next == "" || res.Next == p.After || len(all) > openhal.MaxPending {
			return all, nil
		}
		p.After = res.Next
	}
}

// DevicesAdd adds a device of the adapter's own at run time (services).
// d.ID is unprefixed; the returned id is the published one,
// "<adapter>.<id>". Source, State and Fault are the daemon's: leave them
// empty.
func (c *Conn) DevicesAdd(ctx context.Context, d device.Descriptor) (string, error) {
	var res struct {
		ID string `json:"id"`
	}
	if err := c.Call(ctx, adapterproto.MethodDevicesAdd, struct {
		Device device.Descriptor `json:"device"`
	}{d}, &res); err != nil {
		return "", err
	}
	return res.ID, nil
}

// DevicesRemove removes a device the adapter added (its unprefixed id, as
// added).
func (c *Conn) DevicesRemove(ctx context.Context, id string) error {
	return c.Call(ctx, adapterproto.MethodDevicesRemove, struct {
		Device string `json:"device"`
	}{id}, nil)
}

// Publish reports a new value of one of the adapter's own devices
// (unprefixed id): the daemon stamps it and sends it to HAL clients as
// hal/value. It is a notification: nothing is answered.
func (c *Conn) Publish(id string, value any) error {
	return c.Notify(adapterproto.MethodValuePublish, struct {
		Device string `json:"device"`
		Value  any    `json:"value"`
	}{id, value})
}
