package board

import "time"

// Bounds of the history on disk's settings.
const (
	// MaxHistoryDiskMB is a terabyte: more is no SD card's.
	MaxHistoryDiskMB = 1 << 20
	// MinHistoryFlush keeps a misread setting (1ms) from turning the
	// batches that spare an SD card into a write per value.
	MinHistoryFlush = time.Second
	MaxHistoryFlush = time.Hour
	// MaxHistoryKeep is ten years.
	MaxHistoryKeep = 10 * 366 * 24 * time.Hour
)

// HistoryOnDisk says whether the history is written to disk at all.
func (h HistoryConfig) HistoryOnDisk() bool {
	return h.MaxSeries > 0 && h.MaxDiskMB > 0 && (h.KeepFull > 0 || h.KeepMinutes > 0)
}

func (v *validator) historyDisk(h HistoryConfig) {
	for _, k := range []struct {
		path string
		d    time.Duration
	}{{"hub.history.keepFull", h.KeepFull}, {"hub.history.keepMinutes", h.KeepMinutes}} {
		if k.d < 0 || k.d > MaxHistoryKeep {
			v.add(k.path, "must be from 0s (none kept) to %v, got %v", MaxHistoryKeep, k.d)
		}
	}
	if n := h.MaxDiskMB; n < 0 || n > MaxHistoryDiskMB {
		v.add("hub.history.maxDiskMB", "must be from 0 (nothing on disk) to %d, got %d", MaxHistoryDiskMB, n)
	}
	if d := h.FlushInterval; d < MinHistoryFlush || d > MaxHistoryFlush {
		v.add("hub.history.flushInterval", "must be from %v to %v, got %v", MinHistoryFlush, MaxHistoryFlush, d)
	}
}
