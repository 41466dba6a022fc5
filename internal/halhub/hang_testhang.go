//go:build testhang

package halhub

// HangForTest wedges the safety loop at its next round, until the Hub
// closes: the fault the watchdog must catch. It exists only in builds
// tagged testhang, for the gateway's test-only fault injection
// (GATEWAY_TEST_HANG).
func (h *Hub) HangForTest() { h.loop.hangAtNextRound() }
