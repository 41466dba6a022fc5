package pahoclient_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/openhal/gateway/internal/mqttbridge"
	"github.com/openhal/gateway/internal/mqttbridge/mosquittotest"
	"github.com/openhal/gateway/internal/mqttbridge/pahoclient"
)

const wait = 10 * time.Second

// handler records what the client tells it, as channels.
type handler struct {
	up   chan struct{}
	down chan error
	msgs chan mqttbridge.Message
}

func newHandler() *handler {
	return &handler{up: make(chan struct{}, 16), down: make(chan error, 64), msgs: make(chan mqttbridge.Message, 64)}
}

func (h *handler) Connected()                    { h.up <- struct{}{} }
func (h *handler) Disconnected(err error)        { h.down <- err }
func (h *handler) Received(m mqttbridge.Message) { h.msgs <- m }

func (h *handler) waitUp(t *testing.T) {
	t.Helper()
	select {
	case <-h.up:
	case err := <-h.down:
		t.Fatalf("not connected: %v", err)
	case <-time.After(wait):
		t.Fatal("not connected")
	}
}

func (h *handler) waitDown(t *testing.T) error {
	t.Helper()
	select {
	case err := <-h.down:
		return err
	case <-time.After(wait):
		t.Fatal("no disconnection")
	}
	return nil
}

func (h *handler) next(t *testing.T) mqttbridge.Message {
	t.Helper()
	select {
	case m := <-h.msgs:
		return m
	case <-time.After(wait):
		t.Fatal("no message")
	}
	return mqttbridge.Message{}
}

// config is settings for the broker at rawURL, parsed as the adapter does.
func config(t *testing.T, settings map[string]any) mqttbridge.Config {
	t.Helper()
	raw, _ := json.Marshal(settings)
	c, err := mqttbridge.ParseSettings(raw, func() (string, error) { return "gw", nil })
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func dial(t *testing.T, c mqttbridge.Config) (*pahoclient.Client, *handler) {
	t.Helper()
	h := newHandler()
	cl, err := pahoclient.Dial(context.Background(), c, h)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		_ = cl.Close(ctx)
	})
	return cl, h
}

// pub publishes with mosquitto_pub (a client other than the bridge).
func pub(t *testing.T, broker, topic, payload string, retain bool) {
	t.Helper()
	u, _ := url.Parse(broker)
	args := []string{"-h", u.Hostname(), "-p", u.Port(), "-V", "mqttv5", "-q", "1", "-t", topic, "-m", payload}
	if retain {
		args = append(args, "-r")
	}
	if out, err := exec.Command("mosquitto_pub", args...).CombinedOutput(); err != nil {
		t.Fatalf("mosquitto_pub: %v: %s", err, out)
	}
}

// Subscriptions get no retained message, and a live message with the
// retain flag keeps it (so the bridge can drop it).
func TestRetainHandling(t *testing.T) {
	b := mosquittotest.Start(t, mosquittotest.Options{})
	pub(t, b.URL, "openhal/gw/sim.led/set", "true", true) // retained before the bridge subscribes
	cl, h := dial(t, config(t, map[string]any{"broker": b.URL, "gateway": "gw"}))
	h.waitUp(t)
	ctx := context.Background()
	if err := cl.Subscribe(ctx, "openhal/gw/+/set"); err != nil {
		t.Fatal(err)
	}
	pub(t, b.URL, "openhal/gw/sim.led/set", "false", true)
	pub(t, b.URL, "openhal/gw/stop/set", "STOP", false)
	pub(t, b.URL, "openhal/gw/sim.led/set", "end", false)
	var got []string
	for len(got) == 0 || !strings.HasSuffix(got[len(got)-1], "end") {
		m := h.next(t)
		got = append(got, m.Topic+" "+string(m.Payload)+" retain="+map[bool]string{true: "1", false: "0"}[m.Retain]+" "+string(m.Payload))
	}
	want := []string{
		"openhal/gw/sim.led/set false retain=1 false",
		"openhal/gw/stop/set STOP retain=0 STOP",
		"openhal/gw/sim.led/set end retain=0 end",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("received:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A wrong password is refused with MQTT 5's reason code, in words.
func TestWrongPassword(t *testing.T) {
	b := mosquittotest.Start(t, mosquittotest.Options{Users: map[string]string{"gw": "right"}})
	c := config(t, map[string]any{"broker": b.URL, "username": "gw", "password": "wrong"})
	_, h := dial(t, c)
	err := h.waitDown(t)
	var refused *mqttbridge.RefusedError
	if !errors.As(err, &refused) {
		t.Fatalf("error %v (%T), want a RefusedError", err, err)
	}
	words := mqttbridge.Why(err, c.BrokerName())
	if !strings.Contains(words, "check adapters.settings.mqtt.username and password") {
		t.Fatalf("words %q", words)
	}
	t.Logf("code 0x%02X: %s", refused.Code, words)
}

// TLS with a client certificate: connects with it, and says why without.
func TestTLSClientCertificate(t *testing.T) {
	b := mosquittotest.Start(t, mosquittotest.Options{TLS: true, ClientCert: true})
	good := config(t, map[string]any{"broker": b.TLSURL, "tls": map[string]any{"ca": b.CAFile, "cert": b.ClientCertFile, "key": b.ClientKeyFile}})
	cl, h := dial(t, good)
	h.waitUp(t)
	if err := cl.Publish(context.Background(), "x/y", []byte("1"), false); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		settings map[string]any
		want     string
	}{
		{"no client certificate", map[string]any{"broker": b.TLSURL, "clientId": "other", "tls": map[string]any{"ca": b.CAFile}}, "require a client certificate? check adapters.settings.mqtt.tls.cert and key"},
		{"unknown CA", map[string]any{"broker": b.TLSURL, "clientId": "other2"}, "not signed by a known authority"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := config(t, tc.settings)
			_, h := dial(t, c)
			err := h.waitDown(t)
			if words := mqttbridge.Why(err, c.BrokerName()); !strings.Contains(words, tc.want) {
				t.Fatalf("words %q (err %v), want %q", words, err, tc.want)
			}
		})
	}
}

func TestMain(m *testing.M) { os.Exit(m.Run()) }
