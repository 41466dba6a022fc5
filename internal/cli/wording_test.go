package cli

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/halclient"
	"github.com/openhal/gateway/openhal"
)

// The watch lines count in good English and end a stop without a reason
// at the name of who stopped, with no dangling colon.
func TestWatchWording(t *testing.T) {
	p := &watchPrinter{}
	stopped := func(reason string) *halclient.Notification {
		b, _ := json.Marshal(openhal.StoppedParams{Principal: openhal.Principal{Kind: "operator", Name: "admin"}, Reason: reason})
		return &halclient.Notification{Method: openhal.NotifyStopped, Params: b}
	}
	resolved := func(c openhal.Confirmation) *halclient.Notification {
		b, _ := json.Marshal(openhal.ConfirmationNotice{Confirmation: c})
		return &halclient.Notification{Method: openhal.NotifyConfirmationResolved, Params: b}
	}
	agent := openhal.Principal{Kind: "agent", Name: "bot"}
	superseded := openhal.Confirmation{ID: "c-00000004", Device: "sim.heater", Value: true, RequestedBy: agent, Status: openhal.ConfirmSuperseded,
		SupersededBy: &openhal.SupersededBy{Principal: agent, Value: false, TS: time.Date(2026, 12, 6, 6, 30, 0, 0, time.UTC), Seq: 9, DevSeq: 3}}
	for _, tc := range []struct {
		e    halclient.WatchEvent
		want string
	}{
		{halclient.WatchEvent{Kind: halclient.EventNotification, Notification: resolved(superseded)},
			"confirmation c-00000004 superseded: sim.heater = true by agent bot, superseded by agent bot's write of false at 2026-12-06 06:30:00 UTC (seq 9)"},
		{halclient.WatchEvent{Kind: halclient.EventDevices, Devices: make([]device.Descriptor, 1)}, "1 device"},
		{halclient.WatchEvent{Kind: halclient.EventDevices, Devices: make([]device.Descriptor, 2)}, "2 devices"},
		{halclient.WatchEvent{Kind: halclient.EventNotification, Notification: stopped("")}, "EMERGENCY STOP engaged by operator admin"},
		{halclient.WatchEvent{Kind: halclient.EventNotification, Notification: stopped("smoke")}, "EMERGENCY STOP engaged by operator admin: smoke"},
	} {
		if got := p.line(tc.e); got != tc.want {
			t.Errorf("line(%+v) = %q, want %q", tc.e, got, tc.want)
		}
	}
}
