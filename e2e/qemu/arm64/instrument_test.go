package arm64_test

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
)

// instrument simulates a line-based bench instrument on the host end of a
// QEMU serial chardev (a Unix socket QEMU listens on). It answers "*IDN?"
// and "MEAS?", and sends lines the test asks for.
type instrument struct {
	name string

	mu   sync.Mutex
	conn net.Conn // the connection to QEMU
	got  []string // lines received, for the failure report
}

// connectInstrument connects to the chardev's socket, which QEMU made
// before it opened its QMP socket. QEMU's usb-serial is attached to the bus
// only while its chardev is connected.
func connectInstrument(name, path string) (*instrument, error) {
	c, err := net.Dial("unix", path)
	if err != nil {
		return nil, fmt.Errorf("instrument %s: connect to %s: %w", name, path, err)
	}
	in := &instrument{name: name, conn: c}
	go in.serve(c)
	return in, nil
}

func (in *instrument) idn() string { return "ACME," + in.name + ",SN0001,1.0" }

// serve answers commands; bytes of an unfinished line wait for its end.
func (in *instrument) serve(c net.Conn) {
	sc := bufio.NewScanner(c)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		in.mu.Lock()
		in.got = append(in.got, line)
		in.mu.Unlock()
		var answer string
		switch line {
		case "":
			continue
		case "*IDN?":
			answer = in.idn()
		case "MEAS?":
			answer = "MEAS 12.500 V"
		default:
			answer = "ERR unknown command " + line
		}
		if _, err := fmt.Fprintf(c, "%s\r\n", answer); err != nil {
			return
		}
	}
}

// send writes one line (CR LF) to the guest.
func (in *instrument) send(line string) error {
	in.mu.Lock()
	c := in.conn
	in.mu.Unlock()
	if c == nil {
		return errors.New("instrument " + in.name + ": QEMU is not connected")
	}
	if _, err := fmt.Fprintf(c, "%s\r\n", line); err != nil {
		return fmt.Errorf("instrument %s: send: %w", in.name, err)
	}
	return nil
}

func (in *instrument) received() []string {
	in.mu.Lock()
	defer in.mu.Unlock()
	return append([]string(nil), in.got...)
}

func (in *instrument) close() { in.conn.Close() }
