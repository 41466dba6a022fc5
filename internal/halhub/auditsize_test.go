package halhub

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/openhal/gateway/internal/halhub/audit"
	"github.com/openhal/gateway/openhal"
)

// TestAuditEntrySizes measures the entries the Hub writes, as they are on
// disk, for the retention figures of docs/protocol.md ("Audit log"):
//
//	go test ./halhub -run TestAuditEntrySizes -v
//
// It checks that a request however large makes an entry of a few KiB.
func TestAuditEntrySizes(t *testing.T) {
	log, opt := withAudit(t)
	b := newBench(t, opt)
	writer := b.as(t, "bench-agent", openhal.ScopeControlHigh)
	reader := b.as(t, "bench-reader", openhal.ScopeRead)
	k1 := strings.Repeat("r", 1024)
	huge := strings.Repeat("r", 80<<10)
	cases := []struct {
		name string
		do   func()
		max  int
	}{
		{"write applied, no reason", func() { wantOK(t, write(writer, "bench.led", true)) }, 512},
		{"write applied, 1 KiB reason", func() {
			wantOK(t, writer.call("hal/write", map[string]any{"device": "bench.led", "value": false, "reason": k1}))
		}, 2 << 10},
		{"write refused (read token), 255 KiB reason", func() { refuse(t, reader, 1) }, 2 << 10},
		{"write refused: 80 KiB device, value and reason", func() {
			wantCode(t, writer.call("hal/write", map[string]any{"device": huge, "value": huge, "reason": huge}), openhal.CodeInvalidParams, "too_long")
		}, 4 << 10},
		{"write blocked (kept), 1 KiB reason", func() {
			b.door.Value(true, time.Time{})
			wantCode(t, writer.call("hal/write", map[string]any{"device": "bench.heater", "value": true, "reason": k1}), openhal.CodeBlocked, "")
			b.door.Value(false, time.Time{})
		}, 3 << 10},
		{"stop (kept), 1 KiB reason", func() {
			wantOK(t, writer.call("hal/stop", map[string]any{"reason": k1}))
		}, 2 << 10},
		{"count entry of refusals, 2 kinds", func() {
			refuse(t, reader, 15)
			wantCode(t, reader.call("hal/stop", nil), openhal.CodeForbidden, "")
			b.clock.Advance(coalesceRates[groupRefused].window)
		}, 1 << 10},
	}
	var last uint64
	for _, c := range cases {
		c.do()
		pg, err := log.List(last, audit.ListOptions{})
		if err != nil || len(pg.Entries) == 0 {
			t.Fatalf("%s: %v, no entry", c.name, err)
		}
		// The request's own entry is the last that is not the Hub's own
		// (a stop's safe values come before it).
		var size int
		for _, raw := range pg.Entries {
			var e audit.Entry
			json.Unmarshal(raw, &e)
			last = e.Seq
			if e.Principal.Kind != openhal.KindHub {
				size = len(raw) + 1 // with its newline
			}
		}
		t.Logf("%-48s %5d bytes", c.name, size)
		if size > c.max {
			t.Errorf("%s: %d bytes, more than %d", c.name, size, c.max)
		}
	}
}
