package cli

import (
	"context"
	"encoding/json"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/halclient"
	"github.com/openhal/gateway/openhal"
)

// deviceSchema is device id's value schema, for the units `read` and
// `write` print beside a value as `devices` does; the zero schema (no
// units) when the hub does not say, so that the value still prints.
func deviceSchema(ctx context.Context, c *halclient.Conn, id string) device.Schema {
	var d device.Descriptor
	if err := c.Call(ctx, openhal.MethodDevicesGet, openhal.DeviceParams{Device: id}, &d); err != nil {
		return device.Schema{}
	}
	return d.Schema
}

// rawWithUnit is a value as the hub sent it, with its units after its
// numbers (valueWithUnit): `40 %`, `{"temperature":21.5 °C}`. A value
// whose schema has no unit prints exactly as sent.
func rawWithUnit(s device.Schema, raw json.RawMessage) string {
	if s.Unit == "" && !hasUnits(s.Properties) {
		return string(raw)
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return string(raw)
	}
	return valueWithUnit(s, v)
}

// untilWords says when a deadline is, as a person reads it: the local
// time to the second (with the date when it is not today's) and how far
// off it is, "16:47:03 (in 9m58s)".
func untilWords(t, now time.Time) string {
	local, today := t.Local(), now.Local()
	layout := "15:04:05"
	if y, m, d := local.Date(); y != today.Year() || m != today.Month() || d != today.Day() {
		layout = "2006-01-02 15:04:05"
	}
	left := t.Sub(now).Round(time.Second)
	if left <= 0 {
		return local.Format(layout) + " (passed)"
	}
	return local.Format(layout) + " (in " + left.String() + ")"
}

// schemasOf are the devices' value schemas by id.
func schemasOf(devs []device.Descriptor) map[string]device.Schema {
	m := make(map[string]device.Schema, len(devs))
	for _, d := range devs {
		m[d.ID] = d.Schema
	}
	return m
}
