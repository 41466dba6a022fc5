//go:build testhang

package supervisor

// HoldLockForTest takes the supervisor's lock and never gives it back:
// the fault the watchdog must catch. It exists only in builds tagged
// testhang, for the gateway's test-only fault injection
// (GATEWAY_TEST_HANG).
func (s *Supervisor) HoldLockForTest() { s.mu.Lock() }
