package history

import (
	"fmt"
	"io"
)

// DiskStats are what the history wrote to disk, and the samples that
// newer ones overwrote in memory before a flush could write them.
type DiskStats struct {
	StoreStats
	Lost uint64
}

// DiskStats returns h's figures; false when h keeps nothing on disk.
func (h *History) DiskStats() (DiskStats, bool) {
	h.mu.Lock()
	p := h.disk
	var lost uint64
	if p != nil {
		lost = p.lost
	}
	h.mu.Unlock()
	if p == nil {
		return DiskStats{}, false
	}
	return DiskStats{StoreStats: p.store.Stats(), Lost: lost}, true
}

// WriteMetrics appends the history on disk's figures to a /metrics
// answer (Prometheus' text format); nothing when it keeps none.
func (h *History) WriteMetrics(w io.Writer) {
	st, ok := h.DiskStats()
	if !ok {
		return
	}
	for _, m := range []struct {
		name, typ, help string
		v               any
	}{
		{"gateway_history_flushes_total", "counter", "Flushes that wrote to disk (each: a write and an fsync of each kind of item it had).", st.Flushes},
		{"gateway_history_writes_total", "counter", "write calls on the history's files.", st.Writes},
		{"gateway_history_syncs_total", "counter", "fsync calls on the history's files and directories.", st.Syncs},
		{"gateway_history_written_bytes_total", "counter", "Bytes written to the history's files.", st.Bytes},
		{"gateway_history_samples_written_total", "counter", "Full-resolution samples written to disk; each is on disk once this counts it.", st.Samples},
		{"gateway_history_buckets_written_total", "counter", "One-minute buckets written to disk.", st.Buckets},
		{"gateway_history_lost_samples_total", "counter", "Samples overwritten in memory before a flush wrote them (a device faster than the ring).", st.Lost},
		{"gateway_history_disk_bytes", "gauge", "Bytes the history's files take.", st.DiskBytes},
	} {
		fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s %s\n%s %v\n", m.name, m.help, m.name, m.typ, m.name, m.v)
	}
}
