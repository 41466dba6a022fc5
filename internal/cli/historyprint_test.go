package cli

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/openhal/gateway/openhal/gatewayext"
)

func TestParseWhen(t *testing.T) {
	now := time.Date(2026, 12, 6, 16, 0, 0, 0, time.UTC)
	local := func(s string) int64 {
		t, _ := time.ParseInLocation("2006-01-02 15:04", s, time.Local)
		return t.UnixMilli()
	}
	for _, tc := range []struct {
		in      string
		want    int64
		wantErr string
	}{
		{"30m", now.Add(-30 * time.Minute).UnixMilli(), ""},
		{"7d", now.Add(-7 * 24 * time.Hour).UnixMilli(), ""},
		{"1.5d", now.Add(-36 * time.Hour).UnixMilli(), ""},
		{"2026-12-06T15:00:00Z", time.Date(2026, 12, 6, 15, 0, 0, 0, time.UTC).UnixMilli(), ""},
		{"2026-12-06 15:00", local("2026-12-06 15:00"), ""},
		{"2026-12-06", local("2026-12-06 00:00"), ""},
		{"-1h", 0, "not a negative one"},
		{"yesterday", 0, "want a duration (30m, 2h, 7d) or a time"},
		{"d", 0, "want a duration"},
	} {
		got, err := parseWhen(tc.in, now)
		switch {
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("parseWhen(%q) = %v, want an error saying %q", tc.in, err, tc.wantErr)
		case tc.wantErr == "" && (err != nil || *got != tc.want):
			t.Errorf("parseWhen(%q) = %v, %v; want %d", tc.in, got, err, tc.want)
		}
	}
}

// The three outputs of a page of samples and of each kind of buckets.
func TestHistoryPrinter(t *testing.T) {
	at := time.Date(2026, 12, 6, 15, 4, 5, 0, time.UTC).UnixMilli()
	stamp := time.UnixMilli(at).Local().Format("2006-01-02 15:04:05.000")
	minute := time.UnixMilli(at).Local().Format("2006-01-02 15:04")
	samples := &gatewayext.HistoryPage{Device: "sim.temperature", Field: "temperature", Kind: gatewayext.HistoryNumber,
		Samples: &gatewayext.HistorySamples{T: []int64{at}, V: []any{20.5}}}
	bools := &gatewayext.HistoryPage{Device: "sim.led", Kind: gatewayext.HistoryBoolean,
		Samples: &gatewayext.HistorySamples{T: []int64{at}, V: []any{false}}}
	numBuckets := &gatewayext.HistoryPage{Device: "sim.fan", Kind: gatewayext.HistoryNumber,
		Buckets: &gatewayext.HistoryNumberBuckets{T: []int64{at}, N: []uint32{3}, Min: []float64{1}, Max: []float64{3}, Mean: []float64{2}}}
	boolBuckets := &gatewayext.HistoryPage{Device: "sim.led", Kind: gatewayext.HistoryBoolean,
		Buckets: &gatewayext.HistoryBooleanBuckets{T: []int64{at}, N: []uint32{4}, Mean: []float64{0.25}, Last: []bool{true}, Changes: []uint32{2}}}
	for _, tc := range []struct {
		name           string
		page           *gatewayext.HistoryPage
		unit           string
		json, csv, min bool
		want           string
	}{
		{"people, a number", samples, "Cel", false, false, false, stamp + "  temperature  20.5 °C\n"},
		{"people, a boolean", bools, "", false, false, false, stamp + "  false\n"},
		{"people, a number's minute", numBuckets, "%", false, false, true, minute + "  3 values, min 1 %, mean 2 %, max 3 %\n"},
		{"people, a boolean's minute", boolBuckets, "", false, false, true, minute + "  4 values, 25% true, last true, 2 changes\n"},
		{"csv", samples, "Cel", false, true, false, "time,device,field,value,unit\n2026-12-06T15:04:05.000Z,sim.temperature,temperature,20.5,Cel\n"},
		{"csv, a number's minute", numBuckets, "%", false, true, true, "time,device,field,n,min,mean,max,unit\n2026-12-06T15:04:05.000Z,sim.fan,,3,1,2,3,%\n"},
		{"csv, a boolean's minute", boolBuckets, "", false, true, true, "time,device,field,n,mean,last,changes\n2026-12-06T15:04:05.000Z,sim.led,,4,0.25,true,2\n"},
		{"json, false kept", bools, "", true, false, false, `{"device":"sim.led","t":` + itoa(at) + `,"ts":"2026-12-06T15:04:05.000Z","value":false}` + "\n"},
		{"json, a minute", numBuckets, "%", true, false, true, `{"device":"sim.fan","t":` + itoa(at) + `,"ts":"2026-12-06T15:04:05.000Z","n":3,"min":1,"max":3,"mean":2,"unit":"%"}` + "\n"},
	} {
		var out bytes.Buffer
		p := newHistoryPrinter(&out, tc.json, tc.csv, tc.min)
		if err := p.page(tc.page, tc.unit); err != nil {
			t.Fatal(err)
		}
		if err := p.done(); err != nil {
			t.Fatal(err)
		}
		if out.String() != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, out.String(), tc.want)
		}
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
