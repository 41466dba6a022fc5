package gatewayd

import (
	"log/slog"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/board"
	"github.com/openhal/gateway/internal/history"
)

// newHistory makes the in-memory history of device values that
// gateway/history serves, bounded by hub.history (0 series: none kept).
func newHistory(cfg board.HistoryConfig, log *slog.Logger) *history.History {
	most := cfg.MaxSeries
	if most == 0 {
		most = -1 // history.Options: 0 would be the default
	}
	log.Info("history kept in memory", "max_series", max(most, 0), "max_bytes", max(most, 0)*history.SeriesBytes(history.DefaultSamples, history.DefaultBuckets))
	return history.New(history.Options{MaxSeries: most, Logger: log.With("part", "history")})
}

// registered reports whether reg has the device id now.
func registered(reg *device.Registry) func(id string) bool {
	return func(id string) bool {
		_, ok := reg.Describe(id)
		return ok
	}
}
