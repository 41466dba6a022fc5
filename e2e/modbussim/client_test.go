package modbussim

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"go.bug.st/serial"

	"github.com/openhal/gateway/internal/hw/modbus"
)

// A minimal Modbus master for the package's own tests: PDUs, MBAP and RTU
// framing, just enough to check the simulator. The gateway's real client
// is internal/hw/modbus.

// answerWait bounds a wait for an answer the test expects; silence is
// checked with the shorter quiet window and then a request that must be
// answered next, so a late answer is seen.
const (
	expectWait = 10 * time.Second
	quietWait  = 300 * time.Millisecond
)

var errTimeout = errors.New("no answer")

func readReq(fc byte, addr, n uint16) []byte {
	return []byte{fc, byte(addr >> 8), byte(addr), byte(n >> 8), byte(n)}
}

func writeRegs(addr uint16, vals ...uint16) []byte {
	if len(vals) == 1 {
		return []byte{6, byte(addr >> 8), byte(addr), byte(vals[0] >> 8), byte(vals[0])}
	}
	p := []byte{16, byte(addr >> 8), byte(addr), 0, byte(len(vals)), byte(2 * len(vals))}
	for _, v := range vals {
		p = binary.BigEndian.AppendUint16(p, v)
	}
	return p
}

func writeCoils(addr uint16, bits ...uint16) []byte {
	if len(bits) == 1 {
		v := byte(0)
		if bits[0] != 0 {
			v = 0xFF
		}
		return []byte{5, byte(addr >> 8), byte(addr), v, 0}
	}
	packed := make([]byte, (len(bits)+7)/8)
	for i, b := range bits {
		if b != 0 {
			packed[i/8] |= 1 << (i % 8)
		}
	}
	p := []byte{15, byte(addr >> 8), byte(addr), 0, byte(len(bits)), byte(len(packed))}
	return append(p, packed...)
}

// values decodes a read's response PDU; an exception is an error.
func values(pdu []byte, n int) ([]uint16, error) {
	if len(pdu) == 2 && pdu[0]&0x80 != 0 {
		return nil, fmt.Errorf("exception %d", pdu[1])
	}
	if len(pdu) < 2 || int(pdu[1]) != len(pdu)-2 {
		return nil, fmt.Errorf("bad response % x", pdu)
	}
	out := make([]uint16, n)
	for i := range out {
		switch pdu[0] {
		case 1, 2:
			if i/8 >= int(pdu[1]) {
				return nil, fmt.Errorf("short response % x", pdu)
			}
			out[i] = uint16(pdu[2+i/8]>>(i%8)) & 1
		case 3, 4:
			if 2+2*i+1 >= len(pdu) {
				return nil, fmt.Errorf("short response % x", pdu)
			}
			out[i] = binary.BigEndian.Uint16(pdu[2+2*i:])
		default:
			return nil, fmt.Errorf("not a read: % x", pdu)
		}
	}
	return out, nil
}

// master sends a request PDU to a unit and receives a response frame.
type master interface {
	send(t testing.TB, unit byte, pdu []byte)
	recv(t testing.TB, wait time.Duration) (unit byte, pdu []byte, err error)
}

// ask sends and waits for the answer, which must come from the same unit.
func ask(t testing.TB, m master, unit byte, pdu []byte) ([]byte, error) {
	t.Helper()
	m.send(t, unit, pdu)
	u, resp, err := m.recv(t, expectWait)
	if err == nil && u != unit {
		t.Fatalf("answer from unit %d to a request to unit %d", u, unit)
	}
	return resp, err
}

// read asks for n values and fails the test on anything but an answer.
func read(t testing.TB, m master, unit byte, table Table, addr uint16, n int) []uint16 {
	t.Helper()
	fc := map[Table]byte{Coil: 1, Discrete: 2, Holding: 3, Input: 4}[table]
	resp, err := ask(t, m, unit, readReq(fc, addr, uint16(n)))
	if err != nil {
		t.Fatalf("read %s %d+%d of unit %d: %v", table, addr, n, unit, err)
	}
	vals, err := values(resp, n)
	if err != nil {
		t.Fatalf("read %s %d+%d of unit %d: %v", table, addr, n, unit, err)
	}
	return vals
}

// quiet checks that unit answers nothing to pdu, then that the next
// answer on the line is other's to its own request: a late answer from
// unit would come first.
func quiet(t testing.TB, m master, unit byte, pdu []byte, other byte) {
	t.Helper()
	m.send(t, unit, pdu)
	if u, resp, err := m.recv(t, quietWait); !errors.Is(err, errTimeout) {
		t.Fatalf("unit %d answered % x (unit %d, %v), want silence", unit, resp, u, err)
	}
	m.send(t, other, readReq(3, 0, 1))
	u, resp, err := m.recv(t, expectWait)
	if err != nil || u != other {
		t.Fatalf("after the silence: unit %d answered % x, %v; want unit %d", u, resp, err, other)
	}
}

// tcpMaster speaks Modbus TCP; recv returns the transaction's unit.
type tcpMaster struct {
	conn net.Conn
	tid  uint16
	tids map[uint16]byte // transaction -> unit, of requests not yet answered
}

func dialTCP(t testing.TB, addr string) *tcpMaster {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &tcpMaster{conn: c, tids: map[uint16]byte{}}
}

func (m *tcpMaster) send(t testing.TB, unit byte, pdu []byte) {
	t.Helper()
	m.tid++
	m.tids[m.tid] = unit
	frame := binary.BigEndian.AppendUint16(nil, m.tid)
	frame = append(frame, 0, 0)
	frame = binary.BigEndian.AppendUint16(frame, uint16(len(pdu)+1))
	frame = append(append(frame, unit), pdu...)
	if _, err := m.conn.Write(frame); err != nil {
		t.Fatal(err)
	}
}

func (m *tcpMaster) recv(t testing.TB, wait time.Duration) (byte, []byte, error) {
	t.Helper()
	m.conn.SetReadDeadline(time.Now().Add(wait))
	head := make([]byte, 7)
	if _, err := io.ReadFull(m.conn, head); err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return 0, nil, errTimeout
		}
		return 0, nil, err
	}
	pdu := make([]byte, int(binary.BigEndian.Uint16(head[4:]))-1)
	if _, err := io.ReadFull(m.conn, pdu); err != nil {
		return 0, nil, err
	}
	tid := binary.BigEndian.Uint16(head)
	unit, ok := m.tids[tid]
	if !ok || unit != head[6] {
		t.Fatalf("answer % x % x to no request of ours", head, pdu)
	}
	delete(m.tids, tid)
	return unit, pdu, nil
}

// rtuMaster speaks Modbus RTU on a serial port (go.bug.st/serial, as the
// gateway does).
type rtuMaster struct {
	port serial.Port
	buf  []byte
}

func openRTU(t testing.TB, path string) *rtuMaster {
	t.Helper()
	p, err := serial.Open(path, &serial.Mode{BaudRate: 19200})
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	t.Cleanup(func() { p.Close() })
	return &rtuMaster{port: p}
}

func rtuFrame(unit byte, pdu []byte) []byte {
	f := append([]byte{unit}, pdu...)
	c := modbus.CRC(f)
	return append(f, byte(c), byte(c>>8))
}

func (m *rtuMaster) send(t testing.TB, unit byte, pdu []byte) {
	t.Helper()
	if _, err := m.port.Write(rtuFrame(unit, pdu)); err != nil {
		t.Fatal(err)
	}
}

// frameLen is the length of the response frame at the start of b, or 0
// if b is too short to tell.
func frameLen(b []byte) int {
	if len(b) < 3 {
		return 0
	}
	switch fc := b[1]; {
	case fc&0x80 != 0:
		return 5
	case fc <= 4:
		return 5 + int(b[2])
	default:
		return 8
	}
}

func (m *rtuMaster) recv(t testing.TB, wait time.Duration) (byte, []byte, error) {
	t.Helper()
	deadline := time.Now().Add(wait)
	chunk := make([]byte, 256)
	for {
		if n := frameLen(m.buf); n > 0 && len(m.buf) >= n {
			f := m.buf[:n]
			m.buf = m.buf[n:]
			if c := modbus.CRC(f[:n-2]); f[n-2] != byte(c) || f[n-1] != byte(c>>8) {
				return 0, nil, fmt.Errorf("bad CRC in % x", f)
			}
			return f[0], append([]byte(nil), f[1:n-2]...), nil
		}
		left := time.Until(deadline)
		if left <= 0 {
			return 0, nil, errTimeout
		}
		m.port.SetReadTimeout(left)
		n, err := m.port.Read(chunk)
		if err != nil {
			return 0, nil, err
		}
		m.buf = append(m.buf, chunk[:n]...)
	}
}
