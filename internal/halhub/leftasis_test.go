package halhub

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/openhal/gateway/openhal"
)

// A stop lists the written devices it leaves as they are, with the
// reason their descriptor gives (or a plain one), in its result and in
// hal/stopped; read-only devices and devices driven safe are not in it,
// and a device-limited token sees only its own devices there.
func TestStopListsDevicesLeftAsIs(t *testing.T) {
	b := newBench(t)
	pump := output("bench.pump", "low")
	pump.desc.NoSafeReason = "it must keep circulating coolant"
	b.addDevice(t, pump)
	admin := b.admin(t)
	wantOK(t, write(admin, "bench.led", true))
	wantOK(t, write(admin, "bench.pump", true))
	watchers := map[string]*client{
		"all":  b.as(t, "all", openhal.ScopeRead),
		"pump": b.as(t, "pumpwatch", openhal.ScopeRead, "bench.pump"),
		"fan":  b.as(t, "fanwatch", openhal.ScopeRead, "bench.fan"),
	}
	all := `[{"device":"bench.led","reason":"it declares no safe value"},{"device":"bench.pump","reason":"it must keep circulating coolant"}]`
	want := map[string]string{
		"all":  all,
		"pump": `[{"device":"bench.pump","reason":"it must keep circulating coolant"}]`,
		"fan":  `[]`,
	}
	tests := []struct {
		name  string
		as    *client
		wants string
	}{
		{"admin", admin, all},
		{"pump", b.as(t, "pump", openhal.ScopeControlLow, "bench.pump"), want["pump"]},
		{"fan", b.as(t, "fan", openhal.ScopeControlLow, "bench.fan"), want["fan"]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := resultOf[openhal.StopResult](t, tt.as.call("hal/stop", nil))
			if got := leftJSON(t, res.LeftAsIs); got != tt.wants {
				t.Errorf("leftAsIs %s, want %s", got, tt.wants)
			}
			for name, w := range watchers {
				var n openhal.StoppedParams
				if err := json.Unmarshal(w.notification("hal/stopped").Params, &n); err != nil {
					t.Fatal(err)
				}
				if got := leftJSON(t, n.LeftAsIs); got != want[name] {
					t.Errorf("%s's hal/stopped leftAsIs %s, want %s", name, got, want[name])
				}
			}
		})
	}
	if b.value(t, "bench.led") != true || b.value(t, "bench.pump") != true {
		t.Errorf("devices left as they are moved: led %v pump %v", b.value(t, "bench.led"), b.value(t, "bench.pump"))
	}
	if fmt.Sprint(pump.written()) != "[true]" {
		t.Errorf("the pump was written %v", pump.written())
	}
}

func leftJSON(t *testing.T, left []openhal.LeftAsIs) string {
	t.Helper()
	b, err := json.Marshal(left)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
