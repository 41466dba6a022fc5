package browser

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/openhal/gateway/device"
)

// senml are units a descriptor may carry: RFC 8428's and RFC 8798's
// registered SenML units, and a few that are not (printed as they are).
var senml = []string{
	"m", "kg", "g", "s", "A", "K", "cd", "mol", "Hz", "rad", "sr", "N", "Pa", "J", "W", "C", "V", "F", "Ohm",
	"S", "Wb", "T", "H", "Cel", "lm", "lx", "Bq", "Gy", "Sv", "kat", "m2", "m3", "l", "m/s", "m/s2", "m3/s",
	"l/s", "W/m2", "cd/m2", "bit", "bit/s", "lat", "lon", "pH", "dB", "dBW", "Bspl", "count", "/", "%", "%RH",
	"%EL", "EL", "1/s", "1/min", "beat/min", "beats", "S/m", "B", "VA", "VAs", "var", "vars", "J/m", "kg/m3",
	"deg", "NTU", "ms", "min", "h", "MHz", "kW", "kVA", "kvar", "Ah", "Wh", "kWh", "varh", "kvarh", "kVAh",
	"Wh/km", "KiB", "GB", "Mbit/s", "B/s", "MB/s", "mV", "mA", "dBm", "ug/m3", "mm/h", "m/h", "ppm", "/100",
	"/1000", "hPa", "mm", "cm", "km", "km/h", "gps", "us", "uS/cm", "rpm", "", "furlong",
}

// TestUnitSymbols: format.js's unitSymbol, which the console shows every
// unit through, reads each unit as device.UnitSymbol does (the CLI's and
// Home Assistant's): the JS copy of the table is the Go one.
func TestUnitSymbols(t *testing.T) {
	t.Parallel()
	g := newBench(t)
	p := newPage(t)
	p.do(chromedp.Navigate(g.url()), chromedp.WaitVisible(hook("login-token")))
	got := evalAwait[map[string]string](p, fmt.Sprintf(`import("/format.js").then((m) => Object.fromEntries(%s.map((u) => [u, m.unitSymbol(u)])))`, jsonOf(senml)))
	for _, u := range senml {
		if want := device.UnitSymbol(u); got[u] != want {
			t.Errorf("unitSymbol(%q) = %q in the console; device.UnitSymbol says %q", u, got[u], want)
		}
	}
}

// TestTimeTicks: ticks.js puts the time axis's ticks at round local
// times, as many as fit, labelled for the span shown; a span shorter than
// a minute (a gateway just started) is widened to one.
func TestTimeTicks(t *testing.T) {
	t.Parallel()
	g := newBench(t)
	p := newPage(t)
	p.do(chromedp.Navigate(g.url()), chromedp.WaitVisible(hook("login-token")))
	end := time.Date(2026, 12, 6, 16, 5, 28, 400e6, time.Local).UnixMilli()
	for _, tc := range []struct {
		name     string
		span     time.Duration
		step     time.Duration
		label    string // every label matches
		contains string // a label is this
	}{
		{"200 ms after a restart", 200 * time.Millisecond, 10 * time.Second, `^\d\d:\d\d:\d\d$`, "16:05:20"},
		{"10 minutes", 10 * time.Minute, 2 * time.Minute, `^\d\d:\d\d$`, "16:04"},
		{"6 hours", 6 * time.Hour, time.Hour, `^(\d\d?\s\w{3}\s)?\d\d:\d\d$`, "16:00"},
		{"a day and a half", 36 * time.Hour, 6 * time.Hour, `^(\d\d?\s\w{3}\s)?\d\d:\d\d$`, "6 Dec 00:00"},
		{"10 days", 240 * time.Hour, 2 * 24 * time.Hour, `^\d\d?\s\w{3}$`, "5 Dec"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			expr := fmt.Sprintf(`import("/ticks.js").then((m) => {
				const [min, max] = m.timeRange(%d, %d);
				const step = m.timeStep(max - min, 600 / 90);
				const ticks = m.timeSplits(min, max, step);
				return { step, ticks, labels: m.timeLabels(ticks, step) };
			})`, end-tc.span.Milliseconds(), end)
			got := evalAwait[struct {
				Step   int64    `json:"step"`
				Ticks  []int64  `json:"ticks"`
				Labels []string `json:"labels"`
			}](p, expr)
			if got.Step != tc.step.Milliseconds() {
				t.Errorf("step %d ms; want %s", got.Step, tc.step)
			}
			_, off := time.UnixMilli(end).Zone()
			found := false
			for i, tick := range got.Ticks {
				if (tick+int64(off)*1000)%got.Step != 0 {
					t.Errorf("tick %s is not a round %s of local time", time.UnixMilli(tick), tc.step)
				}
				if !regexp.MustCompile(tc.label).MatchString(got.Labels[i]) {
					t.Errorf("label %q; want /%s/", got.Labels[i], tc.label)
				}
				found = found || got.Labels[i] == tc.contains
			}
			if len(got.Ticks) < 2 || !found {
				t.Errorf("labels %q: want at least 2, one of them %q", got.Labels, tc.contains)
			}
		})
	}
}

// evalAwait evaluates a JavaScript expression whose value is a promise,
// and returns what it resolves to.
func evalAwait[T any](p *page, expr string) T {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, waitLong)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		p.t.Fatalf("browser: evaluate %s: %v", expr, err)
	}
	return v
}

// jsonOf is v as JSON, for a JavaScript expression.
func jsonOf(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only the test's own literals come here
	}
	return string(b)
}
