package gatewayd

import (
	"bytes"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/board"
)

// The history is on disk unless hub.history says none: stop writes what
// was recorded, the next start reads it back, and /metrics counts it.
func TestNewHistory(t *testing.T) {
	t.Parallel()
	onDisk := board.HistoryConfig{MaxSeries: 64, KeepFull: time.Hour, KeepMinutes: time.Hour, MaxDiskMB: 1, FlushInterval: time.Hour}
	for _, tc := range []struct {
		name string
		cfg  board.HistoryConfig
		disk bool
	}{
		{"on disk", onDisk, true},
		{"maxDiskMB 0", board.HistoryConfig{MaxSeries: 64, KeepFull: time.Hour, FlushInterval: time.Hour}, false},
		{"nothing kept", board.HistoryConfig{MaxSeries: 64, MaxDiskMB: 1, FlushInterval: time.Hour}, false},
		{"no series", board.HistoryConfig{KeepFull: time.Hour, MaxDiskMB: 1, FlushInterval: time.Hour}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			state := t.TempDir()
			log := slog.New(slog.DiscardHandler)
			h, stop, err := newHistory(tc.cfg, state, log)
			if err != nil {
				t.Fatal(err)
			}
			h.Record(device.Event{Kind: device.EventValue, Device: "d", Value: 1.5, TS: time.Now()})
			var m bytes.Buffer
			h.WriteMetrics(&m)
			stop()
			_, statErr := os.Stat(historyDir(state))
			if (statErr == nil) != tc.disk || strings.Contains(m.String(), "gateway_history_flushes_total") != tc.disk {
				t.Fatalf("history dir: %v, metrics %q; want on disk: %v", statErr, m.String(), tc.disk)
			}
			if !tc.disk {
				return
			}
			h, stop, err = newHistory(tc.cfg, state, log)
			if err != nil {
				t.Fatal(err)
			}
			defer stop()
			if fields, ok := h.Fields("d"); !ok || len(fields) != 1 {
				t.Errorf("after a restart, d keeps %v (%v), want its one series", fields, ok)
			}
		})
	}
}
