package serialline

import (
	"fmt"
	"time"
	"unicode"
	"unicode/utf8"
)

// MaxLinesPerSecond bounds the lines of one instrument published in a
// second. Past it the rest of that second's lines are dropped and the
// device is in fault: an instrument that floods (a runaway stream, a
// wrong baud rate read as noise) must not take the Hub's events from
// every other device.
const MaxLinesPerSecond = 100

// Words of the faults health reports: what happened and what to check.
var (
	faultBinary = "the instrument sent bytes that are not text: check its baud rate, parity and stop bits"
	faultLong   = fmt.Sprintf("the instrument sent more than %d bytes without a line end: check the line delimiter and the baud rate", MaxLine)
	faultFlood  = fmt.Sprintf("the instrument sends more than %d lines a second: the rest are dropped until it slows down", MaxLinesPerSecond)
)

// health judges an instrument's lines as they come, for one opening of
// its port (one goroutine reads them, so it needs no lock). A line that
// is not text, a line cut at MaxLine, and a line past the rate are not
// published, and put the device in fault; the next good line (in a later
// second, for a flood) puts it back to ok.
type health struct {
	fault  string    // the fault in force, "" while ok
	second time.Time // the second being counted
	lines  int       // lines published in it
}

// judge returns whether a line (raw, before clean; cut when it is longer
// than MaxLine) is published, and the fault to report when it changed
// (changed; "" for ok).
func (h *health) judge(raw []byte, cut bool, now time.Time) (publish bool, fault string, changed bool) {
	switch {
	case cut:
		fault = faultLong
	case !isText(raw):
		fault = faultBinary
	default:
		if s := now.Truncate(time.Second); !s.Equal(h.second) {
			h.second, h.lines = s, 0
		}
		h.lines++
		if h.lines > MaxLinesPerSecond {
			fault = faultFlood
		}
	}
	changed = fault != h.fault
	h.fault = fault
	return fault == "", fault, changed
}

// isText reports whether b reads as text: no control character but a
// tab, a carriage return or a newline (a line of its own delimiter may
// hold one), and at most half of its bytes invalid UTF-8 (an instrument
// may write a degree sign in Latin-1; clean replaces it). Noise from a
// wrong baud rate fails both.
func isText(b []byte) bool {
	invalid := 0
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			invalid++
		case r != '\t' && r != '\r' && r != '\n' && unicode.IsControl(r):
			return false
		}
		i += n
	}
	return invalid*2 <= len(b)
}
