package mcp3xxx

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"periph.io/x/conn/v3/conntest"
	"periph.io/x/conn/v3/physic"
	"periph.io/x/conn/v3/spi/spitest"
)

// playback is a bus that expects ops, in order, and fails the test on
// any other traffic or on ops left unplayed.
func playback(t *testing.T, ops ...conntest.IO) *spitest.Playback {
	t.Helper()
	p := &spitest.Playback{Playback: conntest.Playback{Ops: ops, DontPanic: true}}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Error(err)
		}
	})
	return p
}

// The command bytes are the datasheets' figure 6-1 (8-bit segments); the
// bytes read back carry undefined bits before the null bit, which must
// not reach the count (0xf8, 0xfb and 0xe0 put ones there, up to the null
// bit: gpiozero's "xxxxx0RR" and "xxx0RRRR").
func TestRead(t *testing.T) {
	for _, tc := range []struct {
		name  string
		model Model
		in    Input
		w, r  []byte
		count int
	}{
		{"3008 CH0", MCP3008, Input{Channel: 0}, []byte{0x01, 0x80, 0x00}, []byte{0xff, 0xf8 | 0x02, 0x9a}, 0x29a},
		{"3008 CH7", MCP3008, Input{Channel: 7}, []byte{0x01, 0xf0, 0x00}, []byte{0xff, 0xfb, 0xff}, 1023},
		{"3008 CH0-CH1", MCP3008, Input{Channel: 0, Differential: true}, []byte{0x01, 0x00, 0x00}, []byte{0x00, 0x00, 0x00}, 0},
		{"3008 CH7-CH6", MCP3008, Input{Channel: 7, Differential: true}, []byte{0x01, 0x70, 0x00}, []byte{0x00, 0x01, 0x00}, 256},
		{"3004 CH3", MCP3004, Input{Channel: 3}, []byte{0x01, 0xb0, 0x00}, []byte{0x00, 0x02, 0x00}, 512},
		{"3004 CH3-CH2", MCP3004, Input{Channel: 3, Differential: true}, []byte{0x01, 0x30, 0x00}, []byte{0xff, 0xf8 | 0x01, 0xff}, 511},
		{"3208 CH0", MCP3208, Input{Channel: 0}, []byte{0x06, 0x00, 0x00}, []byte{0xff, 0xe0 | 0x0a, 0xbc}, 0xabc},
		{"3208 CH5", MCP3208, Input{Channel: 5}, []byte{0x07, 0x40, 0x00}, []byte{0x00, 0x0f, 0xff}, 4095},
		{"3208 CH6", MCP3208, Input{Channel: 6}, []byte{0x07, 0x80, 0x00}, []byte{0x00, 0x08, 0x00}, 2048},
		{"3208 CH2-CH3", MCP3208, Input{Channel: 2, Differential: true}, []byte{0x04, 0x80, 0x00}, []byte{0x00, 0x00, 0x01}, 1},
		{"3204 CH3", MCP3204, Input{Channel: 3}, []byte{0x06, 0xc0, 0x00}, []byte{0x00, 0x01, 0x00}, 256},
		{"3204 CH1-CH0", MCP3204, Input{Channel: 1, Differential: true}, []byte{0x04, 0x40, 0x00}, []byte{0xff, 0xe0 | 0x07, 0xff}, 2047},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := New(playback(t, conntest.IO{W: tc.w, R: tc.r}), tc.model, 0)
			if err != nil {
				t.Fatal(err)
			}
			got, err := d.Read(context.Background(), tc.in)
			if err != nil || got != tc.count {
				t.Fatalf("Read(%v) = %d, %v; want %d", tc.in, got, err, tc.count)
			}
		})
	}
}

// The null bit is the one bit the chips always drive low: high, nothing
// drove MISO (a line pulled up, the chip unpowered or not selected), and
// the read fails instead of returning the top count.
func TestNullBit(t *testing.T) {
	for _, tc := range []struct {
		name  string
		model Model
		w, r  []byte
	}{
		{"3008 floating high", MCP3008, []byte{0x01, 0x80, 0x00}, []byte{0xff, 0xff, 0xff}},
		{"3008 null bit alone", MCP3008, []byte{0x01, 0x80, 0x00}, []byte{0x00, 0x04, 0x00}},
		{"3208 floating high", MCP3208, []byte{0x06, 0x00, 0x00}, []byte{0xff, 0xff, 0xff}},
		{"3208 null bit alone", MCP3208, []byte{0x06, 0x00, 0x00}, []byte{0x00, 0x10, 0x00}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := New(playback(t, conntest.IO{W: tc.w, R: tc.r}), tc.model, 0)
			if err != nil {
				t.Fatal(err)
			}
			got, err := d.Read(context.Background(), Input{Channel: 0})
			if !errors.Is(err, ErrNoAnswer) || !strings.Contains(err.Error(), "mcp3xxx: read CH0: the null bit") {
				t.Fatalf("Read = %d, %v; want ErrNoAnswer", got, err)
			}
		})
	}
}

// A channel the chip lacks, a cancelled context and a failed transfer
// are errors that name what was asked, and only the failed transfer
// reaches the bus.
func TestReadErrors(t *testing.T) {
	d, err := New(playback(t), MCP3004, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Read(context.Background(), Input{Channel: 4}); err == nil || !strings.Contains(err.Error(), "MCP3004 has no channel 4 (0 to 3)") {
		t.Errorf("channel 4 of an MCP3004: %v", err)
	}
	if _, err := d.Read(context.Background(), Input{Channel: -1}); err == nil {
		t.Error("channel -1: no error")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := d.Read(ctx, Input{Channel: 1}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}

	failing := &spitest.Playback{Playback: conntest.Playback{DontPanic: true}}
	f, err := New(failing, MCP3008, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Read(context.Background(), Input{Channel: 2}); err == nil || !strings.Contains(err.Error(), "mcp3xxx: read CH2: ") {
		t.Errorf("a failed transfer: %v", err)
	}
}

func TestClockBounds(t *testing.T) {
	for _, tc := range []struct {
		model Model
		hz    physic.Frequency
		ok    bool
	}{
		{MCP3008, 0, true},
		{MCP3008, 3600 * physic.KiloHertz, true},
		{MCP3008, 3601 * physic.KiloHertz, false},
		{MCP3208, 2 * physic.MegaHertz, true},
		{MCP3208, 3 * physic.MegaHertz, false},
		{MCP3204, 9 * physic.KiloHertz, false},
		{Model(9), 0, false},
	} {
		_, err := New(&spitest.Playback{}, tc.model, tc.hz)
		if (err == nil) != tc.ok {
			t.Errorf("New(%v, %v): %v, want ok %v", tc.model, tc.hz, err, tc.ok)
		}
	}
}

func TestVoltsAndNames(t *testing.T) {
	d, _ := New(&spitest.Playback{}, MCP3008, 0)
	if v := d.Volts(512, 3.3); v != 1.65 {
		t.Errorf("512 of 1024 at 3.3 V = %v V", v)
	}
	d12, _ := New(&spitest.Playback{}, MCP3208, 0)
	if v := d12.Volts(4095, 4.096); v != 4.095 {
		t.Errorf("4095 of 4096 at 4.096 V = %v V", v)
	}
	for in, want := range map[Input]string{
		{Channel: 3}:                     "CH3",
		{Channel: 0, Differential: true}: "CH0-CH1",
		{Channel: 1, Differential: true}: "CH1-CH0",
		{Channel: 6, Differential: true}: "CH6-CH7",
		{Channel: 7, Differential: true}: "CH7-CH6",
	} {
		if got := in.String(); got != want {
			t.Errorf("%#v is %q, want %q", in, got, want)
		}
	}
}

// Channels of one chip read from several goroutines (several devices on
// one chip) take turns: each transaction is whole, and the race detector
// sees no two sharing the Dev's buffers.
func TestReadsTakeTurns(t *testing.T) {
	const n = 16
	ops := make([]conntest.IO, n)
	for i := range ops {
		ops[i] = conntest.IO{W: []byte{0x01, 0x80, 0x00}, R: []byte{0x00, 0x01, 0x23}}
	}
	d, err := New(playback(t, ops...), MCP3008, 0)
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, n)
	for range n {
		go func() {
			got, err := d.Read(context.Background(), Input{Channel: 0})
			if err == nil && got != 0x123 {
				err = fmt.Errorf("read %#x, want 0x123", got)
			}
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
