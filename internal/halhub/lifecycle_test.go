package halhub

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/openhal/gateway/openhal"
)

func initParams(version any, tok string) map[string]any {
	p := map[string]any{"protocolVersion": version, "clientInfo": map[string]string{"name": "bench-agent", "version": "1.4.0"}}
	if tok != "" {
		p["token"] = tok
	}
	return p
}

// Seed 3.1.1, 1 and 5: any request before hal/initialize gets
// NOT_INITIALIZED, unknown methods included.
func TestRequestBeforeInitializeIsNotInitialized(t *testing.T) {
	th := newTestHub(t)
	c := th.dialTCP(t)
	for _, method := range []string{"hal/ping", "hal/devices/list", "hal/read", "hal/write", "no/such"} {
		m := c.call(method, nil)
		if m.Error == nil || m.Error.Code != openhal.CodeNotInitialized {
			t.Errorf("%s before initialize: got %s, want NOT_INITIALIZED", method, m.raw)
		}
	}
	c.init(th.admin) // the connection still works
}

// Seed 3.1.1, 2: the answer carries version, hub info, level, principal and
// notifications (and bootId, spec §3).
func TestInitializeAnswer(t *testing.T) {
	th := newTestHub(t)
	tok := th.token(t, "bench-agent", openhal.ScopeControlLow)
	c := th.dialTCP(t)
	m := c.call("hal/initialize", initParams("0.1", tok))
	var res map[string]any
	if err := json.Unmarshal(m.Result, &res); err != nil || m.Error != nil {
		t.Fatalf("initialize: %s", m.raw)
	}
	want := map[string]any{
		"protocolVersion": "0.1",
		"hubInfo":         map[string]any{"name": "openhal", "version": "test"},
		"conformance":     "full",
		"principal":       map[string]any{"kind": "agent", "name": "bench-agent", "scope": "control_low"},
	}
	for k, v := range want {
		if fmt.Sprint(res[k]) != fmt.Sprint(v) {
			t.Errorf("%s = %v, want %v", k, res[k], v)
		}
	}
	caps := fmt.Sprint(res["capabilities"])
	for _, n := range openhal.LevelFull.Notifications() {
		if !strings.Contains(caps, n) {
			t.Errorf("capabilities %s lack %s", caps, n)
		}
	}
	if id, _ := res["bootId"].(string); len(id) < 16 || id != th.hub.BootID() {
		t.Errorf("bootId = %v, want the hub's %s", res["bootId"], th.hub.BootID())
	}
}

// Seed 3.1.1, 3 and 4: no notification before hal/initialized.
func TestNoNotificationBeforeInitialized(t *testing.T) {
	th := newTestHub(t)
	th.addDevice(t, output("bench.led", "low"))
	c := th.dialTCP(t)
	if m := c.call("hal/initialize", initParams("0.1", th.admin)); m.Error != nil {
		t.Fatal(m.raw)
	}
	th.reg.Publish("bench.led", true, time.Time{})
	c.call("hal/ping", nil) // anything queued before this answer would have come first
	c.quiet(50 * time.Millisecond)

	c.sendRaw(`{"jsonrpc":"2.0","method":"hal/initialized"}`)
	c.call("hal/ping", nil)
	th.reg.Publish("bench.led", false, time.Time{})
	if n := c.notification("hal/value"); !strings.Contains(string(n.Params), `"value":false`) {
		t.Errorf("got %s", n.raw)
	}
}

// Seed 3.1.1, 6: a missing or unknown token is UNAUTHORIZED.
func TestInitializeUnauthorized(t *testing.T) {
	th := newTestHub(t)
	for _, tc := range []struct{ name, tok, reason string }{
		{"missing", "", "token_missing"},
		{"unknown", "gw_nope", "token_unknown"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := th.dialTCP(t)
			m := c.call("hal/initialize", initParams("0.1", tc.tok))
			if m.Error == nil || m.Error.Code != openhal.CodeUnauthorized || m.reason() != tc.reason {
				t.Fatalf("got %s, want UNAUTHORIZED %s", m.raw, tc.reason)
			}
		})
	}
}

// Spec §3: the token is checked before the version.
func TestTokenCheckedBeforeVersion(t *testing.T) {
	th := newTestHub(t)
	c := th.dialTCP(t)
	m := c.call("hal/initialize", initParams("not-a-version", "gw_wrong"))
	if m.Error == nil || m.Error.Code != openhal.CodeUnauthorized {
		t.Fatalf("got %s, want UNAUTHORIZED", m.raw)
	}
}

// Seed 3.1.2, 2: a version not of the form MAJOR.MINOR is INVALID_PARAMS
// naming the supported versions.
func TestBadVersionForm(t *testing.T) {
	th := newTestHub(t)
	for _, v := range []any{"1", "0.01", "v0.1", "1.2.3", " 0.1", "0.1 ", "", "a.b", "-1.0", 0.1, nil, true} {
		c := th.dialTCP(t)
		m := c.call("hal/initialize", initParams(v, th.admin))
		if m.Error == nil || m.Error.Code != openhal.CodeInvalidParams || m.reason() != "bad_version" {
			t.Errorf("version %#v: got %s, want INVALID_PARAMS bad_version", v, m.raw)
			continue
		}
		if fmt.Sprint(m.Error.Data["supported"]) != "[0.1]" || !strings.Contains(m.Error.Message, "v0.1") {
			t.Errorf("version %#v: error %s does not name the supported versions", v, m.raw)
		}
		c.close()
	}
}

// Seed 3.1.2, 3 and 4: a supported version is echoed; any other gets the
// newest the Hub supports.
func TestVersionNegotiation(t *testing.T) {
	th := newTestHub(t)
	for _, tc := range []struct{ client, want string }{
		{"0.1", "0.1"},
		{"0.2", "0.1"},
		{"0.10", "0.1"},
		{"1.0", "0.1"},
		{"0.0", "0.1"},
		{strings.Repeat("9", 30) + ".0", "0.1"},
	} {
		c := th.dialTCP(t)
		m := c.call("hal/initialize", initParams(tc.client, th.admin))
		var res openhal.InitializeResult
		json.Unmarshal(m.Result, &res)
		if m.Error != nil || res.ProtocolVersion != tc.want {
			t.Errorf("client %s: got %s, want protocolVersion %s", tc.client, m.raw, tc.want)
		}
		c.close()
	}
}

// Spec §3: versions compare numerically, without overflow.
func TestCompareVersions(t *testing.T) {
	big := strings.Repeat("9", 30)
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"0.1", "0.1", 0},
		{"0.10", "0.9", 1},
		{"0.9", "0.10", -1},
		{"1.0", "0.99", 1},
		{big + ".0", "1.0", 1},
		{"1." + big, "1.5", 1},
		{big + ".1", big + ".2", -1},
	} {
		if got := compareVersions(tc.a, tc.b); got != tc.want {
			t.Errorf("compare(%s, %s) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
	if got := negotiate("0.9", []string{"0.1", "0.10", "0.2"}); got != "0.10" {
		t.Errorf("negotiate picked %s, want the newest 0.10", got)
	}
}

// Spec §3: a second hal/initialize is INVALID_REQUEST and changes nothing.
func TestSecondInitialize(t *testing.T) {
	th := newTestHub(t)
	c := th.dialTCP(t)
	c.init(th.admin)
	m := c.call("hal/initialize", initParams("0.1", th.admin))
	if m.Error == nil || m.Error.Code != -32600 || m.reason() != "already_initialized" {
		t.Fatalf("got %s", m.raw)
	}
	if m := c.call("hal/ping", nil); m.Error != nil {
		t.Fatalf("the connection broke: %s", m.raw)
	}
}

// Spec §3: the third failed hal/initialize closes the connection; the
// first two leave it open and uninitialized.
func TestThreeFailedInitializeClose(t *testing.T) {
	th := newTestHub(t)
	c := th.dialTCP(t)
	for i := 1; i <= 3; i++ {
		m := c.call("hal/initialize", initParams("bad", th.admin))
		if m.Error == nil || m.Error.Code != openhal.CodeInvalidParams {
			t.Fatalf("attempt %d: %s", i, m.raw)
		}
		if i < 3 {
			if m := c.call("hal/ping", nil); m.Error == nil || m.Error.Code != openhal.CodeNotInitialized {
				t.Fatalf("after attempt %d: %s", i, m.raw)
			}
		}
	}
	c.waitClosed()
}

// Spec §3: bootId is the same for every connection of one run and differs
// between runs.
func TestBootID(t *testing.T) {
	a, b := newTestHub(t), newTestHub(t)
	r1 := a.dialTCP(t).init(a.admin)
	r2 := a.dialTCP(t).init(a.admin)
	r3 := b.dialTCP(t).init(b.admin)
	if r1.BootID != r2.BootID || r1.BootID == r3.BootID {
		t.Fatalf("bootIds %s %s %s", r1.BootID, r2.BootID, r3.BootID)
	}
}

// Seed 3.1.1.1: the seed's own initialize, sent as is (with a token), gets
// the seed's answer — the same principal, version, level and hub name, the
// seed's notifications among ours, plus bootId.
func TestSeedInitializeExample(t *testing.T) {
	b, err := os.ReadFile("../../openhal/testdata/seed-002.json")
	if err != nil {
		t.Fatal(err)
	}
	var ex map[string]map[string]any
	var all map[string]json.RawMessage
	if err := json.Unmarshal(b, &all); err != nil {
		t.Fatal(err)
	}
	delete(all, "_comment")
	if err := json.Unmarshal(mustJSON(all), &ex); err != nil {
		t.Fatal(err)
	}
	th := newTestHub(t)
	tok := th.token(t, "bench-agent", openhal.ScopeControlLow)
	req := ex["initialize"]
	req["params"].(map[string]any)["token"] = tok
	c := th.dialTCP(t)
	c.sendRaw(string(mustJSON(req)))
	m := c.next()
	var got map[string]any
	json.Unmarshal([]byte(m.raw), &got)
	want := ex["initializeResult"]
	gr, wr := got["result"].(map[string]any), want["result"].(map[string]any)
	if got["id"] != want["id"] || got["jsonrpc"] != "2.0" {
		t.Fatalf("envelope %s", m.raw)
	}
	for _, k := range []string{"protocolVersion", "conformance", "principal"} {
		if !reflect.DeepEqual(gr[k], wr[k]) {
			t.Errorf("%s = %v, the seed's %v", k, gr[k], wr[k])
		}
	}
	if gr["hubInfo"].(map[string]any)["name"] != "openhal" {
		t.Errorf("hubInfo %v", gr["hubInfo"])
	}
	have := fmt.Sprint(gr["capabilities"].(map[string]any)["notifications"])
	for _, n := range wr["capabilities"].(map[string]any)["notifications"].([]any) {
		if !strings.Contains(have, n.(string)) {
			t.Errorf("notifications %s lack the seed's %s", have, n)
		}
	}
	if _, ok := gr["bootId"].(string); !ok {
		t.Error("no bootId")
	}
	c.sendRaw(string(mustJSON(ex["initialized"])))
	if m := c.call("hal/ping", nil); m.Error != nil {
		t.Fatalf("after the seed's hal/initialized: %s", m.raw)
	}
}
