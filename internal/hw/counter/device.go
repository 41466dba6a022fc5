package counter

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/clock"
	"github.com/openhal/gateway/internal/hw/gpioevent"
)

// Defaults and bounds of a Device.
const (
	// DefaultInterval is how often a Device publishes while pulses come,
	// unless its Opts say otherwise.
	DefaultInterval = time.Second
	// SaveEvery is how often, at most, a Device writes its total to its
	// file while pulses keep coming. A counter that falls quiet writes
	// it once its rate is back at 0 (a window and an interval after the
	// last pulse), and a clean stop writes it too. So a kill -9 or a
	// power cut loses the pulses since the last write: at most a minute
	// of them while pulses come, none once the counter has been quiet
	// for a window and an interval.
	SaveEvery = time.Minute
	// LineBuffer is how many events the kernel is asked to keep for a
	// counter that has fallen behind (12 KiB of kernel memory): a stall
	// of 256 ms at 1 kHz. Past it the kernel drops the oldest; the
	// line's sequence numbers say how many, and they are counted, but
	// without their times they are missing from that window's rate.
	LineBuffer = 256

	retryDelay = time.Second // before requesting a failed line again
	readBatch  = 64          // events taken per read
)

// Opts configures a Device.
type Opts struct {
	// PerPulse is how much of the device's unit one pulse is (a flow
	// meter's litres per pulse): count and rate are scaled by it. 0
	// counts pulses.
	PerPulse float64
	// Interval is how often count and rate are published while pulses
	// come; 0 means DefaultInterval.
	Interval time.Duration
	// Window is the rate's window; 0 means DefaultWindow.
	Window time.Duration
	// File is where the total is kept across restarts (replaced whole
	// and synced, see Save); "" keeps it nowhere.
	File string
	// SaveEvery overrides the package's SaveEvery (tests shorten it).
	SaveEvery time.Duration
}

// Device is a counter device: the pulses on one GPIO line, as the kernel
// reports their edges with its timestamps, published as an object
// {count, rate}: the total (scaled by PerPulse) and the pulses per second
// over the last Window (scaled likewise).
//
// Every edge the line reports is a pulse: the line is requested for the
// edges to count (rising, falling or both), and its debounce, if any, is
// the kernel's, so what reaches the Device has been debounced already.
// Edges the kernel dropped because the Device fell behind are counted
// from the line's sequence numbers, logged, and missing from the rate of
// the window they fell in.
//
// Run publishes the kept total when it starts, and then once every
// Interval while pulses come, until the rate has been published at 0: a
// quiet counter wakes nothing. The total is written to File at most
// every SaveEvery while pulses come, when they stop, and when Run ends.
// A line whose reads fail puts the Device in fault; it is requested
// again every second until that works, and the edges in between are not
// counted (the kernel keeps none for a line nobody holds).
type Device struct {
	desc  device.Descriptor
	open  func() (gpioevent.Source, error)
	opts  Opts
	clk   clock.Clock
	log   *slog.Logger
	tally *Tally
	retry time.Duration

	mu      sync.Mutex
	src     gpioevent.Source     // nil between a failed line and its new request
	now     func() time.Duration // the clock of the line's events
	lastSeq uint32               // LineSeqno of the last event read from src
	dropped uint64               // edges the kernel dropped, since NewDevice
	done    bool                 // Run has ended or Close was called

	saveMu sync.Mutex
	onDisk uint64 // the total last written (or loaded)
}

var (
	_ device.Reader = (*Device)(nil)
	_ device.Runner = (*Device)(nil)
)

// NewDevice loads the total kept in opts.File, requests the line with
// open, and returns the Device. A kept file that cannot be read is moved
// aside to File.bad (logged), and the count starts from 0. open is called
// again when the line fails.
func NewDevice(desc device.Descriptor, open func() (gpioevent.Source, error), opts Opts, clk clock.Clock, log *slog.Logger) (*Device, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	switch {
	case math.IsNaN(opts.PerPulse) || math.IsInf(opts.PerPulse, 0) || opts.PerPulse < 0:
		return nil, fmt.Errorf("counter %s: per pulse %v: want a finite number, 0 or more", desc.ID, opts.PerPulse)
	case opts.Interval < 0 || opts.Window < 0 || opts.SaveEvery < 0:
		return nil, fmt.Errorf("counter %s: a negative interval, window or save period", desc.ID)
	}
	opts.Interval = orDefault(opts.Interval, DefaultInterval)
	opts.Window = orDefault(opts.Window, DefaultWindow)
	opts.SaveEvery = orDefault(opts.SaveEvery, SaveEvery)
	log = log.With("device", desc.ID)
	total, err := loadKept(opts.File, log)
	if err != nil {
		return nil, fmt.Errorf("counter %s: %w", desc.ID, err)
	}
	tally, err := New(total, 0, opts.Window)
	if err != nil {
		return nil, fmt.Errorf("counter %s: %w", desc.ID, err)
	}
	src, err := open()
	if err != nil {
		return nil, err
	}
	return &Device{
		desc: desc, open: open, opts: opts, clk: clk, log: log, tally: tally, retry: retryDelay,
		src: src, now: src.Now, onDisk: total,
	}, nil
}

func orDefault(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

// loadKept reads the total kept at path, making its folder if needed. A
// file that is not a kept total is moved aside, so that the next save
// does not destroy what an operator may want to look at.
func loadKept(path string, log *slog.Logger) (uint64, error) {
	if path == "" {
		return 0, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return 0, fmt.Errorf("make the folder of the kept count: %w", err)
	}
	total, err := Load(path)
	if err == nil {
		return total, nil
	}
	bad := path + ".bad"
	if rerr := os.Rename(path, bad); rerr != nil {
		return 0, fmt.Errorf("%w (and it could not be moved aside: %v)", err, rerr)
	}
	log.Error("the kept count is unreadable: counting from 0, the file moved aside", "err", err, "moved_to", bad)
	return 0, nil
}

// Descriptor implements device.Device.
func (d *Device) Descriptor() device.Descriptor { return d.desc }

// Read returns the count and the rate now. It reads no hardware: the
// edges are counted as they come.
func (d *Device) Read(ctx context.Context) (device.Reading, error) {
	if err := ctx.Err(); err != nil {
		return device.Reading{}, err
	}
	return device.Reading{Value: d.value(d.reading()), TS: d.clk.Now()}, nil
}

// Close releases the line. The total is written by Run when it ends.
func (d *Device) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.done = true
	return d.releaseLocked()
}

func (d *Device) releaseLocked() error {
	if d.src == nil {
		return nil
	}
	err := d.src.Close()
	d.src = nil
	return err
}

// reading is the total and the rate at the line's clock's now.
func (d *Device) reading() (uint64, float64) {
	d.mu.Lock()
	now := d.now
	d.mu.Unlock()
	return d.tally.Total(), d.tally.Rate(stamp(now()))
}

// stamp places a CLOCK_MONOTONIC reading on a time.Time, for Tally: only
// the differences between stamps matter to it.
func stamp(t time.Duration) time.Time { return time.Unix(0, 0).Add(t) }

// value is the published object: count and rate, scaled.
func (d *Device) value(total uint64, rate float64) map[string]any {
	return map[string]any{"count": d.scale(float64(total)), "rate": d.scale(rate)}
}

// scale multiplies by PerPulse, rounded to 12 significant digits so that
// 3 pulses of 0.1 L read 0.3, not 0.30000000000000004.
func (d *Device) scale(x float64) float64 {
	if d.opts.PerPulse > 0 {
		x *= d.opts.PerPulse
	}
	r, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'g', 12, 64), 64)
	return r
}

// edges counts the events read: each is a pulse; gaps in the line's
// sequence numbers are edges the kernel dropped, counted without times.
func (d *Device) edges(evs []gpioevent.Event) {
	var lost uint64
	d.mu.Lock()
	for _, e := range evs {
		lost += uint64(gpioevent.Dropped(d.lastSeq, e.LineSeqno))
		d.lastSeq = e.LineSeqno
	}
	d.dropped += lost
	all := d.dropped
	d.mu.Unlock()
	if lost > 0 {
		d.tally.AddUntimed(lost)
		d.log.Warn("the kernel dropped edges the gateway was too slow to read (its buffer was full): counted from the line's sequence numbers, missing from this window's rate",
			"dropped", lost, "dropped_since_start", all)
	}
	for _, e := range evs {
		d.tally.Edge(stamp(e.Time))
	}
}

// save writes total to the file unless a total as large is there
// already: totals only grow, so a slow write that ends after a newer one
// cannot put an older total back.
func (d *Device) save(total uint64) error {
	if d.opts.File == "" {
		return nil
	}
	d.saveMu.Lock()
	defer d.saveMu.Unlock()
	if total <= d.onDisk {
		return nil
	}
	if err := Save(d.opts.File, total); err != nil {
		return err
	}
	d.onDisk = total
	return nil
}

// Run publishes the kept total, then counts the line's edges and
// publishes as the Device's doc says, until ctx ends; it then writes the
// total and returns.
func (d *Device) Run(ctx context.Context, r device.Reporter) {
	p := &publisher{d: d, r: r, savedAt: d.clk.Now()}
	defer p.stop()
	stop := context.AfterFunc(ctx, d.shut)
	defer stop()
	p.publish()
	buf := make([]gpioevent.Event, readBatch)
	for {
		src := d.line(ctx, p)
		if src == nil {
			return
		}
		n, err := src.Read(buf)
		if n > 0 {
			d.edges(buf[:n])
			p.wake()
		}
		if err == nil {
			continue
		}
		if ctx.Err() != nil || (errors.Is(err, gpioevent.ErrClosed) && d.isDone()) {
			return
		}
		d.fail(src, err)
		p.setFault(faultLine, fmt.Sprintf("the GPIO line stopped reporting edges: %v (requested again every %v)", err, d.retry))
	}
}

// shut ends Run: no new request, and the line's Read is woken.
func (d *Device) shut() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.done = true
	if err := d.releaseLocked(); err != nil {
		d.log.Warn("release the counter's line", "err", err)
	}
}

func (d *Device) isDone() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.done
}

// fail drops a line whose read failed.
func (d *Device) fail(src gpioevent.Source, err error) {
	d.log.Warn("the counter's line failed; requesting it again", "err", err)
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.src == src {
		_ = d.releaseLocked()
	}
}

// line is the requested line, or a new request once the failed one is
// dropped, retried every d.retry; nil once Run is to end.
func (d *Device) line(ctx context.Context, p *publisher) gpioevent.Source {
	for {
		d.mu.Lock()
		src, done := d.src, d.done
		d.mu.Unlock()
		switch {
		case done || ctx.Err() != nil:
			return nil
		case src != nil:
			return src
		}
		if clock.Sleep(ctx, d.clk, d.retry) != nil {
			return nil
		}
		src, err := d.open()
		if err != nil {
			p.setFault(faultLine, fmt.Sprintf("the GPIO line cannot be requested: %v (tried again every %v)", err, d.retry))
			continue
		}
		d.mu.Lock()
		if d.done {
			d.mu.Unlock()
			_ = src.Close()
			return nil
		}
		d.src, d.now, d.lastSeq = src, src.Now, 0
		d.mu.Unlock()
		d.log.Info("the counter's line is requested again; edges in between were not counted")
		p.setFault(faultLine, "")
	}
}

// The faults a Device reports, the first that is set.
const (
	faultLine = iota
	faultSave
	faultKinds
)

// publisher is one Run's publishing: an interval timer that runs while
// pulses come, the writes of the total, the state.
type publisher struct {
	d *Device
	r device.Reporter

	mu        sync.Mutex
	timer     clock.Timer
	armed     bool // a tick is due or running
	pending   bool // edges came while a tick was running
	published bool
	lastTotal uint64
	lastRate  float64
	savedAt   time.Time
	faults    [faultKinds]string
	shown     string // the fault reported, "" while ok
	stopped   bool
}

// publish reports the count and the rate if they changed.
func (p *publisher) publish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.publishLocked(p.d.reading())
}

func (p *publisher) publishLocked(total uint64, rate float64) {
	if p.stopped || p.published && total == p.lastTotal && rate == p.lastRate {
		return
	}
	p.published, p.lastTotal, p.lastRate = true, total, rate
	p.r.Value(p.d.value(total, rate), p.d.clk.Now())
}

// wake arms the interval timer when edges come to a quiet counter.
func (p *publisher) wake() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return
	}
	if p.armed {
		p.pending = true
		return
	}
	p.armLocked()
}

func (p *publisher) armLocked() {
	p.armed = true
	if p.timer == nil {
		p.timer = p.d.clk.AfterFunc(p.d.opts.Interval, p.tick)
		return
	}
	p.timer.Reset(p.d.opts.Interval)
}

// tick publishes, writes the total when due, and arms the next tick
// unless the counter is quiet: its rate is 0 and no edge came meanwhile.
func (p *publisher) tick() {
	p.mu.Lock()
	if p.stopped {
		p.armed = false
		p.mu.Unlock()
		return
	}
	p.pending = false
	total, rate := p.d.reading()
	p.publishLocked(total, rate)
	due := rate == 0 || p.d.clk.Now().Sub(p.savedAt) >= p.d.opts.SaveEvery
	p.mu.Unlock()

	var err error
	if due { // outside the lock: a write is synced, and may take a while
		err = p.d.save(total)
	}

	p.mu.Lock()
	defer p.mu.Unlock()
	if due {
		p.saved(err)
	}
	if p.stopped || rate == 0 && !p.pending {
		p.armed = false
		return
	}
	p.armLocked()
}

// saved records the outcome of a write; p.mu is held.
func (p *publisher) saved(err error) {
	p.savedAt = p.d.clk.Now()
	if err != nil {
		p.d.log.Warn("the count could not be kept", "err", err)
		p.setFaultLocked(faultSave, fmt.Sprintf("the count cannot be kept across restarts: %v", err))
		return
	}
	p.setFaultLocked(faultSave, "")
}

func (p *publisher) setFault(kind int, reason string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.setFaultLocked(kind, reason)
}

// setFaultLocked records a fault (or its end, for "") and reports the
// device's state when the first fault set changes.
func (p *publisher) setFaultLocked(kind int, reason string) {
	p.faults[kind] = reason
	shown := ""
	for _, f := range p.faults {
		if f != "" {
			shown = f
			break
		}
	}
	if p.stopped || shown == p.shown {
		return
	}
	p.shown = shown
	if shown == "" {
		p.r.State(device.StateOK, "")
		return
	}
	p.r.State(device.StateFault, shown)
}

// stop ends the publishing (nothing is reported after it returns) and
// writes the total: the clean stop's save.
func (p *publisher) stop() {
	p.mu.Lock()
	p.stopped = true
	if p.timer != nil {
		p.timer.Stop()
	}
	p.mu.Unlock()
	if err := p.d.save(p.d.tally.Total()); err != nil {
		p.d.log.Warn("the count could not be kept at the stop", "err", err)
	}
}
