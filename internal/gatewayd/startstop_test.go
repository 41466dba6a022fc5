//go:build unix

package gatewayd

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/board/profile"
	"github.com/openhal/gateway/internal/halhub"
	"github.com/openhal/gateway/openhal"
)

// TestStartUnderLatchedStop: a gateway started on a state directory
// whose emergency stop an earlier run left latched opens its outputs at
// their safe values, as gateway.go does (LatchedStop before the board,
// openingConfig, then Restore): an output whose initial value is on is
// never driven on, not even before Restore drives the safe values. The
// same start without a latch drives it on, so the test can fail.
func TestStartUnderLatchedStop(t *testing.T) {
	for _, latched := range []bool{true, false} {
		stateDir := t.TempDir()
		log := slog.New(slog.NewTextHandler(io.Discard, nil))
		if latched {
			earlier := halhub.New(device.NewRegistry(nil), halhub.Options{StateDir: stateDir, Logger: log})
			if _, err := earlier.Stop(openhal.Principal{Kind: openhal.KindOperator, Name: "test"}, "drill"); err != nil {
				t.Fatal(err)
			}
			earlier.Close()
		}
		cfg := validConfig(t, pinsAfter) // fan: GPIO17, initial true
		prof, _ := profile.ByName(cfg.Board)
		reg := device.NewRegistry(nil)
		hub := halhub.New(reg, halhub.Options{StateDir: stateDir, Logger: log, Rules: cfg.Rules()})
		t.Cleanup(hub.Close)
		stopped, err := hub.LatchedStop()
		if err != nil || stopped != latched {
			t.Fatalf("LatchedStop = %v, %v; want %v", stopped, err, latched)
		}
		host := newPinHost()
		ctx, cancel := context.WithCancel(context.Background())
		set := newBoardSet(ctx, prof, host, reg, log)
		if err := set.openAll(openingConfig(cfg, stopped)); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cancel(); set.wait() })
		if err := hub.Restore(); err != nil {
			t.Fatal(err)
		}
		high := host.drivenHigh(17)
		v, _ := reg.Value("fan")
		switch {
		case latched && (high != 0 || v.Value != false || !hub.Stopped()):
			t.Errorf("under a latched stop: fan driven on %d times, value %v, stopped %v; want never, false, true", high, v.Value, hub.Stopped())
		case !latched && (high != 1 || v.Value != true):
			t.Errorf("without a stop: fan driven on %d times, value %v; want once, true", high, v.Value)
		}
	}
}
