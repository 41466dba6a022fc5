package serialline

import (
	"strings"
	"testing"
	"time"

	"github.com/openhal/gateway/device"
)

// TestLineFaults: an instrument on a pseudo-terminal that sends binary
// garbage, a line that does not end, or a flood puts its device in a
// fault that says what to check, publishes none of it, and is back to ok
// with its next good line; another instrument's device, meanwhile, goes
// on publishing. (Issue 20, faults at the edge of the hardware.)
func TestLineFaults(t *testing.T) {
	for _, tc := range []struct {
		name, send, fault string
		nextSecond        bool // the good line comes in the next second (a flood counts per second)
	}{
		{"binary garbage", "\x00\x01\x7f\xfe\xff\x1b\x02\x03\x04\x05junk\x06\n", faultBinary, false},
		{"a line without an end", strings.Repeat("x", 2*MaxLine+7), faultLong, false},
		{"a flood", strings.Repeat("1.0\n", MaxLinesPerSecond+50), faultFlood, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, p := plugged(t)
			other, q := plugged(t)

			p.send(t, tc.send)
			wantState(t, r.rec, device.StateFault, tc.fault)
			other.talk(t, q, "21.5")

			if tc.send[len(tc.send)-1] != '\n' {
				p.send(t, "the end\n") // the end of the endless line: dropped with it
			}
			if tc.nextSecond {
				r.clk.Advance(time.Second)
			}
			p.send(t, "22.0\n")
			wantState(t, r.rec, device.StateOK, "")
			var before []string // published before the good line
			for v := r.rec.next(t).Value.(string); v != "22.0"; v = r.rec.next(t).Value.(string) {
				before = append(before, v)
			}
			want := 0
			if tc.nextSecond {
				want = MaxLinesPerSecond // the flood's first lines, up to the rate
			}
			if len(before) != want {
				t.Errorf("%d values published before the good line, want %d: %.200q", len(before), want, before)
			}
		})
	}
}

// plugged is a port device with an instrument plugged in, ok.
func plugged(t *testing.T) (*portRig, *pty) {
	t.Helper()
	r, p := newPortRig(t), openPTY(t)
	wantState(t, r.rec, device.StateOffline, "no such file or directory")
	plug(t, r.link, p)
	fireRetry(t, r.clk, minBackoff)
	wantState(t, r.rec, device.StateOK, "")
	return r, p
}
