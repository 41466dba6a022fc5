package history

import (
	"encoding/json"
	"math"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/clock/clocktest"
)

var t0 = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

func value(id string, v any, ts time.Time) device.Event {
	return device.Event{Kind: device.EventValue, Device: id, Value: v, TS: ts}
}

// Which values are kept, and in which series.
func TestRecordKinds(t *testing.T) {
	t.Parallel()
	long := "a_field_name_longer_than_32_bytes"
	for _, tc := range []struct {
		name   string
		values []any
		fields []string // nil: the device has no series
		kinds  map[string]Kind
	}{
		{"number", []any{1.5, 2, int64(3), uint32(4), float32(5), json.Number("6")}, []string{""}, map[string]Kind{"": KindNumber}},
		{"boolean", []any{true, false}, []string{""}, map[string]Kind{"": KindBoolean}},
		{"object: one series per numeric or boolean member", []any{map[string]any{"temperature": 20.5, "ok": true, "unit": "Cel", "nested": map[string]any{"x": 1.0}}},
			[]string{"ok", "temperature"}, map[string]Kind{"ok": KindBoolean, "temperature": KindNumber}},
		{"string", []any{"*IDN? reply"}, nil, nil},
		{"null, list", []any{nil, []any{1.0}}, nil, nil},
		{"NaN and infinities", []any{math.NaN(), math.Inf(1)}, nil, nil},
		{"a kind change is not kept", []any{1.0, true}, []string{""}, map[string]Kind{"": KindNumber}},
		{"a long member name", []any{map[string]any{long: 1.0, "x": 2.0}}, []string{"x"}, map[string]Kind{"x": KindNumber}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := New(Options{Samples: 10, Buckets: 10})
			h.Record(device.Event{Kind: device.EventState, Device: "d", State: device.StateFault})
			for i, v := range tc.values {
				h.Record(value("d", v, t0.Add(time.Duration(i)*time.Second)))
			}
			fields, ok := h.Fields("d")
			if !slices.Equal(fields, tc.fields) || ok != (tc.fields != nil) {
				t.Fatalf("fields %q (%v), want %q", fields, ok, tc.fields)
			}
			for f, k := range tc.kinds {
				if got := h.devices["d"].series[f].kind; got != k {
					t.Errorf("field %q kind %s, want %s", f, got, k)
				}
			}
		})
	}
}

// A device keeps at most MaxFields series, the History MaxSeries in all:
// past them, values are dropped and memory stays as it was.
func TestRecordBounds(t *testing.T) {
	t.Parallel()
	h := New(Options{Samples: 4, Buckets: 4, MaxSeries: 5, MaxFields: 3})
	wide := map[string]any{}
	for _, f := range []string{"a", "b", "c", "d", "e"} {
		wide[f] = 1.0
	}
	h.Record(value("wide", wide, t0))
	if fields, _ := h.Fields("wide"); len(fields) != 3 || h.devices["wide"].refused != 2 {
		t.Errorf("fields %q, refused %d: want 3 kept, 2 refused", fields, h.devices["wide"].refused)
	}
	for _, id := range []string{"p", "q", "r"} {
		h.Record(value(id, 1.0, t0))
	}
	if h.Series() != 5 {
		t.Errorf("%d series, want MaxSeries 5", h.Series())
	}
	if _, ok := h.Fields("r"); ok {
		if fields, _ := h.Fields("r"); len(fields) != 0 {
			t.Errorf("device r past MaxSeries has series %q", fields)
		}
	}
	h.Record(value("p", 2.0, t0.Add(time.Second)))
	if s := h.devices["p"].series[""]; s.full.total != 2 {
		t.Errorf("device p, within the bound, kept %d values, want 2", s.full.total)
	}
}

// The History follows a registry's value events, stamped by the
// registry's clock, and stops when cancelled.
func TestSubscribe(t *testing.T) {
	t.Parallel()
	clk := clocktest.NewFake(t0)
	reg := device.NewRegistry(clk.Now)
	if _, err := reg.Add(stub("sim.temperature")); err != nil {
		t.Fatal(err)
	}
	h := New(Options{})
	cancel := h.Subscribe(reg)
	for i := range 3 {
		reg.Publish("sim.temperature", map[string]any{"temperature": 20 + float64(i)}, time.Time{})
		clk.Advance(30 * time.Second)
	}
	cancel()
	reg.Publish("sim.temperature", map[string]any{"temperature": 99.0}, time.Time{})
	p, err := h.Query(Query{Device: "sim.temperature", Resolution: Minute})
	if err != nil {
		t.Fatal(err)
	}
	b := p.Buckets.(*NumberBuckets)
	wantT := []int64{t0.UnixMilli(), t0.Add(time.Minute).UnixMilli()}
	if p.Field != "temperature" || !slices.Equal(b.T, wantT) || !slices.Equal(b.N, []uint32{2, 1}) || !slices.Equal(b.Max, []float64{21, 22}) {
		t.Errorf("page %+v, buckets %+v: want minutes %v of 2 and 1 values, max 21 and 22", p, b, wantT)
	}
}

type stub string

func (s stub) Descriptor() device.Descriptor {
	return device.Descriptor{ID: string(s), Kind: device.KindSensor, Access: device.AccessRead, Risk: device.RiskLow}
}

// seriesBytes is the documented cost of a series at the default sizes
// (docs/configuration.md, "History"): 4096 samples of 16 bytes and 1536
// buckets of 48, 136 KiB.
const seriesBytes = 136 << 10

// A series costs what the documentation says, allocated with its first
// value and never more.
func TestSeriesMemory(t *testing.T) {
	if got := SeriesBytes(DefaultSamples, DefaultBuckets); got != seriesBytes {
		t.Fatalf("SeriesBytes = %d, want %d", got, seriesBytes)
	}
	const devices = 100
	h := New(Options{MaxSeries: devices})
	ids := make([]string, devices)
	for i := range ids {
		ids[i] = "dev." + string(rune('a'+i%26)) + string(rune('a'+i/26))
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for _, id := range ids {
		h.Record(value(id, 1.0, t0))
	}
	runtime.ReadMemStats(&after)
	perSeries := float64(after.TotalAlloc-before.TotalAlloc) / devices
	if perSeries < seriesBytes || perSeries > seriesBytes*1.01 {
		t.Errorf("a series allocated %.0f bytes, want %d within 1%%", perSeries, seriesBytes)
	}
	runtime.ReadMemStats(&before)
	for i := range 10_000 {
		h.Record(value(ids[i%devices], float64(i), t0.Add(time.Duration(i)*time.Second)))
	}
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 10_000*64 {
		t.Errorf("10 000 values of existing series allocated %d bytes", grew)
	}
}

// BenchmarkRecord is the cost Record adds to each value event, under the
// registry's lock: sim.temperature's object value into its series.
func BenchmarkRecord(b *testing.B) {
	h := New(Options{})
	e := value("sim.temperature", map[string]any{"temperature": 20.5}, t0)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		e.TS = t0.Add(time.Duration(i) * time.Millisecond)
		h.Record(e)
	}
}
