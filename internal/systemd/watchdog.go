package systemd

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-systemd/v22/daemon"
)

// Probe is one part the watchdog checks: Check returns nil once the part
// has shown progress, or an error when ctx ends first. Check must return
// by ctx's deadline.
type Probe struct {
	Name  string
	Check func(ctx context.Context) error
}

// WatchdogOptions configure a Watchdog.
type WatchdogOptions struct {
	// Interval is systemd's watchdog timeout; 0 reads WATCHDOG_USEC (and
	// WATCHDOG_PID) from the environment. Below zero disables it.
	Interval time.Duration
	// Probes are the parts that must all answer for WATCHDOG=1 to be sent.
	Probes []Probe
	// Summary, when set, is sent as STATUS= on each tick where it
	// changed, so that the status stays current without a loop of its own.
	// It is not called while a part is stuck (it may read that part's
	// state): STATUS= then says "watchdog: stuck: <parts>".
	Summary func() string
	Log     *slog.Logger
}

// Watchdog pets systemd's watchdog every half interval, but only when
// every probe has answered within a deadline shorter than that half: a
// wedged part stops the petting and systemd restarts the gateway. Parts
// that may hang for reasons outside the gateway (a device driver) must
// not be probed: their hangs already end in the device's fault state.
type Watchdog struct {
	n        *Notifier
	opt      WatchdogOptions
	interval time.Duration

	mu    sync.Mutex
	stuck []string
}

// NewWatchdog returns a Watchdog petting through n. A malformed
// WATCHDOG_USEC is an error; an absent one gives a disabled Watchdog.
func NewWatchdog(n *Notifier, opt WatchdogOptions) (*Watchdog, error) {
	if opt.Log == nil {
		opt.Log = slog.Default()
	}
	w := &Watchdog{n: n, opt: opt, interval: opt.Interval}
	if opt.Interval == 0 {
		d, err := daemon.SdWatchdogEnabled(false)
		if err != nil {
			return nil, fmt.Errorf("systemd watchdog: %w", err)
		}
		w.interval = d
	}
	return w, nil
}

// Interval is systemd's watchdog timeout; 0 when the watchdog is off.
func (w *Watchdog) Interval() time.Duration { return max(w.interval, 0) }

// Stuck returns the names of the parts that did not answer at the last
// tick, sorted; nil when all did (or before the first tick).
func (w *Watchdog) Stuck() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.stuck)
}

// Run ticks every half interval until ctx ends, and returns ctx's error.
// With the watchdog off it returns at once with nil.
func (w *Watchdog) Run(ctx context.Context) error {
	if w.Interval() == 0 {
		return nil
	}
	half := w.interval / 2
	w.opt.Log.Info("systemd watchdog on", "timeout", w.interval, "every", half,
		"probes", w.names(), "probe_deadline", probeDeadline(half))
	t := time.NewTicker(half)
	defer t.Stop()
	for {
		w.Tick(ctx)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

// probeDeadline leaves part of the half interval for sending, so that a
// slow but healthy tick still pets in time.
func probeDeadline(half time.Duration) time.Duration { return half * 3 / 5 }

// Tick runs the probes once: it pets when all answered, logs a change in
// which parts are stuck (once per change, not at every tick), and sends
// the summary as STATUS when it changed. It returns the stuck parts.
func (w *Watchdog) Tick(ctx context.Context) []string {
	half := w.interval / 2
	if half <= 0 {
		half = time.Second
	}
	pctx, cancel := context.WithTimeout(ctx, probeDeadline(half))
	stuck := runProbes(pctx, w.opt.Probes)
	cancel()
	if ctx.Err() != nil {
		return stuck
	}
	w.mu.Lock()
	changed := !slices.Equal(stuck, w.stuck)
	w.stuck = stuck
	w.mu.Unlock()
	switch {
	case changed && len(stuck) > 0:
		w.opt.Log.Error("watchdog: parts stuck; systemd's watchdog is not petted", "stuck", strings.Join(stuck, ","))
	case changed:
		w.opt.Log.Info("watchdog: every part answers again; petting systemd's watchdog")
	}
	if len(stuck) == 0 {
		if err := w.n.Watchdog(); err != nil {
			w.opt.Log.Warn("watchdog: pet failed", "err", err)
		}
	}
	status, ok := "watchdog: stuck: "+strings.Join(stuck, ", "), len(stuck) > 0
	if !ok && w.opt.Summary != nil {
		status, ok = w.summary(ctx, probeDeadline(half))
	}
	if ok {
		if err := w.n.Status(status); err != nil {
			w.opt.Log.Warn("watchdog: status", "err", err)
		}
	}
	return stuck
}

// summary calls Summary within d. The summary reads the parts' state: a
// part that wedges after its probe answered would wedge the watchdog with
// it, so a summary that takes longer is left behind (and the next tick's
// probe names the part). While parts are stuck Summary is not called.
func (w *Watchdog) summary(ctx context.Context, d time.Duration) (string, bool) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	line := make(chan string, 1) // buffered: a late summary never blocks
	go func() { line <- w.opt.Summary() }()
	select {
	case s := <-line:
		return s, true
	case <-ctx.Done():
		w.opt.Log.Warn("watchdog: the status summary did not answer in time", "within", d)
		return "", false
	}
}

func (w *Watchdog) names() []string {
	var out []string
	for _, p := range w.opt.Probes {
		out = append(out, p.Name)
	}
	return out
}

// runProbes runs every probe at once and returns, sorted, the names of
// those that did not answer nil before ctx ended; nil when all did. A
// probe that overruns ctx is left behind, not waited for.
func runProbes(ctx context.Context, probes []Probe) []string {
	type answer struct {
		name string
		ok   bool
	}
	answers := make(chan answer, len(probes)) // buffered: a late probe never blocks
	for _, p := range probes {
		go func() { answers <- answer{p.Name, p.Check(ctx) == nil} }()
	}
	healthy := map[string]bool{}
wait:
	for range probes {
		select {
		case a := <-answers:
			healthy[a.name] = a.ok
		case <-ctx.Done():
			break wait
		}
	}
	var stuck []string
	for _, p := range probes {
		if !healthy[p.Name] {
			stuck = append(stuck, p.Name)
		}
	}
	sort.Strings(stuck)
	return stuck
}
