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
// how long, the latest write behind its time, and when each rising edge
// was written (the guest's wall clock, as the values' timestamps).
type train struct {
	pulses          int
	elapsed, latest time.Duration
	rising          []time.Time
}

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
		ns, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return tr, fmt.Errorf("pulsegen's rising edges %q: %v", edges, err)
		}
		tr.rising = append(tr.rising, time.Unix(0, ns))
	}
	if len(tr.rising) != tr.pulses {
		return tr, fmt.Errorf("pulsegen made %d pulses and gave %d times", tr.pulses, len(tr.rising))
	}
	return tr, nil
}

// within counts the rising edges in (from, to].
func (tr train) within(from, to time.Time) int {
	n := 0
	for _, t := range tr.rising {
		if t.After(from) && !t.After(to) {
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

// kernelEdges is how many edges the kernel has reported on the counter
// id's line since boot: its interrupt's count in /proc/interrupts, which
// names the interrupt by the line's consumer (the device id). Edges
// written faster than the guest handles them are one interrupt, one
// event, as on a real controller: this, not the pulses written, is what
// the counter must count.
func (s *scenario) kernelEdges(id string) (int, error) {
	out, err := s.shell("grep ' " + id + "$' /proc/interrupts")
	if err != nil {
		return 0, err
	}
	fields := strings.Fields(out)
	if len(fields) < 2 || !strings.HasSuffix(fields[0], ":") {
		return 0, fmt.Errorf("no interrupt of %s in /proc/interrupts: %q", id, out)
	}
	n := 0
	for _, f := range fields[1:] { // one count per CPU, then the chip's columns
		c, err := strconv.Atoi(f)
		if err != nil {
			break
		}
		n += c
	}
	return n, nil
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

// counterTrain: 100 pulses at 20 Hz on bench.flow (0.5 l a pulse). The
// count grows by the edges the kernel reported, × 0.5 l, exactly (then
// with rate 0): 100 unless the guest merged some (logged). Every rate
// published is that of the train as pulsegen wrote it: the rising edges
// in the 1 s window that ends when the value was published, × 0.5 l,
// give or take the edges within delta of either end of the window (and
// less those the kernel merged). delta is 50 ms: the kernel stamps an
// edge when its interrupt runs, after pulsegen's write has returned and
// stamped it, and the value's time is read just after its rate; under
// TCG either can lag by tens of milliseconds when a vCPU stalls (a write
// 163 ms behind its time has been seen).
func (s *scenario) counterTrain() error {
	const n, perPulse, delta = 100, 0.5, 50 * time.Millisecond
	const window = time.Second
	start, err := s.countOf("bench.flow")
	if err != nil {
		return err
	}
	k0, err := s.kernelEdges("bench.flow")
	if err != nil {
		return err
	}
	m := s.rec.mark()
	tr, err := s.pulses(lineFlow, fmt.Sprintf("-n %d -period 50ms", n))
	if err != nil {
		return err
	}
	k1, err := s.kernelEdges("bench.flow")
	if err != nil {
		return err
	}
	merged := n - (k1 - k0)
	s.logf("pulsegen: %d pulses at 20 Hz in %v, the latest write %v behind its time; the kernel reported %d edges",
		tr.pulses, tr.elapsed, tr.latest, k1-k0)
	want := start + float64(k1-k0)*perPulse
	if _, err := s.rec.waitFor(s.ctx, m, notifyWait, openhal.NotifyValue, counterIs("bench.flow", want, 0)); err != nil {
		return fmt.Errorf("count %v l with rate 0 after the train: %w (published %v)", want, err, s.rec.values(m, "bench.flow"))
	}
	var judged []string
	for _, v := range s.rec.readings(m, "bench.flow") {
		c, _ := v.Value.(map[string]any)
		count, _ := c["count"].(float64)
		rate, _ := c["rate"].(float64)
		if count > want {
			return fmt.Errorf("count %v l, more than the kernel's %d edges make", count, k1-k0)
		}
		pulses := rate / perPulse * window.Seconds()
		low := tr.within(v.TS.Add(-window+delta), v.TS.Add(-delta)) - merged
		high := tr.within(v.TS.Add(-window-delta), v.TS.Add(delta))
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

// counterDebounce: 20 pulses on bench.wind (30 ms debounce), each rising
// edge ringing (up, down, up, back to back) and then held 150 ms: the
// kernel's debounce reports one edge a pulse, so the count is 20
// exactly once the rate is back at 0 (every edge taken by then). The
// guest's kernel debounces in software on its 4 ms tick (HZ=250), so
// 30 ms is a hold of 32 ms: pulsegen keeps every level at least 70 ms,
// even when it catches up after a stall, or a pulse would rightly be
// debounced away.
func (s *scenario) counterDebounce() error {
	start, err := s.countOf("bench.wind")
	if err != nil {
		return err
	}
	m := s.rec.mark()
	tr, err := s.pulses(lineWind, "-n 20 -period 300ms -high 150ms -gap 70ms -bounce")
	if err != nil {
		return err
	}
	s.logf("pulsegen: 20 ringing pulses in %v, the latest write %v behind its time", tr.elapsed, tr.latest)
	_, err = s.rec.waitFor(s.ctx, m, notifyWait, openhal.NotifyValue, func(p json.RawMessage) bool {
		return counterIs("bench.wind", start+20, 0)(p) || counterAbove("bench.wind", start+20)(p)
	})
	if err != nil {
		return fmt.Errorf("count %v with rate 0: %w (published %v)", start+20, err, s.rec.values(m, "bench.wind"))
	}
	vs := s.rec.values(m, "bench.wind")
	if last, _ := vs[len(vs)-1].(map[string]any); last["count"] != start+20 {
		return fmt.Errorf("bench.wind counted %v, want %v (the rings must not count): %v", last["count"], start+20, vs)
	}
	return nil
}

// counterDrops: the gateway stopped (SIGSTOP) while 400 pulses come on
// bench.pulses: the kernel keeps the newest 256 events and drops the
// rest. Resumed, the gateway reads the 256, sees the gap in the line's
// sequence numbers, counts every edge the kernel reported (its interrupt
// count: 400 unless the guest merged some) and logs exactly how many
// were dropped.
func (s *scenario) counterDrops() error {
	start, err := s.countOf("bench.pulses")
	if err != nil {
		return err
	}
	k0, err := s.kernelEdges("bench.pulses")
	if err != nil {
		return err
	}
	m, console := s.rec.mark(), s.g.Console().Len()
	script := "p=$(pidof gateway); kill -STOP $p; " + guestPulsegen + " -pull " + simAttr(linePulses, "pull") +
		" -n 400 -period 10ms; kill -CONT $p"
	out, err := s.shell(script)
	if err != nil {
		return fmt.Errorf("400 pulses with the gateway stopped: %q %v", out, err)
	}
	tr, err := parseTrain(out)
	if err != nil {
		return err
	}
	k1, err := s.kernelEdges("bench.pulses")
	if err != nil {
		return err
	}
	edges := k1 - k0
	s.logf("pulsegen: 400 pulses in %v with the gateway stopped, the latest write %v behind its time; the kernel reported %d edges",
		tr.elapsed, tr.latest, edges)
	if edges <= 256 {
		return fmt.Errorf("the kernel reported %d edges, too few to overflow its 256: the guest merged the train", edges)
	}
	if _, err := s.rec.waitFor(s.ctx, m, notifyWait, openhal.NotifyValue, counterIs("bench.pulses", start+float64(edges), -1)); err != nil {
		return fmt.Errorf("count %v: %w (published %v)", start+float64(edges), err, s.rec.values(m, "bench.pulses"))
	}
	ctx, cancel := context.WithTimeout(s.ctx, notifyWait)
	defer cancel()
	if err := s.g.WaitConsoleFrom(ctx, console, fmt.Sprintf("device=bench.pulses dropped=%d ", edges-256)); err != nil {
		return fmt.Errorf("the drop is not logged with its size (%d): %w", edges-256, err)
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
