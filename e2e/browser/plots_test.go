package browser

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// plotOf is the selector of the plot of series key ("sim.fan",
// "sim.temperature.temperature"); its box (the first div) holds the
// uPlot instance drawn (.uplot) and the series it shows (.series).
func plotOf(key string) chromedp.CSS {
	return chromedp.CSS(fmt.Sprintf(`[data-test="plot"][data-series=%q]`, key))
}

// waitJS waits until the JavaScript expression expr, evaluated in the
// page every 20 ms, gives a string that matches pattern (JavaScript
// syntax), and returns it.
func (p *page) waitJS(expr, pattern string) string {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, waitLong+time.Second)
	defer cancel()
	fn := fmt.Sprintf(`(pattern) => { let s; try { s = String(%s); } catch { return null; } return new RegExp(pattern).test(s) ? [s] : null; }`, expr)
	got, err := chromedp.Run(ctx, chromedp.PollFunction[[]string](fn,
		chromedp.WithPollingArgs(pattern),
		chromedp.WithPollingInterval(20*time.Millisecond),
		chromedp.WithPollingTimeout(waitLong)))
	if err != nil {
		now, _ := chromedp.Run(context.WithoutCancel(p.ctx), chromedp.Evaluate[*string](fmt.Sprintf(`(() => { try { return String(%s); } catch (e) { return "threw " + e; } })()`, expr)))
		shown := "nothing"
		if now != nil {
			shown = fmt.Sprintf("%q", *now)
		}
		p.t.Fatalf("browser: %s never matched /%s/ (%v); it gives %s", expr, pattern, err, shown)
	}
	return got[0]
}

// uplotOf is the JavaScript expression of the uPlot instance of series key.
func uplotOf(key string) string {
	return fmt.Sprintf(`document.querySelector(%q).querySelector("div").uplot`, string(plotOf(key)))
}

// drawn is what drawKnown found in one column of a plot's canvas.
type drawn struct {
	Rows []float64 `json:"rows"` // the rows, in canvas pixels, drawn in the series' colour
	High float64   `json:"high"` // the row of the first value
	Mid  float64   `json:"mid"`  // the row halfway between the two values
}

// drawKnown draws, with the options plots.js gives series key, a value
// hi 60 s ago that became lo 30 s ago, and returns the rows of the column
// 45 s ago that carry the series' colour: a step holds hi there, a line
// is halfway down.
const drawKnown = `async (key, hi, lo) => {
	const m = await import("/plots.js");
	const s = document.querySelector('[data-test="plot"][data-series="' + key + '"]').querySelector("div").series;
	const div = document.createElement("div");
	document.body.append(div);
	const now = Date.now();
	const u = new uPlot(m.options(s, 600), [[now - 60000, now - 30000, now], [hi, lo, lo]], div);
	await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
	const probe = document.createElement("canvas").getContext("2d");
	probe.fillStyle = getComputedStyle(document.documentElement).getPropertyValue("--accent").trim();
	const c = probe.fillStyle; // "#rrggbb"
	const want = [1, 3, 5].map((i) => parseInt(c.slice(i, i + 2), 16));
	const x = Math.round(u.valToPos(now - 45000, "x", true));
	const px = u.ctx.getImageData(x, 0, 1, u.ctx.canvas.height).data;
	const rows = [];
	for (let y = 0; y * 4 < px.length; y++) {
		const d = Math.abs(px[y * 4] - want[0]) + Math.abs(px[y * 4 + 1] - want[1]) + Math.abs(px[y * 4 + 2] - want[2]);
		if (px[y * 4 + 3] > 128 && d < 90) rows.push(y);
	}
	const out = { rows, high: u.valToPos(hi, "y", true), mid: u.valToPos((hi + lo) / 2, "y", true) };
	u.destroy();
	div.remove();
	return out;
}`

// TestPlotSteps: a PWM duty written 40 then 0 is plotted as a step (40
// held until the 0), not a ramp between them; a sensor stays a line. The
// fan's plot takes both writes into the data it draws, and the drawing
// is checked in the canvas: the plot's own options, given a 40 that
// became 0 30 s later, colour the column between at 40, where a ramp
// would be at 20; the temperature's at the midpoint.
func TestPlotSteps(t *testing.T) {
	t.Parallel()
	g := newBench(t)
	admin := g.adminToken(t)
	c := g.dial(t, admin)
	p := logIn(t, g, admin)
	p.do(chromedp.WaitVisible(plotOf("sim.fan")), chromedp.WaitVisible(plotOf("sim.temperature.temperature")))
	for _, v := range []float64{40, 0} {
		if _, err := c.Write(context.Background(), "sim.fan", v, "browser test"); err != nil {
			t.Fatalf("write sim.fan %v: %v", v, err)
		}
	}
	// The last point is the 0 drawn on to now.
	p.waitJS(uplotOf("sim.fan")+`.data[1].join(",")`, `(^|,)40,0,0$`)

	for _, tc := range []struct {
		key    string
		hi, lo float64
		steps  bool
	}{
		{"sim.fan", 40, 0, true},
		{"sim.temperature.temperature", 30, 10, false},
	} {
		ctx, cancel := context.WithTimeout(p.ctx, waitLong)
		d, err := chromedp.Run(ctx, chromedp.Evaluate[drawn](fmt.Sprintf(`(%s)(%q, %v, %v)`, drawKnown, tc.key, tc.hi, tc.lo), chromedp.EvalAwaitPromise))
		cancel()
		if err != nil {
			t.Fatalf("draw %s: %v", tc.key, err)
		}
		want, other, shape := d.High, d.Mid, "a step (held at the first value)"
		if !tc.steps {
			want, other, shape = d.Mid, d.High, "a line (halfway)"
		}
		if len(d.Rows) == 0 {
			t.Fatalf("%s: nothing drawn in the column between the two values", tc.key)
		}
		for _, y := range d.Rows {
			if math.Abs(y-want) > 3 {
				t.Errorf("%s: drawn at row %v between the two values (rows %v); want %s at row %.0f, not at %.0f", tc.key, y, d.Rows, shape, want, other)
				break
			}
		}
	}
}

// TestPlotLooks: each plot is titled with its device's label and its
// unit as people read it ("Temperature (°C)", not
// sim.temperature.temperature and Cel); the y-axis carries the unit; the
// time axis of a gateway just started (a few ms of history) is labelled
// with round seconds ("16:05:30"), not ":28.200 :28.400"; the bench
// shows °C, and no Cel anywhere.
func TestPlotLooks(t *testing.T) {
	t.Parallel()
	g := newBench(t)
	admin := g.adminToken(t)
	p := logIn(t, g, admin)
	for key, title := range map[string]string{
		"sim.temperature.temperature": "Temperature (°C)",
		"sim.fan":                     "Fan (%)",
		"sim.led":                     "LED",
	} {
		p.waitText(chromedp.CSS(string(plotOf(key))+` [data-test="plot-title"]`), "^"+regexp.QuoteMeta(title)+"$")
	}
	p.waitJS(uplotOf("sim.temperature.temperature")+`.axes[1].label`, "^°C$")
	p.waitJS(uplotOf("sim.fan")+`.axes[1].label`, "^%$")

	ticks := p.waitJS(uplotOf("sim.fan")+`.axes[0]._values.join(" ")`, `^\d\d:\d\d:\d\d( \d\d:\d\d:\d\d)+$`)
	splits := eval[[]float64](p, uplotOf("sim.fan")+`.axes[0]._splits`)
	for i, s := range splits {
		if math.Mod(s, 1000) != 0 || (i > 0 && splits[i]-splits[i-1] != splits[1]-splits[0]) {
			t.Errorf("time ticks at %v (%s): want round seconds, evenly spaced", splits, ticks)
			break
		}
	}
	t.Logf("time axis: %s", ticks)

	p.screenshotsOf("plots", chromedp.CSS(`.plots`))

	p.waitText(deviceHook("sim.temperature", "value"), `^temperature -?\d+(\.\d+)? °C$`)
	if eval[bool](p, `document.body.innerText.includes("Cel")`) {
		t.Errorf("the page shows a unit as Cel: %s", eval[string](p, `document.body.innerText`))
	}
}
