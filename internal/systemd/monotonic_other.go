//go:build !linux

package systemd

// monotonicUsec: systemd runs on Linux only.
func monotonicUsec() (int64, bool) { return 0, false }
