package sensirion

import (
	"errors"
	"strings"
	"testing"

	"periph.io/x/conn/v3/i2c"
	"periph.io/x/conn/v3/i2c/i2ctest"
)

func TestCRC8(t *testing.T) {
	tests := []struct {
		name string
		data []byte
		want byte
	}{
		{"datasheet example 0xBEEF", []byte{0xBE, 0xEF}, 0x92},
		{"zero word", []byte{0x00, 0x00}, 0x81},
		{"all ones", []byte{0xFF, 0xFF}, 0xAC},
		{"empty is the initial value", nil, 0xFF},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := CRC8(tt.data); got != tt.want {
				t.Errorf("CRC8(% X) = 0x%02X, want 0x%02X", tt.data, got, tt.want)
			}
		})
	}
}

func TestWords(t *testing.T) {
	tests := []struct {
		name    string
		in      []byte
		names   []string
		want    []uint16
		wantErr string
	}{
		{"two good words", []byte{0xBE, 0xEF, 0x92, 0x00, 0x00, 0x81}, []string{"a", "b"}, []uint16{0xBEEF, 0}, ""},
		{"bad crc on second word names it", []byte{0xBE, 0xEF, 0x92, 0x00, 0x00, 0x80}, []string{"temperature", "humidity"}, nil, "humidity word 0x0000: crc mismatch: got 0x80, want 0x81"},
		{"short read", []byte{0xBE, 0xEF}, []string{"a"}, nil, "read 2 bytes for 1 words"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Words(tt.in, tt.names...)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Words() error = %v, want %q", err, tt.wantErr)
				}
				if strings.Contains(tt.wantErr, "crc") && !errors.Is(err, ErrCRC) {
					t.Errorf("error %v is not ErrCRC", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Words() error = %v", err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("Words() = %v, want %v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("word %d = 0x%04X, want 0x%04X", i, got[i], tt.want[i])
				}
			}
		})
	}
}

func TestCommandIsBigEndian(t *testing.T) {
	bus := &i2ctest.Playback{Ops: []i2ctest.IO{{Addr: 0x44, W: []byte{0x30, 0xA2}}}}
	if err := Command(&i2c.Dev{Bus: bus, Addr: 0x44}, 0x30A2); err != nil {
		t.Fatal(err)
	}
	if err := bus.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestCelsius checks the shared transfer function at points where it is
// exact: both ends of the range and 0.4 of it.
func TestCelsius(t *testing.T) {
	tests := []struct {
		raw  uint16
		want float64
	}{
		{0x0000, -45},
		{0x6666, 25},
		{0xFFFF, 130},
	}
	for _, tt := range tests {
		if got := Celsius(tt.raw); got != tt.want {
			t.Errorf("Celsius(0x%04X) = %v, want %v", tt.raw, got, tt.want)
		}
	}
}
