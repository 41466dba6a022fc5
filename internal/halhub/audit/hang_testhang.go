//go:build testhang

package audit

// HangForTest wedges the writer for good at its next round: Append,
// Probe and Close never return afterwards. It is the fault the
// watchdog must catch. It exists only in builds tagged testhang, for the
// gateway's test-only fault injection (GATEWAY_TEST_HANG).
func (l *Log) HangForTest() {
	l.mu.Lock()
	l.hang = true
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default:
	}
}
