package gatewayd

import (
	"bytes"
	"testing"

	"github.com/openhal/gateway/internal/board"
)

func TestPrintConfigWarnings(t *testing.T) {
	cfg, err := board.Parse([]byte("board: sim\ndevices:\n  sim.fan: {safe: none, noSafeReason: cools the rack}\n"))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	printConfigWarnings(&b, cfg)
	want := "gateway: warning: devices.sim.fan.safe: none: an emergency stop leaves sim.fan as it is (cools the rack)\n"
	if b.String() != want {
		t.Errorf("printed %q, want %q", b.String(), want)
	}
}
