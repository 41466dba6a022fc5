package halhub

import (
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/openhal"
)

// scrape GETs /metrics with bearer and parses the answer with
// Prometheus's own text parser, under its strictest (legacy) name rules.
// A status other than 200 is returned with no families.
func scrape(t *testing.T, url, bearer string) (int, map[string]*dto.MetricFamily) {
	t.Helper()
	code, hdr, body := get(t, url+"/metrics", bearer)
	if code != http.StatusOK {
		return code, nil
	}
	if ct := hdr.Get("Content-Type"); ct != "text/plain; version=0.0.4" {
		t.Errorf("Content-Type %q", ct)
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("Prometheus's parser refuses /metrics: %v\n%s", err, body)
	}
	return code, fams
}

// sample is one series of a family as "k=v,k=v" (labels sorted by the
// parser) → value.
func samples(fams map[string]*dto.MetricFamily, name string) map[string]float64 {
	out := map[string]float64{}
	f, ok := fams[name]
	if !ok {
		return out
	}
	for _, m := range f.GetMetric() {
		var ls []string
		for _, l := range m.GetLabel() {
			ls = append(ls, l.GetName()+"="+l.GetValue())
		}
		if m.TimestampMs != nil {
			ls = append(ls, "EXPLICIT TIMESTAMP")
		}
		out[strings.Join(ls, ",")] = m.GetGauge().GetValue()
	}
	return out
}

// metricsBench is a test Hub with one device of each kind of value.
func metricsBench(t *testing.T) *testHub {
	t.Helper()
	th := newTestHub(t)
	ts := time.Date(2026, 12, 6, 10, 0, 0, 250e6, time.UTC)
	add := func(d device.Descriptor, v any) {
		t.Helper()
		d.Source, d.Risk = "board", device.RiskLow
		if d.Access == "" {
			d.Access = device.AccessRead
		}
		rep := th.addDevice(t, &testDevice{desc: d})
		if v != nil {
			rep.Value(v, ts)
		}
	}
	add(device.Descriptor{ID: "bench.led", Kind: device.KindGPIOOutput, Label: "LED \"red\" \\ \n", Access: device.AccessReadWrite, Schema: device.Schema{Type: device.TypeBoolean}}, true)
	add(device.Descriptor{ID: "bench.door", Kind: device.KindGPIOInput, Schema: device.Schema{Type: device.TypeBoolean}}, false)
	add(device.Descriptor{ID: "bench.fan", Kind: device.KindPWM, Access: device.AccessReadWrite, Schema: device.Schema{Type: device.TypeNumber, Unit: "%"}}, 40.5)
	add(device.Descriptor{ID: "bench.count", Kind: device.KindSensor, Schema: device.Schema{Type: device.TypeInteger}}, int64(7))
	add(device.Descriptor{ID: "bench.climate", Kind: device.KindSensor, Schema: device.Schema{Type: device.TypeObject, Unit: "Cel", Properties: map[string]device.Schema{
		"temperature": {Type: device.TypeNumber},
		"humidity":    {Type: device.TypeNumber, Unit: "%RH"},
		"ok":          {Type: device.TypeBoolean, Unit: "/"},
		"model":       {Type: device.TypeString},
		"mode":        {Type: device.TypeString, Enum: []any{"auto", "manual"}},
		"inner":       {Type: device.TypeObject, Properties: map[string]device.Schema{"v": {Type: device.TypeNumber, Unit: "V"}}},
		"value":       {Type: device.TypeObject, Properties: map[string]device.Schema{"x": {Type: device.TypeNumber}}},
	}}}, map[string]any{"temperature": 21.5, "humidity": 40.0, "ok": true, "model": "dht22", "mode": "manual", "inner": map[string]any{"v": 3.3}, "value": map[string]any{"x": 1.5}})
	add(device.Descriptor{ID: "bench.vfd", Kind: device.KindModbus, Schema: device.Schema{Type: device.TypeString, Enum: []any{"stopped", "running", `fault "F1"`}}}, "running")
	add(device.Descriptor{ID: "bench.meter", Kind: device.KindSerial, Schema: device.Schema{Type: device.TypeString}}, "MEAS 21.5 C")
	add(device.Descriptor{ID: "bench.relay", Kind: device.KindGPIOOutput, Access: device.AccessWrite, Schema: device.Schema{Type: device.TypeBoolean}}, true)
	add(device.Descriptor{ID: "bench.new", Kind: device.KindSensor, Schema: device.Schema{Type: device.TypeNumber, Unit: "Pa"}}, nil)
	add(device.Descriptor{ID: "other.inf", Kind: device.KindSensor, Schema: device.Schema{Type: device.TypeNumber}}, math.Inf(1))
	return th
}

// Issue 32 point 5: each device's numbers, booleans, object members and
// enums in /metrics, as Prometheus's parser reads them; free strings,
// write-only devices and devices without a value have no value series.
func TestMetricsDeviceValues(t *testing.T) {
	t.Parallel()
	th := metricsBench(t)
	_, fams := scrape(t, th.httpURL, th.admin)
	for name, f := range fams {
		if strings.HasPrefix(name, "gateway_device") && f.GetType() != dto.MetricType_GAUGE {
			t.Errorf("%s is %v, want a gauge", name, f.GetType())
		}
	}
	wantValues := map[string]float64{
		"device=bench.led,quantity=value,unit=":              1,
		"device=bench.door,quantity=value,unit=":             0,
		"device=bench.fan,quantity=value,unit=%":             40.5,
		"device=bench.count,quantity=value,unit=":            7,
		"device=bench.climate,quantity=temperature,unit=Cel": 21.5,
		"device=bench.climate,quantity=humidity,unit=%RH":    40,
		"device=bench.climate,quantity=ok,unit=/":            1,
		"device=bench.climate,quantity=inner.v,unit=V":       3.3,
		"device=bench.climate,quantity=value.x,unit=Cel":     1.5,
		"device=other.inf,quantity=value,unit=":              math.Inf(1),
	}
	if got := samples(fams, "gateway_device_value"); !mapsEqual(got, wantValues) {
		t.Errorf("gateway_device_value:\n got %v\nwant %v", got, wantValues)
	}
	wantEnums := map[string]float64{
		"device=bench.climate,quantity=mode,value=auto":    0,
		"device=bench.climate,quantity=mode,value=manual":  1,
		"device=bench.vfd,quantity=value,value=stopped":    0,
		"device=bench.vfd,quantity=value,value=running":    1,
		`device=bench.vfd,quantity=value,value=fault "F1"`: 0,
	}
	if got := samples(fams, "gateway_device_enum"); !mapsEqual(got, wantEnums) {
		t.Errorf("gateway_device_enum:\n got %v\nwant %v", got, wantEnums)
	}
	stamps := samples(fams, "gateway_device_value_timestamp_seconds")
	wantStamped := []string{"device=bench.climate", "device=bench.count", "device=bench.door", "device=bench.fan", "device=bench.led", "device=bench.vfd", "device=other.inf"}
	if keys := sortedKeys(stamps); !slices.Equal(keys, wantStamped) {
		t.Errorf("timestamps for %v, want %v", keys, wantStamped)
	}
	if got := stamps["device=bench.fan"]; got != 1796551200.25 {
		t.Errorf("bench.fan's value timestamp %v, want 1796551200.25", got)
	}
	info := samples(fams, "gateway_device_info")
	if got, ok := info["device=bench.led,kind=gpio.output,label=LED \"red\" \\ \n"]; !ok || got != 1 {
		t.Errorf("gateway_device_info of bench.led (its label escaped and read back): %v", info)
	}
	if len(info) != 10 {
		t.Errorf("%d devices in gateway_device_info, want 10: %v", len(info), info)
	}
}

func mapsEqual(a, b map[string]float64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || !(w == v || (math.IsNaN(w) && math.IsNaN(v))) {
			return false
		}
	}
	return true
}

func sortedKeys(m map[string]float64) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Issue 32 point 5: a device's state is one series per state, 1 for the
// current; its value follows the device, and an offline device has none.
func TestMetricsFollowDevices(t *testing.T) {
	t.Parallel()
	th := newTestHub(t)
	rep := th.addDevice(t, &testDevice{desc: device.Descriptor{ID: "t.temp", Kind: device.KindSensor, Source: "board", Access: device.AccessRead, Risk: device.RiskLow, Schema: device.Schema{Type: device.TypeNumber, Unit: "Cel"}}})
	const value = "device=t.temp,quantity=value,unit=Cel"
	state := func(fams map[string]*dto.MetricFamily) string {
		var on []string
		for k, v := range samples(fams, "gateway_device_state") {
			if v == 1 {
				on = append(on, k)
			}
		}
		if len(samples(fams, "gateway_device_state")) != 3 || len(on) != 1 {
			t.Fatalf("gateway_device_state: want 3 series, one of them 1: %v", samples(fams, "gateway_device_state"))
		}
		return on[0]
	}
	_, fams := scrape(t, th.httpURL, th.admin)
	if got := samples(fams, "gateway_device_value"); len(got) != 0 || state(fams) != "device=t.temp,state=ok" {
		t.Errorf("before any value: %v, %s", got, state(fams))
	}
	for _, step := range []struct {
		do    func()
		state string
		value []float64 // none: no series
	}{
		{func() { rep.Value(20.0, time.Time{}) }, "ok", []float64{20}},
		{func() { rep.Value(21.25, time.Time{}) }, "ok", []float64{21.25}},
		{func() { rep.State(device.StateFault, "timeout: no answer") }, "fault", []float64{21.25}},
		{func() { rep.State(device.StateOffline, "") }, "offline", nil},
		{func() { rep.State(device.StateOK, ""); rep.Value(19.0, time.Time{}) }, "ok", []float64{19}},
	} {
		step.do()
		_, fams := scrape(t, th.httpURL, th.admin)
		if got := state(fams); got != "device=t.temp,state="+step.state {
			t.Errorf("state %s, want %s", got, step.state)
		}
		got, ok := samples(fams, "gateway_device_value")[value]
		if (len(step.value) == 0) == ok || (ok && got != step.value[0]) {
			t.Errorf("in state %s: value %v (present %v), want %v", step.state, got, ok, step.value)
		}
	}
}

// Issue 32 point 5 and spec §2, §4: who sees what in /metrics. The Hub's
// and adapters' figures are whole counts: a token that sees every device,
// or anyone when public. Device series: a token's own devices, never
// without a token. A token given and unknown is refused even when public.
func TestMetricsScopes(t *testing.T) {
	t.Parallel()
	th := metricsBench(t)
	limited := th.token(t, "ledadmin", openhal.ScopeAdmin, "bench.led", "other.*")
	reader := th.token(t, "reader", openhal.ScopeRead)
	adapters := HTTPOptions{Metrics: func(w io.Writer) { fmt.Fprintln(w, "# TYPE gateway_adapter_up gauge\ngateway_adapter_up 1") }}
	private := httptest.NewServer(th.hub.Handler(adapters))
	defer private.Close()
	adapters.MetricsPublic = true
	public := httptest.NewServer(th.hub.Handler(adapters))
	defer public.Close()
	all := []string{"bench.climate", "bench.count", "bench.door", "bench.fan", "bench.led", "bench.meter", "bench.new", "bench.relay", "bench.vfd", "other.inf"}
	for _, tc := range []struct {
		name, url, bearer string
		want              int
		hub               bool     // the Hub's and the adapters' figures
		devices           []string // in gateway_device_info
	}{
		{"private, no token", private.URL, "", http.StatusUnauthorized, false, nil},
		{"private, unknown token", private.URL, "gw_unknown", http.StatusUnauthorized, false, nil},
		{"private, read token", private.URL, reader, http.StatusOK, true, all},
		{"private, limited admin", private.URL, limited, http.StatusOK, false, []string{"bench.led", "other.inf"}},
		{"public, no token", public.URL, "", http.StatusOK, true, nil},
		{"public, unknown token", public.URL, "gw_unknown", http.StatusUnauthorized, false, nil},
		{"public, limited admin", public.URL, limited, http.StatusOK, true, []string{"bench.led", "other.inf"}},
		{"public, read token", public.URL, reader, http.StatusOK, true, all},
	} {
		code, fams := scrape(t, tc.url, tc.bearer)
		if code != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, code, tc.want)
			continue
		}
		if code != http.StatusOK {
			continue
		}
		_, hub := fams["gateway_hal_seq"]
		_, adapter := fams["gateway_adapter_up"]
		if hub != tc.hub || adapter != tc.hub {
			t.Errorf("%s: Hub figures shown %v, adapters' %v, want %v", tc.name, hub, adapter, tc.hub)
		}
		if _, ok := fams["gateway_emergency_stop"]; !ok {
			t.Errorf("%s: no gateway_emergency_stop, which every token is told", tc.name)
		}
		var seen []string
		for _, m := range fams["gateway_device_info"].GetMetric() {
			seen = append(seen, m.GetLabel()[0].GetValue())
		}
		if !slices.Equal(seen, tc.devices) {
			t.Errorf("%s: sees devices %v, want %v", tc.name, seen, tc.devices)
		}
		for name, f := range fams {
			for _, m := range f.GetMetric() {
				for _, l := range m.GetLabel() {
					if l.GetName() == "device" && !slices.Contains(tc.devices, l.GetValue()) {
						t.Errorf("%s: %s shows %s", tc.name, name, l.GetValue())
					}
				}
			}
		}
	}
}

// Spec §4: what a limited token is shown is the same whatever the devices
// it cannot see do (as TestLimitedTokenLearnsNothingOfHiddenDevices for
// the protocol): /metrics, byte for byte.
func TestMetricsLimitedLearnsNothingOfHidden(t *testing.T) {
	t.Parallel()
	th := newTestHub(t)
	mk := func(id string) device.Reporter {
		return th.addDevice(t, &testDevice{desc: device.Descriptor{ID: id, Kind: device.KindSensor, Source: "board", Access: device.AccessRead, Risk: device.RiskLow, Schema: device.Schema{Type: device.TypeNumber}}})
	}
	mine, hidden := mk("mine.t"), mk("hidden.t")
	mine.Value(1.0, time.Unix(1e9, 0))
	limited := th.token(t, "limited", openhal.ScopeRead, "mine.*")
	_, _, before := get(t, th.httpURL+"/metrics", limited)
	for i := range 100 {
		hidden.Value(float64(i), time.Time{})
	}
	hidden.State(device.StateFault, "secret")
	_, _, after := get(t, th.httpURL+"/metrics", limited)
	if before != after || strings.Contains(after, "hidden") {
		t.Errorf("a limited token's /metrics changed with a hidden device:\n%s\n---\n%s", before, after)
	}
}

// BenchmarkMetricsScrape is one whole scrape of /metrics over loopback
// HTTP with an admin token (the Hub's figures and every device's), for a
// bench of n devices like the sim board's: per 7, 4 booleans, a
// percentage, an object with one temperature and a free string.
// docs/prometheus.md, "What a scrape costs", quotes it.
func BenchmarkMetricsScrape(b *testing.B) {
	for _, n := range []int{7, 500} {
		b.Run(fmt.Sprintf("devices=%d", n), func(b *testing.B) {
			th := newTestHub(b)
			for i := range n {
				d := device.Descriptor{ID: fmt.Sprintf("b%03d.dev", i), Kind: device.KindGPIOOutput, Label: "A device", Source: "board", Access: device.AccessReadWrite, Risk: device.RiskLow, Schema: device.Schema{Type: device.TypeBoolean}}
				var v any = i%2 == 0
				switch i % 7 {
				case 4:
					d.Kind, d.Schema, v = device.KindPWM, device.Schema{Type: device.TypeNumber, Unit: "%"}, 40.5
				case 5:
					d.Kind, d.Schema, v = device.KindSensor, device.Schema{Type: device.TypeObject, Properties: map[string]device.Schema{"temperature": {Type: device.TypeNumber, Unit: "Cel"}}}, map[string]any{"temperature": 21.375}
				case 6:
					d.Kind, d.Schema, v = device.KindSerial, device.Schema{Type: device.TypeString}, "MEAS 21.4"
				}
				rep, err := th.reg.Add(&testDevice{desc: d})
				if err != nil {
					b.Fatal(err)
				}
				rep.Value(v, time.Time{})
			}
			srv := httptest.NewServer(th.hub.Handler(HTTPOptions{}))
			defer srv.Close()
			defer th.hub.Close()
			req, _ := http.NewRequest(http.MethodGet, srv.URL+"/metrics", nil)
			req.Header.Set("Authorization", "Bearer "+th.admin)
			var size int64
			b.ResetTimer()
			for range b.N {
				resp, err := srv.Client().Do(req)
				if err != nil {
					b.Fatal(err)
				}
				size, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			b.ReportMetric(float64(size), "bytes/scrape")
		})
	}
}
