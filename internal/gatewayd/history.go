package gatewayd

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/openhal/gateway/device"
	"github.com/openhal/gateway/internal/board"
	"github.com/openhal/gateway/internal/history"
)

// historyDir is where the history on disk lives in the state directory.
func historyDir(stateDir string) string { return filepath.Join(stateDir, "history") }

// newHistory makes the history of device values that gateway/history
// serves, bounded by hub.history (0 series: none kept), and reads back
// what it wrote to disk before, if it keeps any there. stop writes what
// is not written yet and closes its files; it must be called once the
// history is no longer fed.
func newHistory(cfg board.HistoryConfig, stateDir string, log *slog.Logger) (h *history.History, stop func(), err error) {
	most := cfg.MaxSeries
	if most == 0 {
		most = -1 // history.Options: 0 would be the default
	}
	log.Info("history kept in memory", "max_series", max(most, 0), "max_bytes", max(most, 0)*history.SeriesBytes(history.DefaultSamples, history.DefaultBuckets))
	hlog := log.With("part", "history")
	h = history.New(history.Options{MaxSeries: most, Logger: hlog})
	if !cfg.HistoryOnDisk() {
		return h, func() {}, nil
	}
	dir := historyDir(stateDir)
	begun := time.Now()
	st, err := h.Open(dir, history.StoreOptions{
		KeepFull: cfg.KeepFull, KeepMinutes: cfg.KeepMinutes,
		MaxBytes: int64(cfg.MaxDiskMB) << 20, Logger: hlog,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("read the history on disk (%s): %w", dir, err)
	}
	ds, _ := h.DiskStats()
	log.Info("history kept on disk", "dir", dir, "series", h.Series(), "disk_bytes", ds.DiskBytes, "read_in", time.Since(begun).Round(time.Millisecond),
		"keep_full", cfg.KeepFull, "keep_minutes", cfg.KeepMinutes, "max_disk_mb", cfg.MaxDiskMB, "flush_interval", cfg.FlushInterval)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.Run(ctx, cfg.FlushInterval)
	}()
	return h, func() {
		cancel()
		<-done // Run's last, final flush
		if err := st.Close(); err != nil {
			log.Warn("history", "err", err)
		}
	}, nil
}

// allMetrics writes each part's figures to /metrics in turn.
func allMetrics(parts ...func(io.Writer)) func(io.Writer) {
	return func(w io.Writer) {
		for _, write := range parts {
			write(w)
		}
	}
}

// registered reports whether reg has the device id now.
func registered(reg *device.Registry) func(id string) bool {
	return func(id string) bool {
		_, ok := reg.Describe(id)
		return ok
	}
}
