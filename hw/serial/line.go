// Package serial drives line-based instruments: devices that talk in lines
// of text over a serial port, a pseudo-terminal or a pipe.
package serial

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"gateway/clock"
	"gateway/device"
)

// MaxLine is the longest line kept, in bytes, without its delimiter. The
// rest of a longer line is read and dropped, so that one line from the
// instrument stays one value (and one answer) however long it is.
const MaxLine = 4096

// ErrOffline is returned by writes to a device whose port has failed.
var ErrOffline = errors.New("serial port is offline")

// ErrDelimiter is returned by a write of a value that holds the line
// delimiter: it would reach the instrument as two lines, and the second
// line's answer would be taken for the first one's.
var ErrDelimiter = errors.New("value contains the line delimiter")

// LineDevice is a device.Device whose value is the last line its
// instrument sent. Writing a string sends it as one line; with
// WriteRequest.Reply the write returns the next line the instrument sends.
//
// Run owns the port: it reads it until it fails or ctx is done, and closes
// it. Run handles one port's lifetime (serve); reopening a port that went
// away is a loop around serve that sets d.port again, which is where an
// opener with backoff slots in.
type LineDevice struct {
	desc  device.Descriptor
	delim byte
	clk   clock.Clock

	txn  chan struct{} // one write at a time; a reply write holds it until its answer
	wsem chan struct{} // held while a line's bytes go to the port, so lines never interleave

	mu     sync.Mutex
	port   io.ReadWriteCloser
	down   error      // why the port failed; nil while it works
	waiter chan reply // the reply write waiting for the next line, if any
}

type reply struct {
	r   device.Reading
	err error
}

var (
	_ device.Writer = (*LineDevice)(nil)
	_ device.Runner = (*LineDevice)(nil)
)

// NewLineDevice returns a line device on port. delim ends each line in both
// directions; 0 means '\n'. Received lines lose a trailing '\r' as well,
// so "\r\n" instruments work with the default. Values are stamped with
// clk.
func NewLineDevice(desc device.Descriptor, port io.ReadWriteCloser, delim byte, clk clock.Clock) *LineDevice {
	if delim == 0 {
		delim = '\n'
	}
	return &LineDevice{
		desc:  desc,
		delim: delim,
		clk:   clk,
		txn:   make(chan struct{}, 1),
		wsem:  make(chan struct{}, 1),
		port:  port,
	}
}

// Descriptor returns the descriptor the device was made with.
func (d *LineDevice) Descriptor() device.Descriptor { return d.desc }

// Run reads lines and reports each one as the device's value. When the
// port fails it reports the device offline and returns; when ctx is done
// it closes the port and returns without a report (the gateway is
// stopping, the instrument is not at fault).
func (d *LineDevice) Run(ctx context.Context, r device.Reporter) {
	d.mu.Lock()
	port := d.port
	d.mu.Unlock()
	stop := context.AfterFunc(ctx, func() { port.Close() })
	defer stop()

	err := d.serve(port, r)
	port.Close()
	d.fail(err)
	if ctx.Err() == nil {
		r.State(device.StateOffline, fmt.Sprintf("read %s: %v", d.desc.ID, err))
	}
}

// serve reads port until it fails, and returns why.
func (d *LineDevice) serve(port io.Reader, r device.Reporter) error {
	br := bufio.NewReaderSize(port, MaxLine+1) // +1: room for the delimiter
	for {
		line, err := readLine(br, d.delim)
		if err != nil {
			return err
		}
		d.received(line, r)
	}
}

// readLine returns the next line without its delimiter and trailing '\r',
// cut to MaxLine bytes, with invalid UTF-8 replaced so that it encodes as
// a JSON string unchanged. A last line without a delimiter is dropped.
func readLine(br *bufio.Reader, delim byte) (string, error) {
	b, err := br.ReadSlice(delim)
	switch {
	case err == nil:
		b = b[:len(b)-1]
	case errors.Is(err, bufio.ErrBufferFull):
		b = b[:MaxLine]
		line := string(b) // copy: the next ReadSlice overwrites b
		for errors.Is(err, bufio.ErrBufferFull) {
			_, err = br.ReadSlice(delim)
		}
		if err != nil {
			return "", err
		}
		return clean(line), nil
	default:
		return "", err
	}
	return clean(string(b)), nil
}

func clean(s string) string {
	return strings.ToValidUTF8(strings.TrimSuffix(s, "\r"), "\uFFFD")
}

// received publishes a line and hands it to the reply write waiting for it.
func (d *LineDevice) received(line string, r device.Reporter) {
	reading := device.Reading{Value: line, TS: d.clk.Now()}
	r.Value(reading.Value, reading.TS)
	d.mu.Lock()
	w := d.waiter
	d.waiter = nil
	d.mu.Unlock()
	if w != nil {
		w <- reply{r: reading} // buffered: never blocks
	}
}

// fail marks the port down and fails the reply write waiting on it.
func (d *LineDevice) fail(cause error) {
	err := fmt.Errorf("%s: %w: %v", d.desc.ID, ErrOffline, cause)
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
// the instrument sends, or for ctx (returning ctx.Err()). Writes run one
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
	if strings.IndexByte(s, d.delim) >= 0 {
		return device.WriteResult{}, fmt.Errorf("write %s: %w", d.desc.ID, ErrDelimiter)
	}
	if err := acquire(ctx, d.txn); err != nil {
		return device.WriteResult{}, err
	}
	defer release(d.txn)

	var w chan reply
	if req.Reply {
		// Wait for the answer before it is asked for, so that an
		// instrument quicker than this goroutine is not missed.
		w = make(chan reply, 1)
		if err := d.await(w); err != nil {
			return device.WriteResult{}, err
		}
		defer d.forget(w)
	}
	if err := d.send(ctx, append([]byte(s), d.delim)); err != nil {
		if ctx.Err() != nil {
			return device.WriteResult{}, ctx.Err()
		}
		return device.WriteResult{}, fmt.Errorf("write %s: %w", d.desc.ID, err)
	}
	if !req.Reply {
		return device.WriteResult{Keep: true}, nil
	}
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
// on its own goroutine: send returns at ctx's end, and the line still goes
// out whole before the next one.
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
		return err
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
