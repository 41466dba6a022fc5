package modbus

import (
	"bytes"
	"testing"
	"time"

	"go.bug.st/serial"
)

func frame(b ...byte) []byte { return AppendCRC(b) }

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// TestFindFrame checks that the reply is found at any offset among
// noise, and what is reported when none is whole and valid.
func TestFindFrame(t *testing.T) {
	reply := frame(0x01, 0x03, 0x04, 0x00, 0x0A, 0x00, 0x0B)
	bad := append(bytes.Clone(reply[:len(reply)-1]), reply[len(reply)-1]^0xFF)
	tests := []struct {
		name   string
		buf    []byte
		pdu    []byte // want
		badCRC bool
	}{
		{"clean", reply, reply[1:7], false},
		{"noise before", cat(b(0x00, 0xFF, 0x13, 0x37), reply), reply[1:7], false},
		{"our unit and function with a long byte count before", cat(b(0x01, 0x03, 0xF0, 0x22), reply), reply[1:7], false},
		{"our unit twice before", cat(b(0x01, 0x01, 0x01), reply), reply[1:7], false},
		{"trailing bytes after", cat(reply, b(0x01, 0x03)), reply[1:7], false},
		{"bad CRC then good", cat(bad, reply), reply[1:7], false},
		{"bad CRC alone", bad, nil, true},
		{"partial", reply[:6], nil, false},
		{"another unit", frame(0x02, 0x03, 0x04, 0x00, 0x0A, 0x00, 0x0B), nil, false},
		{"another function", frame(0x01, 0x04, 0x04, 0x00, 0x0A, 0x00, 0x0B), nil, false},
		{"exception", cat(b(0x55), frame(0x01, 0x83, 0x02)), b(0x83, 0x02), false},
		{"zero byte count", frame(0x01, 0x03, 0x00), nil, false},
		{"empty", nil, nil, false},
		{"one byte", b(0x01), nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := findFrame(tt.buf, 0x01, 0x03)
			if !bytes.Equal(s.pdu, tt.pdu) {
				t.Errorf("pdu = % x, want % x", s.pdu, tt.pdu)
			}
			if tt.pdu == nil && (s.badCRC != nil) != tt.badCRC {
				t.Errorf("badCRC = % x, want one: %v", s.badCRC, tt.badCRC)
			}
		})
	}
}

// TestStrayReply checks that another unit's whole, valid reply is found
// among noise, of any function, and that unit's own frames, broken
// frames and noise are not taken for one.
func TestStrayReply(t *testing.T) {
	late := frame(0x02, 0x01, 0x01, 0x01)
	tests := []struct {
		name  string
		buf   []byte
		at, n int // want; n 0: none
	}{
		{"another unit's reply", late, 0, len(late)},
		{"after noise", cat(b(0x55, 0x13), late), 2, len(late)},
		{"another unit's exception", frame(0x07, 0x83, 0x02), 0, 5},
		{"our unit's own frame", frame(0x01, 0x03, 0x02, 0x00, 0x01), 0, 0},
		{"bad CRC", append(bytes.Clone(late[:len(late)-1]), late[len(late)-1]^0xFF), 0, 0},
		{"cut short", late[:4], 0, 0},
		{"noise", b(0x55, 0x00, 0xFF), 0, 0},
		{"empty", nil, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if at, n := strayReply(tt.buf, 0x01); n != tt.n || (n > 0 && at != tt.at) {
				t.Errorf("strayReply = %d, %d; want %d, %d", at, n, tt.at, tt.n)
			}
		})
	}
}

// TestReplyLengths checks the reply length of each function RTU knows,
// and that it refuses the others.
func TestReplyLengths(t *testing.T) {
	tests := []struct {
		fc   byte
		head []byte // the frame's first bytes
		want int
	}{
		{0x01, b(1, 0x01, 3), 8},
		{0x03, b(1, 0x03, 250), 255},
		{0x03, b(1, 0x03, 252), 0}, // beyond a PDU
		{0x03, b(1, 0x03), -1},
		{0x03, b(1), -1},
		{0x03, b(1, 0x83), 5},
		{0x05, b(1, 0x05), 8},
		{0x06, b(1, 0x06), 8},
		{0x07, b(1, 0x07), 5},
		{0x0F, b(1, 0x0F), 8},
		{0x10, b(1, 0x10), 8},
		{0x16, b(1, 0x16), 10},
		{0x17, b(1, 0x17, 4), 9},
		{0x18, b(1, 0x18, 0x00, 0x06), 12},
		{0x18, b(1, 0x18, 0x01), -1},
		{0x2B, b(1, 0x2B, 0x0E), 0},
	}
	for _, tt := range tests {
		if got := replyFrameLen(tt.fc, tt.head); got != tt.want {
			t.Errorf("replyFrameLen(%#02x, % x) = %d, want %d", tt.fc, tt.head, got, tt.want)
		}
	}
	for _, fc := range []byte{0x2B, 0x41, 0x64} {
		if rtuKnows(fc) {
			t.Errorf("rtuKnows(%#02x) = true", fc)
		}
	}
}

// TestFrameTiming checks frame times and the default frame gap.
func TestFrameTiming(t *testing.T) {
	ft := []struct {
		baud, bits, n int
		want          time.Duration
	}{
		{9600, 10, 8, 8333333 * time.Nanosecond},
		{19200, 11, 8, 4583333 * time.Nanosecond},
		{115200, 10, 256, 22222222 * time.Nanosecond},
		{19200, 0, 1, 572916 * time.Nanosecond}, // 11 bits
		{0, 11, 8, 0},
	}
	for _, tt := range ft {
		if got := FrameTime(tt.baud, tt.bits, tt.n); got != tt.want {
			t.Errorf("FrameTime(%d, %d, %d) = %v, want %v", tt.baud, tt.bits, tt.n, got, tt.want)
		}
	}
	gaps := []struct {
		cfg  RTUConfig
		want time.Duration
	}{
		{RTUConfig{Baud: 9600}, 4010416 * time.Nanosecond}, // 3.5 × 11 bits
		{RTUConfig{Baud: 9600, CharBits: 10}, 3645833 * time.Nanosecond},
		{RTUConfig{Baud: 19200}, 2005208 * time.Nanosecond},
		{RTUConfig{Baud: 19200, CharBits: 10}, 1822916 * time.Nanosecond},
		{RTUConfig{Baud: 38400}, MinFrameGap},
		{RTUConfig{Baud: 115200}, MinFrameGap},
		{RTUConfig{}, MinFrameGap},
		{RTUConfig{Baud: 115200, FrameGap: 5 * time.Millisecond}, 5 * time.Millisecond},
	}
	for _, tt := range gaps {
		if got := tt.cfg.Gap(); got != tt.want {
			t.Errorf("%+v.Gap() = %v, want %v", tt.cfg, got, tt.want)
		}
	}
}

// TestRTUConfigValidate checks the settings refused.
func TestRTUConfigValidate(t *testing.T) {
	if err := (RTUConfig{Baud: 19200, CharBits: 11, FrameGap: time.Millisecond, DE: DERTSLow}).Validate(); err != nil {
		t.Errorf("valid config: %v", err)
	}
	err := RTUConfig{Baud: -1, CharBits: 3, FrameGap: -time.Second, DE: 7}.Validate()
	want := "baud -1: negative\ncharacter bits 3: want 7 to 12 (start, data, parity, stop)\nframe gap -1s: negative\nDE 7: want none, rts or rts-low"
	if err == nil || err.Error() != want {
		t.Errorf("Validate = %v, want %q", err, want)
	}
	for i, name := range []string{"none", "rts", "rts-low"} {
		if d, ok := ParseDE(name); !ok || d != DE(i) || d.String() != name {
			t.Errorf("ParseDE(%q) = %v, %v", name, d, ok)
		}
	}
	if _, ok := ParseDE("RTS"); ok {
		t.Error("ParseDE(RTS) accepted")
	}
}

// TestModeCharBits checks the character size OpenRTU takes from a mode.
func TestModeCharBits(t *testing.T) {
	tests := []struct {
		mode serial.Mode
		want int
	}{
		{serial.Mode{DataBits: 8, Parity: serial.NoParity, StopBits: serial.OneStopBit}, 10},
		{serial.Mode{DataBits: 8, Parity: serial.EvenParity, StopBits: serial.OneStopBit}, 11},
		{serial.Mode{DataBits: 8, Parity: serial.NoParity, StopBits: serial.TwoStopBits}, 11},
		{serial.Mode{DataBits: 7, Parity: serial.OddParity, StopBits: serial.OneStopBit}, 10},
		{serial.Mode{DataBits: 8, Parity: serial.EvenParity, StopBits: serial.OnePointFiveStopBits}, 12},
		{serial.Mode{}, 10}, // go.bug.st/serial's zero mode: 8N1
	}
	for _, tt := range tests {
		if got := modeCharBits(&tt.mode); got != tt.want {
			t.Errorf("modeCharBits(%+v) = %d, want %d", tt.mode, got, tt.want)
		}
	}
}
