package cli

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"regexp"
	"strings"
	"testing"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/halclient"
	"github.com/openhal/gateway/internal/halhub/hubtest"
	"github.com/openhal/gateway/openhal"
)

// watchTS is the time that starts every line of `gateway watch`.
const watchTS = `^\d\d:\d\d:\d\d\.\d{3} `

// bannerRE is the stop banner's line for a stop by the bench's admin.
const bannerRE = `^EMERGENCY STOP engaged by operator admin at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d \S+: bench fire \(only safe values can be written until an admin runs gateway resume\)$`

// devices and confirm list print the stop banner first while the stop is
// engaged, never in --json, and no more after resume.
func TestStopBannerInTables(t *testing.T) {
	noEnv(t)
	hub := hubtest.New(t)
	url := hub.Listen("tcp")
	admin := []string{"--hub", url, "--token", hub.Admin}
	first := func(cmd string, args ...string) string {
		t.Helper()
		run := map[string]func([]string, ...string) (string, error){
			"devices": func(a []string, more ...string) (string, error) {
				out, _, err := runClient(t, cliApp.cmdDevices, append(a, more...)...)
				return out, err
			},
			"confirm list": func(a []string, more ...string) (string, error) {
				out, _, err := runClient(t, cliApp.cmdConfirm, append(append([]string{"list"}, a...), more...)...)
				return out, err
			},
		}[cmd]
		out, err := run(admin, args...)
		if err != nil {
			t.Fatalf("%s: %v", cmd, err)
		}
		line, _, _ := strings.Cut(out, "\n")
		return line
	}
	runClient(t, cliApp.cmdStop, append(admin, "--reason", "bench fire")...)
	for _, cmd := range []string{"devices", "confirm list"} {
		if line := first(cmd); !regexp.MustCompile(bannerRE).MatchString(line) {
			t.Errorf("%s while stopped starts with %q, want the banner", cmd, line)
		}
		if line := first(cmd, "--json"); !strings.HasPrefix(line, "{") {
			t.Errorf("%s --json while stopped starts with %q", cmd, line)
		}
	}
	runClient(t, cliApp.cmdResume, admin...)
	for _, cmd := range []string{"devices", "confirm list"} {
		if line := first(cmd); !strings.HasPrefix(line, "ID ") {
			t.Errorf("%s after resume starts with %q, want the table's header", cmd, line)
		}
	}
}

// watch tells the stop in force when it connects, a stop and a repeated
// stop as they happen, the resume, and a stop lifted while it was away.
func TestWatchStopAndResume(t *testing.T) {
	noEnv(t)
	hub := hubtest.New(t)
	url := hub.Listen("ws")
	admin := []string{"--hub", url, "--token", hub.Admin}
	runClient(t, cliApp.cmdStop, append(admin, "--reason", "bench fire")...)
	out, _, _ := startWatch(t, admin...)
	out.line(t, watchTS+bannerRE[1:])
	out.line(t, watchTS+`sim\.temperature = `)
	runClient(t, cliApp.cmdStop, append(admin, "--reason", "still burning")...)
	out.line(t, watchTS+`EMERGENCY STOP engaged again by operator admin: still burning; safe values applied to sim\.heater; left as they are: sim\.led \(it declares no safe value\)$`)
	runClient(t, cliApp.cmdResume, admin...)
	out.line(t, watchTS+`emergency stop lifted by operator admin: writes are accepted again$`)
	runClient(t, cliApp.cmdStop, append(admin, "--reason", "smoke")...)
	out.line(t, watchTS+`EMERGENCY STOP engaged by operator admin: smoke; safe values applied to sim\.heater; left as they are: sim\.led \(it declares no safe value\)$`)
	hub.Restart() // no state directory: the new run is not stopped
	out.line(t, watchTS+`the emergency stop was lifted while this watch was disconnected$`)
}

// watch DEVICE... prints only those devices' lines, and the events of no
// device; a device the token cannot see, or that is not there, ends it at
// once with one error and nothing on standard output.
func TestWatchFilter(t *testing.T) {
	noEnv(t)
	hub := hubtest.New(t)
	url := hub.Listen("tcp")
	hub.Add(otherDevice{})
	out, _, stop := startWatch(t, "sim.led", "sim.temperature", "--hub", url, "--token", hub.Admin)
	out.line(t, watchTS+`2 devices$`)
	out.line(t, watchTS+`sim\.temperature = \{"temperature":20\.5 °C\} \(seq \d+, current\)$`)
	hub.Set("sim.heater", true)
	hub.Set("sim.led", true)
	out.line(t, watchTS+`sim\.led = true \(seq \d+\)$`)
	stop()
	text := out.text()
	if strings.Contains(text, "sim.heater") || strings.Contains(text, "sim.door") {
		t.Errorf("watch sim.led sim.temperature printed other devices:\n%s", text)
	}

	limited := hub.Token("led", openhal.KindAgent, openhal.ScopeRead, "sim.*")
	for _, tc := range []struct{ tok, id, want string }{
		{hub.Admin, "sim.nope", "watch: no device sim.nope on this gateway for this token (gateway devices lists them)"},
		{limited, "lab.other", "watch: no device lab.other on this gateway for this token (gateway devices lists them)"},
	} {
		// It ends by itself.
		o, _, err := runClient(t, func(args []string, stdout, stderr io.Writer) error {
			return cliApp.runWatch(context.Background(), args, stdout, stderr)
		}, tc.id, "sim.led", "--hub", url, "--token", tc.tok)
		if err == nil || err.Error() != tc.want {
			t.Errorf("watch %s: %v, want %q", tc.id, err, tc.want)
		}
		if o != "" {
			t.Errorf("watch %s printed %q", tc.id, o)
		}
	}
	// Run prints the usage error's line and the usage (usage_test.go).
	_, _, err := runClient(t, cliApp.cmdWatch, "Not-An-Id!", "--hub", url)
	if !errors.Is(err, errUsage) || !strings.HasPrefix(err.Error(), `watch: "Not-An-Id!" is not a device id`) {
		t.Errorf("watch Not-An-Id!: %v; want a usage error", err)
	}
}

func TestValueWithUnit(t *testing.T) {
	pct := device.Schema{Type: device.TypeNumber, Unit: "%"}
	climate := device.Schema{Type: device.TypeObject, Properties: map[string]device.Schema{
		"temperature": {Type: device.TypeNumber, Unit: "Cel"},
		"humidity":    {Type: device.TypeNumber, Unit: "%RH"},
		"label":       {Type: device.TypeString},
	}}
	for _, tc := range []struct {
		schema device.Schema
		v      any
		want   string
	}{
		{pct, 70.0, "70 %"},
		{pct, nil, "null"},
		{device.Schema{Type: device.TypeBoolean}, true, "true"},
		{device.Schema{Type: device.TypeString}, "21.5 V", `"21.5 V"`},
		{climate, map[string]any{"temperature": 20.5, "humidity": 41.0, "label": "bench"}, `{"humidity":41 %, "label":"bench", "temperature":20.5 °C}`},
		{device.Schema{Type: device.TypeObject}, map[string]any{"a": 1.0}, `{"a":1}`},
	} {
		if got := valueWithUnit(tc.schema, tc.v); got != tc.want {
			t.Errorf("valueWithUnit(%v) = %q, want %q", tc.v, got, tc.want)
		}
	}
}

// wantLines checks out line by line against patterns.
func wantLines(t *testing.T, what, out string, patterns []string) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) < len(patterns) {
		t.Fatalf("%s printed %d lines, want %d:\n%s", what, len(lines), len(patterns), out)
	}
	for i, p := range patterns {
		if !regexp.MustCompile(p).MatchString(lines[i]) {
			t.Errorf("%s line %d %q does not match %s", what, i+1, lines[i], p)
		}
	}
}

// watch --json keeps standard output for notifications: the banner of a
// stop in force goes to standard error with the connection's lines.
func TestWatchJSONStopBanner(t *testing.T) {
	noEnv(t)
	hub := hubtest.New(t)
	url := hub.Listen("tcp")
	admin := []string{"--hub", url, "--token", hub.Admin}
	runClient(t, cliApp.cmdStop, append(admin, "--reason", "bench fire")...)
	out, status, stop := startWatch(t, append(admin, "--json")...)
	status.line(t, watchTS+bannerRE[1:])
	out.line(t, `"device":"sim.temperature"`)
	runClient(t, cliApp.cmdResume, admin...)
	out.line(t, `^\{"jsonrpc":"2.0","method":"hal/resumed","params":\{"principal":\{"kind":"operator","name":"admin"`)
	stop()
	if strings.Contains(out.text(), "EMERGENCY") {
		t.Errorf("watch --json printed the banner on standard output:\n%s", out.text())
	}
}

// watchPrinter.wanted keeps, with DEVICE..., the events of those devices
// and those of no device (the stop, a Hub-wide loss).
func TestWatchPrinterWanted(t *testing.T) {
	p := &watchPrinter{only: map[string]bool{"sim.led": true}, listed: true, devs: map[string]device.Descriptor{}}
	note := func(method, params string) *halclient.Notification {
		return &halclient.Notification{Method: method, Params: json.RawMessage(params)}
	}
	for _, tc := range []struct {
		name string
		e    halclient.WatchEvent
		want bool
	}{
		{"its value", halclient.WatchEvent{Kind: halclient.EventValue, Device: "sim.led"}, true},
		{"another's value", halclient.WatchEvent{Kind: halclient.EventValue, Device: "sim.fan"}, false},
		{"another's read failure", halclient.WatchEvent{Kind: halclient.EventReadFailed, Device: "sim.meter"}, false},
		{"a Hub-wide loss", halclient.WatchEvent{Kind: halclient.EventMissed, Missed: 2}, true},
		{"its loss", halclient.WatchEvent{Kind: halclient.EventMissed, Missed: 2, Device: "sim.led"}, true},
		{"another's loss", halclient.WatchEvent{Kind: halclient.EventMissed, Missed: 2, Device: "sim.fan"}, false},
		{"its state", halclient.WatchEvent{Kind: halclient.EventNotification, Notification: note("hal/deviceState", `{"device":"sim.led","state":"fault"}`)}, true},
		{"another's state", halclient.WatchEvent{Kind: halclient.EventNotification, Notification: note("hal/deviceState", `{"device":"sim.door","state":"fault"}`)}, false},
		{"another added", halclient.WatchEvent{Kind: halclient.EventNotification, Notification: note("hal/deviceAdded", `{"device":{"id":"lab.x","kind":"sensor"}}`)}, false},
		{"another's confirmation", halclient.WatchEvent{Kind: halclient.EventNotification, Notification: note("hal/confirmationRequested", `{"confirmation":{"id":"c-1","device":"sim.heater"}}`)}, false},
		{"the stop", halclient.WatchEvent{Kind: halclient.EventNotification, Notification: note("hal/stopped", `{"principal":{"kind":"operator","name":"admin"},"reason":"x"}`)}, true},
		{"the resume", halclient.WatchEvent{Kind: halclient.EventNotification, Notification: note("hal/resumed", `{"principal":{"kind":"operator","name":"admin"}}`)}, true},
		{"a disconnection", halclient.WatchEvent{Kind: halclient.EventDisconnected}, true},
	} {
		if got := p.wanted(&tc.e); got != tc.want {
			t.Errorf("%s: wanted = %v, want %v", tc.name, got, tc.want)
		}
	}
	if _, ok := p.devs["lab.x"]; !ok {
		t.Error("a device added is not remembered for its units")
	}
}
