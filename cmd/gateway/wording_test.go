package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
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

// adapter install of an adapter's source, not built, says to build it
// first: with make adapters for this repository's examples.
func TestAdapterInstallUnbuilt(t *testing.T) {
	state := t.TempDir()
	example := filepath.Join("..", "..", "adapters", "examples", "notifier")
	_, errOut, code := cliRun("adapter", "install", example, "--state-dir", state)
	want := "gateway: " + example + ": exec: not found in the folder; build it first: make adapters, then gateway adapter install bin/adapters/notifier\n"
	if code != 1 || errOut != want {
		t.Errorf("install of the unbuilt example: exit %d, stderr %q; want %q", code, errOut, want)
	}

	src := t.TempDir()
	manifest, err := os.ReadFile(filepath.Join(example, "adapter.json"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(src, "adapter.json"), string(manifest))
	writeFile(t, filepath.Join(src, "main.go"), "package main\n")
	_, errOut, code = cliRun("adapter", "install", src, "--state-dir", state)
	if code != 1 || !strings.HasSuffix(errOut, ": exec: not found in the folder; build it first (the folder holds Go source: go build -o <exec> .)\n") {
		t.Errorf("install of Go source: exit %d, stderr %q", code, errOut)
	}
	os.Remove(filepath.Join(src, "main.go"))
	_, errOut, code = cliRun("adapter", "install", src, "--state-dir", state)
	if code != 1 || !strings.HasSuffix(errOut, ": exec: not found in the folder\n") {
		t.Errorf("install of a folder without its exec: exit %d, stderr %q", code, errOut)
	}
}
