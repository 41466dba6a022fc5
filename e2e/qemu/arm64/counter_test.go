package arm64_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/openhal/gateway/e2e/binaries"
	"github.com/openhal/gateway/halclient"
	"github.com/openhal/gateway/openhal"
)

// The counters of gatewayYAML sit on gpio-sim's unnamed lines 5 to 7,
// addressed by chip label and offset (gwsim:5...); pulsegen drives them.
const (
	lineFlow   = 5 // bench.flow: 0.5 l a pulse
	lineWind   = 6 // bench.wind: 30 ms debounce
	linePulses = 7 // bench.pulses: plain pulses, for the kernel's dropped edges
)

const guestPulsegen = "/pulsegen"

// pulsegen is the guest's pulse generator (e2e/qemu/pulsegen), built for
// arm64.
func pulsegen(t *testing.T) []byte {
	t.Helper()
	bin := binaries.Build(t, binaries.Program{Pkg: "./e2e/qemu/pulsegen",
		Env: []string{"GOOS=linux", "GOARCH=arm64", "CGO_ENABLED=0"}})
	b, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestMain(m *testing.M) {
	code := m.Run()
	binaries.Cleanup()
	os.Exit(code)
}

// train is what pulsegen said of the train it made: how many pulses, in
// how long, the latest write behind its time, and when the kernel may
// have stamped each rising edge (the guest's wall clock, as the values'
// timestamps).
type train struct {
	pulses          int
	elapsed, latest time.Duration
	rising          []span
}

// span is when an edge was stamped: at or after from, at or before to.
type span struct{ from, to time.Time }

// pulses runs pulsegen in the guest on line's pull attribute with args,
// and parses its report.
func (s *scenario) pulses(line int, args string) (train, error) {
	out, err := s.shell(guestPulsegen + " -pull " + simAttr(line, "pull") + " " + args)
	if err != nil {
		return train{}, fmt.Errorf("pulsegen %s: %q %v", args, out, err)
	}
	return parseTrain(out)
}

func parseTrain(out string) (train, error) {
	var tr train
	summary, edges, _ := strings.Cut(strings.TrimSpace(out), "\n")
	var elapsed, late string
	if _, err := fmt.Sscanf(summary, "pulses %d elapsed %s late %s", &tr.pulses, &elapsed, &late); err != nil {
		return tr, fmt.Errorf("pulsegen said %q: %v", out, err)
	}
	tr.elapsed, _ = time.ParseDuration(elapsed)
	tr.latest, _ = time.ParseDuration(late)
	for _, f := range strings.Fields(strings.TrimPrefix(edges, "rising")) {
		a, b, _ := strings.Cut(f, "-")
		from, err1 := strconv.ParseInt(a, 10, 64)
		to, err2 := strconv.ParseInt(b, 10, 64)
		if err1 != nil || err2 != nil || to < from {
			return tr, fmt.Errorf("pulsegen's rising edge %q", f)
		}
		tr.rising = append(tr.rising, span{time.Unix(0, from), time.Unix(0, to)})
	}
	if len(tr.rising) != tr.pulses {
		return tr, fmt.Errorf("pulsegen made %d pulses and gave %d times", tr.pulses, len(tr.rising))
	}
	return tr, nil
}

// surely counts the rising edges stamped in (from, to] whenever in
// their span; maybe those that may have been.
func (tr train) surely(from, to time.Time) int {
	n := 0
	for _, e := range tr.rising {
		if e.from.After(from) && !e.to.After(to) {
			n++
		}
	}
	return n
}

func (tr train) maybe(from, to time.Time) int {
	n := 0
	for _, e := range tr.rising {
		if e.to.After(from) && !e.from.After(to) {
			n++
		}
	}
	return n
}

// readings returns id's hal/value notifications from index from on.
func (r *recorder) readings(from int, id string) []openhal.ValueResult {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []openhal.ValueResult
	for _, n := range r.notes[from:] {
		var v openhal.ValueResult
		if n.Method == openhal.NotifyValue && json.Unmarshal(n.Params, &v) == nil && v.Device == id {
			out = append(out, v)
		}
	}
	return out
}

// countOf reads a counter's count now.
func (s *scenario) countOf(id string) (float64, error) {
	v, err := s.conn.Read(s.ctx, id, 0)
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", id, err)
	}
	c, _ := v.Value.(map[string]any)["count"].(float64)
	return c, nil
}

// counterIs matches a hal/value of id whose count (and rate, unless
// negative) is want.
func counterIs(id string, count, rate float64) func(json.RawMessage) bool {
	return func(p json.RawMessage) bool {
		var v openhal.ValueResult
		if json.Unmarshal(p, &v) != nil || v.Device != id {
			return false
		}
		m, _ := v.Value.(map[string]any)
		return m["count"] == count && (rate < 0 || m["rate"] == rate)
	}
}

// counterAbove matches a hal/value of id whose count is above count.
func counterAbove(id string, count float64) func(json.RawMessage) bool {
	return func(p json.RawMessage) bool {
		var v openhal.ValueResult
		if json.Unmarshal(p, &v) != nil || v.Device != id {
			return false
		}
		m, _ := v.Value.(map[string]any)
		c, _ := m["count"].(float64)
		return c > count
	}
}

// counterTrain: 100 pulses at 20 Hz on bench.flow (0.5 l a pulse),
// each one handled by the kernel before the next (pulsegen -irq): the
// count grows by 50 l exactly, and then the rate is 0. Every rate
// published is that of the train as it was: the rising edges the kernel
// stamped in the 1 s window that ends when the value was published,
// × 0.5 l. pulsegen says when each edge may have been stamped (from its
// write to its interrupt thread's run, which a stalled vCPU of a loaded
// host puts off by up to seconds), so the rate must lie between the
// edges surely in the window and those maybe in it, widened by delta
// either side: 20 ms for the value's time, read on another clock just
// after its rate.
func (s *scenario) counterTrain() error {
	const n, perPulse, delta = 100, 0.5, 20 * time.Millisecond
	const window = time.Second
	start, err := s.countOf("bench.flow")
	if err != nil {
		return err
	}
	m := s.rec.mark()
	tr, err := s.pulses(lineFlow, fmt.Sprintf("-n %d -period 50ms -irq bench.flow", n))
	if err != nil {
		return err
	}
	s.logf("pulsegen: %d pulses at 20 Hz in %v, the latest write %v behind its time", tr.pulses, tr.elapsed, tr.latest)
	want := start + n*perPulse
	if _, err := s.rec.waitFor(s.ctx, m, notifyWait, openhal.NotifyValue, counterIs("bench.flow", want, 0)); err != nil {
		return fmt.Errorf("count %v l with rate 0 after the train: %w (published %v)", want, err, s.rec.values(m, "bench.flow"))
	}
	var judged []string
	for _, v := range s.rec.readings(m, "bench.flow") {
		c, _ := v.Value.(map[string]any)
		count, _ := c["count"].(float64)
		rate, _ := c["rate"].(float64)
		if count > want {
			return fmt.Errorf("count %v l, more than the %d pulses made", count, n)
		}
		pulses := rate / perPulse * window.Seconds()
		low := tr.surely(v.TS.Add(-window+delta), v.TS.Add(-delta))
		high := tr.maybe(v.TS.Add(-window-delta), v.TS.Add(delta))
		if pulses < float64(low) || pulses > float64(high) {
			return fmt.Errorf("at %s rate %v l/s (%v pulses in the window), want %d to %d: the edges written in the window",
				v.TS.Format("15:04:05.000"), rate, pulses, low, high)
		}
		judged = append(judged, fmt.Sprintf("%v in [%d,%d]", pulses, low, high))
	}
	if len(judged) < 4 {
		return fmt.Errorf("only %d values published: %v", len(judged), judged)
	}
	s.logf("bench.flow: pulses a window, published and as written: %s", strings.Join(judged, ", "))
	return nil
}

// counterDebounce: 10 closings of a contact that rings (up, down, up,
// written back to back) on bench.wind, counted on both edges under a
// 30 ms debounce: each closing counts one, each opening one, the rings
// nothing. Each level is held until the gateway has published its edge,
// so that the kernel's debounce (in software, on its 4 ms tick: 30 ms is
// a hold of 32 ms) is judged on the rings alone, whatever the guest's
// stalls do to the time between two steps.
func (s *scenario) counterDebounce() error {
	start, err := s.countOf("bench.wind")
	if err != nil {
		return err
	}
	pull := simAttr(lineWind, "pull")
	for k := 1; k <= 10; k++ {
		for _, step := range []struct {
			words string
			count float64
		}{{"pull-up,pull-down,pull-up", start + float64(2*k-1)}, {"pull-down", start + float64(2*k)}} {
			m := s.rec.mark()
			if out, err := s.shell(guestPulsegen + " -pull " + pull + " -write " + step.words); err != nil || out != "" {
				return fmt.Errorf("write %s: %q %v", step.words, out, err)
			}
			_, err := s.rec.waitFor(s.ctx, m, notifyWait, openhal.NotifyValue, func(p json.RawMessage) bool {
				return counterIs("bench.wind", step.count, -1)(p) || counterAbove("bench.wind", step.count)(p)
			})
			if err != nil {
				return fmt.Errorf("closing %d, %s: count %v: %w", k, step.words, step.count, err)
			}
			vs := s.rec.values(m, "bench.wind")
			if last, _ := vs[len(vs)-1].(map[string]any); last["count"] != step.count {
				return fmt.Errorf("closing %d, %s: counted %v, want %v (a ring counted): %v", k, step.words, last["count"], step.count, vs)
			}
		}
	}
	return nil
}

// counterDrops: the gateway stopped (SIGSTOP) while 400 pulses come on
// bench.pulses, each handled by the kernel before the next (pulsegen
// -irq): the kernel keeps the newest 256 events and drops 144. Resumed,
// the gateway reads the 256, sees the gap in the line's sequence
// numbers, counts all 400 and logs the 144.
func (s *scenario) counterDrops() error {
	start, err := s.countOf("bench.pulses")
	if err != nil {
		return err
	}
	m, console := s.rec.mark(), s.g.Console().Len()
	script := "p=$(pidof gateway); kill -STOP $p; " + guestPulsegen + " -pull " + simAttr(linePulses, "pull") +
		" -n 400 -period 10ms -irq bench.pulses; kill -CONT $p"
	out, err := s.shell(script)
	if err != nil {
		return fmt.Errorf("400 pulses with the gateway stopped: %q %v", out, err)
	}
	tr, err := parseTrain(out)
	if err != nil {
		return err
	}
	s.logf("pulsegen: 400 pulses in %v with the gateway stopped, the latest write %v behind its time", tr.elapsed, tr.latest)
	if _, err := s.rec.waitFor(s.ctx, m, notifyWait, openhal.NotifyValue, counterIs("bench.pulses", start+400, -1)); err != nil {
		return fmt.Errorf("count %v: %w (published %v)", start+400, err, s.rec.values(m, "bench.pulses"))
	}
	ctx, cancel := context.WithTimeout(s.ctx, notifyWait)
	defer cancel()
	if err := s.g.WaitConsoleFrom(ctx, console, "device=bench.pulses dropped=144 "); err != nil {
		return fmt.Errorf("the drop is not logged with its size: %w", err)
	}
	return nil
}

// counterRestart: a clean stop (SIGTERM) writes bench.flow's count to
// the state directory, and the gateway started again serves it. It ends
// the scenario: the connection it leaves is to the new gateway.
func (s *scenario) counterRestart() error {
	before, err := s.conn.Read(s.ctx, "bench.flow", 0)
	if err != nil {
		return fmt.Errorf("read bench.flow: %w", err)
	}
	console := s.g.Console().Len()
	if _, err := s.shell("kill -TERM $(pidof gateway)"); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(s.ctx, time.Minute)
	defer cancel()
	if err := s.g.WaitConsoleFrom(ctx, console, "init: gateway exited with status 0"); err != nil {
		return fmt.Errorf("clean stop: %w", err)
	}
	count, _ := before.Value.(map[string]any)["count"].(float64)
	want := fmt.Sprintf(`{"total":%d}`, int(count/0.5))
	kept, err := s.shell("cat /var/lib/gateway/counters/bench.flow.json")
	if err != nil || strings.TrimSpace(kept) != want {
		return fmt.Errorf("kept at the stop: %q %v, want %s (the count read before it, %v l)", kept, err, want, count)
	}
	console = s.g.Console().Len()
	if _, err := s.shell("setsid /gateway run --config /etc/gateway/gateway.yaml </dev/null >/dev/console 2>&1 &"); err != nil {
		return err
	}
	if err := s.g.WaitConsoleFrom(ctx, console, "msg=listening transport=tcp", "Kernel panic"); err != nil {
		return fmt.Errorf("second start: %w", err)
	}
	token, err := s.shell("cat /var/lib/gateway/admin.token")
	if err != nil {
		return err
	}
	url := fmt.Sprintf("tcp://127.0.0.1:%d", s.g.HostPort(guestHALPort))
	conn, err := halclient.Dial(ctx, url, halclient.Options{Token: strings.TrimSpace(token), ClientName: "qemu-arm64-test"})
	if err != nil {
		return fmt.Errorf("HAL to the second gateway: %w", err)
	}
	defer conn.Close()
	after, err := conn.Read(ctx, "bench.flow", 0)
	if err != nil {
		return fmt.Errorf("read bench.flow after the restart: %w", err)
	}
	if fmt.Sprint(after.Value) != fmt.Sprint(before.Value) {
		return fmt.Errorf("bench.flow after the restart %v, before %v", after.Value, before.Value)
	}
	s.logf("bench.flow %v before the stop, %v after", before.Value, after.Value)
	return nil
}
