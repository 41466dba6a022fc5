package hardware

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"periph.io/x/conn/v3"
	"periph.io/x/conn/v3/conntest"
	"periph.io/x/conn/v3/physic"
	"periph.io/x/conn/v3/spi"
	"periph.io/x/conn/v3/spi/spitest"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/clock/clocktest"
	"github.com/openhal/gateway/internal/hw/spi/mcp3xxx"
)

func (h *fakeHost) SPIPort(dev string) (spi.PortCloser, error) {
	if h.spi == nil {
		return nil, errors.New("no SPI on this host")
	}
	return h.spi(dev)
}

// fakePort is an SPI device file whose traffic is played back; it
// records how it was connected and closed, and fails the transfers while
// fail is set.
type fakePort struct {
	spitest.Playback
	mu       sync.Mutex
	connects []string // "1MHz mode 0, 8 bits"
	closed   int
	fail     error
}

func (p *fakePort) Connect(f physic.Frequency, mode spi.Mode, bits int) (spi.Conn, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.connects = append(p.connects, fmt.Sprintf("%v mode %d, %d bits", f, mode, bits))
	return &fakeConn{p}, nil
}

func (p *fakePort) Close() error {
	p.mu.Lock()
	p.closed++
	p.mu.Unlock()
	return nil
}

type fakeConn struct{ p *fakePort }

func (c *fakeConn) String() string               { return "fakeConn" }
func (c *fakeConn) Duplex() conn.Duplex          { return conn.Full }
func (c *fakeConn) TxPackets([]spi.Packet) error { return errors.New("not used") }

func (c *fakeConn) Tx(w, r []byte) error {
	c.p.mu.Lock()
	err := c.p.fail
	c.p.mu.Unlock()
	if err != nil {
		return err
	}
	return c.p.Playback.Tx(w, r)
}

func playedBack(ops ...conntest.IO) *fakePort {
	return &fakePort{Playback: spitest.Playback{Playback: conntest.Playback{Ops: ops, DontPanic: true}}}
}

// volts is a count in volts as the chip's transfer function gives it
// (count × VREF / 2^bits), computed at run time as mcp3xxx does: Go's
// exact constant arithmetic would round differently.
func volts(count int, vref float64, bits int) float64 {
	return float64(count) * vref / float64(int(1)<<bits)
}

// readByID reads the device with id among devs.
func readByID(t *testing.T, devs []device.Device, id string) (map[string]any, error) {
	t.Helper()
	for _, d := range devs {
		if d.Descriptor().ID == id {
			v, err := d.(device.Reader).Read(context.Background())
			if err != nil {
				return nil, err
			}
			return v.Value.(map[string]any), nil
		}
	}
	t.Fatalf("no device %s", id)
	return nil, nil
}

const adcBench = `
board: rpi4b
devices:
  soil: {kind: sensor, driver: mcp3008, bus: /dev/spidev0.0, channel: 0, scale: 30.303, unit: "%", quantity: moisture}
  bridge: {kind: sensor, driver: mcp3008, bus: "0.0", channel: 2, differential: true}
  tank: {kind: sensor, driver: mcp3208, bus: /dev/spidev0.1, channel: 5, vref: 4.096, maxHz: 500000}
  tank2: {kind: sensor, driver: mcp3208, bus: /dev/spidev0.1, channel: 1, differential: true, vref: 4.096, maxHz: 500000}
`

// Two chips, two channels each: one device file opened per chip and
// connected once, in mode 0 with 8-bit words at the file's clock; each
// reading the datasheets' three bytes (figure 6-1) and the volts and
// scaled quantity of the answer; both files closed at release.
func TestBuildSPIADCs(t *testing.T) {
	cfg, prof := parse(t, adcBench)
	ports := map[string]*fakePort{
		"/dev/spidev0.0": playedBack(
			conntest.IO{W: []byte{0x01, 0x80, 0x00}, R: []byte{0xff, 0xf8 | 0x02, 0x00}}, // soil: CH0 = 512
			conntest.IO{W: []byte{0x01, 0x20, 0x00}, R: []byte{0xff, 0xf8 | 0x01, 0x00}}, // bridge: CH2-CH3 = 256
		),
		"/dev/spidev0.1": playedBack(
			conntest.IO{W: []byte{0x07, 0x40, 0x00}, R: []byte{0x00, 0x08, 0x00}},        // tank: CH5 = 2048
			conntest.IO{W: []byte{0x04, 0x40, 0x00}, R: []byte{0xff, 0xe0 | 0x00, 0x7b}}, // tank2: CH1-CH0 = 123
		),
	}
	var opened []string
	h := &fakeHost{spi: func(dev string) (spi.PortCloser, error) {
		opened = append(opened, dev)
		return ports[dev], nil
	}}
	devs, release, err := Build(context.Background(), cfg, prof, h, clocktest.NewFake(time.Unix(0, 0)), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(opened) != 0 {
		t.Errorf("Build opened %v: a chip is set up at its first reading", opened)
	}
	for _, tc := range []struct {
		id   string
		want map[string]any
	}{
		{"soil", map[string]any{"voltage": volts(512, 3.3, 10), "moisture": volts(512, 3.3, 10) * 30.303}},
		{"bridge", map[string]any{"voltage": volts(256, 3.3, 10)}},
		{"tank", map[string]any{"voltage": volts(2048, 4.096, 12)}},
		{"tank2", map[string]any{"voltage": volts(123, 4.096, 12)}},
	} {
		got, err := readByID(t, devs, tc.id)
		if err != nil {
			t.Fatalf("%s: %v", tc.id, err)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s = %v, want %v", tc.id, got, tc.want)
		}
	}
	if strings.Join(opened, " ") != "/dev/spidev0.0 /dev/spidev0.1" {
		t.Errorf("opened %v, want each device file once", opened)
	}
	for dev, want := range map[string]string{"/dev/spidev0.0": "1MHz mode 0, 8 bits", "/dev/spidev0.1": "500kHz mode 0, 8 bits"} {
		if got := strings.Join(ports[dev].connects, "; "); got != want {
			t.Errorf("%s connected %q, want %q", dev, got, want)
		}
	}
	release()
	for dev, p := range ports {
		if p.closed != 1 {
			t.Errorf("%s closed %d times at release", dev, p.closed)
		}
		if err := p.Playback.Close(); err != nil {
			t.Errorf("%s: %v", dev, err)
		}
	}
}

// A device file that is not there yet (SPI not enabled, the overlay not
// loaded) does not stop the build: the channel's device is in fault with
// what the host said, and reads once the file is there.
func TestSPIADCMissingDeviceFileIsAFault(t *testing.T) {
	cfg, prof := parse(t, adcBench)
	var mu sync.Mutex
	var port *fakePort
	h := &fakeHost{spi: func(dev string) (spi.PortCloser, error) {
		mu.Lock()
		defer mu.Unlock()
		if port == nil || dev != "/dev/spidev0.0" {
			return nil, fmt.Errorf("no %s: is SPI enabled?", dev)
		}
		return port, nil
	}}
	devs, release, err := Build(context.Background(), cfg, prof, h, clocktest.NewFake(time.Unix(0, 0)), nil)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	defer release()
	_, err = readByID(t, devs, "soil")
	if err == nil || err.Error() != "set up: mcp3008 on /dev/spidev0.0: no /dev/spidev0.0: is SPI enabled?" {
		t.Fatalf("read: %v, want the setup's error", err)
	}
	mu.Lock()
	port = playedBack(conntest.IO{W: []byte{0x01, 0x80, 0x00}, R: []byte{0x00, 0x03, 0xff}})
	mu.Unlock()
	got, err := readByID(t, devs, "soil")
	if err != nil || got["voltage"] != volts(1023, 3.3, 10) {
		t.Fatalf("read once the file is there: %v, %v", got, err)
	}
}

// A transfer that fails, or a chip that does not drive MISO, is the
// channel's fault with the chip's words; the device file is closed, and
// the next reading opens it again and reads.
func TestSPIADCBusErrorIsAFault(t *testing.T) {
	cfg, prof := parse(t, adcBench)
	first := playedBack(conntest.IO{W: []byte{0x01, 0x80, 0x00}, R: []byte{0xff, 0xff, 0xff}}) // nobody drives MISO
	second := playedBack(conntest.IO{W: []byte{0x01, 0x80, 0x00}, R: []byte{0x00, 0x00, 0x01}})
	second.fail = errors.New("sysfs-spi: Tx() failed: no such device")
	third := playedBack(conntest.IO{W: []byte{0x01, 0x80, 0x00}, R: []byte{0x00, 0x00, 0x01}})
	files := []*fakePort{first, second, third}
	var opens int
	h := &fakeHost{spi: func(dev string) (spi.PortCloser, error) {
		opens++
		return files[opens-1], nil
	}}
	devs, release, err := Build(context.Background(), cfg, prof, h, clocktest.NewFake(time.Unix(0, 0)), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	_, err = readByID(t, devs, "soil")
	if !errors.Is(err, mcp3xxx.ErrNoAnswer) || !strings.HasPrefix(err.Error(), "mcp3008 on /dev/spidev0.0: mcp3xxx: read CH0: the null bit") {
		t.Errorf("floating MISO: %v", err)
	}
	_, err = readByID(t, devs, "soil")
	if err == nil || err.Error() != "mcp3008 on /dev/spidev0.0: mcp3xxx: read CH0: sysfs-spi: Tx() failed: no such device" {
		t.Errorf("failed transfer: %v", err)
	}
	got, err := readByID(t, devs, "soil")
	if err != nil || got["voltage"] != volts(1, 3.3, 10) {
		t.Errorf("after the faults: %v, %v", got, err)
	}
	if opens != 3 || first.closed != 1 || second.closed != 1 || third.closed != 0 {
		t.Errorf("opens %d, closed %d %d %d: want each failed file closed and opened again", opens, first.closed, second.closed, third.closed)
	}
}

// mcpEmulator is an MCP3xxx as its datasheet describes it, for traffic
// whose order no playback can fix: it decodes the command bits (start
// bit, SGL/DIFF, D2 D1 D0), answers the count of that input after the
// null bit (ones in the undefined bits before it), and counts the
// transfers that overlapped another.
type mcpEmulator struct {
	channels int
	counts   func(in mcp3xxx.Input) int
	busy     atomic.Bool
	overlaps atomic.Int32
	txs      atomic.Int32
}

func (e *mcpEmulator) String() string                                            { return "mcpEmulator" }
func (e *mcpEmulator) Duplex() conn.Duplex                                       { return conn.Full }
func (e *mcpEmulator) TxPackets([]spi.Packet) error                              { return errors.New("not used") }
func (e *mcpEmulator) Close() error                                              { return nil }
func (e *mcpEmulator) LimitSpeed(physic.Frequency) error                         { return nil }
func (e *mcpEmulator) Connect(physic.Frequency, spi.Mode, int) (spi.Conn, error) { return e, nil }

func (e *mcpEmulator) Tx(w, r []byte) error {
	if !e.busy.CompareAndSwap(false, true) {
		e.overlaps.Add(1)
	}
	defer e.busy.Store(false)
	e.txs.Add(1)
	runtime.Gosched() // give another transfer every chance to overlap
	bit := func(i int) int { return int(w[i/8]>>(7-i%8)) & 1 }
	start := 0
	for start < 24 && bit(start) == 0 {
		start++
	}
	if len(w) != 3 || len(r) != 3 || start > 7 {
		return fmt.Errorf("not a conversion: % x", w)
	}
	ch := (bit(start+2)<<2 | bit(start+3)<<1 | bit(start+4)) & (e.channels - 1)
	count := e.counts(mcp3xxx.Input{Channel: ch, Differential: bit(start+1) == 0})
	// Sample on D0's clock and the next, the null bit, then the result
	// ending with the last clock.
	null := start + 6
	for i := range 24 {
		v := 1
		switch {
		case i == null:
			v = 0
		case i > null:
			v = count >> (23 - i) & 1
		}
		if v == 1 {
			r[i/8] |= 1 << (7 - i%8)
		} else {
			r[i/8] &^= 1 << (7 - i%8)
		}
	}
	return nil
}

// Eight channels of one chip polled at once from their devices'
// goroutines: one device file, conversions one at a time, each channel
// reading its own input.
func TestSPIADCChannelsTakeTurns(t *testing.T) {
	var b strings.Builder
	b.WriteString("board: rpi4b\ndevices:\n")
	for ch := range 8 {
		fmt.Fprintf(&b, "  ch%d: {kind: sensor, driver: mcp3008, bus: /dev/spidev0.0, channel: %d}\n", ch, ch)
	}
	cfg, prof := parse(t, b.String())
	emu := &mcpEmulator{channels: 8, counts: func(in mcp3xxx.Input) int { return 100*in.Channel + 7 }}
	var opens atomic.Int32
	h := &fakeHost{spi: func(string) (spi.PortCloser, error) { opens.Add(1); return emu, nil }}
	devs, release, err := Build(context.Background(), cfg, prof, h, clocktest.NewFake(time.Unix(0, 0)), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	const rounds = 20
	var wg sync.WaitGroup
	errs := make(chan error, len(devs)*rounds)
	for _, d := range devs {
		wg.Go(func() {
			var ch int
			fmt.Sscanf(d.Descriptor().ID, "ch%d", &ch)
			want := volts(100*ch+7, 3.3, 10)
			for range rounds {
				v, err := d.(device.Reader).Read(context.Background())
				if err == nil && v.Value.(map[string]any)["voltage"] != want {
					err = fmt.Errorf("ch%d read %v, want %v", ch, v.Value, want)
				}
				if err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if opens.Load() != 1 || emu.overlaps.Load() != 0 || emu.txs.Load() != 8*rounds {
		t.Errorf("opens %d, overlapping transfers %d, transfers %d", opens.Load(), emu.overlaps.Load(), emu.txs.Load())
	}
}

// The emulator reads the datasheets' commands as the chips do (the
// bytes of TestBuildSPIADCs, and mcp3xxx's own), so that the test above
// proves something.
func TestMCPEmulator(t *testing.T) {
	for _, tc := range []struct {
		channels int
		w        []byte
		in       mcp3xxx.Input
		r        []byte
	}{
		{8, []byte{0x01, 0x80, 0x00}, mcp3xxx.Input{Channel: 0}, []byte{0xff, 0xf8 | 0x02, 0x9a}},
		{8, []byte{0x01, 0x20, 0x00}, mcp3xxx.Input{Channel: 2, Differential: true}, []byte{0xff, 0xf8 | 0x02, 0x9a}},
		{8, []byte{0x07, 0x40, 0x00}, mcp3xxx.Input{Channel: 5}, []byte{0xff, 0xe0 | 0x02, 0x9a}},
		{4, []byte{0x04, 0x40, 0x00}, mcp3xxx.Input{Channel: 1, Differential: true}, []byte{0xff, 0xe0 | 0x02, 0x9a}},
	} {
		var asked mcp3xxx.Input
		e := &mcpEmulator{channels: tc.channels, counts: func(in mcp3xxx.Input) int { asked = in; return 0x29a }}
		r := make([]byte, 3)
		if err := e.Tx(tc.w, r); err != nil || asked != tc.in || string(r) != string(tc.r) {
			t.Errorf("Tx(% x) asked %+v, answered % x, %v; want %+v, % x", tc.w, asked, r, err, tc.in, tc.r)
		}
	}
}
