// Package serialline drives line-based instruments: devices that talk in lines
// of text over a serial port, a pseudo-terminal or a pipe.
package serialline

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/clock"
)

// MaxLine is the longest line kept, in bytes, without its delimiter. A
// longer line is read to its end and dropped, and puts the device in
// fault (health), so that a line that never ends (a wrong delimiter) is
// neither kept in memory nor taken for a value.
const MaxLine = 4096

// ErrOffline is matched (errors.Is) by the errors of writes to a device
// whose port is not open: unplugged, missing, or not opened yet.
var ErrOffline = device.ErrOffline

// ErrDelimiter is returned by a write of a value that holds the line
// delimiter or a line break (CheckValue): it would reach the instrument as
// two lines, and the second line's answer would be taken for the first
// one's. The Hub refuses such a value before the write (CheckValue), so a
// device never sees it through the Hub.
var ErrDelimiter = errors.New("value contains the line delimiter or a line break")

// Reopening backoff: the first retry after a failure waits minBackoff,
// each failed retry doubles the wait up to maxBackoff. A port that stayed
// open for maxBackoff or more starts again at minBackoff; one that fails
// as soon as it opens keeps the longer waits, so that a flapping adapter
// does not flood clients with state changes.
const (
	minBackoff = 100 * time.Millisecond
	maxBackoff = 5 * time.Second
)

// LineDevice is a device.Device whose value is the last line its
// instrument sent. Writing a string sends it as one line; with
// WriteRequest.Reply the write returns the next line the instrument sends.
//
// Run owns the port. A device made by NewLineDevice serves the one port it
// was given until it fails, and stays offline. A device made by
// NewPortDevice opens its port itself, and when the port fails (a USB
// adapter unplugged) or cannot be opened (not plugged in yet) it reports
// the device offline and opens it again with backoff, reporting it ok once
// it is back.
type LineDevice struct {
	desc  device.Descriptor
	name  string // the port in errors: its path, or the device id
	delim byte
	clk   clock.Clock
	open  opener // nil: the port given to NewLineDevice, never reopened
	log   *slog.Logger

	txn  chan struct{} // one write at a time; a reply write holds it until its answer
	wsem chan struct{} // held while a line's bytes go to the port, so lines never interleave

	mu     sync.Mutex
	port   io.ReadWriteCloser
	down   error      // why the port is not usable (an *offlineError); nil while it works
	waiter chan reply // the reply write waiting for the next line, if any
}

// opener opens a device's port. It is called again after each failure.
type opener func(ctx context.Context) (io.ReadWriteCloser, error)

type reply struct {
	r   device.Reading
	err error
}

// offlineError says which device is offline and why. It matches
// ErrOffline and unwraps to the port's own error, so that a caller can
// also test for fs.ErrNotExist.
type offlineError struct {
	id    string
	cause error
}

func (e *offlineError) Error() string        { return e.id + " is offline: " + e.cause.Error() }
func (e *offlineError) Is(target error) bool { return target == ErrOffline }
func (e *offlineError) Unwrap() error        { return e.cause }

var (
	_ device.Writer       = (*LineDevice)(nil)
	_ device.Runner       = (*LineDevice)(nil)
	_ device.ValueChecker = (*LineDevice)(nil)
)

// NewLineDevice returns a line device on port. delim ends each line in both
// directions; 0 means '\n'. Received lines lose a trailing '\r' as well,
// so "\r\n" instruments work with the default. Values are stamped with
// clk. The port is not reopened when it fails: this is for ports that
// cannot come back, such as the sim board's pipe.
func NewLineDevice(desc device.Descriptor, port io.ReadWriteCloser, delim byte, clk clock.Clock) *LineDevice {
	d := newLineDevice(desc, desc.ID, delim, clk, nil)
	d.port = port
	return d
}

// NewPortDevice returns a line device on the serial port cfg names (cfg
// should have passed Validate). Its descriptor starts offline and writes
// fail with ErrOffline until Run has opened the port; Run keeps reopening
// it, with backoff on clk, whenever it is missing or fails. log receives
// the port's comings and goings with their reasons (the registry keeps no
// reason for an offline device); nil discards them.
func NewPortDevice(desc device.Descriptor, cfg PortConfig, clk clock.Clock, log *slog.Logger) *LineDevice {
	open := func(ctx context.Context) (io.ReadWriteCloser, error) { return Open(ctx, cfg) }
	return newReopening(desc, cfg.Path, open, cfg.Delimiter, clk, log)
}

// newReopening returns a device that opens its port with open, named name
// in errors.
func newReopening(desc device.Descriptor, name string, open opener, delim byte, clk clock.Clock, log *slog.Logger) *LineDevice {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	desc.State, desc.Fault = device.StateOffline, ""
	d := newLineDevice(desc, name, delim, clk, open)
	d.log = log.With("device", desc.ID, "port", name)
	d.down = &offlineError{id: desc.ID, cause: fmt.Errorf("%s is not open yet", name)}
	return d
}

func newLineDevice(desc device.Descriptor, name string, delim byte, clk clock.Clock, open opener) *LineDevice {
	if delim == 0 {
		delim = '\n'
	}
	return &LineDevice{
		desc:  desc,
		name:  name,
		delim: delim,
		clk:   clk,
		open:  open,
		log:   slog.New(slog.DiscardHandler),
		txn:   make(chan struct{}, 1),
		wsem:  make(chan struct{}, 1),
	}
}

// Descriptor returns the descriptor the device was made with (for a port
// device, in state offline: it has not opened its port yet).
func (d *LineDevice) Descriptor() device.Descriptor { return d.desc }

// Run reads lines and reports each one as the device's value, until ctx is
// done; then it closes the port and returns without a report (the gateway
// is stopping, the instrument is not at fault). When the port fails it
// reports the device offline, and either returns (NewLineDevice) or opens
// the port again (NewPortDevice).
func (d *LineDevice) Run(ctx context.Context, r device.Reporter) {
	if d.open != nil {
		d.reopen(ctx, r)
		return
	}
	d.mu.Lock()
	port := d.port
	d.mu.Unlock()
	err := d.serve(ctx, port, r)
	if ctx.Err() == nil {
		r.State(device.StateOffline, err.Error())
	}
}

// reopen opens the port, serves it, and opens it again when it fails,
// waiting longer after each failure, until ctx is done. Every failed
// attempt is reported (the registry drops repeats of a state, and a
// repeat puts a device the Hub marked faulty by a failed write back to
// offline); the log gets each change of reason.
func (d *LineDevice) reopen(ctx context.Context, r device.Reporter) {
	var delay time.Duration
	var last string // the reason last logged
	down := func(err error) {
		d.fail(err)
		r.State(device.StateOffline, err.Error())
		if err.Error() != last {
			last = err.Error()
			d.log.Warn("serial port offline", "err", err, "retry_in", backoff(delay))
		}
	}
	for {
		if delay > 0 && !d.sleep(ctx, delay) {
			return
		}
		port, err := d.open(ctx)
		if ctx.Err() != nil {
			if err == nil {
				port.Close()
			}
			return
		}
		if err != nil {
			down(err)
			delay = backoff(delay)
			continue
		}
		opened := d.clk.Now()
		d.up(port)
		r.State(device.StateOK, "")
		last = ""
		d.log.Info("serial port open")

		err = d.serve(ctx, port, r)
		if ctx.Err() != nil {
			return
		}
		if d.clk.Now().Sub(opened) >= maxBackoff {
			delay = 0
		}
		down(err)
		delay = backoff(delay)
	}
}

// backoff returns the wait that follows a wait of d.
func backoff(d time.Duration) time.Duration {
	return min(max(2*d, minBackoff), maxBackoff)
}

// sleep waits on the device's clock and reports whether it did, false
// if ctx ended first.
func (d *LineDevice) sleep(ctx context.Context, wait time.Duration) bool {
	wake := make(chan struct{})
	t := d.clk.AfterFunc(wait, func() { close(wake) })
	defer t.Stop()
	select {
	case <-wake:
		return true
	case <-ctx.Done():
		return false
	}
}

// up makes port the device's port, open for writes.
func (d *LineDevice) up(port io.ReadWriteCloser) {
	d.mu.Lock()
	d.port, d.down = port, nil
	d.mu.Unlock()
}

// serve reads lines from port until it fails or ctx is done, then closes
// it, marks the device down, and returns why the port failed.
func (d *LineDevice) serve(ctx context.Context, port io.ReadWriteCloser, r device.Reporter) error {
	stop := context.AfterFunc(ctx, func() { port.Close() })
	defer stop()
	err := fmt.Errorf("read %s: %w", d.name, d.readLines(port, r))
	port.Close()
	d.fail(err)
	return err
}

// readLines reads port until it fails, and returns why.
// Lines that are not text, too long or past the rate are judged by
// health, which reports the device's fault in words. A line longer than
// MaxLine is judged as soon as the buffer fills, not when (if ever) its
// end comes; the rest of it, up to the delimiter, is read and dropped.
func (d *LineDevice) readLines(port io.Reader, r device.Reporter) error {
	br := bufio.NewReaderSize(port, MaxLine+2) // +2: room for a CR and the delimiter
	var h health
	skipping := false // in the rest of a line cut at MaxLine
	for {
		b, err := br.ReadSlice(d.delim)
		full := errors.Is(err, bufio.ErrBufferFull)
		if err != nil && !full {
			return err // a last line without a delimiter is dropped
		}
		if skipping {
			skipping = full
			continue
		}
		skipping = full
		if !full {
			b = b[:len(b)-1]
		}
		cut := full || len(bytes.TrimSuffix(b, []byte{'\r'})) > MaxLine
		publish, fault, changed := h.judge(b, cut, d.clk.Now())
		switch {
		case changed && fault != "":
			r.State(device.StateFault, fault)
		case changed:
			r.State(device.StateOK, "")
		}
		if publish {
			d.received(clean(string(b)), r)
		}
	}
}

// clean takes the trailing '\r' off a line and replaces invalid UTF-8,
// so that it encodes as a JSON string unchanged.
func clean(s string) string {
	return strings.ToValidUTF8(strings.TrimSuffix(s, "\r"), "\uFFFD")
}

// received publishes a line and hands it to the reply write waiting for it.
// The waiter is taken before the line is published, so that a write begun
// by someone who has seen the line never gets it as its answer.
func (d *LineDevice) received(line string, r device.Reporter) {
	reading := device.Reading{Value: line, TS: d.clk.Now()}
	d.mu.Lock()
	w := d.waiter
	d.waiter = nil
	d.mu.Unlock()
	r.Value(reading.Value, reading.TS)
	if w != nil {
		w <- reply{r: reading} // buffered: never blocks
	}
}

// fail marks the port down and fails the reply write waiting on it.
func (d *LineDevice) fail(cause error) {
	err := &offlineError{id: d.desc.ID, cause: cause}
	d.mu.Lock()
	d.down = err
	w := d.waiter
	d.waiter = nil
	d.mu.Unlock()
	if w != nil {
		w <- reply{err: err}
	}
}

// Write sends req.Value, a string, as one line. Without Reply it returns
// once the line is at the port; with Reply it also waits for the next line
// the instrument sends, or for ctx (returning ctx.Err()); with ReplyWithin
// it waits that long at most, and returns without a Reply if none came. Writes run one
// at a time, a reply write from its question to its answer, so that an
// answer belongs to its question. The answer is the first line received
// once the write has begun: an instrument that also sends lines of its own
// may answer with one of those, and an answer that comes after a write
// gave up is taken by the next reply write (the Hub marks a device whose
// write timed out as faulty for that reason). Either way the device's
// value stays the last line received (Keep is true), the answer included.
func (d *LineDevice) Write(ctx context.Context, req device.WriteRequest) (device.WriteResult, error) {
	s, ok := req.Value.(string)
	if !ok {
		return device.WriteResult{}, fmt.Errorf("write %s: want a string, got %T", d.desc.ID, req.Value)
	}
	if err := d.CheckValue(s); err != nil {
		return device.WriteResult{}, fmt.Errorf("write %s: %w: %w", d.desc.ID, ErrDelimiter, err)
	}
	if err := acquire(ctx, d.txn); err != nil {
		return device.WriteResult{}, err
	}
	defer release(d.txn)

	var w chan reply
	if req.Reply || req.ReplyWithin > 0 {
		// Wait for the answer before it is asked for, so that an
		// instrument quicker than this goroutine is not missed.
		w = make(chan reply, 1)
		if err := d.await(w); err != nil {
			return device.WriteResult{}, err
		}
		defer d.forget(w)
	}
	if err := d.send(ctx, append([]byte(s), d.delim)); err != nil {
		return device.WriteResult{}, err
	}
	switch {
	case req.Reply:
		return d.answer(ctx, w)
	case req.ReplyWithin > 0:
		return d.answerWithin(ctx, w, req.ReplyWithin), nil
	}
	return device.WriteResult{Keep: true}, nil
}

// answer waits for the reply write's answer, or for ctx.
func (d *LineDevice) answer(ctx context.Context, w chan reply) (device.WriteResult, error) {
	select {
	case rep := <-w:
		if rep.err != nil {
			return device.WriteResult{}, rep.err
		}
		return device.WriteResult{Keep: true, Reply: &rep.r}, nil
	case <-ctx.Done():
		return device.WriteResult{}, ctx.Err()
	}
}

// answerWithin waits up to wait (on the device's clock) for an answer that
// may not come. The line is out: no answer, the port failing meanwhile or
// ctx ending are all a write without a reply, not an error.
func (d *LineDevice) answerWithin(ctx context.Context, w chan reply, wait time.Duration) device.WriteResult {
	expired := make(chan struct{})
	t := d.clk.AfterFunc(wait, func() { close(expired) })
	defer t.Stop()
	select {
	case rep := <-w:
		if rep.err == nil {
			return device.WriteResult{Keep: true, Reply: &rep.r}
		}
	case <-expired:
	case <-ctx.Done():
	}
	return device.WriteResult{Keep: true}
}

// CheckValue refuses a string that would not reach the instrument as one
// line (device.ValueChecker): one holding '\n' or '\r' (reason
// "line_break"), or the device's own delimiter when that is another byte
// (reason "delimiter"). The delimiter would end the line early and send
// the rest as a second command, whose answer a reply write would take for
// the first one's. A line break is refused whatever the delimiter: most
// instruments end a command at either ('\r' for "\r\n" instruments on the
// default '\n' delimiter too), and no value of one line holds one. Values
// that are not strings are left to the schema and to Write.
func (d *LineDevice) CheckValue(v any) error {
	s, ok := v.(string)
	if !ok {
		return nil
	}
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		return &device.ValueError{Reason: "line_break",
			Detail: fmt.Sprintf("the string holds a line break (%q at byte %d); %s sends one line per write", s[i:i+1], i, d.desc.ID)}
	}
	if i := strings.IndexByte(s, d.delim); i >= 0 {
		return &device.ValueError{Reason: "delimiter",
			Detail: fmt.Sprintf("the string holds %s's line delimiter (%q at byte %d); it sends one line per write", d.desc.ID, s[i:i+1], i)}
	}
	return nil
}

func (d *LineDevice) await(w chan reply) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.down != nil {
		return d.down
	}
	d.waiter = w
	return nil
}

func (d *LineDevice) forget(w chan reply) {
	d.mu.Lock()
	if d.waiter == w {
		d.waiter = nil
	}
	d.mu.Unlock()
}

// send writes b to the port. A port write cannot be cancelled, so it runs
// on its own goroutine: send returns at ctx's end (with ctx's error), and
// the line still goes out whole before the next one. A device that is
// down fails at once with its *offlineError.
func (d *LineDevice) send(ctx context.Context, b []byte) error {
	if err := acquire(ctx, d.wsem); err != nil {
		return err
	}
	d.mu.Lock()
	port, down := d.port, d.down
	d.mu.Unlock()
	if down != nil {
		release(d.wsem)
		return down
	}
	done := make(chan error, 1)
	go func() {
		_, err := port.Write(b)
		release(d.wsem)
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("write %s: %w", d.name, err)
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func acquire(ctx context.Context, sem chan struct{}) error {
	select {
	case sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func release(sem chan struct{}) { <-sem }
