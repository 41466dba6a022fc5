package mqttbridge_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openhal/gateway/internal/mqttbridge"
)

func host(name string) func() (string, error) {
	return func() (string, error) { return name, nil }
}

// Defaults, and each setting as the configuration gives it.
func TestParseSettings(t *testing.T) {
	pass := filepath.Join(t.TempDir(), "mqtt.pass")
	if err := os.WriteFile(pass, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, settings string
		want           string // Config fields as printed below
	}{
		{"defaults", `{"broker":"mqtt://127.0.0.1"}`,
			"mqtt://127.0.0.1:1883 client=openhal-bench-pi-4 gw=bench-pi-4 name=bench-pi-4 base=openhal/bench-pi-4 disc=homeassistant qos=1 user= pass= tls=false"},
		{"everything", `{"broker":"mqtt://broker.lan:1884","username":"gw","password":"pw","clientId":"c1","gateway":"lab-2","name":"Lab bench","prefix":"site/a","discoveryPrefix":"ha","qos":0}`,
			"mqtt://broker.lan:1884 client=c1 gw=lab-2 name=Lab bench base=site/a/lab-2 disc=ha qos=0 user=gw pass=pw tls=false"},
		{"discovery off", `{"broker":"mqtt://h:1","discoveryPrefix":""}`,
			"mqtt://h:1 client=openhal-bench-pi-4 gw=bench-pi-4 name=bench-pi-4 base=openhal/bench-pi-4 disc= qos=1 user= pass= tls=false"},
		{"password file", `{"broker":"mqtts://h","passwordFile":"` + pass + `"}`,
			"mqtts://h:8883 client=openhal-bench-pi-4 gw=bench-pi-4 name=bench-pi-4 base=openhal/bench-pi-4 disc=homeassistant qos=1 user= pass=s3cret tls=true"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := mqttbridge.ParseSettings([]byte(tc.settings), host("Bench.Pi 4"))
			if err != nil {
				t.Fatal(err)
			}
			got := fmt.Sprintf("%s client=%s gw=%s name=%s base=%s disc=%s qos=%d user=%s pass=%s tls=%v",
				c.BrokerName(), c.ClientID, c.Gateway, c.Name, c.Topics().Base(c.Gateway), c.DiscoveryPrefix, c.QoS, c.Username, c.Password, c.TLS != nil)
			if got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

// A bad setting refuses to start with an error naming its field.
func TestParseSettingsErrors(t *testing.T) {
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(notPEM, []byte("nothing"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, settings, want string
	}{
		{"no broker", `{}`, "adapters.settings.mqtt.broker: required"},
		{"scheme", `{"broker":"tcp://h:1883"}`, `adapters.settings.mqtt.broker: scheme "tcp": want mqtt:// or mqtts://`},
		{"user in URL", `{"broker":"mqtt://u:p@h"}`, "adapters.settings.mqtt.broker: has a user name in it"},
		{"path", `{"broker":"mqtt://h/x"}`, "adapters.settings.mqtt.broker: \"mqtt://h/x\": want scheme://host:port"},
		{"unknown field", `{"broker":"mqtt://h","keepalive":5}`, "adapters.settings.mqtt.keepalive: unknown field"},
		{"unknown tls field", `{"broker":"mqtts://h","tls":{"insecure":true}}`, "adapters.settings.mqtt.tls.insecure: unknown field"},
		{"wrong type", `{"broker":"mqtt://h","qos":"1"}`, "adapters.settings.mqtt.qos: want a number, got string"},
		{"tls not a mapping", `{"broker":"mqtts://h","tls":"yes"}`, "adapters.settings.mqtt.tls: want a mapping"},
		{"qos 2", `{"broker":"mqtt://h","qos":2}`, "adapters.settings.mqtt.qos: want 0 or 1, got 2"},
		{"both passwords", `{"broker":"mqtt://h","password":"a","passwordFile":"/x"}`, "adapters.settings.mqtt.passwordFile: password and passwordFile are both set"},
		{"password file missing", `{"broker":"mqtt://h","passwordFile":"/nonexistent/p"}`, "adapters.settings.mqtt.passwordFile: open /nonexistent/p"},
		{"cert without key", `{"broker":"mqtts://h","tls":{"cert":"/c.pem"}}`, "adapters.settings.mqtt.tls.cert: tls.cert and tls.key go together"},
		{"tls on mqtt://", `{"broker":"mqtt://h","tls":{"ca":"/ca.pem"}}`, "adapters.settings.mqtt.tls: set, but the broker is mqtt://"},
		{"CA not PEM", `{"broker":"mqtts://h","tls":{"ca":"` + notPEM + `"}}`, "adapters.settings.mqtt.tls.ca: " + notPEM + " holds no PEM certificate"},
		{"bad gateway", `{"broker":"mqtt://h","gateway":"Bench 1"}`, `adapters.settings.mqtt.gateway: "Bench 1": want lower case`},
		{"gateway with _", `{"broker":"mqtt://h","gateway":"lab_2"}`, `adapters.settings.mqtt.gateway: "lab_2": want lower case letters, digits and - (at most 64; no _`},
		{"bad prefix", `{"broker":"mqtt://h","prefix":"a/#"}`, `adapters.settings.mqtt.prefix: "a/#": want a topic without +, #`},
		{"empty prefix", `{"broker":"mqtt://h","prefix":""}`, `adapters.settings.mqtt.prefix: "": want a topic`},
		{"not a mapping", `[1]`, "adapters.settings.mqtt: want a mapping"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := mqttbridge.ParseSettings([]byte(tc.settings), host("bench"))
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("error %v\nwant %s...", err, tc.want)
			}
		})
	}
	_, err := mqttbridge.ParseSettings([]byte(`{"broker":"mqtt://h"}`), func() (string, error) { return "", errors.New("no name") })
	if err == nil || !strings.Contains(err.Error(), "adapters.settings.mqtt.gateway: not set, and the host name is unknown") {
		t.Fatalf("no host name: %v", err)
	}
}
