package modbustest

import (
	"errors"
	"io"
	"sync"
	"syscall"
	"time"
)

// ErrPortClosed is what a Port's Read and Write return once it is
// closed (go.bug.st/serial says "Port has been closed").
var ErrPortClosed = errors.New("modbustest: port closed")

// Port is an in-memory serial port, a modbus.Port: what is written to it
// comes out of its line's other end, what is written there comes in.
// Bytes arrive at once and whole (no baud rate); Read honours
// SetReadTimeout as go.bug.st/serial does (0, nil when nothing came in
// time), and ResetInputBuffer drops what was not read yet. The RTS
// calls are recorded.
type Port struct {
	in, out *pipe // in: towards the Port's reader; out: towards the other end

	mu      sync.Mutex
	timeout time.Duration // 0: reads block
	rts     []bool
	unplug  error
}

// NewPort returns a Port and the other end of its line, which plays the
// units: Serve it with a Slave, or read requests from it and write
// replies by hand. Closing either end makes the other's reads fail
// (io.EOF on the line's end, ErrPortClosed on the Port).
func NewPort() (*Port, io.ReadWriteCloser) {
	p := &Port{in: newPipe(), out: newPipe()}
	return p, &lineEnd{p}
}

// Read reads what came in, waiting at most the read timeout.
func (p *Port) Read(b []byte) (int, error) {
	p.mu.Lock()
	timeout, unplug := p.timeout, p.unplug
	p.mu.Unlock()
	if unplug != nil {
		return 0, unplug
	}
	n, err := p.in.read(b, timeout)
	if errors.Is(err, io.EOF) {
		if err := p.unplugged(); err != nil {
			return 0, err
		}
		return 0, ErrPortClosed
	}
	return n, err
}

// Write sends b down the line.
func (p *Port) Write(b []byte) (int, error) {
	if err := p.unplugged(); err != nil {
		return 0, err
	}
	if err := p.out.write(b); err != nil {
		return 0, ErrPortClosed
	}
	return len(b), nil
}

func (p *Port) unplugged() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.unplug
}

// SetReadTimeout bounds each Read; 0 or less makes reads block.
func (p *Port) SetReadTimeout(d time.Duration) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.timeout = d
	return p.unplug
}

// ResetInputBuffer drops the bytes that came in and were not read.
func (p *Port) ResetInputBuffer() error {
	if err := p.unplugged(); err != nil {
		return err
	}
	p.in.reset()
	return nil
}

// Drain returns at once: bytes written are on the other end already.
func (p *Port) Drain() error { return p.unplugged() }

// SetRTS records the call; RTS returns them.
func (p *Port) SetRTS(on bool) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rts = append(p.rts, on)
	return p.unplug
}

// RTS returns the values SetRTS was called with, in order.
func (p *Port) RTS() []bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]bool(nil), p.rts...)
}

// Close closes the port and its line: the other end reads io.EOF.
func (p *Port) Close() error {
	p.in.close()
	p.out.close()
	return nil
}

// Inject puts bytes on the line towards the Port, as noise between
// frames would.
func (p *Port) Inject(b []byte) { p.in.write(b) }

// Unplug does what pulling a USB adapter out does: every call on the
// Port fails with EIO (an error no modbus sentinel matches, a link
// error), and the other end reads io.EOF.
func (p *Port) Unplug() {
	p.mu.Lock()
	p.unplug = &portError{syscall.EIO}
	p.mu.Unlock()
	p.Close()
}

type portError struct{ errno syscall.Errno }

func (e *portError) Error() string { return "modbustest: port unplugged: " + e.errno.Error() }
func (e *portError) Unwrap() error { return e.errno }

// lineEnd is the line's other end: reads block until bytes come or the
// line is closed.
type lineEnd struct{ p *Port }

func (e *lineEnd) Read(b []byte) (int, error)  { return e.p.out.read(b, 0) }
func (e *lineEnd) Write(b []byte) (int, error) { return len(b), e.p.in.write(b) }
func (e *lineEnd) Close() error                { return e.p.Close() }

// pipe is bytes in one direction: written whole, read as they are.
type pipe struct {
	mu     sync.Mutex
	data   []byte
	closed bool
	wake   chan struct{} // closed and replaced when data comes or the pipe closes
}

func newPipe() *pipe { return &pipe{wake: make(chan struct{})} }

func (q *pipe) write(b []byte) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return io.ErrClosedPipe
	}
	q.data = append(q.data, b...)
	q.signal()
	return nil
}

// signal wakes the readers; q.mu is held.
func (q *pipe) signal() {
	close(q.wake)
	q.wake = make(chan struct{})
}

// read returns what is there, or waits for bytes at most timeout (0:
// forever); it returns 0, nil on a timeout and io.EOF once closed.
func (q *pipe) read(b []byte, timeout time.Duration) (int, error) {
	var expired <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		expired = t.C
	}
	for {
		q.mu.Lock()
		if len(q.data) > 0 {
			n := copy(b, q.data)
			q.data = q.data[n:]
			q.mu.Unlock()
			return n, nil
		}
		if q.closed {
			q.mu.Unlock()
			return 0, io.EOF
		}
		wake := q.wake
		q.mu.Unlock()
		select {
		case <-wake:
		case <-expired:
			return 0, nil
		}
	}
}

func (q *pipe) reset() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.data = nil
}

func (q *pipe) close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.closed {
		q.closed = true
		q.signal()
	}
}
