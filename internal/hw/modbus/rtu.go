package modbus

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"syscall"
	"time"

	"go.bug.st/serial"
)

// Port is what RTU needs of a serial port; go.bug.st/serial's Port has
// all of it, and modbustest.Port is one in memory.
type Port interface {
	io.ReadWriter
	// SetReadTimeout bounds each Read, which then returns 0, nil when
	// nothing came in time (go.bug.st/serial's behaviour).
	SetReadTimeout(time.Duration) error
	// ResetInputBuffer drops what was received and not yet read.
	ResetInputBuffer() error
	// Drain returns when what was written has left.
	Drain() error
	SetRTS(bool) error
	Close() error
}

// DE says how an RS-485 adapter's driver is enabled for sending.
type DE uint8

const (
	// DENone: the adapter switches its driver itself (most USB RS-485
	// adapters do, from the UART's TX line).
	DENone DE = iota
	// DERTS: RTS high while sending, low while receiving.
	DERTS
	// DERTSLow: RTS low while sending, high while receiving.
	DERTSLow
)

var deNames = [...]string{DENone: "none", DERTS: "rts", DERTSLow: "rts-low"}

// ParseDE returns the DE named s: "none", "rts" or "rts-low".
func ParseDE(s string) (DE, bool) {
	for d, name := range deNames {
		if name == s {
			return DE(d), true
		}
	}
	return 0, false
}

// String returns the DE's name as ParseDE reads it.
func (d DE) String() string {
	if int(d) < len(deNames) {
		return deNames[d]
	}
	return fmt.Sprintf("DE(%d)", uint8(d))
}

// RTUConfig is how an RTU transport times and drives its line.
type RTUConfig struct {
	// Baud is the line's speed, for the frame gap's default.
	Baud int
	// CharBits is the bits of one character on the line: start bit, data
	// bits, parity bit, stop bits (10 for 8N1, 11 for 8E1 or 8N2); 0
	// means 11, the spec's frame.
	CharBits int
	// FrameGap is the silence kept before each request; 0 means 3.5
	// characters and at least 1.75 ms (the spec's fixed value above
	// 19,200 baud).
	FrameGap time.Duration
	// DE is how the RS-485 driver is enabled.
	DE DE
}

// MinFrameGap is the least default frame gap: Modbus over Serial Line
// V1.02, 2.5.1.1 fixes t3.5 at 1.75 ms above 19,200 baud.
const MinFrameGap = 1750 * time.Microsecond

// Validate reports a setting no line could have.
func (c RTUConfig) Validate() error {
	var errs []error
	if c.Baud < 0 {
		errs = append(errs, fmt.Errorf("baud %d: negative", c.Baud))
	}
	if c.CharBits != 0 && (c.CharBits < 7 || c.CharBits > 12) {
		errs = append(errs, fmt.Errorf("character bits %d: want 7 to 12 (start, data, parity, stop)", c.CharBits))
	}
	if c.FrameGap < 0 {
		errs = append(errs, fmt.Errorf("frame gap %v: negative", c.FrameGap))
	}
	if int(c.DE) >= len(deNames) {
		errs = append(errs, fmt.Errorf("DE %d: want none, rts or rts-low", c.DE))
	}
	return errors.Join(errs...)
}

func (c RTUConfig) charBits() int {
	if c.CharBits <= 0 {
		return 11
	}
	return c.CharBits
}

// Gap returns the frame gap c keeps before each request.
func (c RTUConfig) Gap() time.Duration {
	if c.FrameGap > 0 {
		return c.FrameGap
	}
	return max(FrameTime(c.Baud, c.charBits(), 7)/2, MinFrameGap)
}

// FrameTime returns the time n characters of charBits bits each take on
// a line at baud (0 for a baud of 0 or less; charBits 0 means 11).
func FrameTime(baud, charBits, n int) time.Duration {
	if baud <= 0 {
		return 0
	}
	if charBits <= 0 {
		charBits = 11
	}
	return time.Duration(n*charBits) * time.Second / time.Duration(baud)
}

// readSlice bounds each read while a reply is awaited, so that a cancel
// ends the wait within it: go.bug.st/serial's Read cannot be woken but
// by closing the port.
const readSlice = 10 * time.Millisecond

// RTU is a Transport over a serial line (Modbus over Serial Line V1.02):
// frames of unit id, PDU and CRC. It reads only while it awaits a reply.
type RTU struct {
	p   Port
	cfg RTUConfig
	gap time.Duration

	mu      sync.Mutex    // one request at a time; guards the rest
	last    time.Time     // when the line last carried a byte, by our reckoning
	timeout time.Duration // the read timeout set on p, 0 before the first
	buf     []byte        // bytes received for the reply awaited
	chunk   [256]byte
}

// NewRTU returns an RTU transport on p, an open port. cfg's zero fields
// take their defaults; check it with Validate first. Close closes p.
func NewRTU(p Port, cfg RTUConfig) *RTU {
	return &RTU{p: p, cfg: cfg, gap: cfg.Gap()}
}

// OpenRTU opens the serial port at path with mode (go.bug.st/serial:
// raw, no flow control, for exclusive use), puts an RS-485 driver
// controlled by RTS in receive, and returns an RTU on it. cfg.Baud and
// cfg.CharBits, when zero, are taken from mode. Opening does not wait,
// so ctx only stops an open that has not begun.
func OpenRTU(ctx context.Context, path string, mode *serial.Mode, cfg RTUConfig) (*RTU, error) {
	if cfg.Baud == 0 {
		cfg.Baud = mode.BaudRate
	}
	if cfg.CharBits == 0 {
		cfg.CharBits = modeCharBits(mode)
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	p, err := serial.Open(path, mode)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if err := setDE(p, cfg.DE, false); err != nil {
		p.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if err := p.ResetInputBuffer(); err != nil {
		p.Close()
		return nil, fmt.Errorf("open %s: reset input: %w", path, err)
	}
	return NewRTU(p, cfg), nil
}

// modeCharBits is the bits of one character in mode: a start bit, the
// data bits, a parity bit, and the stop bits (1.5 counted as 2).
func modeCharBits(mode *serial.Mode) int {
	n := 1 + mode.DataBits
	if mode.DataBits == 0 {
		n = 1 + 8
	}
	if mode.Parity != serial.NoParity {
		n++
	}
	if mode.StopBits == serial.OneStopBit {
		return n + 1
	}
	return n + 2
}

// setDE drives RTS for d: sending or receiving. DENone leaves it alone.
func setDE(p Port, d DE, sending bool) error {
	var err error
	switch d {
	case DERTS:
		err = p.SetRTS(sending)
	case DERTSLow:
		err = p.SetRTS(!sending)
	default:
		return nil
	}
	if err != nil {
		return fmt.Errorf("set RTS for DE (%s): %w", d, err)
	}
	return nil
}

// Close closes the port; a request in flight ends with a link error.
func (r *RTU) Close() error { return r.p.Close() }

// Do sends pdu to unit and awaits its reply. Unit 0 (broadcast) and
// 248-255 (reserved) are refused with ErrRequest: no reply would come.
// So are functions whose reply length RTU framing cannot tell (see
// replyPDULen).
func (r *RTU) Do(ctx context.Context, unit byte, pdu []byte) ([]byte, error) {
	if err := checkRequest(pdu); err != nil {
		return nil, err
	}
	switch {
	case unit == 0:
		return nil, fmt.Errorf("%w: unit 0 is a broadcast, which no unit answers; RTU requests go to units 1 to 247", ErrRequest)
	case unit > 247:
		return nil, fmt.Errorf("%w: unit %d is reserved on a serial line; RTU requests go to units 1 to 247", ErrRequest, unit)
	case !rtuKnows(pdu[0]):
		return nil, fmt.Errorf("%w: function %#02x: its reply's length is unknown to RTU framing", ErrRequest, pdu[0])
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.send(ctx, unit, pdu); err != nil {
		return nil, err
	}
	return r.await(ctx, unit, pdu[0])
}

// send keeps the frame gap, drops what came between frames, and writes
// the request with the driver enabled.
func (r *RTU) send(ctx context.Context, unit byte, pdu []byte) error {
	if wait := r.gap - time.Since(r.last); wait > 0 {
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return doneErr(ctx, "not sent (the deadline came in the frame gap)")
		}
	}
	if err := ctx.Err(); err != nil {
		return doneErr(ctx, "not sent")
	}
	if err := r.p.ResetInputBuffer(); err != nil {
		return fmt.Errorf("reset input: %w", err)
	}
	frame := AppendCRC(append([]byte{unit}, pdu...))
	if err := setDE(r.p, r.cfg.DE, true); err != nil {
		return err
	}
	err := writeAll(r.p, frame)
	if err == nil {
		// A signal (the Go runtime's preemption) interrupts tcdrain, and
		// go.bug.st/serial retries its reads and writes, not its Drain.
		for err = r.p.Drain(); errors.Is(err, syscall.EINTR); err = r.p.Drain() {
		}
		if err != nil {
			err = fmt.Errorf("drain: %w", err)
		}
	}
	r.last = time.Now()
	return errors.Join(err, setDE(r.p, r.cfg.DE, false))
}

func writeAll(w io.Writer, b []byte) error {
	for len(b) > 0 {
		n, err := w.Write(b)
		if err != nil {
			return fmt.Errorf("write: %w", err)
		}
		if n == 0 {
			return fmt.Errorf("write: %w", io.ErrShortWrite)
		}
		b = b[n:]
	}
	return nil
}

// maxKept bounds the bytes kept while awaiting a reply: a valid frame is
// at most 256 bytes, so past this the oldest are noise to drop.
const maxKept = 1024

// await reads, in slices of readSlice, until the reply of unit to
// function fc is found among the bytes received, ctx is done, or the
// port fails.
func (r *RTU) await(ctx context.Context, unit, fc byte) ([]byte, error) {
	deadline, hasDeadline := ctx.Deadline()
	r.buf = r.buf[:0]
	total := 0
	for {
		if ctx.Err() != nil {
			return nil, r.doneErr(ctx, unit, fc, total)
		}
		slice := readSlice
		if hasDeadline {
			left := time.Until(deadline)
			if left <= 0 {
				return nil, r.doneErr(ctx, unit, fc, total)
			}
			slice = min(slice, left)
		}
		if slice != r.timeout {
			if err := r.p.SetReadTimeout(slice); err != nil {
				return nil, fmt.Errorf("set read timeout: %w", err)
			}
			r.timeout = slice
		}
		n, err := r.p.Read(r.chunk[:])
		if n > 0 {
			r.last = time.Now()
			total += n
			r.buf = append(r.buf, r.chunk[:n]...)
			if len(r.buf) > maxKept {
				r.buf = append(r.buf[:0], r.buf[len(r.buf)-maxKept/2:]...)
			}
			if s := findFrame(r.buf, unit, fc); s.pdu != nil {
				return checkReply(fc, append([]byte(nil), s.pdu...))
			}
		}
		if err != nil {
			return nil, fmt.Errorf("read: %w", err)
		}
	}
}

// doneErr says what was received when ctx ended the wait: a frame of the
// unit and function with a bad CRC is ErrCRC, anything else ErrTimeout
// (or ctx.Err() for a cancel).
func (r *RTU) doneErr(ctx context.Context, unit, fc byte, total int) error {
	if err := ctx.Err(); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if s := findFrame(r.buf, unit, fc); s.badCRC != nil {
		n := len(s.badCRC)
		crc := CRC(s.badCRC[:n-2])
		return fmt.Errorf("%w: % x (want % x)", ErrCRC, s.badCRC, []byte{byte(crc), byte(crc >> 8)})
	}
	if total == 0 {
		return doneErr(ctx, "no answer")
	}
	// Another unit's late reply is not this unit's answer: say so, so
	// that a fault names the unit that was silent.
	if at, n := strayReply(r.buf, unit); n > 0 {
		if n == total {
			return doneErr(ctx, fmt.Sprintf("no answer; heard unit %d's reply instead: %s", r.buf[at], hexHead(r.buf, 32)))
		}
		return doneErr(ctx, fmt.Sprintf("no answer; heard %d bytes, unit %d's reply among them: %s", total, r.buf[at], hexHead(r.buf, 32)))
	}
	return doneErr(ctx, fmt.Sprintf("%d bytes then silence: %s", total, hexHead(r.buf, 32)))
}

// hexHead prints up to max bytes of b in hex, with an ellipsis for more.
func hexHead(b []byte, max int) string {
	if len(b) <= max {
		return fmt.Sprintf("% x", b)
	}
	return fmt.Sprintf("% x …", b[:max])
}
