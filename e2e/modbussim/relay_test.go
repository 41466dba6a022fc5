//go:build linux

package modbussim

import (
	"bytes"
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"slices"
	"testing"
	"time"

	"go.bug.st/serial"
)

// TestNoiseToGateway: noise reaches the gateway's port byte for byte.
func TestNoiseToGateway(t *testing.T) {
	_, relay := StartRTUBus(t, 19200, bench())
	m := openRTU(t, relay.Gateway)
	noise := []byte{0x00, 0xDE, 0xAD, 0xFF}
	relay.Noise(noise, nil)
	got := make([]byte, 0, len(noise))
	buf := make([]byte, 16)
	m.port.SetReadTimeout(expectWait)
	for len(got) < len(noise) {
		n, err := m.port.Read(buf)
		if err != nil || n == 0 {
			t.Fatalf("read after %q: %d, %v", got, n, err)
		}
		got = append(got, buf[:n]...)
	}
	if !bytes.Equal(got, noise) {
		t.Errorf("gateway got % x, want % x", got, noise)
	}
	if toGw, _ := relay.Bytes(); toGw != int64(len(noise)) {
		t.Errorf("Bytes to the gateway = %d, want %d", toGw, len(noise))
	}
}

// TestNoiseToSim: after noise of any kind, the simulator answers the next
// request (pymodbus's own RTU framer loses it, or more).
func TestNoiseToSim(t *testing.T) {
	random := make([]byte, 40)
	rng := rand.New(rand.NewPCG(31, 31))
	for i := range random {
		random[i] = byte(rng.UintN(256))
	}
	badCRC := rtuFrame(1, writeRegs(200, 9))
	badCRC[len(badCRC)-1] ^= 0xFF
	tests := []struct {
		name  string
		noise []byte
	}{
		{"one byte", []byte{0xFF}},
		{"zeros", []byte{0, 0, 0}},
		{"the head of a long write", []byte{0x01, 0x10, 0x00, 0x00, 0x00, 0x7B, 0xF6}},
		{"a frame for another unit", rtuFrame(9, readReq(3, 0, 1))},
		{"a frame with a bad CRC", badCRC},
		{"random", random},
	}
	sim, relay := StartRTUBus(t, 19200, bench())
	m := openRTU(t, relay.Gateway)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			relay.Noise(nil, tt.noise)
			if got := read(t, m, 1, Holding, 100, 2); !slices.Equal(got, []uint16{0x42F6, 0xE979}) {
				t.Errorf("after noise: holding 100+2 = %v", got)
			}
		})
	}
	if got := sim.Get(1, Holding, 200, 1); got[0] != 0 {
		t.Errorf("the frame with a bad CRC was executed: holding 200 = %d", got[0])
	}
}

// TestUnplugPlug: unplugging makes the open port fail and the link go;
// plugging in gives a new terminal at the same link, talking to the same
// simulator.
func TestUnplugPlug(t *testing.T) {
	sim, relay := StartRTUBus(t, 19200, bench())
	m := openRTU(t, relay.Gateway)
	read(t, m, 1, Holding, 100, 1)
	first, err := os.Readlink(relay.Gateway)
	if err != nil {
		t.Fatal(err)
	}

	relay.Unplug()
	m.port.SetReadTimeout(expectWait)
	if n, err := m.port.Read(make([]byte, 8)); err == nil {
		t.Errorf("read on an unplugged port = %d, nil; want an error", n)
	}
	if _, err := os.Lstat(relay.Gateway); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("link while unplugged: %v, want it gone", err)
	}
	if p, err := serial.Open(relay.Gateway, &serial.Mode{BaudRate: 19200}); err == nil {
		p.Close()
		t.Error("opened the port while unplugged")
	}
	if msg := fatalOf(t, func(tb testing.TB) { relay.t = tb; relay.Unplug() }); msg != "modbussim relay: Unplug while unplugged" {
		t.Errorf("second Unplug failed with %q", msg)
	}
	relay.t = t

	relay.Plug()
	if _, err := os.Readlink(relay.Gateway); err != nil {
		t.Fatalf("link after Plug: %v (the first pointed at %s)", err, first)
	}
	sim.Set(1, Holding, 100, 5)
	m = openRTU(t, relay.Gateway)
	if got := read(t, m, 1, Holding, 100, 1); got[0] != 5 {
		t.Errorf("after Plug: holding 100 = %d, want 5", got[0])
	}
	if msg := fatalOf(t, func(tb testing.TB) { relay.t = tb; relay.Plug() }); msg != "modbussim relay: Plug while plugged in" {
		t.Errorf("second Plug failed with %q", msg)
	}
	relay.t = t
}

// TestReopen: the gateway closes its port and opens it again (after a
// fault, or as each mbpoll run does): the relay goes on.
func TestReopen(t *testing.T) {
	_, relay := StartRTUBus(t, 19200, bench())
	for i := range 3 {
		m := openRTU(t, relay.Gateway)
		if got := read(t, m, 2, Holding, 0, 1); got[0] != 7 {
			t.Errorf("open %d: holding 0 of unit 2 = %d", i+1, got[0])
		}
		m.port.Close()
	}
}

// TestPace: paced bytes arrive no sooner than the line would bring them,
// each one, and all of them within 3% of the line's time.
func TestPace(t *testing.T) {
	// About a second each: a stall of a busy machine at the last byte
	// (tens of ms under load) stays within the bound.
	tests := []struct {
		baud, bits, n int
	}{
		{19200, 10, 2000},
		{115200, 11, 10000},
		{9600, 11, 900},
	}
	relay := NewRelay(t)
	gw, err := os.OpenFile(relay.Gateway, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer gw.Close()
	sim, err := os.OpenFile(relay.Sim, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	for _, tt := range tests {
		relay.Pace(tt.baud, tt.bits)
		ct := time.Duration(tt.bits) * time.Second / time.Duration(tt.baud)
		for _, way := range []struct {
			name     string
			src, dst *os.File
		}{{"to the gateway", sim, gw}, {"to the sim", gw, sim}} {
			// No byte may ever come early; the rate is judged on the best
			// of a few runs, since a stall of the whole machine (other
			// work on it) at the last byte is not the relay's.
			model := time.Duration(tt.n) * ct
			best := time.Duration(1<<63 - 1)
			for range 3 {
				best = min(best, paced(t, way.src, way.dst, tt.n, ct))
				if float64(best) <= 1.03*float64(model) {
					break
				}
			}
			ratio := float64(best) / float64(model)
			t.Logf("%d baud %d bits, %d bytes %s: %v for the line's %v (%.4f)", tt.baud, tt.bits, tt.n, way.name, best, model, ratio)
			if ratio > 1.03 {
				t.Errorf("%d baud, %s: %d bytes took %v at best, more than 3%% over the line's %v", tt.baud, way.name, tt.n, best, model)
			}
		}
	}
	relay.Pace(0, 0) // off: no line's time at all
	lineTime := 1000 * 10 * time.Second / 19200
	if elapsed := paced(t, sim, gw, 1000, 0); elapsed > lineTime/2 {
		t.Errorf("unpaced, 1000 bytes took %v, half 19200 baud's time or more", elapsed)
	}
}

// paced writes n bytes to src and reads them from dst, failing the test
// if the k-th byte arrives before k character times have passed since
// the write began; it returns the time the last byte took.
func paced(t *testing.T, src, dst *os.File, n int, ct time.Duration) time.Duration {
	t.Helper()
	data := make([]byte, n)
	for i := range data {
		data[i] = byte(i * 7)
	}
	start := time.Now()
	werr := make(chan error, 1)
	go func() {
		_, err := src.Write(data)
		werr <- err
	}()
	got := make([]byte, 0, n)
	buf := make([]byte, 4096)
	var early int
	for len(got) < n {
		dst.SetReadDeadline(time.Now().Add(expectWait))
		k, err := dst.Read(buf)
		at := time.Since(start)
		if err != nil {
			t.Fatalf("after %d of %d bytes: %v", len(got), n, err)
		}
		got = append(got, buf[:k]...)
		if due := time.Duration(len(got)) * ct; at < due && early == 0 {
			early = len(got)
			t.Errorf("byte %d arrived after %v, before its time %v", len(got), at, due)
		}
	}
	elapsed := time.Since(start)
	if err := <-werr; err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data) {
		t.Fatal("bytes changed on the way")
	}
	return elapsed
}
