package serialline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"go.bug.st/serial"
)

// MaxBaud is the highest baud rate a PortConfig accepts: above the fastest
// USB serial adapters (FTDI FT232R: 3 Mbaud), so that a rate beyond it is
// a typo, not a fast instrument.
const MaxBaud = 4_000_000

// PortConfig says which serial port an instrument is on and how it frames
// its bytes.
type PortConfig struct {
	// Path is the port's device node: /dev/ttyUSB0, or better a
	// /dev/serial/by-id/... link, which names the same adapter whichever
	// USB socket it is in and whatever order adapters are found in.
	Path string
	// Baud is the line speed in bits per second.
	Baud int
	// DataBits is the character size, 5 to 8.
	DataBits int
	// Parity is "none", "odd", "even", "mark" or "space".
	Parity string
	// StopBits is "1" or "2". "1.5" is recognised and refused: the Linux
	// serial driver does not offer it.
	StopBits string
	// Delimiter ends each line in both directions.
	Delimiter byte
}

var parities = map[string]serial.Parity{
	"none":  serial.NoParity,
	"odd":   serial.OddParity,
	"even":  serial.EvenParity,
	"mark":  serial.MarkParity,
	"space": serial.SpaceParity,
}

var stopBits = map[string]serial.StopBits{
	"1": serial.OneStopBit,
	"2": serial.TwoStopBits,
}

// WithDefaults returns c with the settings most instruments use where c
// leaves them zero: 8 data bits, no parity, 1 stop bit ("8N1"), lines
// ended by '\n'. Path and Baud have no default: they differ from one
// instrument to the next.
func (c PortConfig) WithDefaults() PortConfig {
	if c.DataBits == 0 {
		c.DataBits = 8
	}
	if c.Parity == "" {
		c.Parity = "none"
	}
	if c.StopBits == "" {
		c.StopBits = "1"
	}
	if c.Delimiter == 0 {
		c.Delimiter = '\n'
	}
	return c
}

// Validate reports every setting of c that no port could be opened with,
// each error naming its field. A valid config can still fail to open: the
// port may be missing, busy, or refuse a baud rate its chip cannot make.
func (c PortConfig) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	switch {
	case c.Path == "":
		bad("path: missing")
	case !filepath.IsAbs(c.Path):
		bad("path %q: not absolute (want /dev/ttyUSB0 or /dev/serial/by-id/...)", c.Path)
	}
	if c.Baud <= 0 || c.Baud > MaxBaud {
		bad("baud %d: want 1 to %d", c.Baud, MaxBaud)
	}
	if c.DataBits < 5 || c.DataBits > 8 {
		bad("dataBits %d: want 5 to 8", c.DataBits)
	}
	if _, ok := parities[c.Parity]; !ok {
		bad("parity %q: want none, odd, even, mark or space", c.Parity)
	}
	if _, ok := stopBits[c.StopBits]; !ok {
		if c.StopBits == "1.5" {
			bad("stopBits %q: not supported by the Linux serial driver; want 1 or 2", c.StopBits)
		} else {
			bad("stopBits %q: want 1 or 2", c.StopBits)
		}
	}
	if c.Delimiter == 0 {
		bad("delimiter: must not be NUL")
	}
	return errors.Join(errs...)
}

func (c PortConfig) mode() *serial.Mode {
	return &serial.Mode{
		BaudRate: c.Baud,
		DataBits: c.DataBits,
		Parity:   parities[c.Parity],
		StopBits: stopBits[c.StopBits],
	}
}

// ErrBusy is matched by the error of Open for a port that another
// program has: another gateway process (which holds the gateway's lock
// of the port), or another user's program in exclusive mode.
var ErrBusy = errors.New("busy: another program has the port (a running gateway holds its ports: stop it first)")

// Open opens the serial port cfg names, in raw mode with cfg's framing,
// no flow control, and reads that block until a byte comes or the port is
// closed. Closing the port ends a read in progress. The port is opened for
// exclusive use (TIOCEXCL), so a second program cannot steal its lines,
// and under the gateway's lock of the port, which keeps out the
// gateway's other processes even as root (ErrBusy). The returned port is
// a go.bug.st/serial Port.
//
// A port that does not exist fails with an error that matches
// fs.ErrNotExist. Opening does not wait for anything, so ctx only stops an
// open that has not begun.
func Open(ctx context.Context, cfg PortConfig) (io.ReadWriteCloser, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("open %s: %w", cfg.Path, err)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("open %s: %w", cfg.Path, err)
	}
	lock, err := lockPort(cfg.Path)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", cfg.Path, err)
	}
	p, err := serial.Open(cfg.Path, cfg.mode())
	if err != nil {
		if lock != nil {
			lock.Close()
		}
		var pe *serial.PortError
		if errors.As(err, &pe) && pe.Code() == serial.PortBusy {
			err = ErrBusy
		}
		return nil, fmt.Errorf("open %s: %w", cfg.Path, err)
	}
	return &lockedPort{Port: p, lock: lock}, nil
}

// lockedPort is a port and the gateway's lock of it, released with it.
type lockedPort struct {
	serial.Port
	lock *os.File
}

func (p *lockedPort) Close() error {
	err := p.Port.Close()
	if p.lock != nil {
		p.lock.Close()
	}
	return err
}
