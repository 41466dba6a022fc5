// Package modbusline runs a Modbus line — a serial RS-485 line (RTU) or a
// TCP connection — and the devices on it, each one value of one unit: a
// coil, a discrete input, or a number in input or holding registers.
//
// A line is shared and slow, so one goroutine owns it and sends one
// request at a time: writes and fresh reads that a client waits for go
// ahead of polls, a write that drives a device to its safe value ahead
// of every other, and adjacent registers of one unit polled at one
// interval are read in one request (a block). Each request gets a timeout
// and retries; a unit that does not answer, answers with an exception or
// garbles its answer puts the devices the request was for in fault, with
// what happened, until it answers again. A link that fails (a USB
// adapter unplugged, a TCP connection dropped) puts every device of the
// line offline and is reopened with backoff.
//
// The protocol itself is package modbus; the configuration that makes a
// Line and its Devices is package board's (`modbus:` and `kind: modbus`).
package modbusline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/clock"
	"github.com/openhal/gateway/internal/hw/modbus"
)

// Reopening backoff, as serial line devices have it: the first retry
// after a failure waits minBackoff, each failed one doubles the wait up
// to maxBackoff; a link that stayed up maxBackoff or more starts again
// at minBackoff.
const (
	minBackoff = 100 * time.Millisecond
	maxBackoff = 5 * time.Second
)

// Opener opens the line's link: its serial port or TCP connection. It is
// called again after each failure.
type Opener func(ctx context.Context) (modbus.Transport, error)

// Config is a line's link and its requests' timing.
type Config struct {
	// Name names the line in errors and logs ("modbus.rs485").
	Name string
	Open Opener
	// Timeout is how long a unit is given to answer one request.
	Timeout time.Duration
	// Retries is how many times a request that got no answer, or a
	// garbled one, is sent again.
	Retries int
	// Quiet is how long a unit that did not answer a request in time is
	// left alone: no request goes to it for that long, so that its late
	// answer, if it comes, is dropped with the input before the next
	// request to it instead of being taken for that request's answer. A
	// serial line needs it (RTU answers carry no transaction id; the
	// gateway sets it to the timeout); on TCP, 0.
	Quiet time.Duration
}

// Line is one Modbus line and its devices. Make devices with Device,
// then Start; Close stops it.
type Line struct {
	cfg  Config
	clk  clock.Clock
	log  *slog.Logger
	wake chan struct{} // a job queued or a poll due; buffered 1

	mu      sync.Mutex
	devs    []*Device
	blocks  []*block
	jobs    []*job
	online  bool
	cause   error              // why the link is down, while it is
	failing map[byte]bool      // units whose last request got no answer
	quiet   map[byte]time.Time // units left alone until then (Config.Quiet)
	stop    context.CancelFunc
	done    chan struct{}
}

// New returns a line that opens its link with cfg.Open once started. log
// receives the link's comings and goings; nil discards them.
func New(cfg Config, clk clock.Clock, log *slog.Logger) *Line {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Line{
		cfg: cfg, clk: clk, log: log.With("line", cfg.Name),
		wake: make(chan struct{}, 1), failing: map[byte]bool{}, quiet: map[byte]time.Time{},
		cause: errors.New("not opened yet"),
	}
}

// Start plans the polls of the devices made so far and runs the line
// until Close.
func (l *Line) Start() {
	ctx, cancel := context.WithCancel(context.Background())
	l.mu.Lock()
	l.blocks = plan(l.devs, l.clk.Now())
	l.stop, l.done = cancel, make(chan struct{})
	l.mu.Unlock()
	go func() {
		defer close(l.done)
		l.run(ctx)
	}()
}

// Close stops the line, fails what waits for it, and closes its link.
func (l *Line) Close() error {
	l.mu.Lock()
	stop, done := l.stop, l.done
	l.mu.Unlock()
	if stop == nil {
		return nil
	}
	stop()
	<-done
	l.failJobs(fmt.Errorf("%s is closed: %w", l.cfg.Name, device.ErrOffline))
	return nil
}

// run opens the link, serves it until it fails, and opens it again.
func (l *Line) run(ctx context.Context) {
	backoff := minBackoff
	for ctx.Err() == nil {
		t, err := l.cfg.Open(ctx)
		if err != nil {
			l.down(err)
			if clock.Sleep(ctx, l.clk, backoff) != nil {
				return
			}
			backoff = min(2*backoff, maxBackoff)
			continue
		}
		opened := l.clk.Now()
		l.up()
		err = l.serve(ctx, &modbus.Client{T: t})
		if cerr := t.Close(); cerr != nil {
			l.log.Debug("close modbus link", "err", cerr)
		}
		if ctx.Err() != nil {
			return
		}
		if l.clk.Now().Sub(opened) >= maxBackoff {
			backoff = minBackoff
		}
		l.down(err)
	}
}

// up marks the link open and makes every poll due, so that devices leave
// offline (or show their fault) at once.
func (l *Line) up() {
	l.log.Info("modbus line open")
	now := l.clk.Now()
	l.mu.Lock()
	l.online, l.cause = true, nil
	for _, b := range l.blocks {
		b.next = now
	}
	l.mu.Unlock()
}

// down marks the link failed: what waits for it fails as offline, and
// every device reports offline with the cause.
func (l *Line) down(cause error) {
	l.mu.Lock()
	was := l.online || l.cause == nil || l.cause.Error() != cause.Error()
	l.online, l.cause = false, cause
	devs := l.devs
	l.mu.Unlock()
	l.failJobs(l.offline(cause))
	if was {
		l.log.Warn("modbus line down", "err", cause)
	}
	for _, d := range devs {
		d.setState(device.StateOffline, cause.Error())
	}
}

// offline is the error of a request to a line whose link is down: it
// matches device.ErrOffline and says why.
func (l *Line) offline(cause error) error {
	return fmt.Errorf("%s: %w: %w", l.cfg.Name, device.ErrOffline, cause)
}

// serve sends requests until the link fails or ctx ends: the jobs
// waiting first, else the poll due soonest, else it sleeps until one is
// due or a job comes.
func (l *Line) serve(ctx context.Context, c *modbus.Client) error {
	var timer clock.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for ctx.Err() == nil {
		j, b, wait := l.next(l.clk.Now())
		var err error
		switch {
		case j != nil:
			err = l.runJob(ctx, c, j)
		case b != nil:
			err = l.poll(ctx, c, b)
		default:
			if wait > 0 {
				if timer == nil {
					timer = l.clk.AfterFunc(wait, l.poke)
				} else {
					timer.Reset(wait)
				}
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-l.wake:
			}
		}
		if err != nil && modbus.IsLinkError(err) {
			return err
		}
	}
	return ctx.Err()
}

// poke wakes the line's goroutine.
func (l *Line) poke() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// attempt sends one request with the line's timeout, within parent and
// the line's ctx.
//
// A request in flight is never cut short, not even by a stop's write: on
// a serial line the unit's late answer would collide with the write on
// the wire, and a Modbus TCP unit (or a gateway to a serial line) answers
// one request of a connection at a time. A stop waits for it, at most the
// timeout; a poll's retries give way to it.
func (l *Line) attempt(ctx, parent context.Context, f func(context.Context) error) error {
	actx, cancel := context.WithTimeout(parent, l.cfg.Timeout)
	defer cancel()
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	return f(actx)
}

// retryable reports whether a request that failed with err is worth
// sending again: no answer, or one garbled on the way. An exception is
// the unit's answer, and a link error is the line's.
func retryable(err error) bool {
	return errors.Is(err, modbus.ErrTimeout) || errors.Is(err, modbus.ErrCRC) || errors.Is(err, modbus.ErrBadReply)
}

// noteUnit remembers whether unit answered its last request, so that a
// stop's writes to the units that answer go first and a silent one's
// write is tried once; a unit that did not answer is left alone for the
// line's quiet time from now.
func (l *Line) noteUnit(unit byte, err error, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if errors.Is(err, modbus.ErrTimeout) {
		l.failing[unit] = true
		if l.cfg.Quiet > 0 {
			l.quiet[unit] = now.Add(l.cfg.Quiet)
		}
	} else if err == nil || errors.As(err, new(*modbus.Exception)) {
		delete(l.failing, unit)
	}
}
